/**
 * The llama backend's pure parts (no node-llama-cpp): model parameter and flag parsing, grammar schemas,
 * chat history conversion, the sequence pool, the documented tool list, and the wire behavior of a missing
 * or non-GGUF file (which is decided before the package would load). The real-model tier is
 * `tests/llama/gguf/` (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { CHECKOUT_OAM } from "../helpers/messages.ts";
import {
  llamaModelSpecWarnings,
  parseGgufModelFlag,
  parseLlamaModelSpec,
} from "../../src/models/llama_config.ts";
import { chatHistory, RawMemory } from "../../src/models/llama_history.ts";
import { SequencePool } from "../../src/models/llama_pool.ts";
import { checkModelFile } from "../../src/models/gguf_file.ts";
import { grammarSchema } from "../../src/models/llama_schema.ts";
import { chatFunctions, DocumentedTools } from "../../src/models/llama_tools.ts";
import type { StepTool } from "../../src/models/language_model.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import type { ConversationEntry } from "../../src/protocol/transcript.ts";
import { WireClient } from "../helpers/wire.ts";

function invalid(spec: JsonObject): string {
  try {
    parseLlamaModelSpec(spec, "model");
  } catch (error) {
    assert.ok(error instanceof BridgeError);
    assert.equal(error.code, -32602);
    return error.message;
  }
  assert.fail(`expected ${JSON.stringify(spec)} to be rejected`);
}

Deno.test("llama config: a full spec, null members absent, unknown members warned", () => {
  assert.deepEqual(
    parseLlamaModelSpec({
      type: "llama",
      path: "m.gguf",
      contextSize: 8192,
      gpu: false,
      threads: 4,
      sequences: 2,
      batchSize: 256,
    }, "model"),
    { path: "m.gguf", contextSize: 8192, gpu: false, threads: 4, sequences: 2, batchSize: 256 },
  );
  assert.deepEqual(
    parseLlamaModelSpec({ type: "llama", path: "m.gguf", threads: null, gpu: null }, "model"),
    {
      path: "m.gguf",
    },
  );
  assert.deepEqual(llamaModelSpecWarnings({ type: "llama", path: "m", temp: 1 }, "model"), [
    "Unknown parameter 'model.temp' was ignored.",
  ]);
});

Deno.test("llama config: bad members name themselves", () => {
  assert.equal(invalid({ type: "llama" }), "Missing required parameter 'model.path'.");
  assert.equal(
    invalid({ type: "llama", path: "" }),
    `Parameter 'model.path' must be the path of a .gguf file; got "".`,
  );
  assert.equal(
    invalid({ type: "llama", path: "m", threads: 0 }),
    "Parameter 'model.threads' must be an integer from 1 to 1024; got 0.",
  );
  assert.equal(
    invalid({ type: "llama", path: "m", contextSize: 1.5 }),
    "Parameter 'model.contextSize' must be an integer from 64 to 1048576; got 1.5.",
  );
  assert.equal(
    invalid({ type: "llama", path: "m", gpu: true }),
    `Parameter 'model.gpu' must be "auto", false, "cuda", "vulkan" or "metal"; got true.`,
  );
});

Deno.test("llama config: the gguf: flag with settings", () => {
  assert.deepEqual(parseGgufModelFlag("gguf:models/a.gguf"), { path: "models/a.gguf" });
  assert.deepEqual(parseGgufModelFlag("gguf:a.gguf#contextSize=8192,threads=2,gpu=false"), {
    path: "a.gguf",
    contextSize: 8192,
    threads: 2,
    gpu: false,
  });
  // The shell leaves a '~' after 'gguf:' alone: the flag reads it as the home folder.
  const home = Deno.env.get("HOME")!;
  assert.deepEqual(parseGgufModelFlag("gguf:~/models/a.gguf#threads=2"), {
    path: `${home}/models/a.gguf`,
    threads: 2,
  });
  assert.deepEqual(parseGgufModelFlag("gguf:~a.gguf"), { path: "~a.gguf" });
  assert.throws(() => parseGgufModelFlag("gguf:"), /missing the model path/);
  assert.throws(() => parseGgufModelFlag("gguf:a.gguf#speed=9"), /unknown setting 'speed'/);
  // Settings are named as they are written after '#', with a hint for a wrong case.
  assert.throws(() => parseGgufModelFlag("gguf:a.gguf#threads=x"), {
    message:
      "Invalid --model value 'gguf:a.gguf#threads=x': setting 'threads' must be an integer from 1 to " +
      '1024; got "x".',
  });
  assert.throws(() => parseGgufModelFlag("gguf:a.gguf#gpu=true"), {
    message:
      "Invalid --model value 'gguf:a.gguf#gpu=true': setting 'gpu' must be \"auto\", false, \"cuda\", " +
      '"vulkan" or "metal"; got "true".',
  });
  assert.throws(() => parseGgufModelFlag("gguf:a.gguf#contextsize=8192"), {
    message:
      "Invalid --model value 'gguf:a.gguf#contextsize=8192': unknown setting 'contextsize' (did you mean " +
      "'contextSize'?); expected gguf:<path>[#contextSize=…,threads=…,sequences=…,batchSize=…,gpu=…].",
  });
  // A misspelling, not only another case, is named as well.
  assert.throws(() => parseGgufModelFlag("gguf:a.gguf#thread=4"), {
    message:
      "Invalid --model value 'gguf:a.gguf#thread=4': unknown setting 'thread' (did you mean 'threads'?); " +
      "expected gguf:<path>[#contextSize=…,threads=…,sequences=…,batchSize=…,gpu=…].",
  });
  assert.throws(() => parseGgufModelFlag("llama:a.gguf"), /expected gguf:<path>/);
});

Deno.test("grammar schema: object order, closed integer ranges, unions and recursion", () => {
  const schema: JsonObject = {
    title: "Reply",
    type: "object",
    properties: {
      b: { type: "integer", minimum: 0, maximum: 3 },
      a: { type: "string", enum: ["x", "y"], description: "pick" },
      big: { type: "integer", minimum: 0, maximum: 100000 },
      next: { $ref: "#" },
      u: { title: "U", anyOf: [{ type: "string" }, { $ref: "#/$defs/Item" }] },
    },
    required: ["a", "b"],
    "x-order": ["a", "b", "big", "next", "u"],
    additionalProperties: false,
    $defs: {
      Item: { type: "object", properties: { n: { type: "number" } }, required: ["n"], "x-order": ["n"] },
    },
  };
  assert.deepEqual(grammarSchema(schema), {
    type: "object",
    properties: {
      a: { enum: ["x", "y"], description: "pick" },
      b: { enum: [0, 1, 2, 3] },
      big: { type: "integer" },
      next: { $ref: "#/$defs/Root__" },
      u: { oneOf: [{ type: "string" }, { $ref: "#/$defs/Item" }] },
    },
    required: ["a", "b"],
    additionalProperties: false,
    $defs: {
      Item: {
        type: "object",
        properties: { n: { type: "number" } },
        required: ["n"],
        additionalProperties: false,
      },
      Root__: {
        type: "object",
        properties: {
          a: { enum: ["x", "y"], description: "pick" },
          b: { enum: [0, 1, 2, 3] },
          big: { type: "integer" },
          next: { $ref: "#/$defs/Root__" },
          u: { oneOf: [{ type: "string" }, { $ref: "#/$defs/Item" }] },
        },
        required: ["a", "b"],
        additionalProperties: false,
      },
    },
  });
});

const tool = (name: string, description = ""): StepTool => ({
  name,
  description,
  parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"], "x-order": ["q"] },
  jsonSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
});

Deno.test("chat functions: argument schemas as grammar schemas; no-argument tools have no params", () => {
  assert.deepEqual(chatFunctions([tool("look", "Look up."), { ...tool("wave"), parameters: {} }]), {
    look: {
      description: "Look up.",
      params: {
        type: "object",
        properties: { q: { type: "string" } },
        required: ["q"],
        additionalProperties: false,
      },
    },
    wave: {},
  });
});

Deno.test("documented tools: a narrower step keeps the list, a new tool replaces it", () => {
  const documented = new DocumentedTools();
  assert.equal(documented.update([]), undefined);
  const both = documented.update([tool("a"), tool("b")]);
  assert.deepEqual(Object.keys(both!), ["a", "b"]);
  assert.equal(documented.update([tool("a")]), both, "the same object: the rendered prompt cannot change");
  assert.equal(documented.update([]), both);
  assert.deepEqual(Object.keys(documented.update([tool("c")])!), ["c"]);
  assert.deepEqual(Object.keys(documented.update([tool("c", "changed")])!), ["c"]);
});

Deno.test("chat history: one model item per turn, calls carry their outputs and the model's own text", () => {
  const memory = new RawMemory();
  memory.rememberCall("c1", [{ type: "specialTokensText", value: "<raw>" }]);
  memory.rememberAnswer('{"a":1}', '{"a": 1}');
  const entries: ConversationEntry[] = [
    { id: "u1", role: "user", contents: [{ type: "text", id: "s", text: "Hi" }], options: {} },
    {
      id: "t1",
      role: "response",
      toolCalls: [{ id: "c1", name: "look", arguments: '{"q":"x"}' }, {
        id: "c2",
        name: "look",
        arguments: "",
      }],
      contents: [],
      assets: [],
    },
    {
      id: "c1",
      role: "tool",
      toolCallID: "c1",
      toolName: "look",
      contents: [{ type: "structure", id: "c1", structure: { source: "look", content: { found: true } } }],
    },
    {
      id: "c2",
      role: "tool",
      toolCallID: "c2",
      toolName: "look",
      contents: [{ type: "text", id: "c2", text: "no" }],
    },
    {
      id: "r1",
      role: "response",
      contents: [{ type: "structure", id: "s2", structure: { source: "R", content: { a: 1 } } }],
      assets: [],
    },
    { id: "u2", role: "user", contents: [{ type: "text", id: "s3", text: "And?" }], options: {} },
    {
      id: "t2",
      role: "response",
      toolCalls: [{ id: "c3", name: "look", arguments: '{"q":"y"}' }],
      contents: [],
      assets: [],
    },
    {
      id: "c3",
      role: "tool",
      toolCallID: "c3",
      toolName: "look",
      contents: [{ type: "text", id: "c3", text: "ok" }],
    },
    {
      id: "x",
      role: "tool",
      toolCallID: "zz",
      toolName: "ghost",
      contents: [{ type: "text", id: "x", text: "?" }],
    },
  ];
  assert.deepEqual(chatHistory({ instructions: "Be brief.", history: entries, prompt: "" }, memory), [
    { type: "system", text: "Be brief." },
    { type: "user", text: "Hi" },
    {
      type: "model",
      response: [
        {
          type: "functionCall",
          name: "look",
          params: { q: "x" },
          result: { found: true },
          startsNewChunk: true,
          rawCall: [{ type: "specialTokensText", value: "<raw>" }],
        },
        { type: "functionCall", name: "look", params: {}, result: "no", startsNewChunk: false },
        '{"a": 1}',
      ],
    },
    { type: "user", text: "And?" },
    {
      type: "model",
      response: [{
        type: "functionCall",
        name: "look",
        params: { q: "y" },
        result: "ok",
        startsNewChunk: true,
      }],
    },
    { type: "user", text: "Output of the tool ghost: ?" },
    { type: "model", response: [] },
  ]);
  assert.deepEqual(chatHistory({ instructions: null, history: [], prompt: "Yo" }, memory), [
    { type: "user", text: "Yo" },
    { type: "model", response: [] },
  ]);
});

Deno.test("sequence pool: an owner gets its sequence back; others take free or least recently used ones", async () => {
  let made = 0;
  const pool = new SequencePool(2, () => ({ id: ++made }));
  const signal = new AbortController().signal;
  const [a, b, c] = [{}, {}, {}];
  const la = await pool.acquire(a, signal);
  const lb = await pool.acquire(b, signal);
  assert.deepEqual([la.sequence.id, la.warm, lb.sequence.id, lb.warm], [1, false, 2, false]);
  la.release();
  lb.release();
  const la2 = await pool.acquire(a, signal);
  assert.deepEqual([la2.sequence.id, la2.warm], [1, true]);
  la2.release();
  // c takes the least recently used free sequence (b's), and b then loses its cache.
  const lc = await pool.acquire(c, signal);
  assert.deepEqual([lc.sequence.id, lc.warm], [2, false]);
  lc.release();
  const lb2 = await pool.acquire(b, signal);
  assert.equal(lb2.warm, false);
  lb2.release();
  assert.equal(made, 2);
});

Deno.test("sequence pool: callers wait in order when all are busy; an aborted waiter leaves the queue", async () => {
  const pool = new SequencePool(1, () => ({}));
  const first = await pool.acquire({}, new AbortController().signal);
  const order: string[] = [];
  const cancel = new AbortController();
  const second = pool.acquire({}, new AbortController().signal).then((l) => {
    order.push("second");
    return l;
  });
  const cancelled = pool.acquire({}, cancel.signal).catch((e: BridgeError) => {
    order.push(e.dataCode);
  });
  const third = pool.acquire({}, new AbortController().signal).then((l) => {
    order.push("third");
    l.release();
  });
  assert.equal(pool.waiting, 3);
  cancel.abort();
  await cancelled;
  assert.equal(pool.waiting, 2);
  first.release();
  first.release(); // idempotent
  (await second).release();
  await third;
  assert.deepEqual(order, ["cancelled", "second", "third"]);
  assert.equal(pool.busy, 0);
  await assert.rejects(() => {
    const done = new AbortController();
    done.abort();
    return pool.acquire({}, done.signal);
  }, (e: BridgeError) => e.dataCode === "cancelled");
});

Deno.test("wire: a llama session on a missing file is created; its turn fails with -32001 and the reason", async () => {
  const dir = await Deno.makeTempDir();
  const client = new WireClient();
  try {
    const missing = `${dir}/nope.gguf`;
    const created = await client.call("session/create", {
      session: "s",
      model: { type: "llama", path: missing },
    });
    assert.deepEqual(created, { session: "s", warnings: [] });
    const id = client.request("session/respond", { session: "s", prompt: "Hi" });
    const response = await client.response(id);
    assert.deepEqual(response, {
      jsonrpc: "2.0",
      id,
      error: {
        code: -32001,
        message: `The model file '${missing}' does not exist; the folder ${dir} has no .gguf file.`,
        data: { code: "model_unavailable", path: missing },
      },
    });
    const list = await client.call("session/list");
    assert.equal((list.sessions as JsonObject[])[0].model, "llama");
    // A file that is not GGUF is refused before anything would load.
    const text = `${dir}/notes.gguf`;
    await Deno.writeTextFile(text, "hello");
    await client.call("session/create", { session: "t", model: { type: "llama", path: text } });
    const id2 = client.request("session/respond", { session: "t", prompt: "Hi" });
    assert.equal(
      ((await client.response(id2)).error as JsonObject).message,
      `The model file '${text}' is not a GGUF file: it does not start with 'GGUF'. Give a model in GGUF ` +
        `format (a .gguf file, such as one '${CHECKOUT_OAM} models pull <url>' downloads).`,
    );
  } finally {
    await client.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("wire: a bad llama model parameter is -32602 naming the member", async () => {
  const client = new WireClient();
  try {
    const id = client.request("session/create", { model: { type: "llama", path: "m.gguf", sequences: 0 } });
    const response = await client.response(id);
    assert.deepEqual(response.error, {
      code: -32602,
      message: "Parameter 'model.sequences' must be an integer from 1 to 64; got 0.",
      data: { code: "invalid_params" },
    });
  } finally {
    await client.close();
  }
});

Deno.test("model/availability of a GGUF host default with a missing file says why", async () => {
  const { createLlamaModel } = await import("../../src/models/llama_model.ts");
  const client = new WireClient({ systemModel: () => createLlamaModel({ path: "/nonexistent/m.gguf" }) });
  try {
    const availability = await client.call("model/availability");
    assert.deepEqual(availability, {
      available: false,
      reason: "unknown",
      contextSize: 4096,
      supportedLanguages: [],
      detail: "The model file '/nonexistent/m.gguf' does not exist; there is no folder /nonexistent.",
    });
  } finally {
    await client.close();
  }
});

Deno.test("deno.lock does not pin node-llama-cpp (every npm package in the lock is installed by deno check)", () => {
  const lock = Deno.readTextFileSync(new URL("../../deno.lock", import.meta.url));
  assert.ok(!lock.includes("node-llama-cpp"), "run GGUF models with --no-lock (the tasks do)");
});

Deno.test("every task that runs cli.ts passes --no-lock (a GGUF model tried through it would pin node-llama-cpp)", () => {
  const config = JSON.parse(Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)));
  // The parts whose script (the first argument after `deno run` and its flags) is cli.ts.
  const runs = Object.entries(config.tasks as Record<string, string>).flatMap(([name, command]) =>
    command.split("&&").map((part) => part.trim()).filter((part) => {
      const words = part.split(/\s+/);
      const run = words.indexOf("run");
      return words[run - 1] === "deno" && words.slice(run + 1).find((w) => !w.startsWith("-")) === "cli.ts";
    }).map((part) => ({ name, part }))
  );
  assert.ok(runs.length >= 6, "the stdio, serve, playground, oam, demo and models tasks run cli.ts");
  for (const { name, part } of runs) assert.match(part, /--no-lock/, `task ${name}: ${part}`);
});

Deno.test("importing mod.ts or cli.ts never pulls node-llama-cpp into the module graph", async () => {
  for (const entry of ["mod.ts", "cli.ts"]) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      cwd: new URL("../../", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    const graph = new TextDecoder().decode(output.stdout);
    assert.ok(graph.includes("llama_runtime.ts"), `${entry} includes the llama backend`);
    assert.ok(!graph.includes("node-llama-cpp"), `${entry}'s graph must not contain node-llama-cpp`);
  }
});

Deno.test("sequence pool: a closed pool hands out nothing more (its context is being unloaded)", async () => {
  const pool = new SequencePool(2, () => ({}));
  const owner = {};
  (await pool.acquire(owner, new AbortController().signal)).release();
  assert.equal(pool.closed, false);
  pool.close();
  assert.equal(pool.closed, true);
  await assert.rejects(
    () => pool.acquire(owner, new AbortController().signal),
    (e: BridgeError) =>
      e.dataCode === "model_unavailable" && e.message === "The model's context was unloaded.",
  );
  assert.equal(pool.busy, 0);
  assert.equal(pool.waiting, 0);
});

/** Runs `fn` with OAM_MODELS_DIR set to a fresh folder holding `files` (name → text), then restores it. */
async function withModelsDir(
  files: Record<string, string>,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const before = Deno.env.get("OAM_MODELS_DIR");
  Deno.env.set("OAM_MODELS_DIR", dir);
  try {
    for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(`${dir}/${name}`, text);
    await fn(dir);
  } finally {
    if (before === undefined) Deno.env.delete("OAM_MODELS_DIR");
    else Deno.env.set("OAM_MODELS_DIR", before);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a llama model's path may be a cached model's name (as `oam models pull` saved it), with or without .gguf", async () => {
  await withModelsDir({ "Tiny-Chat.gguf": "GGUF and the rest" }, async (dir) => {
    const real = await Deno.realPath(`${dir}/Tiny-Chat.gguf`);
    assert.equal(await checkModelFile("tiny-chat"), real);
    assert.equal(await checkModelFile("Tiny-Chat.gguf"), real);
    // A path is a path: it is not looked up in the cache.
    await assert.rejects(
      () => checkModelFile("./tiny-chat"),
      /The model file '\.\/tiny-chat' \(.*\/tiny-chat\) does not exist; /,
    );
  });
});

