/**
 * Scripted structured answers are held to what the real model can produce: a `json` step (or JSON text)
 * outside the turn's generation schema fails the way an invalid real answer fails (`-32012
 * generation_failed`, "The model gave an invalid answer: …", `data.problem`), never reaching the client as
 * impossible data. A script that runs out in a structured turn says so.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { scripted, WireClient } from "../helpers/wire.ts";
import { completion, json, MockServer } from "./openai_mock_server.ts";

const CHOICE = {
  type: "object",
  properties: {
    reasoning: { type: "string" },
    choice: { type: "string", enum: ["open", "refuse"] },
  },
  required: ["reasoning", "choice"],
};

const OUTSIDE_ENUM =
  "the answer does not match the response schema: #/properties/choice: must be equal to one of " +
  'the allowed values: "open", "refuse"';

/** The error of a one-attempt schema turn on `model`. */
async function schemaTurnError(model: JsonObject, schema: JsonObject = CHOICE): Promise<JsonObject> {
  const c = new WireClient();
  await c.call("session/create", { session: "s", options: { maxAttempts: 1 }, model });
  const r = await c.response(c.request("session/respond", { session: "s", prompt: "Open?", schema }));
  assert.ok("error" in r, JSON.stringify(r));
  // The failed turn leaves no trace.
  const list = await c.call("session/list");
  assert.equal((list.sessions as JsonObject[])[0].entries, 0);
  await c.close();
  return r.error as JsonObject;
}

Deno.test("scripted json step with a value outside the enum: -32012 like an invalid real answer", async () => {
  assert.deepEqual(await schemaTurnError(scripted({ json: { reasoning: "Jammed.", choice: "maybe" } })), {
    code: -32012,
    message: `The model gave an invalid answer: ${OUTSIDE_ENUM}. It was step 1 of 1.`,
    data: { code: "generation_failed", attempts: 1, problem: OUTSIDE_ENUM },
  });
});

Deno.test("scripted answers: JSON text, missing keys, extra keys and wrong types fail the same way", async () => {
  const cases: Array<[JsonValue, string]> = [
    [{ text: '{"reasoning":"r","choice":"maybe"}' }, OUTSIDE_ENUM],
    [
      { json: { reasoning: "r" } },
      "the answer does not match the response schema: #: must have required property 'choice'",
    ],
    [
      { json: { reasoning: "r", choice: "open", mood: "sad" } },
      "the answer does not match the response schema: #: must NOT have additional properties 'mood'",
    ],
    [
      { json: { reasoning: 5, choice: "open" } },
      "the answer does not match the response schema: #/properties/reasoning: must be string",
    ],
  ];
  for (const [step, problem] of cases) {
    assert.deepEqual(await schemaTurnError(scripted(step)), {
      code: -32012,
      message: `The model gave an invalid answer: ${problem}. It was step 1 of 1.`,
      data: { code: "generation_failed", attempts: 1, problem },
    }, JSON.stringify(step));
  }
  // A text answer that ends a sentence ends the message once ("open it.", not "open it..").
  const problem = "the answer is not valid JSON: Sure, I will open it.";
  assert.deepEqual(await schemaTurnError(scripted({ text: "Sure, I will open it." })), {
    code: -32012,
    message: `The model gave an invalid answer: ${problem} It was step 1 of 1.`,
    data: { code: "generation_failed", attempts: 1, problem },
  });
});

Deno.test("the OpenAI-compatible backend fails an answer outside the enum with the same code and wording", async () => {
  const server = new MockServer(() => json(completion('{"reasoning":"Jammed.","choice":"maybe"}')));
  try {
    const e = await schemaTurnError({ type: "openai", baseURL: server.baseURL, model: "mock" });
    assert.equal(e.code, -32012);
    assert.equal((e.data as JsonObject).code, "generation_failed");
    assert.match(
      e.message as string,
      /^The model gave an invalid answer 3 times; last problem: the answer does not match the response schema: /,
    );
    const scriptedError = await schemaTurnError(
      scripted({ json: { reasoning: "Jammed.", choice: "maybe" } }),
    );
    assert.match(
      scriptedError.message as string,
      /^The model gave an invalid answer: the answer does not match the response schema: /,
    );
    assert.deepEqual(Object.keys(e.data as JsonObject), Object.keys(scriptedError.data as JsonObject));
  } finally {
    await server.close();
  }
});

