/**
 * docs/extending.md's model type of your own: its example runs as written (a `{"type": "echo"}` session, the
 * tool call on step 0, streaming), and what the page says about a backend's errors, a bad spec, structured
 * output and `capabilities.models` is what the bridge does, in session/create and npc/create alike.
 */
import assert from "node:assert/strict";
import {
  Bridge,
  BridgeError,
  type JsonObject,
  type JsonValue,
  type Model,
  type Transport,
} from "../../mod.ts";
import {
  BridgeEngine,
  type BridgeExtension,
  type LanguageModel,
  type ModelSpec,
  silentLogger,
} from "../../engine.ts";

// The host's model types of these tests, registered for the typed client as the page says.
declare module "../../mod.ts" {
  interface ModelSpecRegistry {
    echo: { type: "echo"; prefix?: string };
    failing: { type: "failing"; error?: "guardrail" | "unavailable" };
  }
}

/** A spec sent as it is, unchecked by the compiler (a wrong one on purpose: the bridge's answer is tested). */
const unchecked = (spec: JsonObject): Model => spec as Model;

const DOC = await Deno.readTextFile(new URL("../../docs/extending.md", import.meta.url));
const ENGINE = new URL("../../engine.ts", import.meta.url).href;
const MOD = new URL("../../mod.ts", import.meta.url).href;

/** The example under "A model type of your own", importing the package by URL, `echoModels` exported. */
async function modelExample(): Promise<{ echoModels: (spec: ModelSpec) => LanguageModel | undefined }> {
  const section = DOC.split("## A model type of your own")[1];
  const snippet = section?.match(/```ts\n([\s\S]*?)```/)?.[1];
  assert.ok(snippet, "the section has a ts example");
  assert.ok(snippet.includes('from "./engine.ts"') && snippet.includes('from "./mod.ts"'));
  const source = snippet.replace('"./engine.ts"', `"${ENGINE}"`).replaceAll('"./mod.ts"', `"${MOD}"`)
    .replace(
      '(await echo.respond("hello")).text; // "You said: hello"',
      'export const said = (await echo.respond("hello")).text;',
    ) +
    "export { echoModels };\n";
  assert.ok(source.includes("export const said"), "the example ends with the respond line");
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(file, source);
    const module = await import(new URL(`file://${file}`).href);
    assert.equal(module.said, "You said: hello");
    return module;
  } finally {
    await Deno.remove(file);
  }
}

Deno.test("docs/extending.md: the model type example runs as written and answers 'You said: hello'", async () => {
  await modelExample();
});

