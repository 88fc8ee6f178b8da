/**
 * The llama backend on the wire, with the fixture model: a session turn and a streamed one through the
 * engine, a decision that always yields one of its options, an NPC reply, `model/availability` of a GGUF host
 * default; then the real processes: `oam models pull` from a local HTTP server serving the fixture, `oam
 * respond --model gguf:<cached name>`, and `oam stdio --model gguf:<path>`. Structure, not wording.
 * Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { createLlamaModel } from "../../../src/models/llama_model.ts";
import { closeLlamaModels } from "../../../src/models/llama_runtime.ts";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { WireClient } from "../../helpers/wire.ts";
import { fixtureConfig, GGUF_ENABLED, GGUF_RUN_FLAGS } from "./fixture.ts";

const CLI = new URL("../../../cli.ts", import.meta.url).pathname;
/** A real model on a shared 2-core machine: loading and generating can take seconds under load. */
const SLOW_MS = 120_000;

/** `client.call` with a model-sized timeout. */
async function callSlow(client: WireClient, method: string, params?: JsonObject): Promise<JsonObject> {
  const response = await client.response(client.request(method, params), SLOW_MS);
  if ("error" in response) throw new Error(`${method} failed: ${JSON.stringify(response.error)}`);
  return response.result as JsonObject;
}

Deno.test({
  name: "gguf wire: sessions, decisions and NPCs on a llama model",
  ignore: !GGUF_ENABLED,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const config = await fixtureConfig();
    const llama = { type: "llama", ...config } as unknown as JsonObject;
    const client = new WireClient({ systemModel: () => createLlamaModel(config) });
    try {
      await t.step("model/availability of the GGUF host default", async () => {
        const availability = await callSlow(client, "model/availability");
        assert.deepEqual(availability, {
          available: true,
          contextSize: 2048,
          variant: "tiny-chat-test",
          supportedLanguages: [],
        });
      });

      await t.step("session/respond streams text events that add up to the result", async () => {
        await callSlow(client, "session/create", {
          session: "s",
          instructions: "You are a helpful assistant.",
          model: llama,
        });
        const id = client.request("session/respond", { session: "s", prompt: "Hello", stream: true });
        const response = await client.response(id, SLOW_MS);
        const result = response.result as JsonObject;
        assert.equal(typeof result.text, "string");
        const texts = client.related(id).filter((m) => (m.params as JsonObject)?.event !== undefined)
          .map((m) => (m.params as JsonObject).event as JsonObject).filter((e) => e.type === "text");
        assert.ok(texts.length >= 1);
        assert.equal(texts.map((e) => e.delta).join(""), result.text);
        const usage = result.usage as JsonObject;
        assert.ok((usage.inputTokens as number) > 0 && (usage.outputTokens as number) > 0);
        const list = await callSlow(client, "session/list");
        assert.equal((list.sessions as JsonObject[])[0].model, "llama");
      });

      await t.step("a forced client tool call goes out as tool/call with valid arguments", async () => {
        await callSlow(client, "session/create", {
          session: "w",
          instructions: "You are a helpful assistant.",
          tools: [{
            name: "get_weather",
            description: "Get the current weather for a city.",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          }],
          options: { toolChoice: "required", maxToolRounds: 1 },
          model: llama,
        });
        const id = client.request("session/respond", {
          session: "w",
          prompt: "What is the weather in Oslo?",
        });
        const call = await client.toolCall(1, SLOW_MS);
        const params = call.params as JsonObject;
        assert.equal((params.call as JsonObject).name, "get_weather");
        assert.equal(typeof ((params.call as JsonObject).arguments as JsonObject).city, "string");
        client.reply(call.id!, { output: { temperature: 3, sky: "snow" } });
        const response = await client.response(id, SLOW_MS);
        const result = response.result as JsonObject;
        assert.equal((result.toolCalls as JsonObject[]).length >= 1, true, JSON.stringify(response));
        assert.equal(typeof result.text, "string");
      });

      await t.step("decision/decide returns one of the options", async () => {
        const options = ["flee", "fight", "parley"];
        for (const situation of ["A wolf blocks the road.", "The guard draws his sword."]) {
          const decision = await callSlow(client, "decision/decide", {
            situation,
            options: options.map((id) => ({ id, description: `Choose to ${id}` })),
            model: llama,
          });
          assert.ok(options.includes(decision.optionID as string), JSON.stringify(decision));
          assert.equal(typeof decision.reasoning, "string");
          assert.equal(typeof decision.confidence, "number");
        }
      });

      await t.step(
        "a decision's tool warnings are the llama model's: a free-form object it fills is not one",
        async () => {
          // The llama grammar fills an object that takes any members; the on-device model's {} is not its.
          const inspect = {
            name: "inspect",
            description: "Looks at the stranger.",
            parameters: {
              type: "object",
              properties: { notes: { type: "object", additionalProperties: true } },
            },
          };
          const request = {
            situation: "A stranger walks in.",
            options: ["greet", "ignore"],
            tools: [inspect],
          };
          const decision = await callSlow(client, "decision/decide", {
            ...request,
            toolChoice: "none",
            model: llama,
          });
          assert.equal(decision.warnings, undefined, JSON.stringify(decision.warnings));
          const many = await callSlow(client, "decision/decideMany", {
            requests: [{ ...request, toolChoice: "none" }],
            model: llama,
          });
          assert.equal(many.warnings, undefined, JSON.stringify(many.warnings));
        },
      );

      await t.step("npc/talk answers with a line and an emotion from the list", async () => {
        await callSlow(client, "npc/create", {
          npc: "gorm",
          persona: { name: "Gorm", role: "the village blacksmith" },
          options: { replyFormat: "structured", toolChoice: "none", compactAfterTurns: 0 },
          model: llama,
        });
        for (const line of ["Hello", "What is the capital of France?"]) {
          const reply = await callSlow(client, "npc/talk", { npc: "gorm", line });
          assert.equal(typeof reply.line, "string", JSON.stringify(reply));
          assert.equal(typeof reply.emotion, "string");
          assert.ok(Array.isArray(reply.playerOptions));
          assert.equal(typeof reply.endsConversation, "boolean");
        }
      });
    } finally {
      await client.close();
      await closeLlamaModels();
    }
  },
});