Deno.test("content/generate and decisions never return a scripted value the schema rules out", async () => {
  const c = new WireClient();
  const content = await c.response(c.request("content/generate", {
    prompt: "A sword.",
    schema: { type: "object", properties: { rarity: { type: "string", enum: ["common", "rare"] } } },
    model: scripted({ json: { rarity: "legendary" } }, { json: { rarity: "mythic" } }),
  }));
  assert.equal((content.error as JsonObject).code, -32012);
  assert.match(
    (content.error as JsonObject).message as string,
    /^The model gave an invalid answer: the answer does not match the response schema: #\/properties\/rarity: /,
  );
  const decision = await c.response(c.request("decision/decide", {
    situation: "A wolf.",
    options: ["flee", "fight"],
    model: scripted({ json: { reasoning: "r", choice: "flee", confidence: 74.5 } }, {
      json: { reasoning: "r", choice: "flee", confidence: 75 },
    }),
  }));
  // The first answer (a confidence the integer schema rules out) fails and is retried with the next step.
  assert.equal((decision.result as JsonObject).confidence, 75);
  await c.close();
});

Deno.test("constraints the model only sees described (pattern, minLength) are not checked", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "s", model: scripted({ json: { code: "x" } }) });
  const r = await c.call("session/respond", {
    session: "s",
    prompt: "Code?",
    schema: { type: "object", properties: { code: { type: "string", pattern: "^[0-9]+$", minLength: 4 } } },
  });
  assert.deepEqual(r.structured, { code: "x" });
  await c.close();
});

Deno.test("a script exhausted in a structured turn says so; after an invalid answer it leads with that answer and names the step", async () => {
  assert.deepEqual(await schemaTurnError(scripted()), {
    code: -32012,
    message:
      "Script exhausted: all 0 steps were played and this turn needs a structured answer; add steps or " +
      "a 'fallback' step.",
    data: { code: "generation_failed" },
  });
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    model: scripted({ json: { reasoning: "r", choice: "no" } }),
  });
  const r = await c.response(c.request("session/respond", { session: "s", prompt: "Open?", schema: CHOICE }));
  // The only step was invalid and its retry found none left: the message leads with the invalid answer.
  assert.deepEqual(r.error, {
    code: -32012,
    message:
      `The model gave an invalid answer: ${OUTSIDE_ENUM}. It was step 1 of 1, and no step is left for ` +
      "its retry: fix that step, or add a step after it for the retry to play.",
    data: { code: "generation_failed", problem: OUTSIDE_ENUM },
  });
  // The step it names is the invalid one, also after valid ones; a text answer's own period ends the message.
  await c.call("session/create", {
    session: "t",
    model: scripted({ json: { reasoning: "r", choice: "open" } }, { text: "Only two left." }),
  });
  assert.deepEqual(
    (await c.call("session/respond", { session: "t", prompt: "Open?", schema: CHOICE })).structured,
    {
      reasoning: "r",
      choice: "open",
    },
  );
  const t = await c.response(c.request("session/respond", { session: "t", prompt: "Open?", schema: CHOICE }));
  assert.deepEqual(t.error, {
    code: -32012,
    message:
      "The model gave an invalid answer: the answer is not valid JSON: Only two left. It was step 2 of 2, " +
      "and no step is left for its retry: fix that step, or add a step after it for the retry to play.",
    data: { code: "generation_failed", problem: "the answer is not valid JSON: Only two left." },
  });
  // In a text turn the default fallback still answers "(script exhausted)".
  assert.equal((await c.call("session/respond", { session: "s", prompt: "Hi" })).text, "(script exhausted)");
  // An explicit fallback is played in structured turns like any step.
  await c.call("session/create", {
    session: "f",
    model: { type: "scripted", steps: [], fallback: { json: { reasoning: "r", choice: "open" } } },
  });
  const f = await c.call("session/respond", { session: "f", prompt: "Open?", schema: CHOICE });
  assert.deepEqual(f.structured, { reasoning: "r", choice: "open" });
  await c.close();
});

