/**
 * §5 `session/respond` over the wire: result shape and key order, schema turns, per-turn overrides,
 * `{tool}` checked at turn start, validation errors.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { invalidParams, tool } from "../helpers/messages.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";

function step(index: number, rounds: number, mode: string, tools: string[]): JsonObject {
  return {
    index,
    completedToolRounds: rounds,
    toolCallingMode: mode,
    enabledTools: tools,
    trimmedEntries: 0,
  };
}

const DECISION = {
  type: "object",
  properties: {
    reasoning: { type: "string" },
    choice: { type: "string", enum: ["open", "refuse"] },
  },
  required: ["reasoning", "choice"],
};

Deno.test("respond: result keys session,text,toolCalls,usage,steps; usage total = input + output", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "r", model: scripted({ text: "Hello there." }) });
  c.request("session/respond", { session: "r", prompt: "Hi" }, 1);
  const r = await c.response(1);
  assert.deepEqual(c.related(1).map(WireClient.kind), ["response"]);
  const result = r.result as JsonObject;
  assert.deepEqual(Object.keys(result), ["session", "text", "toolCalls", "usage", "steps"]);
  assert.equal(result.session, "r");
  assert.equal(result.text, "Hello there.");
  assert.deepEqual(result.toolCalls, []);
  const usage = result.usage as Record<string, number>;
  assert.deepEqual(Object.keys(usage), ["inputTokens", "cachedInputTokens", "outputTokens", "totalTokens"]);
  assert.equal(usage.totalTokens, usage.inputTokens + usage.outputTokens);
  assert.ok(usage.inputTokens > 0 && usage.outputTokens > 0);
  assert.deepEqual(result.steps, [step(0, 0, "disallowed", [])]);
  assert.ok(
    c.lines.at(-1)!.includes(
      '"steps":[{"index":0,"completedToolRounds":0,"toolCallingMode":"disallowed","enabledTools":[],"trimmedEntries":0}]}}',
    ),
  );
  await c.close();
});

Deno.test("respond: an empty prompt is allowed", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "e", model: scripted({ template: "[{prompt}]" }) });
  assert.equal((await c.call("session/respond", { session: "e", prompt: "" })).text, "[]");
  await c.close();
});

Deno.test("respond: schema turn gives structured (schema key order) and text = its JSON", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "d",
    model: scripted(
      { json: { choice: "refuse", reasoning: "The chain is jammed." } },
      { text: '{"choice":"open","reasoning":"ok"}' },
    ),
  });
  c.request("session/respond", { session: "d", prompt: "Open?", schema: DECISION, stream: true }, 1);
  const r = (await c.response(1)).result as JsonObject;
  assert.deepEqual(Object.keys(r), ["session", "text", "structured", "toolCalls", "usage", "steps"]);
  assert.equal(r.text, '{"reasoning":"The chain is jammed.","choice":"refuse"}');
  assert.deepEqual(Object.keys(r.structured as JsonObject), ["reasoning", "choice"]);
  assert.deepEqual(r.structured, { reasoning: "The chain is jammed.", choice: "refuse" });
  const related = c.related(1);
  assert.deepEqual(related.map(WireClient.kind), [
    "event:modelStep",
    "event:partial",
    "event:partial",
    "response",
  ]);
  const last = (related[2].params as JsonObject).event as JsonObject;
  assert.deepEqual(Object.keys(last), ["type", "value"]);
  assert.deepEqual(Object.keys(last.value as JsonObject), ["reasoning", "choice"]);
  // a text step with JSON text works too
  const r2 = await c.call("session/respond", { session: "d", prompt: "Again?", schema: DECISION });
  assert.equal(r2.text, '{"reasoning":"ok","choice":"open"}');
  // the transcript records the response format and a structured answer
  const t = await c.call("session/transcript", { session: "d" });
  const entries = ((t.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(entries[1].responseFormat, { name: "Response", schema: DECISION });
  assert.deepEqual((entries[2].contents as JsonObject[])[0].type, "structure");
  assert.deepEqual(((entries[2].contents as JsonObject[])[0].structure as JsonObject).content, {
    reasoning: "The chain is jammed.",
    choice: "refuse",
  });
  await c.close();
});

Deno.test("respond: schema turn with a tool round first, and schema warnings in the result", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "d",
    tools: [tool("look")],
    model: scripted({ toolCalls: [{ name: "look" }] }, { json: { code: "ABC" } }),
  });
  const schema = { type: "object", properties: { code: { type: "string", pattern: "^[A-Z]+$" } } };
  const id = c.request("session/respond", { session: "d", prompt: "?", schema, toolChoice: "required" });
  const call = await c.toolCall(1);
  c.reply(call.id, { output: "a sign" });
  const r = (await c.response(id)).result as JsonObject;
  assert.deepEqual(Object.keys(r), [
    "session",
    "text",
    "structured",
    "toolCalls",
    "usage",
    "steps",
    "warnings",
  ]);
  assert.deepEqual(r.structured, { code: "ABC" });
  assert.deepEqual(r.steps, [step(0, 0, "required", ["look"]), step(1, 1, "allowed", ["look"])]);
  assert.deepEqual(r.warnings, [
    "#/properties/code: pattern '^[A-Z]+$' is described to the model but not enforced",
  ]);
  await c.close();
});

Deno.test("respond: schema errors are -32007 (path 'schema') before anything runs", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "d", model: scripted({ text: "unused" }) });
  c.request("session/respond", { session: "d", prompt: "x", schema: { type: "frob" }, stream: true }, 1);
  c.request("session/respond", { session: "d", prompt: "x", schema: 5 }, 2);
  c.request("session/respond", { session: "d", prompt: "x", schema: [] }, 3);
  assert.deepEqual((await c.response(1)).error, {
    code: -32007,
    message:
      "schema: unsupported type 'frob' (a type is one of object, array, string, integer, number, boolean, null) (at #)",
    data: { code: "invalid_schema", path: "schema", schemaPath: "#" },
  });
  assert.deepEqual(
    (await c.response(2)).error,
    invalidParams("Parameter 'schema' must be an object; got 5."),
  );
  assert.deepEqual(
    (await c.response(3)).error,
    invalidParams("Parameter 'schema' must be an object; got []."),
  );
  assert.deepEqual(c.messages.filter((m) => m.method === "session/event"), []);
  assert.equal((await c.call("session/respond", { session: "d", prompt: "x" })).text, "unused");
  await c.close();
});

Deno.test("respond: a schema turn whose answer is not JSON fails with -32012 and leaves no trace", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "d",
    options: { maxAttempts: 1 },
    model: scripted({ text: "not json" }),
  });
  c.request("session/respond", { session: "d", prompt: "x", schema: DECISION }, 1);
  assert.deepEqual((await c.response(1)).error, {
    code: -32012,
    message: "The model gave an invalid answer: the answer is not valid JSON: not json. It was step 1 of 1.",
    data: { code: "generation_failed", attempts: 1, problem: "the answer is not valid JSON: not json" },
  });
  const list = await c.call("session/list");
  assert.equal((list.sessions as JsonObject[])[0].entries, 0);
  await c.close();
});

Deno.test("respond: per-turn overrides apply to that turn only", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "o",
    tools: [tool("a"), tool("b")],
    options: { toolChoice: "required", maxToolRounds: 3, enabledTools: ["a"] },
    model: scripted(),
  });
  const steps = async (params: JsonObject) =>
    (await c.call("session/respond", { session: "o", prompt: "x", ...params })).steps as JsonObject[];
  assert.deepEqual(await steps({ toolChoice: "none" }), [step(0, 0, "disallowed", [])]);
  assert.deepEqual(await steps({ maxToolRounds: 0 }), [step(0, 0, "disallowed", [])]);
  assert.deepEqual(await steps({ maxToolCalls: 0 }), [step(0, 0, "disallowed", [])]);
  assert.deepEqual(await steps({ toolChoice: "auto", enabledTools: ["b"] }), [step(0, 0, "allowed", ["b"])]);
  assert.deepEqual(await steps({ enabledTools: [] }), [step(0, 0, "disallowed", [])]);
  assert.deepEqual(await steps({ toolChoice: { tool: "b" }, enabledTools: ["a", "b"] }), [
    step(0, 0, "required", ["b"]),
  ]);
  assert.deepEqual(await steps({ toolChoice: { type: "function", function: { name: "a" } } }), [
    step(0, 0, "required", ["a"]),
  ]);
  assert.deepEqual(await steps({ toolChoice: "any", enabledTools: null }), [step(0, 0, "required", ["a"])]);
  // the session defaults are unchanged
  assert.deepEqual(await steps({}), [step(0, 0, "required", ["a"])]);
  await c.close();
});

Deno.test("respond: validation errors", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "v", model: "scripted" });
  const cases: Array<[JsonObject, JsonValue]> = [
    [{}, invalidParams("Missing required parameter 'session'.")],
    [{ session: 5, prompt: "x" }, invalidParams("Parameter 'session' must be a string; got 5.")],
    [{ session: "nope", prompt: 5 }, {
      code: -32020,
      message: "No session with id 'nope'.",
      data: { code: "session_not_found", session: "nope" },
    }],
    [{ session: "v" }, invalidParams("Missing required parameter 'prompt'.")],
    [{ session: "v", prompt: ["x"] }, invalidParams(`Parameter 'prompt' must be a string; got ["x"].`)],
    [
      { session: "v", prompt: "x", stream: "yes" },
      invalidParams(`Parameter 'stream' must be a boolean; got "yes".`),
    ],
    [
      { session: "v", prompt: "x", toolChoice: "bogus" },
      invalidParams(
        `'toolChoice' must be "auto", "none", "required", "explicit" or {"tool": "<name>"}; got "bogus".`,
      ),
    ],
    [
      { session: "v", prompt: "x", toolChoice: { nope: 1 } },
      invalidParams(`'toolChoice' object must be {"tool": "<name>"}.`),
    ],
    [
      { session: "v", prompt: "x", maxToolRounds: -1 },
      invalidParams("Parameter 'maxToolRounds' must be at least 0."),
    ],
    [
      { session: "v", prompt: "x", maxToolCalls: 0.5 },
      invalidParams("Parameter 'maxToolCalls' must be an integer; got 0.5."),
    ],
    [
      { session: "v", prompt: "x", enabledTools: [1] },
      invalidParams("Parameter 'enabledTools[0]' must be a string; got 1."),
    ],
    [
      { session: "v", prompt: "x".repeat(10), maxToolCalls: "y".repeat(100) },
      invalidParams(`Parameter 'maxToolCalls' must be an integer; got "${"y".repeat(76)}....`),
    ],
  ];
  for (const [params, error] of cases) {
    const id = c.request("session/respond", params);
    assert.deepEqual((await c.response(id)).error, error, JSON.stringify(params));
  }
  await c.close();
});

Deno.test("respond: a {tool} the session lacks is -32602, checked at turn start (a pipelined setTools counts)", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "t",
    tools: [tool("a")],
    model: scripted({ text: "slow", delayMs: 30 }, { toolCalls: [{ name: "b" }] }, { text: "done" }, {
      text: "unused",
    }),
  });
  c.request("session/respond", { session: "t", prompt: "first" }, 1);
  c.request("session/respond", { session: "t", prompt: "x", toolChoice: { tool: "b" }, stream: true }, 2);
  c.request("session/setTools", { session: "t", tools: [tool("b")] }, 3);
  c.request("session/respond", { session: "t", prompt: "x", toolChoice: { tool: "b" }, stream: true }, 4);
  c.request("session/respond", { session: "t", prompt: "x", toolChoice: { tool: "a" } }, 5);
  const call = await c.toolCall(1);
  c.reply(call.id, { output: "rang" });
  await c.response(5);
  assert.deepEqual(c.messages.filter((m) => !("method" in m)).slice(-5).map((m) => m.id), [1, 2, 3, 4, 5]);
  assert.deepEqual(c.related(2).map(WireClient.kind), ["error"]);
  assert.deepEqual(
    (await c.response(2)).error,
    invalidParams("'toolChoice' names tool 'b', which session 't' does not have."),
  );
  const r4 = (await c.response(4)).result as JsonObject;
  assert.equal(r4.text, "done");
  assert.deepEqual(r4.steps, [step(0, 0, "required", ["b"]), step(1, 1, "allowed", ["b"])]);
  assert.deepEqual(
    (await c.response(5)).error,
    invalidParams("'toolChoice' names tool 'a', which session 't' does not have."),
  );
  await c.close();
});

Deno.test("respond: a call of a tool that enabledTools leaves out is not sent to the engine; the model gets 'There is no tool named'", async () => {
  const c = new WireClient();
  const call = { toolCalls: [{ name: "ask", arguments: {} }] };
  await c.call("session/create", {
    session: "v",
    tools: [tool("ask"), tool("other")],
    options: { enabledTools: ["other"] },
    model: scripted(call, { template: "{toolOutput}" }, call, { template: "{toolOutput}" }),
  });
  // The session's enabledTools, then a per-turn override.
  for (const params of [{}, { enabledTools: [] }] as JsonObject[]) {
    const id = c.request("session/respond", { session: "v", prompt: "p", ...params });
    const r = await c.response(id);
    assert.ok(
      !c.messages.some((m) => m.method === "tool/call"),
      "no tool/call for a tool the turn leaves out",
    );
    const result = r.result as JsonObject;
    assert.equal(result.text, "Error: There is no tool named 'ask'.");
    assert.deepEqual((result.toolCalls as JsonObject[]).map((t) => [t.output, t.isError]), [
      ["There is no tool named 'ask'.", true],
    ]);
  }
  await c.close();
});