Deno.test("docs/extending.md: a custom model type in session/create and npc/create, with tools, streaming and its errors", async () => {
  const { echoModels } = await modelExample();
  const logs: string[] = [];
  const models = (spec: ModelSpec): LanguageModel | undefined => {
    if (spec.type === "broken") throw new Error("factory bug");
    if (spec.type === "hollow") return {} as LanguageModel; // a JavaScript host's mistake
    if (spec.type === "failing" && "raw" in spec) {
      const error = spec.raw.error === "guardrail"
        ? BridgeError.of("guardrail_violation", "Blocked by my backend.")
        : spec.raw.error === "unavailable"
        ? BridgeError.of("model_unavailable", "My backend is not loaded.")
        : new Error("backend bug");
      return {
        ...echoModels({ type: "echo", raw: { type: "echo" }, path: spec.path })!,
        availability: () =>
          Promise.resolve({
            available: false,
            reason: "model_not_ready",
            contextSize: 4096,
            supportedLanguages: [],
          }),
        step: () => Promise.reject(error),
      };
    }
    return echoModels(spec);
  };
  await using bridge = await Bridge.open({
    engine: (send, onShutdown) =>
      new BridgeEngine({
        modelFactory: models,
        onShutdown,
        logger: { ...silentLogger, error: (m) => logs.push(m) },
      }, send),
  });
  assert.deepEqual(bridge.server.capabilities.models, ["system", "scripted"]);
  const look = bridge.tool({
    name: "look",
    description: "Look around.",
    parameters: { type: "object", properties: {} },
  }, () => "a door");
  const s = await bridge.createSession({ tools: [look], model: { type: "echo", prefix: "> " } });
  const events: string[] = [];
  const r = await s.respond("hi", { onText: (_piece, text) => events.push(text) });
  assert.equal(r.text, "> (after the tool)");
  assert.deepEqual(r.toolCalls.map((c) => [c.call.name, c.output]), [["look", "a door"]]);
  assert.deepEqual(events, ["> (after the tool)"]); // the snapshot the backend streamed
  assert.deepEqual((await bridge.request("session/list", {})).sessions.map((x) => x.model), ["echo"]);
  // A bad spec fails the create with -32602 naming the path; a factory's plain Error is -32603.
  const fail = (p: Promise<unknown>) =>
    p.then(() => assert.fail("no error"), (e: unknown) => e as BridgeError);
  const bad = await fail(bridge.createSession({ model: unchecked({ type: "echo", prefix: 3 }) }));
  assert.deepEqual([bad.code, bad.message], [-32602, "'model.prefix' must be a string."]);
  const badNpc = await fail(
    bridge.createNpc({ name: "Gorm" }, { model: unchecked({ type: "echo", prefix: 3 }) }),
  );
  assert.deepEqual([badNpc.code, badNpc.message], [-32602, "'model.prefix' must be a string."]);
  const broken = await fail(bridge.createSession({ model: unchecked({ type: "broken" }) }));
  assert.deepEqual([broken.code, broken.dataCode, broken.message], [-32603, "internal_error", "factory bug"]);
  const hollow = await fail(bridge.createNpc({ name: "Gorm" }, { model: unchecked({ type: "hollow" }) }));
  assert.deepEqual([hollow.code, hollow.message], [
    -32603,
    "The modelFactory made no LanguageModel for type 'hollow' (it needs step() and availability()).",
  ]);
  // A step's BridgeError is the turn's answer; a plain Error is -32603 with the stack logged.
  const guarded = await bridge.createSession({ model: { type: "failing", error: "guardrail" } });
  const blocked = await fail(guarded.respond("hi"));
  assert.deepEqual([blocked.code, blocked.dataCode, blocked.message], [
    -32002,
    "guardrail_violation",
    "Blocked by my backend.",
  ]);
  // Its availability is not asked: no "unavailable" warning; its steps say so.
  const unloaded = await bridge.createSession({ model: { type: "failing", error: "unavailable" } });
  assert.deepEqual(unloaded.warnings, []);
  const notLoaded = await fail(unloaded.respond("hi"));
  assert.deepEqual([notLoaded.code, notLoaded.message], [-32001, "My backend is not loaded."]);
  const buggy = await bridge.createSession({ model: { type: "failing" } });
  const bug = await fail(buggy.respond("hi"));
  assert.deepEqual([bug.code, bug.dataCode, bug.message], [-32603, "internal_error", "backend bug"]);
  assert.ok(
    logs.some((l) => l.startsWith("Internal error in 'session/respond'") && l.includes("\n    at ")),
    logs.join("\n"),
  );
  // An NPC on the echo model: its `{line}` is taken as it is, what is missing filled in.
  const npc = await bridge.createNpc({ name: "Gorm" }, { model: { type: "echo" } });
  const reply = await npc.talk("Hello.");
  assert.deepEqual([reply.line, reply.emotion, reply.playerOptions], ["Player: Hello.", "neutral", []]);
  // ...as is a session's structured answer: the backend checks it against the schema, not the agent.
  const typed = await bridge.createSession({ model: { type: "echo" } });
  const mood = { type: "object", properties: { mood: { type: "string" } }, required: ["mood"] } as const;
  assert.deepEqual((await typed.respond("hi", { schema: mood })).structured, { line: "hi" });
  // An unknown type names the built-in ones and says the host adds its own (a bridge without a factory:
  // tests/methods/session_create_test.ts).
  const unknown = await fail(bridge.createSession({ model: unchecked({ type: "nope" }) }));
  assert.deepEqual([unknown.code, unknown.message], [
    -32602,
    `Unknown model type 'nope'. Supported: "system", "scripted", "openai", "llama", and the types of this bridge's host.`,
  ]);
});