Deno.test("an invalid step whose retry is invalid too: the message leads with the first bad step and names it", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    model: scripted({ json: { reasoning: "r", choice: "maybe" } }, { text: "Only two left." }),
  });
  const r = await c.response(c.request("session/respond", { session: "s", prompt: "Open?", schema: CHOICE }));
  assert.deepEqual(r.error, {
    code: -32012,
    message:
      `The model gave an invalid answer: ${OUTSIDE_ENUM}. It was step 1 of 2, and its retry, step 2, ` +
      "was invalid too: the answer is not valid JSON: Only two left. Fix step 1 first.",
    data: { code: "generation_failed", attempts: 1, problem: OUTSIDE_ENUM },
  });
  // Without a retry, each turn's invalid step is its own: the second turn's message is not tied to the first.
  await c.call("session/create", {
    session: "t",
    options: { maxAttempts: 1 },
    model: scripted({ json: { reasoning: "r", choice: "maybe" } }, { text: "Only two left." }),
  });
  const first = await c.response(
    c.request("session/respond", { session: "t", prompt: "Open?", schema: CHOICE }),
  );
  // Each names its own step, as the retry's messages and the one after a tool call do.
  assert.equal(
    (first.error as JsonObject).message,
    `The model gave an invalid answer: ${OUTSIDE_ENUM}. It was step 1 of 2.`,
  );
  const second = await c.response(
    c.request("session/respond", { session: "t", prompt: "Open?", schema: CHOICE }),
  );
  assert.equal(
    (second.error as JsonObject).message,
    "The model gave an invalid answer: the answer is not valid JSON: Only two left. It was step 2 of 2.",
  );
  await c.close();
});

Deno.test("an invalid step after a tool call (no retry then) names the step, as the retry's messages do", async () => {
  const c = new WireClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: { name: "Gorm" },
    options: { memoryTools: ["remember_fact"] },
    model: scripted(
      { toolCalls: [{ name: "remember_fact", arguments: { fact: "The player is Aria." } }] },
      { json: { line: "Hm." } },
      { json: { emotion: "neutral", line: "Never played.", player_options: ["a", "b", "c"] } },
    ),
  });
  const r = await c.response(c.request("npc/talk", { npc: "gorm", line: "I am Aria." }));
  const problem = "the answer does not match the response schema: #: must have required property 'emotion'";
  assert.deepEqual(r.error, {
    code: -32012,
    message:
      `The model gave an invalid answer: ${problem}. It was step 2 of 3, after a tool call: a turn is ` +
      "not retried once it called a tool, so fix that step.",
    data: { code: "generation_failed", attempts: 1, problem },
  });
  await c.close();
});

Deno.test("an invalid step after tool calls all refused for the tool budget: no tool ran, so no 'after a tool call'", async () => {
  const c = new WireClient();
  const steps: JsonValue[] = [
    { toolCalls: [{ name: "open_gate", arguments: {} }] },
    { json: { reasoning: "r", choice: "maybe" } },
    { json: { reasoning: "r", choice: "open" } },
  ];
  const tools = [{ name: "open_gate", description: "Opens the gate." }];
  await c.call("session/create", {
    session: "s",
    options: { maxToolCalls: 0, maxAttempts: 1 },
    model: scripted(...steps),
    tools,
  });
  const r = await c.response(c.request("session/respond", { session: "s", prompt: "Open?", schema: CHOICE }));
  assert.deepEqual(r.error, {
    code: -32012,
    message: `The model gave an invalid answer: ${OUTSIDE_ENUM}. It was step 2 of 3.`,
    data: { code: "generation_failed", attempts: 1, problem: OUTSIDE_ENUM },
  });
  // Such a turn is retried (no call was admitted): with retries on, the retry plays the next step.
  await c.call("session/create", {
    session: "t",
    options: { maxToolCalls: 0 },
    model: scripted(...steps),
    tools,
  });
  const ok = await c.call("session/respond", { session: "t", prompt: "Open?", schema: CHOICE });
  assert.deepEqual(ok.structured, { reasoning: "r", choice: "open" });
  await c.close();
});