Deno.test("a gzip-compressed GGUF file (the fixture ships as tiny-chat.gguf.gz) is refused with how to unpack it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/tiny.gguf.gz`;
    const gz = new Blob(["GGUF and the rest"]).stream().pipeThrough(new CompressionStream("gzip"));
    await Deno.writeFile(path, gz);
    await assert.rejects(
      () => checkModelFile(path),
      (error) => {
        assert.ok(error instanceof BridgeError);
        assert.equal(error.dataCode, "model_unavailable");
        assert.equal(
          error.message,
          `The model file '${path}' is not a GGUF file: it is gzip-compressed. Unpack it first ` +
            `(gunzip -k '${path}') and give the .gguf file.`,
        );
        assert.deepEqual(error.data, { path });
        return true;
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("wire: a llama model named neither by a file nor by a cached model says where it looked", async () => {
  await withModelsDir({ "other.gguf": "GGUF" }, async (dir) => {
    const client = new WireClient();
    try {
      await client.call("session/create", { session: "s", model: { type: "llama", path: "qwen" } });
      const id = client.request("session/respond", { session: "s", prompt: "Hi" });
      assert.deepEqual(await client.response(id), {
        jsonrpc: "2.0",
        id,
        error: {
          code: -32001,
          message: `The model file 'qwen' does not exist, and no cached model is called that (in ${dir}: ` +
            `'${CHECKOUT_OAM} models list' shows them, '${CHECKOUT_OAM} models pull <url>' downloads one). ` +
            `Cached there: gguf:other.`,
          data: { code: "model_unavailable", path: "qwen" },
        },
      });
      // The bridge goes on serving.
      assert.deepEqual(((await client.call("session/list")).sessions as JsonObject[]).map((x) => x.session), [
        "s",
      ]);
    } finally {
      await client.close();
    }
  });
});
