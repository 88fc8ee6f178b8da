/**
 * The llama backend (`{"type": "llama"}`) against the real node-llama-cpp with the tiny fixture model, one
 * step at a time. The fixture is not a useful language model: these tests assert structure (kinds, shapes,
 * schema validity, token accounting), never wording. Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { CHECKOUT_OAM } from "../../helpers/messages.ts";
import { Ajv } from "ajv";
import { parseToolDefinitions } from "../../../src/agent/tool_definitions.ts";
import type { LanguageModel, StepRequest, StepTool } from "../../../src/models/language_model.ts";
import { createLlamaModel } from "../../../src/models/llama_model.ts";
import {
  closeLlamaModels,
  loadedLlamaContexts,
  MAX_LLAMA_CONTEXTS,
} from "../../../src/models/llama_runtime.ts";
import { BridgeError } from "../../../src/protocol/errors.ts";
import type { JsonObject } from "../../../src/protocol/json.ts";
import type { ConversationEntry } from "../../../src/protocol/transcript.ts";
import { fixtureConfig, GGUF_ENABLED } from "./fixture.ts";

const WEATHER_SCHEMA: JsonObject = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
};
const WEATHER: StepTool = {
  name: "get_weather",
  description: "Get the current weather for a city.",
  parameters: { ...WEATHER_SCHEMA, "x-order": ["city"], additionalProperties: false },
  jsonSchema: WEATHER_SCHEMA,
};
const ADD_SCHEMA: JsonObject = {
  type: "object",
  properties: { a: { type: "integer" }, b: { type: "integer" } },
  required: ["a", "b"],
};
const ADD: StepTool = {
  name: "add",
  description: "Add two integers.",
  parameters: { ...ADD_SCHEMA, "x-order": ["a", "b"], additionalProperties: false },
  jsonSchema: ADD_SCHEMA,
};
/** get_weather with a member any object (`{"type": "object"}`), parsed as a client's tool definition is. */
const WEATHER_DETAILS: StepTool = (() => {
  const [tool] = parseToolDefinitions([{
    name: "get_weather",
    description: "Get the current weather for a city.",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, details: { type: "object" } },
      required: ["city", "details"],
    },
  }], { path: "tools", defaultTimeoutMs: null }).tools;
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.generationSchema,
    jsonSchema: tool.jsonSchema,
  };
})();
/** An answer that cannot end before it has far more tokens than a small context holds. */
const WORDS: JsonObject = {
  type: "object",
  properties: { words: { type: "array", items: { type: "string" }, minItems: 400 } },
  required: ["words"],
  "x-order": ["words"],
  additionalProperties: false,
};
const DECISION_SCHEMA: JsonObject = {
  title: "Decision",
  type: "object",
  properties: {
    reasoning: { type: "string" },
    choice: { type: "string", enum: ["open", "refuse", "call_guard"] },
    confidence: { type: "integer", minimum: 0, maximum: 100 },
  },
  required: ["reasoning", "choice", "confidence"],
  "x-order": ["reasoning", "choice", "confidence"],
  additionalProperties: false,
};

function stepRequest(overrides: Partial<StepRequest> = {}): StepRequest {
  return {
    instructions: "You are a helpful assistant.",
    tools: [],
    toolCallingMode: "allowed",
    history: [],
    prompt: "What is the capital of France?",
    responseSchema: null,
    options: { sampling: { mode: "greedy" }, maximumResponseTokens: 48 },
    stream: false,
    signal: new AbortController().signal,
    ...overrides,
  };
}

function text(id: string, role: "user" | "response", value: string): ConversationEntry {
  return role === "user"
    ? { id, role, contents: [{ type: "text", id: `${id}s`, text: value }], options: {} }
    : { id, role, contents: [{ type: "text", id: `${id}s`, text: value }], assets: [] };
}

async function rejection(promise: Promise<unknown>): Promise<BridgeError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof BridgeError, `expected a BridgeError, got ${error}`);
    return error;
  }
  assert.fail("expected a failure");
}

