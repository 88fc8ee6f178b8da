/**
 * Integration tests of the OpenAI-compatible backend against a REAL llama.cpp server running the tiny
 * fixture model (see ../shared/models/README.md (beside the repository) and scripts/llama/build.sh). Structure is asserted,
 * not model quality. Runs only with OAM_LLAMA_TESTS=1 (`deno task test:llama`).
 */
import assert from "node:assert/strict";
import type { StepRequest, StepResult, StepTool } from "../../src/models/language_model.ts";
import { createOpenAIModel } from "../../src/models/openai_model.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import type { ConversationEntry } from "../../src/protocol/transcript.ts";
import { LLAMA_ENABLED, type LlamaServer, note, startLlamaServer } from "./llama_server.ts";

const ignore = !LLAMA_ENABLED;

const WEATHER: StepTool = {
  name: "get_weather",
  description: "Get the current weather for a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  jsonSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

function stepRequest(overrides: Partial<StepRequest> = {}): StepRequest {
  return {
    instructions: null,
    tools: [],
    toolCallingMode: "allowed",
    history: [],
    prompt: "Hello",
    responseSchema: null,
    options: { sampling: { mode: "greedy" }, maximumResponseTokens: 64 },
    stream: false,
    signal: new AbortController().signal,
    ...overrides,
  };
}

function assertUsage(result: StepResult): void {
  assert.ok(result.usage !== null, "llama.cpp reports usage");
  assert.ok(result.usage.inputTokens > 0);
  assert.ok(result.usage.outputTokens > 0);
  assert.ok(
    result.usage.cachedInputTokens >= 0 && result.usage.cachedInputTokens <= result.usage.inputTokens,
  );
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
  name: "llama.cpp: the openai backend against a real llama-server",
  ignore,
  sanitizeResources: true,
  sanitizeOps: true,
  async fn(t) {
    const started = performance.now();
    const server: LlamaServer = await startLlamaServer();
    const startup = performance.now() - started;
    try {
      const model = createOpenAIModel({ baseURL: server.baseURL, model: "tiny-chat" });

      await t.step("availability reads the slot context size", async () => {
        const availability = await model.availability();
        assert.equal(availability.available, true, availability.detail);
        assert.equal(availability.variant, "tiny-chat");
        // -c 4096 shared by -np 2 slots.
        assert.equal(availability.contextSize, 2048);
        assert.equal(model.contextSize, 2048);
      });

      await t.step("plain turn", async () => {
        const result = await model.step(
          stepRequest({ instructions: "You are a helpful assistant.", prompt: "Hello" }),
        );
        assert.equal(result.kind, "text");
        assert.ok(result.kind === "text" && result.text.length > 0);
        assertUsage(result);
      });

      await t.step("forced tool call (required)", async () => {
        const result = await model.step(
          stepRequest({
            prompt: "What is the weather in Oslo?",
            tools: [WEATHER],
            toolCallingMode: "required",
          }),
        );
        assert.equal(result.kind, "toolCalls");
        if (result.kind !== "toolCalls") return;
        assert.ok(result.calls.length >= 1);
        for (const call of result.calls) {
          assert.equal(call.name, "get_weather");
          assert.equal(typeof call.arguments.city, "string");
          assert.equal(typeof call.nativeId, "string");
        }
        assertUsage(result);
      });

      await t.step("continuation after a tool output (no empty user message)", async () => {
        const history: ConversationEntry[] = [
          {
            id: "p",
            role: "user",
            contents: [{ type: "text", id: "s1", text: "What is the weather in Oslo?" }],
            options: {},
          },
          {
            id: "c",
            role: "response",
            toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' }],
            contents: [],
            assets: [],
          },
          {
            id: "call_1",
            role: "tool",
            toolCallID: "call_1",
            toolName: "get_weather",
            contents: [{ type: "text", id: "s2", text: "Rain, 4 degrees." }],
          },
        ];
        const allowed = await model.step(stepRequest({ history, prompt: "", tools: [WEATHER] }));
        assert.ok(allowed.kind === "text" || allowed.kind === "toolCalls");
        const disallowed = await model.step(
          stepRequest({ history, prompt: "", tools: [], toolCallingMode: "disallowed" }),
        );
        assert.equal(disallowed.kind, "text");
      });

      await t.step("schema turn", async () => {
        const schema: JsonObject = {
          type: "object",
          properties: { answer: { type: "string" }, confident: { type: "boolean" } },
          required: ["answer", "confident"],
        };
        const result = await model.step(
          stepRequest({
            prompt: "What is the capital of France?",
            responseSchema: { name: "Answer", generationSchema: {}, jsonSchema: schema },
          }),
        );
        assert.equal(result.kind, "structured");
        if (result.kind !== "structured") return;
        const value = result.value as JsonObject;
        assert.deepEqual(Object.keys(value), ["answer", "confident"]);
        assert.equal(typeof value.answer, "string");
        assert.equal(typeof value.confident, "boolean");
        assert.equal(result.text, JSON.stringify(value));
      });

      await t.step(
        "forced tool call in a schema turn (no response_format on the required step)",
        async () => {
          const result = await model.step(
            stepRequest({
              prompt: "What is the weather in Oslo?",
              tools: [WEATHER],
              toolCallingMode: "required",
              responseSchema: {
                name: "Report",
                generationSchema: {},
                jsonSchema: {
                  type: "object",
                  properties: { summary: { type: "string" } },
                  required: ["summary"],
                },
              },
            }),
          );
          assert.equal(result.kind, "toolCalls");
        },
      );

      await t.step("streaming", async () => {
        const snapshots: string[] = [];
        const result = await model.step(
          stepRequest({ prompt: "Count to five.", stream: true, onText: (s) => snapshots.push(s) }),
        );
        assert.equal(result.kind, "text");
        if (result.kind !== "text") return;
        assert.ok(snapshots.length >= 2, `several snapshots, got ${snapshots.length}`);
        for (let i = 1; i < snapshots.length; i++) assert.ok(snapshots[i].startsWith(snapshots[i - 1]));
        assert.equal(snapshots.at(-1), result.text);
        assertUsage(result);
      });

      await t.step("streamed tool call", async () => {
        const result = await model.step(
          stepRequest({
            prompt: "What is the weather in Oslo?",
            tools: [WEATHER],
            stream: true,
            onText: () => {},
          }),
        );
        assert.equal(result.kind, "toolCalls");
      });

      await t.step("cancellation mid-stream", async () => {
        const controller = new AbortController();
        let aborted = 0;
        const step = model.step(
          stepRequest({
            // No token limit, temperature 1: the stream runs until cancelled.
            options: { temperature: 1, sampling: { mode: "topK", k: 50, seed: 1 } },
            prompt: "Tell me a very long story about Oslo.",
            stream: true,
            signal: controller.signal,
            onText: () => {
              if (aborted === 0) {
                aborted = performance.now();
                controller.abort();
              }
            },
          }),
        );
        const error = await rejection(step);
        assert.equal(error.dataCode, "cancelled");
        assert.ok(performance.now() - aborted < 1000, "rejected at once");
        // The server stops generating: every slot is idle again shortly after the abort.
        const slotsURL = `${server.baseURL.replace(/\/v1$/, "")}/slots`;
        const deadline = Date.now() + 3000;
        let busy = true;
        while (busy && Date.now() < deadline) {
          const slots = await (await fetch(slotsURL)).json() as { is_processing: boolean }[];
          busy = slots.some((slot) => slot.is_processing);
          if (busy) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.equal(busy, false, "the aborted request freed its slot");
        const after = await model.step(stepRequest({ prompt: "Hello" }));
        assert.equal(after.kind, "text");
      });

      await t.step("two steps in parallel", async () => {
        const results = await Promise.all([
          model.step(stepRequest({ prompt: "Hello", stream: true, onText: () => {} })),
          model.step(stepRequest({ prompt: "What is the capital of France?" })),
        ]);
        for (const result of results) {
          assert.equal(result.kind, "text");
          assertUsage(result);
        }
      });

      await t.step("a prompt beyond the context maps to context_size_exceeded", async () => {
        const error = await rejection(model.step(stepRequest({ prompt: "word ".repeat(3000) })));
        assert.equal(error.dataCode, "context_size_exceeded");
        assert.equal(error.data.status, 400);
        assert.match(String(error.data.serverMessage), /exceeds the available context size/);
      });
    } catch (error) {
      note(server.log().slice(-3000));
      throw error;
    } finally {
      await server.stop();
    }
    note(`llama-server ready in ${Math.round(startup)} ms`);
  },
});

Deno.test({
  name: "llama.cpp: --api-key is enforced and the backend's apiKey is accepted",
  ignore,
  async fn() {
    const server = await startLlamaServer({ apiKey: "secret-key" });
    try {
      const without = createOpenAIModel({ baseURL: server.baseURL, model: "tiny-chat" });
      const error = await rejection(without.step(stepRequest()));
      assert.equal(error.dataCode, "model_unavailable");
      assert.equal(error.data.status, 401);
      assert.equal(error.data.reason, "auth");
      assert.equal((await without.availability()).available, false);
      const withKey = createOpenAIModel({
        baseURL: server.baseURL,
        model: "tiny-chat",
        apiKey: "secret-key",
      });
      assert.equal((await withKey.step(stepRequest())).kind, "text");
    } finally {
      await server.stop();
    }
  },
});