Deno.test("docs/extending.md: a transport of your own: the page's TCP server answers raw lines (a narration too, after the client's end of input) and the typed client", async () => {
  const snippet = DOC.split("**A transport of your own.**")[1]?.match(/```ts\n([\s\S]*?)```/)?.[1];
  assert.ok(snippet, "the paragraph has a ts example");
  // The example's server, listening where the test says.
  const listen = 'const listener = Deno.listen({ hostname: "127.0.0.1", port: 7077 });\n';
  assert.ok(snippet.includes(listen));
  const example = new URL("../../examples/quest_extension.ts", import.meta.url).href;
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(
    file,
    `import { BridgeEngine, createStdioServer, standardExtensions } from "${ENGINE}";\n` +
      `import { QuestMethods } from "${example}";\n` +
      `export async function serve(listener: Deno.Listener): Promise<void> {\n${
        snippet.replace(listen, "")
      }}\n`,
  );
  const { serve } = await import(new URL(`file://${file}`).href);
  await Deno.remove(file);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const serving: Promise<void> = serve(listener);
  // Raw lines, then the client's end of input: every line is answered, the narration too (its answer comes
  // after the end of input), then the server closes the connection.
  const raw = await Deno.connect({ hostname: "127.0.0.1", port });
  const writer = raw.writable.getWriter();
  await writer.write(new TextEncoder().encode(
    '{"jsonrpc":"2.0","id":1,"method":"quest/create","params":{"quest":"q","model":{"type":"scripted","steps":[{"text":"Dust."}]}}}\n' +
      '{"jsonrpc":"2.0","id":2,"method":"quest/narrate","params":{"quest":"q","text":"Hi."}}\n' +
      '{"jsonrpc":"2.0","id":3,"method":"quest/narrate","params":{"text":"Hi."}}\nnot json\n',
  ));
  writer.releaseLock();
  await raw.closeWrite();
  const answers = (await new Response(raw.readable).text()).trim().split("\n").map((l) => JSON.parse(l));
  const byId = (id: number | null) => answers.find((m) => m.id === id);
  assert.deepEqual(byId(1)?.result, { quest: "q", warnings: [] });
  assert.deepEqual(byId(2)?.result, { quest: "q", text: "Dust.", toolsUsed: [], warnings: [] });
  assert.deepEqual(byId(3)?.error, {
    code: -32602,
    message: "Missing required parameter 'quest'.",
    data: { code: "invalid_params" },
  });
  assert.deepEqual([byId(null)?.error.code, answers.length], [-32700, 4]);
  // The typed client over a Transport of one's own (newline-delimited JSON on the socket).
  class TcpTransport implements Transport {
    onmessage?: (message: JsonValue) => void;
    onclose?: (reason?: Error) => void;
    #conn: Deno.TcpConn | null = null;
    #reading: Promise<void> = Promise.resolve();
    async start(): Promise<void> {
      const conn = this.#conn = await Deno.connect({ hostname: "127.0.0.1", port });
      this.#reading = (async () => {
        let buffer = "";
        for await (const chunk of conn.readable.pipeThrough(new TextDecoderStream())) {
          buffer += chunk;
          for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
            this.onmessage?.(JSON.parse(buffer.slice(0, i)));
            buffer = buffer.slice(i + 1);
          }
        }
        this.onclose?.();
      })();
    }
    async send(message: unknown): Promise<void> {
      const writer = this.#conn!.writable.getWriter();
      await writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
      writer.releaseLock();
    }
    async close(): Promise<void> {
      await this.#conn!.closeWrite().catch(() => {});
      await this.#reading;
    }
  }
  const bridge = await Bridge.connect(new TcpTransport());
  assert.ok(bridge.server.capabilities.methods.includes("quest/narrate"));
  await bridge.request("quest/create", {
    quest: "q",
    model: { type: "scripted", steps: [{ text: "Typed." }] },
  });
  assert.equal(
    (await bridge.request<{ text: string }>("quest/narrate", { quest: "q", text: "Hi." })).text,
    "Typed.",
  );
  const session = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Over TCP." }] } });
  assert.equal((await session.respond("Hi.")).text, "Over TCP.");
  await bridge.close();
  listener.close();
  await serving;
});

