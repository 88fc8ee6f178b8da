/**
 * The OpenAI-compatible backend keeps the prompt prefix a server can cache: every step of a turn sends the
 * same `tools` (restricted by `tool_choice`), llama.cpp (which takes a named choice as "auto") gets
 * "required", a server that refuses `tool_choice` gets the narrowed lists, and a retry after an invalid
 * answer never repeats the request that failed (the step fails after its attempts; the agent does not run
 * the same requests again).
 */
import assert from "node:assert/strict";
import type { StepRequest, StepTool } from "../../src/models/language_model.ts";
import { createOpenAIModel, OPENAI_STEP_ATTEMPTS } from "../../src/models/openai_model.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { completion, json, MockServer, toolCall } from "./openai_mock_server.ts";
import { Wire } from "./openai_wire.ts";

const LOOK: StepTool = {
  name: "look",
  description: "Look at something.",
  parameters: { type: "object", properties: { at: { type: "string" } }, required: ["at"] },
  jsonSchema: { type: "object", properties: { at: { type: "string" } }, required: ["at"] },
};
const TAKE: StepTool = {
  name: "take",
  description: "Take something.",
  parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
  jsonSchema: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
};

function step(overrides: Partial<StepRequest>): StepRequest {
  return {
    instructions: "Be brief.",
    tools: [],
    toolCallingMode: "allowed",
    history: [],
    prompt: "Hello",
    responseSchema: null,
    options: {},
    stream: false,
    signal: new AbortController().signal,
    ...overrides,
  };
}

const TOOL_DEFS = [LOOK, TAKE].map((t) => ({
  type: "function",
  function: { name: t.name, parameters: t.jsonSchema, description: t.description },
}));

/** Answers a forced step with a valid `look` call, any other with text. */
function answer(request: { body: JsonValue | null }): Response {
  const choice = (request.body as JsonObject).tool_choice;
  return choice === undefined || choice === "auto" || choice === "none"
    ? json(completion("Fine."))
    : json(completion(null, { toolCalls: [toolCall("c", "look", '{"at":"cup"}')] }));
}

Deno.test("openai cache: the offered tools go out on every step; tool_choice restricts them", async () => {
  const server = new MockServer(answer);
  try {
    const model = createOpenAIModel({ baseURL: server.baseURL, model: "m" });
    const offeredTools = [LOOK, TAKE];
    await model.step(step({ tools: [LOOK], offeredTools, toolCallingMode: "required" }));
    await model.step(step({ tools: [LOOK, TAKE], offeredTools, toolCallingMode: "required" }));
    await model.step(step({ tools: [LOOK, TAKE], offeredTools, toolCallingMode: "allowed" }));
    await model.step(step({ tools: [LOOK], offeredTools, toolCallingMode: "allowed" }));
    await model.step(step({ tools: [], offeredTools, toolCallingMode: "disallowed" }));
    const bodies = server.chatBodies as JsonObject[];
    for (const body of bodies) assert.deepEqual(body.tools, TOOL_DEFS);
    assert.deepEqual(bodies.map((b) => b.tool_choice), [
      { type: "function", function: { name: "look" } },
      "required",
      "auto",
      "auto",
      "none",
    ]);
  } finally {
    await server.close();
  }
});

Deno.test("openai cache: llama.cpp gets 'required' for a named tool, validated afterwards", async () => {
  // llama.cpp adds `timings` to its answers; from then on a named choice (which it would take as "auto")
  // is sent as "required", and a call to another tool is an invalid answer fed back to the model.
  const llama = (body: JsonValue) => json({ ...(body as JsonObject), timings: { prompt_n: 3, cache_n: 10 } });
  const server = new MockServer([
    () => llama(completion("Hi.")),
    () => llama(completion(null, { toolCalls: [toolCall("c1", "take", '{"item":"cup"}')] })),
    () => llama(completion(null, { toolCalls: [toolCall("c2", "look", '{"at":"cup"}')] })),
  ]);
  try {
    const model = createOpenAIModel({ baseURL: server.baseURL, model: "m" });
    await model.step(step({ tools: [LOOK, TAKE], offeredTools: [LOOK, TAKE] }));
    const result = await model.step(
      step({ tools: [LOOK], offeredTools: [LOOK, TAKE], toolCallingMode: "required" }),
    );
    assert.deepEqual(result.kind === "toolCalls" && result.calls.map((c) => c.name), ["look"]);
    const [, forced, retried] = server.chatBodies as JsonObject[];
    assert.equal(forced.tool_choice, "required");
    assert.deepEqual(forced.tools, TOOL_DEFS);
    const tail = (retried.messages as JsonObject[]).slice(-2);
    assert.equal(tail[0].role, "assistant");
    assert.deepEqual(tail[1], {
      role: "tool",
      tool_call_id: "c1",
      content:
        "Error: That answer could not be used: the model called an unknown tool 'take' (offered: look). " +
        "Call the tool 'look' now, with valid arguments.",
    });
  } finally {
    await server.close();
  }
});

Deno.test("openai cache: a server that refuses tool_choice gets the step's own tools from then on", async () => {
  const server = new MockServer([
    () =>
      json({ error: { message: "tool_choice 'none' is not supported", type: "invalid_request_error" } }, 400),
    answer,
  ]);
  try {
    const model = createOpenAIModel({ baseURL: server.baseURL, model: "m" });
    await model.step(step({ tools: [], offeredTools: [LOOK, TAKE], toolCallingMode: "disallowed" }));
    await model.step(step({ tools: [LOOK], offeredTools: [LOOK, TAKE], toolCallingMode: "required" }));
    const [refused, narrowed, later] = server.chatBodies as JsonObject[];
    assert.equal(refused.tool_choice, "none");
    assert.equal(Object.hasOwn(narrowed, "tools"), false);
    assert.equal(Object.hasOwn(narrowed, "tool_choice"), false);
    assert.deepEqual(later.tools, [TOOL_DEFS[0]]);
    assert.equal(later.tool_choice, "required");
  } finally {
    await server.close();
  }
});

Deno.test("openai cache: an invalid answer is never asked for again with the same request", async () => {
  // The server keeps calling a tool with bad arguments: three different requests (each carries the answers
  // and problems so far), then the turn fails at once; the agent does not run the step again.
  const server = new MockServer(() => json(completion(null, { toolCalls: [toolCall("c", "look", "{}")] })));
  const wire = new Wire();
  try {
    wire.send({
      id: 1,
      method: "session/create",
      params: {
        session: "s",
        tools: [{ name: "look", description: "Look.", parameters: LOOK.jsonSchema }],
        options: { toolChoice: "required", sampling: "greedy" },
        model: { type: "openai", baseURL: server.baseURL, model: "m" },
      },
    });
    await wire.response(1);
    wire.send({ id: 2, method: "session/respond", params: { session: "s", prompt: "Look around." } });
    const error = (await wire.response(2)).error as JsonObject;
    assert.equal(error.code, -32012);
    assert.equal((error.data as JsonObject).attempts, OPENAI_STEP_ATTEMPTS);
    const bodies = server.chatBodies.map((b) => JSON.stringify(b));
    assert.equal(bodies.length, OPENAI_STEP_ATTEMPTS);
    for (let i = 1; i < bodies.length; i++) assert.notEqual(bodies[i], bodies[i - 1]);
    const messages = (server.chatBodies as JsonObject[]).map((b) => (b.messages as JsonValue[]).length);
    assert.deepEqual(messages, [1, 3, 5], "each retry appends the answer and the problem");
  } finally {
    await wire.engine.shutdown();
    await server.close();
  }
});