Deno.test({
  name: "gguf: the llama backend runs the fixture model in-process",
  ignore: !GGUF_ENABLED,
  // node-llama-cpp's native addon keeps async work Deno's sanitizers cannot attribute to a test.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const config = await fixtureConfig();
    const model: LanguageModel = createLlamaModel(config);
    try {
      await t.step("availability loads the file and reports the context size", async () => {
        const availability = await model.availability();
        assert.equal(availability.available, true, availability.detail);
        assert.equal(availability.contextSize, 2048);
        assert.equal(model.contextSize, 2048);
        assert.equal(availability.variant, "tiny-chat-test");
        assert.equal(model.kind, "llama");
      });

      await t.step("plain turn: a text answer with usage", async () => {
        const result = await model.step(stepRequest());
        assert.equal(result.kind, "text");
        assert.ok(result.kind === "text" && result.text.trim().length > 0);
        assert.ok(result.usage !== null && result.usage.inputTokens > 0 && result.usage.outputTokens > 0);
      });

      await t.step("a repeated prompt is served from the sequence's cache", async () => {
        const result = await model.step(stepRequest());
        assert.ok(result.usage !== null);
        // Everything but the regenerated tail of the prompt was already evaluated.
        assert.ok(
          result.usage.cachedInputTokens >= result.usage.inputTokens - 2,
          JSON.stringify(result.usage),
        );
      });

      await t.step("a turn that extends the conversation only evaluates the new tokens", async () => {
        const first = await model.step(stepRequest({ prompt: "Hello" }));
        assert.equal(first.kind, "text");
        const history = [
          text("u1", "user", "Hello"),
          text("r1", "response", (first as { text: string }).text),
        ];
        const second = await model.step(stepRequest({ history, prompt: "Count to five." }));
        assert.ok(second.usage !== null && first.usage !== null);
        const evaluated = second.usage.inputTokens - second.usage.cachedInputTokens;
        assert.ok(second.usage.cachedInputTokens >= first.usage.inputTokens, JSON.stringify(second.usage));
        assert.ok(evaluated <= 20, `evaluated ${evaluated} tokens: ${JSON.stringify(second.usage)}`);
      });

      await t.step("streaming: snapshots grow and end with the answer", async () => {
        const snapshots: string[] = [];
        const result = await model.step(stepRequest({
          prompt: "Hello",
          stream: true,
          onText: (snapshot) => snapshots.push(snapshot),
        }));
        assert.equal(result.kind, "text");
        assert.ok(snapshots.length >= 2, `${snapshots.length} snapshots`);
        for (let i = 1; i < snapshots.length; i++) assert.ok(snapshots[i].startsWith(snapshots[i - 1]));
        assert.equal(snapshots.at(-1), (result as { text: string }).text);
      });

      await t.step("auto: the weather question calls get_weather with schema-valid arguments", async () => {
        const result = await model.step(
          stepRequest({ tools: [WEATHER, ADD], prompt: "What is the weather in Oslo?" }),
        );
        assert.equal(result.kind, "toolCalls", JSON.stringify(result));
        if (result.kind !== "toolCalls") return;
        assert.ok(result.calls.length >= 1);
        for (const call of result.calls) {
          assert.ok(["get_weather", "add"].includes(call.name));
          assert.ok(typeof call.nativeId === "string" && call.nativeId.startsWith("call_"));
        }
        assert.equal(result.calls[0].name, "get_weather");
        assert.equal(typeof result.calls[0].arguments.city, "string");
        assert.deepEqual(Object.keys(result.calls[0].arguments), ["city"]);
      });

      await t.step("required: a question without a tool intent still ends in a valid call", async () => {
        const result = await model.step(stepRequest({ tools: [ADD], toolCallingMode: "required" }));
        assert.equal(result.kind, "toolCalls", JSON.stringify(result));
        if (result.kind !== "toolCalls") return;
        for (const call of result.calls) {
          assert.equal(call.name, "add");
          assert.equal(typeof call.arguments.a, "number");
          assert.ok(Number.isInteger(call.arguments.a) && Number.isInteger(call.arguments.b));
        }
      });

      await t.step(
        "a member any object in a tool's arguments is written with members, not as {}",
        async () => {
          // Greedy, so always the same call.
          const result = await model.step(
            stepRequest({ tools: [WEATHER_DETAILS], prompt: "What is the weather in Oslo?" }),
          );
          assert.equal(result.kind, "toolCalls", JSON.stringify(result));
          if (result.kind !== "toolCalls") return;
          const [call] = result.calls;
          assert.equal(call.name, "get_weather");
          assert.deepEqual(Object.keys(call.arguments), ["city", "details"]);
          const details = call.arguments.details;
          assert.ok(
            typeof details === "object" && details !== null && !Array.isArray(details),
            JSON.stringify(call.arguments),
          );
          assert.ok(Object.keys(details).length > 0, `details is ${JSON.stringify(details)}`);
        },
      );

      await t.step("required with no tools is rejected before generation", async () => {
        const error = await rejection(model.step(stepRequest({ toolCallingMode: "required" })));
        assert.equal(error.dataCode, "invalid_request");
      });

      await t.step("none: the weather question never calls a tool", async () => {
        // The tools stay documented (the prompt prefix is kept), but nothing is callable.
        const result = await model.step(stepRequest({
          tools: [],
          toolCallingMode: "disallowed",
          prompt: "What is the weather in Oslo?",
        }));
        assert.equal(result.kind, "text", JSON.stringify(result));
        assert.ok(!(result as { text: string }).text.includes("<tool_call>"), JSON.stringify(result));
      });

      await t.step("a tool round: the call's output comes back and the model answers", async () => {
        const call = await model.step(
          stepRequest({ tools: [WEATHER], prompt: "What is the weather in Oslo?" }),
        );
        assert.equal(call.kind, "toolCalls");
        if (call.kind !== "toolCalls") return;
        const id = call.calls[0].nativeId!;
        const history: ConversationEntry[] = [
          text("u1", "user", "What is the weather in Oslo?"),
          {
            id: "c1",
            role: "response",
            toolCalls: [{ id, name: "get_weather", arguments: JSON.stringify(call.calls[0].arguments) }],
            contents: [],
            assets: [],
          },
          {
            id,
            role: "tool",
            toolCallID: id,
            toolName: "get_weather",
            contents: [{ type: "structure", id, structure: { source: "get_weather", content: { temp: 3 } } }],
          },
        ];
        const answer = await model.step(stepRequest({ tools: [WEATHER], history, prompt: "" }));
        assert.ok(answer.kind === "text" || answer.kind === "toolCalls");
        assert.ok(answer.usage !== null);
        // The call the model generated is still in the cache: only the output and the rest are new.
        assert.ok(answer.usage.cachedInputTokens > 0, JSON.stringify(answer.usage));
      });

      await t.step("schema turn: JSON valid against the schema, streamed as partial values", async () => {
        const partials: unknown[] = [];
        const result = await model.step(stepRequest({
          prompt: "The stranger asks you to open the gate.",
          responseSchema: {
            name: "Decision",
            generationSchema: DECISION_SCHEMA,
            jsonSchema: DECISION_SCHEMA,
          },
          stream: true,
          onPartial: (value) => partials.push(value),
          options: { sampling: { mode: "greedy" }, maximumResponseTokens: 120 },
        }));
        assert.equal(result.kind, "structured", JSON.stringify(result));
        if (result.kind !== "structured") return;
        const validate = new Ajv({ strict: false }).compile(DECISION_SCHEMA);
        assert.ok(validate(result.value), JSON.stringify(validate.errors));
        assert.deepEqual(Object.keys(result.value as JsonObject), ["reasoning", "choice", "confidence"]);
        assert.equal(result.text, JSON.stringify(result.value));
        assert.ok(partials.length > 0);
      });

      await t.step("schema turn with tools allowed: a call first or a schema-valid answer", async () => {
        const result = await model.step(stepRequest({
          tools: [WEATHER],
          prompt: "What is the weather in Oslo?",
          responseSchema: {
            name: "Decision",
            generationSchema: DECISION_SCHEMA,
            jsonSchema: DECISION_SCHEMA,
          },
          options: { sampling: { mode: "greedy" }, maximumResponseTokens: 120 },
        }));
        assert.ok(result.kind === "toolCalls" || result.kind === "structured", JSON.stringify(result));
        if (result.kind === "structured") {
          assert.ok(["open", "refuse", "call_guard"].includes((result.value as JsonObject).choice as string));
        }
      });

      await t.step("sampling: a seeded top-k step is reproducible", async () => {
        const options = {
          temperature: 1.2,
          sampling: { mode: "topK" as const, k: 40, seed: 7 },
          maximumResponseTokens: 24,
        };
        const a = await model.step(stepRequest({ prompt: "Hello", options }));
        const b = await model.step(stepRequest({ prompt: "Hello", options }));
        assert.deepEqual((a as { text: string }).text, (b as { text: string }).text);
        const limited = await model.step(stepRequest({
          prompt: "Count to five.",
          options: { sampling: { mode: "greedy" }, maximumResponseTokens: 2 },
        }));
        assert.ok(limited.usage !== null && limited.usage.outputTokens <= 2, JSON.stringify(limited.usage));
      });

      await t.step(
        "cancellation mid-generation stops at once; the sequence serves the next step",
        async () => {
          const controller = new AbortController();
          let snapshots = 0;
          const error = await rejection(model.step(stepRequest({
            prompt: "Count to five.",
            stream: true,
            signal: controller.signal,
            options: {
              temperature: 1.5,
              sampling: { mode: "topK", k: 200, seed: 1 },
              maximumResponseTokens: 400,
            },
            onText: () => {
              snapshots++;
              controller.abort();
            },
          })));
          assert.equal(error.dataCode, "cancelled");
          // Generation stopped at the abort: not one more snapshot (400 tokens were allowed).
          assert.equal(snapshots, 1, "no text after the abort");
          const after = await model.step(stepRequest());
          assert.equal(after.kind, "text");
        },
      );

      await t.step("a step cancelled before it starts is rejected without generating", async () => {
        const controller = new AbortController();
        controller.abort();
        const error = await rejection(model.step(stepRequest({ signal: controller.signal })));
        assert.equal(error.dataCode, "cancelled");
      });

      await t.step("two sessions in parallel each get an answer", async () => {
        const other = createLlamaModel(config);
        const [a, b] = await Promise.all([
          model.step(stepRequest({ prompt: "Hello" })),
          other.step(stepRequest({ prompt: "Count to five." })),
        ]);
        assert.equal(a.kind, "text");
        assert.equal(b.kind, "text");
      });

      await t.step("more sessions than sequences wait their turn (no error)", async () => {
        const single = await fixtureConfig({ sequences: 1 });
        const models = [createLlamaModel(single), createLlamaModel(single), createLlamaModel(single)];
        const results = await Promise.all(models.map((m) => m.step(stepRequest({ prompt: "Hello" }))));
        for (const result of results) assert.equal(result.kind, "text");
      });

      await t.step("a waiting step cancelled in the queue leaves it", async () => {
        const single = await fixtureConfig({ sequences: 1 });
        const busy = createLlamaModel(single);
        const waiting = createLlamaModel(single);
        const controller = new AbortController();
        const first = busy.step(
          stepRequest({ prompt: "Count to five.", options: { maximumResponseTokens: 30 } }),
        );
        const second = waiting.step(stepRequest({ signal: controller.signal }));
        controller.abort();
        assert.equal((await rejection(second)).dataCode, "cancelled");
        assert.equal((await first).kind, "text");
      });

      await t.step("countTokens uses the model's tokenizer", async () => {
        const short = await model.countTokens!(stepRequest({ prompt: "Hello" }));
        const long = await model.countTokens!(stepRequest({ prompt: "Hello ".repeat(50) }));
        assert.ok(short > 5 && long >= short + 45, `${short} vs ${long}`);
      });

      await t.step("context overflow fails with context_size_exceeded", async () => {
        const small = createLlamaModel(await fixtureConfig({ contextSize: 256 }));
        const error = await rejection(
          small.step(stepRequest({ prompt: "tell me about the city ".repeat(200) })),
        );
        assert.equal(error.dataCode, "context_size_exceeded", error.message);
        assert.equal(error.code, -32004);
        // A first turn: nothing to compact or start over, so the advice is the larger context.
        assert.equal(
          error.message,
          `The instructions, tools and prompt do not fit the model's 256-token context (` +
            `${error.data.contextTokens} tokens after the room kept for the answer); use a larger contextSize ` +
            `(a gguf: model's '#contextSize=8192').`,
        );
        // The model still serves prompts that fit.
        assert.equal((await small.step(stepRequest())).kind, "text");
        // A later turn: the conversation outgrew the context.
        const later = await rejection(small.step(stepRequest({
          history: [text("p1", "user", "Hello"), text("r1", "response", "Hello! How can I help you today?")],
          prompt: "tell me about the city ".repeat(200),
        })));
        assert.equal(
          later.message,
          `The conversation does not fit the model's 256-token context (${later.data.contextTokens} tokens ` +
            `after the room kept for the answer); start a new session, compact it, or use a larger contextSize.`,
        );
      });

      await t.step(
        "an answer that outgrows the context says so, and node-llama-cpp prints nothing",
        async () => {
          const small = createLlamaModel(await fixtureConfig({ contextSize: 256 }));
          const warnings: unknown[][] = [];
          // node-llama-cpp prints its warnings with console.warn and console.error: catch them.
          const { warn, error: printError } = console;
          // deno-lint-ignore no-console
          console.warn = (...args: unknown[]) => warnings.push(args);
          // deno-lint-ignore no-console
          console.error = (...args: unknown[]) => warnings.push(args);
          let error: BridgeError;
          let limited: BridgeError;
          try {
            error = await rejection(small.step(stepRequest({
              prompt: "Hello",
              options: { sampling: { mode: "greedy" } },
              responseSchema: { name: "Words", generationSchema: WORDS, jsonSchema: WORDS },
            })));
            // A token limit larger than the context: the advice is to lower it.
            limited = await rejection(small.step(stepRequest({
              prompt: "Hello",
              options: { sampling: { mode: "greedy" }, maximumResponseTokens: 3000 },
              responseSchema: { name: "Words", generationSchema: WORDS, jsonSchema: WORDS },
            })));
            // A prompt that does not fit does not make node-llama-cpp print either.
            await rejection(small.step(stepRequest({ prompt: "tell me about the city ".repeat(200) })));
          } finally {
            // deno-lint-ignore no-console
            console.warn = warn;
            // deno-lint-ignore no-console
            console.error = printError;
          }
          assert.equal(error.dataCode, "context_size_exceeded", error.message);
          assert.match(
            error.message,
            /^The answer outgrew the model's 256-token context; give it a token limit \(maxResponseTokens /,
          );
          // A token limit larger than the context: lower it.
          assert.match(
            limited.message,
            /^The answer outgrew the model's 256-token context; lower its token limit \(3000\) \(maxResponseTokens /,
          );
          assert.ok(
            error.message.endsWith(
              "(maxResponseTokens in a session's options, maximumResponseTokens in an NPC's) or use a larger " +
                "contextSize (a gguf: model's '#contextSize=8192').",
            ),
            error.message,
          );
          assert.deepEqual(warnings, []);
          // The model still serves prompts that fit.
          assert.equal((await small.step(stepRequest())).kind, "text");
        },
      );
    } finally {
      await closeLlamaModels();
    }
  },
});