Deno.test("docs/extending.md: the typed client example calls the quest methods as written", async () => {
  const section = DOC.split("## Calling custom methods from the typed client")[1];
  const snippet = section?.match(/```ts\n([\s\S]*?)```/)?.[1];
  assert.ok(snippet, "the section has a ts example");
  const example = new URL("../../examples/quest_extension.ts", import.meta.url).href;
  const last = 'narration.text; // "You see cobwebs (asked by quest crypt)."';
  assert.ok(snippet.includes(last));
  const source = snippet.replace('"./engine.ts"', `"${ENGINE}"`).replaceAll('"./mod.ts"', `"${MOD}"`)
    .replace('"./examples/quest_extension.ts"', `"${example}"`)
    .replace(
      "console.log(method, params.event)",
      "events.push([method, (params.event as { type: string }).type])",
    )
    .replace(last, "export const text = narration.text;") + "\n";
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(file, `export const events: unknown[] = [];\n${source}`);
    const module = await import(new URL(`file://${file}`).href);
    assert.equal(module.text, "You see cobwebs (asked by quest crypt).");
    assert.deepEqual(module.events.slice(0, 3), [
      ["quest/event", "modelStep"],
      ["quest/event", "toolCallStarted"],
      ["quest/event", "toolCallCompleted"],
    ]);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("docs/extending.md: the page's whole-program examples type-check as written", async () => {
  const headings = [
    "## A method set: the quest narrator",
    "## A model type of your own",
    "## Calling custom methods from the typed client",
    "## Serving it",
  ];
  const dir = await Deno.makeTempDir();
  try {
    const files: string[] = [];
    for (const [i, heading] of headings.entries()) {
      const snippet = DOC.split(heading)[1]?.match(/```ts\n([\s\S]*?)```/)?.[1];
      assert.ok(snippet, heading);
      const file = `${dir}/example_${i}.ts`;
      await Deno.writeTextFile(
        file,
        snippet.replace('"./engine.ts"', `"${ENGINE}"`).replaceAll('"./mod.ts"', `"${MOD}"`).replace(
          '"./examples/quest_extension.ts"',
          `"${new URL("../../examples/quest_extension.ts", import.meta.url).href}"`,
        ),
      );
      files.push(file);
    }
    const config = new URL("../../deno.json", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--config", config, ...files],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("docs/extending.md: the method set on the page is examples/quest_extension.ts's, as it is there", async () => {
  const snippet = DOC.split("## A method set: the quest narrator")[1]?.match(/```ts\n([\s\S]*?)```/)?.[1];
  assert.ok(snippet, "the section has a ts example");
  const imports = 'from "./engine.ts";\n';
  assert.ok(snippet.includes(imports), "the example imports engine.ts");
  const body = snippet.slice(snippet.indexOf(imports) + imports.length).trim();
  const example = await Deno.readTextFile(new URL("../../examples/quest_extension.ts", import.meta.url));
  assert.ok(example.includes(body), "the page's QuestMethods differs from the example's: copy it over");
});

Deno.test("docs/extending.md: an async handler that awaits first is not waited for: the requests after it are handled meanwhile", async () => {
  // What the page says of it (before, it said such a handler would hold up every later request).
  assert.ok(!DOC.includes("hold up every later request"));
  assert.ok(DOC.includes("the engine does not wait for a handler's Promise"));
  const handled: string[] = [];
  let open = () => {};
  const gate = new Promise<void>((resolve) => open = resolve);
  const gated: BridgeExtension = {
    register(registry) {
      registry.register("x/after", async (ctx) => {
        await gate; // e.g. a file read before the order-sensitive part
        handled.push(ctx.params.string("name"));
        return {};
      });
      registry.register("x/now", (ctx) => {
        handled.push(ctx.params.string("name"));
        open();
        return {};
      });
    },
  };
  const sent: number[] = [];
  const engine = new BridgeEngine({ extensions: [gated] }, (line) => sent.push(JSON.parse(line).id));
  engine.receive('{"jsonrpc":"2.0","id":1,"method":"x/after","params":{"name":"first"}}');
  engine.receive('{"jsonrpc":"2.0","id":2,"method":"x/now","params":{"name":"second"}}');
  await engine.idle();
  assert.deepEqual(handled, ["second", "first"]); // arrival order lost, nothing held up
  assert.deepEqual(sent, [2, 1]);
  await engine.shutdown();
});

Deno.test("docs/extending.md: the extension's own deno test, on raw lines, passes as written", async () => {
  const section = DOC.split("## Testing it")[1];
  const snippet = section?.match(/```ts\n([\s\S]*?)```/)?.[1];
  assert.ok(snippet, "the page has a 'Testing it' section with a ts example");
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/quest_test.ts`;
    await Deno.writeTextFile(
      file,
      snippet.replace('"./engine.ts"', `"${ENGINE}"`).replace(
        '"./examples/quest_extension.ts"',
        `"${new URL("../../examples/quest_extension.ts", import.meta.url).href}"`,
      ),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["test", "--quiet", "--config", new URL("../../deno.json", import.meta.url).pathname, file],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text);
    assert.match(text, /ok \| 1 passed \| 0 failed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