Deno.test("a tool that ran and answered with the budget message's words still counts as a tool that ran", async () => {
  // Only the bridge's own refusal marks a call as refused: a client tool's genuine error that reads like the
  // budget message did run, so the turn is past its tool call and is not retried.
  const budget = "The tool budget for this turn is used up. Answer with the information you already have.";
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    options: { maxAttempts: 1 },
    model: scripted(
      { toolCalls: [{ name: "open_gate", arguments: {} }] },
      { json: { reasoning: "r", choice: "maybe" } },
      { json: { reasoning: "r", choice: "open" } },
    ),
    tools: [{ name: "open_gate", description: "Opens the gate." }],
  });
  const id = c.request("session/respond", { session: "s", prompt: "Open?", schema: CHOICE });
  const call = await c.toolCall(1);
  c.reply(call.id, { output: budget, isError: true });
  const r = await c.response(id);
  assert.deepEqual(r.error, {
    code: -32012,
    message:
      `The model gave an invalid answer: ${OUTSIDE_ENUM}. It was step 2 of 3, after a tool call: a turn ` +
      "is not retried once it called a tool, so fix that step.",
    data: { code: "generation_failed", attempts: 1, problem: OUTSIDE_ENUM },
  });
  await c.close();
});

Deno.test("an answer that ends a sentence ends the message once, from the OpenAI-compatible backend too", async () => {
  const server = new MockServer(() => json(completion("Only two left.")));
  try {
    const problem = "the answer is not valid JSON: Only two left.";
    assert.deepEqual(await schemaTurnError({ type: "openai", baseURL: server.baseURL, model: "mock" }), {
      code: -32012,
      message: `The model gave an invalid answer 3 times; last problem: ${problem}`,
      data: { code: "generation_failed", attempts: 3, problem },
    });
    assert.deepEqual(await schemaTurnError(scripted({ text: "Only two left." })), {
      code: -32012,
      message: `The model gave an invalid answer: ${problem} It was step 1 of 1.`,
      data: { code: "generation_failed", attempts: 1, problem },
    });
  } finally {
    await server.close();
  }
});

Deno.test("an answer shortened in the message keeps whole characters (an emoji is not split)", async () => {
  const answer = `${"あ".repeat(116)}👍🏽${"い".repeat(10)}`;
  const problem = `the answer is not valid JSON: ${"あ".repeat(116)}👍🏽...`;
  assert.deepEqual(await schemaTurnError(scripted({ text: answer })), {
    code: -32012,
    message: `The model gave an invalid answer: ${problem} It was step 1 of 1.`,
    data: { code: "generation_failed", attempts: 1, problem },
  });
  // 120 characters as seen (more code units) are shown whole.
  const short = `${"👍🏽".repeat(119)}x`;
  assert.equal(
    ((await schemaTurnError(scripted({ text: short }))).data as JsonObject).problem,
    `the answer is not valid JSON: ${short}`,
  );
  const server = new MockServer(() => json(completion(answer)));
  try {
    const error = await schemaTurnError({ type: "openai", baseURL: server.baseURL, model: "mock" });
    assert.equal((error.data as JsonObject).problem, problem);
  } finally {
    await server.close();
  }
});

Deno.test("scripted answer missing a required key names the step's keys the schema does not have", async () => {
  // A decision step written with the result's name for the choice ('optionID'): the message says which key
  // of the step is not the answer's; data.problem stays the validator's.
  const problem = "the answer does not match the response schema: #: must have required property 'choice'";
  assert.deepEqual(
    await schemaTurnError(scripted({ json: { reasoning: "r", optionID: "open" } })),
    {
      code: -32012,
      message:
        `The model gave an invalid answer: ${problem}; the step has 'optionID', which is not a key of ` +
        "the answer (its keys: reasoning, choice). It was step 1 of 1.",
      data: { code: "generation_failed", attempts: 1, problem },
    },
  );
});