function serveFile(path: string): { url: string; close(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    if (new URL(request.url).pathname !== "/models/tiny-chat.gguf") {
      return new Response(null, { status: 404 });
    }
    const file = await Deno.open(path, { read: true });
    const size = (await file.stat()).size;
    return new Response(file.readable, { headers: { "content-length": String(size) } });
  });
  return { url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`, close: () => server.shutdown() };
}

async function run(args: string[], env: Record<string, string>, stdin?: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...GGUF_RUN_FLAGS, "--allow-net=127.0.0.1", CLI, ...args],
    env: { ...env, NO_COLOR: "1" },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test({
  name: "gguf processes: pull the fixture from a local server, then respond and serve stdio with it",
  ignore: !GGUF_ENABLED,
  async fn() {
    const fixture = (await fixtureConfig()).path;
    const server = serveFile(fixture);
    const dir = await Deno.makeTempDir();
    const env = { OAM_MODELS_DIR: dir };
    try {
      const pulled = await run(["models", "pull", `${server.url}/models/tiny-chat.gguf`], env);
      assert.equal(pulled.code, 0, pulled.stderr);
      assert.deepEqual(await Deno.readFile(`${dir}/tiny-chat.gguf`), await Deno.readFile(fixture));

      const respond = await run(
        ["respond", "--json", "--model", "gguf:tiny-chat#gpu=false,threads=1,contextSize=2048", "Hello"],
        env,
      );
      assert.equal(respond.code, 0, respond.stderr);
      const result = JSON.parse(respond.stdout);
      assert.equal(typeof result.text, "string");
      assert.ok(result.usage.inputTokens > 0);

      const missing = await run(["respond", "--model", `gguf:${dir}/none.gguf`, "Hello"], env);
      assert.equal(missing.code, 3, missing.stderr);
      assert.match(missing.stderr, /does not exist/);

      const lines = [
        { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "1.0" } },
        { jsonrpc: "2.0", id: 2, method: "session/create", params: { session: "s" } },
        { jsonrpc: "2.0", id: 3, method: "session/respond", params: { session: "s", prompt: "Hello" } },
      ].map((m) => JSON.stringify(m)).join("\n") + "\n";
      const stdio = await run(
        ["stdio", "--model", `gguf:${dir}/tiny-chat.gguf#gpu=false,threads=1,contextSize=2048`],
        env,
        lines,
      );
      assert.equal(stdio.code, 0, stdio.stderr);
      // initialize waits for the model to load; the create's response may come first (only the order of
      // the turn's own messages is guaranteed), so the responses are looked at by id.
      const messages = stdio.stdout.trim().split("\n").map((l) => JSON.parse(l))
        .sort((a, b) => a.id - b.id);
      assert.deepEqual(messages.map((m) => m.id), [1, 2, 3]);
      assert.equal(messages[0].result.model.available, true);
      assert.equal(messages[0].result.model.contextSize, 2048);
      assert.equal(typeof messages[2].result.text, "string");

      // A wire client (a typed-client script's modelFromArgs(["--model", "gguf:tiny-chat"]) sends the same) names
      // the pulled model by its name alone.
      const byName = [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "session/create",
          params: {
            session: "s",
            model: { type: "llama", path: "tiny-chat", gpu: false, threads: 1, contextSize: 2048 },
          },
        },
        { jsonrpc: "2.0", id: 2, method: "session/respond", params: { session: "s", prompt: "Hello" } },
      ].map((m) => JSON.stringify(m)).join("\n") + "\n";
      const named = await run(["stdio"], env, byName);
      assert.equal(named.code, 0, named.stderr);
      const answers = named.stdout.trim().split("\n").map((l) => JSON.parse(l));
      assert.deepEqual(answers.map((m) => m.id), [1, 2]);
      assert.equal(typeof answers[1].result?.text, "string", named.stdout);
    } finally {
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "gguf processes: with the narrow permissions of deno task stdio, availability names the missing ones and the task that has them",
  ignore: !GGUF_ENABLED,
  async fn() {
    const fixture = (await fixtureConfig()).path;
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "model/availability" },
    ].map((m) => JSON.stringify(m)).join("\n") + "\n";
    const child = new Deno.Command(Deno.execPath(), {
      // The stdio task's permissions (deno.json), plus --no-lock as every GGUF run needs.
      args: [
        "run",
        "--quiet",
        "--no-lock",
        "--no-prompt",
        "--allow-env=OAM_FM_LIBRARY,OAM_SCRIPT,OAM_MODEL",
        "--allow-read",
        "--allow-ffi",
        CLI,
        "stdio",
        "--model",
        `gguf:${fixture}`,
      ],
      env: { NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(SLOW_MS),
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(lines));
    await writer.close();
    const output = await child.output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    const answer = JSON.parse(new TextDecoder().decode(output.stdout).trim());
    assert.equal(answer.id, 1);
    assert.equal(answer.result.available, false);
    assert.match(
      answer.result.detail,
      /It needs --allow-read --allow-env --allow-sys --allow-ffi --allow-run/,
    );
    assert.match(answer.result.detail, /deno task oam:local serve --model gguf:/);
  },
});