Deno.test({
  name: "gguf: a corrupt or missing file makes the model unavailable with the reason",
  ignore: !GGUF_ENABLED,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const truncated = `${dir}/truncated.gguf`;
      const bytes = await Deno.readFile((await fixtureConfig()).path);
      await Deno.writeFile(truncated, bytes.subarray(0, 4096));
      const model = createLlamaModel({ path: truncated, gpu: false, threads: 1 });
      const availability = await model.availability();
      assert.equal(availability.available, false);
      assert.equal(availability.reason, "unknown");
      assert.equal(
        availability.detail,
        `node-llama-cpp could not load '${truncated}': Failed to load model. The file may be incomplete or ` +
          `damaged (download it again: '${CHECKOUT_OAM} models pull --force <url>'), or its model architecture may be ` +
          `newer than this llama.cpp (node-llama-cpp 3.21.1).`,
      );
      const error = await rejection(model.step(stepRequest()));
      assert.equal(error.dataCode, "model_unavailable");
      assert.equal(error.code, -32001);
    } finally {
      await closeLlamaModels();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** Whether this machine has an NVIDIA driver (then a CUDA binary may well run). */
function hasNvidiaDriver(): boolean {
  try {
    Deno.statSync("/proc/driver/nvidia/version");
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name:
    "gguf: gpu 'cuda' where no CUDA binary runs names the GPU type and the fix, not just 'NoBinaryFoundError'",
  ignore: !GGUF_ENABLED || Deno.build.os !== "linux" || hasNvidiaDriver(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    try {
      const model = createLlamaModel(await fixtureConfig({ gpu: "cuda" }));
      const availability = await model.availability();
      assert.equal(availability.available, false);
      assert.equal(
        availability.detail,
        `llama.cpp could not start with gpu "cuda": none of node-llama-cpp 3.21.1's cuda binaries runs on this ` +
          `linux ${Deno.build.arch} machine (is the cuda runtime installed?). Use gpu "auto", which falls back ` +
          `to the CPU, or false (on the command line: #gpu=auto or #gpu=false).`,
      );
      // The CPU still works in the same process.
      assert.equal((await createLlamaModel(await fixtureConfig()).availability()).available, true);
    } finally {
      await closeLlamaModels();
    }
  },
});

Deno.test({
  name: "gguf: gpu 'metal' off macOS is unavailable and says so, instead of running on the CPU unasked",
  ignore: !GGUF_ENABLED || Deno.build.os === "darwin",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    try {
      // node-llama-cpp answers a metal request here with its CPU binary (llama.gpu === false), without a word.
      const availability = await createLlamaModel(await fixtureConfig({ gpu: "metal" })).availability();
      assert.equal(availability.available, false);
      assert.equal(
        availability.detail,
        `llama.cpp could not start with gpu "metal": node-llama-cpp 3.21.1 would run on the CPU instead on this ` +
          `${Deno.build.os} ${Deno.build.arch} machine. Use gpu "auto", which picks what this machine has, or ` +
          `false for the CPU (on the command line: #gpu=auto or #gpu=false).`,
      );
    } finally {
      await closeLlamaModels();
    }
  },
});

Deno.test({
  name: "gguf: contexts of other settings beyond the limit are unloaded when idle, and load again when used",
  ignore: !GGUF_ENABLED,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    try {
      // One model per settings (contextSize 256, 512, …), one sequence each: every one is its own context.
      const settings = Array.from({ length: MAX_LLAMA_CONTEXTS + 2 }, (_, i) => 256 * (i + 1));
      const models = await Promise.all(
        settings.map(async (contextSize) =>
          createLlamaModel(await fixtureConfig({ contextSize, sequences: 1 }))
        ),
      );
      for (const [i, model] of models.entries()) {
        assert.equal((await model.step(stepRequest())).kind, "text");
        // Loading settles a tick after the step that asked for it.
        await new Promise((resolve) => setTimeout(resolve, 0));
        assert.equal(loadedLlamaContexts(), Math.min(i + 1, MAX_LLAMA_CONTEXTS), `after model ${i + 1}`);
      }
      // The first settings were unloaded: a turn on them loads them again (unloading the least recent one).
      assert.equal((await models[0].step(stepRequest())).kind, "text");
      assert.equal(loadedLlamaContexts(), MAX_LLAMA_CONTEXTS);
      // A context in use is never unloaded: with every model busy at once, all of them stay loaded meanwhile.
      const busy = await Promise.all(models.map((model) => model.step(stepRequest())));
      assert.deepEqual(busy.map((result) => result.kind), models.map(() => "text"));
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.ok(loadedLlamaContexts() >= MAX_LLAMA_CONTEXTS);
    } finally {
      await closeLlamaModels();
    }
  },
});
