import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { GameExtension } from "../../src/game/game_extension.ts";
import type { BridgeConfiguration } from "../../src/engine/configuration.ts";
import type { LanguageModel, StepRequest } from "../../src/models/language_model.ts";
import { parseScript, ScriptedModel } from "../../src/models/scripted.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";

/**
 * A "probe" model type for tests: `{"type": "probe", "steps": [...]}` plays a script like the scripted model
 * and records every step request (instructions, prompt, schema, tool mode). It also tracks how many steps
 * run at the same time. It stands for a backend that does not constrain decoding: its structured answers
 * are not checked against the schema (the decision parser's leniency is what some tests check), where the
 * scripted model rejects an answer the real model could not give.
 */
class Probe {
  readonly requests: StepRequest[] = [];
  instances = 0;
  active = 0;
  maxActive = 0;

  config(extension = new GameExtension()): Partial<BridgeConfiguration> {
    return {
      extensions: [extension],
      modelFactory: (spec) => {
        if (spec.type !== "probe" || !("raw" in spec)) return undefined;
        this.instances++;
        const inner = new ScriptedModel(parseScript(spec.raw, spec.path));
        const model: LanguageModel = {
          kind: "probe",
          contextSize: 8192,
          trimsHistory: false,
          availability: () => inner.availability(),
          step: async (request) => {
            this.requests.push(request);
            this.active++;
            this.maxActive = Math.max(this.maxActive, this.active);
            try {
              // Played as a text turn: the agent parses the JSON text without a schema check.
              return await inner.step({ ...request, responseSchema: null });
            } finally {
              this.active--;
            }
          },
        };
        return model;
      },
    };
  }
}

function probe(...steps: JsonValue[]): JsonObject {
  return { type: "probe", steps };
}

const ZERO_USAGE = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, totalTokens: 0 };

const DEFAULT_INSTRUCTIONS =
  "You choose what characters in a video game do. Pick the option that suits the character and the " +
  "situation best. First give a one-sentence reason, then the id of the option, then how confident you are " +
  "from 0 to 100.";

async function failure(c: WireClient, method: string, params: JsonObject): Promise<JsonObject> {
  const r = await c.response(c.request(method, params));
  assert.ok("error" in r, `${method} should fail: ${JSON.stringify(r)}`);
  return r.error as JsonObject;
}

const CHECK_HP = {
  name: "check_hp",
  description: "Look up a character's hit points.",
  parameters: { type: "object", properties: { who: { type: "string" } }, required: ["who"] },
};

Deno.test("decide: structured result in key order; prompt, instructions, schema and tool mode", async () => {
  const p = new Probe();
  const c = new WireClient(p.config());
  const id = c.request("decision/decide", {
    situation: "A knight blocks the bridge.",
    options: [{ id: " flee ", description: " Run into the woods " }, "fight", { id: "beg", description: "" }],
    actor: {
      name: "Snik",
      role: "a timid goblin",
      personality: "Timid and greedy",
      goals: [" Survive. ", "Steal"],
    },
    context: { hp: 3, playerHp: 40 },
    temperature: 0.5,
    model: probe({ json: { confidence: 74.6, choice: "flee", reasoning: "  Snik is timid, so he runs.  " } }),
  });
  const response = await c.response(id);
  const result = response.result as JsonObject;
  assert.deepEqual(Object.keys(result), [
    "optionID",
    "reasoning",
    "confidence",
    "toolCalls",
    "usage",
    "isFallback",
  ]);
  assert.equal(result.optionID, "flee");
  assert.equal(result.reasoning, "Snik is timid, so he runs.");
  assert.equal(result.confidence, 75);
  assert.deepEqual(result.toolCalls, []);
  assert.equal(result.isFallback, false);
  const usage = result.usage as Record<string, number>;
  assert.deepEqual(Object.keys(usage), ["inputTokens", "cachedInputTokens", "outputTokens", "totalTokens"]);
  assert.equal(usage.totalTokens, usage.inputTokens + usage.outputTokens);
  assert.ok(usage.inputTokens > 0);
  assert.deepEqual(c.messages.map(WireClient.kind), ["response"]);

  assert.equal(p.requests.length, 1);
  const step = p.requests[0];
  assert.equal(
    step.instructions,
    DEFAULT_INSTRUCTIONS + "\nYou decide for Snik, a timid goblin.\nPersonality: Timid and greedy.\n" +
      "Goals: Survive; Steal.",
  );
  assert.equal(
    step.prompt,
    'Situation: A knight blocks the bridge.\nFacts: {"hp":3,"playerHp":40}\nOptions:\n' +
      "- flee: Run into the woods\n- fight\n- beg",
  );
  assert.equal(step.toolCallingMode, "disallowed");
  assert.deepEqual(step.tools, []);
  assert.deepEqual(step.options, { temperature: 0.5 });
  assert.equal(step.responseSchema?.name, "Decision");
  const schema = step.responseSchema!.jsonSchema as JsonObject;
  const properties = schema.properties as JsonObject;
  assert.deepEqual(Object.keys(properties), ["reasoning", "choice", "confidence"]);
  assert.deepEqual((properties.choice as JsonObject).enum, ["flee", "fight", "beg"]);
  assert.deepEqual(
    { ...(properties.confidence as JsonObject), description: "" },
    { type: "integer", minimum: 0, maximum: 100, description: "" },
  );
  assert.deepEqual(schema.required, ["reasoning", "choice", "confidence"]);
  assert.deepEqual(step.responseSchema!.generationSchema["x-order"], ["reasoning", "choice", "confidence"]);
  await c.close();
});

Deno.test("decide: given instructions, JSON situation, empty context, no actor", async () => {
  const p = new Probe();
  const c = new WireClient(p.config());
  await c.call("decision/decide", {
    situation: { enemy: "wolf" },
    options: ["a", "b"],
    context: {},
    instructions: "  Decide like a bandit.  ",
    model: probe({ json: { reasoning: "r", choice: "b", confidence: 10 } }),
  });
  assert.equal(p.requests[0].instructions, "Decide like a bandit.");
  assert.equal(p.requests[0].prompt, 'Situation: {"enemy":"wolf"}\nOptions:\n- a\n- b');
  await c.call("decision/decide", {
    situation: "   ",
    options: ["a", "b"],
    context: "Night",
    model: probe({ json: { reasoning: "r", choice: "b", confidence: 10 } }),
  });
  assert.equal(p.requests[1].instructions, DEFAULT_INSTRUCTIONS);
  assert.equal(p.requests[1].prompt, 'Situation: (none given)\nFacts: "Night"\nOptions:\n- a\n- b');
  await c.close();
});

Deno.test("decide: a single option answers at once without a model call", async () => {
  const p = new Probe();
  const c = new WireClient(p.config());
  const failing = { error: "generation_failed", message: "must not be called" };
  for (const model of [scripted(failing, failing), probe(failing)]) {
    const id = c.request("decision/decide", { situation: "Cornered.", options: [" flee "], model, foo: 1 });
    const line = c.lines.find((l) => l.startsWith(`{"jsonrpc":"2.0","id":${id},`));
    // Answered synchronously, before the request call returned.
    assert.equal(
      line,
      `{"jsonrpc":"2.0","id":${id},"result":{"optionID":"flee","reasoning":"It is the only option.",` +
        `"confidence":100,"toolCalls":[],"usage":{"inputTokens":0,"cachedInputTokens":0,"outputTokens":0,` +
        `"totalTokens":0},"isFallback":false,"warnings":["Unknown parameter 'foo' was ignored."]}}`,
    );
  }
  assert.equal(p.requests.length, 0);
  assert.equal(p.instances, 0);
  await c.close();
});

Deno.test("decide: invalid params fail with -32602 before any model call", async () => {
  const p = new Probe();
  const c = new WireClient(p.config());
  const model = probe({ json: { reasoning: "r", choice: "a", confidence: 1 } });
  const cases: Array<[JsonObject, string]> = [
    [{ options: ["a", "b"] }, "Missing required parameter 'situation'."],
    [{ situation: "s" }, "Missing required parameter 'options'."],
    [{ situation: "s", options: "a" }, `Parameter 'options' must be an array; got "a".`],
    [{ situation: "s", options: [] }, "'options' must contain at least one option."],
    [{ situation: "s", options: ["a", "  "] }, "'options[1].id' must not be empty."],
    [{ situation: "s", options: ["a", { id: " a" }] }, "Duplicate option id 'a' in 'options'."],
    [
      { situation: "s", options: ["a", 5] },
      "'options[1]' must be an option id or an object with an 'id'; got 5.",
    ],
    [{ situation: "s", options: [{ description: "x" }] }, "Missing required parameter 'options[0].id'."],
    [
      { situation: "s", options: ["a", "b"], actor: 5 },
      "'actor' must be a persona object or an NPC id; got 5.",
    ],
    [
      { situation: "s", options: ["a", "b"], actor: { role: "x" } },
      "Missing required parameter 'actor.name'.",
    ],
    [{ situation: "s", options: ["a", "b"], actor: { name: " " } }, "'actor.name' must not be empty."],
    [
      { situation: "s", options: ["a", "b"], toolChoice: { tool: "look" } },
      "'toolChoice' names tool 'look', which is not in 'tools'.",
    ],
    [
      { situation: "s", options: ["a", "b"], tools: [CHECK_HP], toolChoice: "sometimes" },
      `'toolChoice' must be "auto", "none", "required", "explicit" or {"tool": "<name>"}; got "sometimes".`,
    ],
    [
      { situation: "s", options: ["a", "b"], fallbackOptionID: "c" },
      "'fallbackOptionID' must be one of the option ids (a, b); got 'c'.",
    ],
    [
      { situation: "s", options: ["a", "b"], maxToolRounds: -1 },
      "Parameter 'maxToolRounds' must be at least 0.",
    ],
    [{ situation: "s", options: ["a", "b"], temperature: -1 }, "Parameter 'temperature' must be at least 0."],
    [
      { situation: "s", options: ["a", "b"], toolTimeoutSeconds: -1 },
      "Parameter 'toolTimeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got -1.",
    ],
    [
      { situation: "s", options: ["a", "b"], model: 7 },
      `'model' must be "system" or an object with a 'type'.`,
    ],
  ];
  for (const [params, message] of cases) {
    const error = await failure(c, "decision/decide", { model, ...params });
    assert.deepEqual(error, { code: -32602, message, data: { code: "invalid_params" } }, message);
  }
  assert.equal(p.requests.length, 0);
  assert.equal(p.instances, 0);
  await c.close();
});

Deno.test("decide: actor by NPC id uses its persona; an unknown NPC fails with -32050", async () => {
  const p = new Probe();
  const extension = new GameExtension();
  const c = new WireClient(p.config(extension));
  // Stands in for an NPC made with npc/create (the NPC methods install their lookup when they register).
  extension.game.npcPersona = (id) =>
    id === "snik"
      ? { name: "Snik", role: "", personality: "Cowardly!", goals: [], secrets: ["x"] }
      : undefined;
  const model = probe({ json: { reasoning: "r", choice: "b", confidence: 10 } });
  assert.deepEqual(
    await failure(c, "decision/decide", { situation: "s", options: ["a", "b"], actor: "ghost", model }),
    {
      code: -32050,
      message: "No NPC with id 'ghost'.",
      data: { code: "npc_not_found", npc: "ghost" },
    },
  );
  assert.equal(p.requests.length, 0);
  await c.call("decision/decide", { situation: "s", options: ["a", "b"], actor: "snik", model });
  assert.equal(
    p.requests[0].instructions,
    `${DEFAULT_INSTRUCTIONS}\nYou decide for Snik.\nPersonality: Cowardly!`,
  );
  await c.close();
});

Deno.test("decide: a client tool round trip — tool/call params {requestId, call}", async () => {
  const p = new Probe();
  const c = new WireClient(p.config());
  c.request("decision/decide", {
    situation: "The hero approaches.",
    options: ["flee", "fight"],
    tools: [CHECK_HP],
    toolChoice: "required",
    maxToolRounds: 1,
    extra: true,
    model: probe(
      { toolCalls: [{ name: "check_hp", arguments: { who: "hero" } }] },
      { json: { reasoning: "The hero is strong.", choice: "flee", confidence: 90 } },
    ),
  }, "d1");
  const call = await c.toolCall(1);
  const params = call.params as JsonObject;
  assert.deepEqual(Object.keys(params), ["requestId", "call"]);
  assert.equal(params.requestId, "d1");
  const toolCall = params.call as JsonObject;
  assert.match(toolCall.id as string, /^call_[A-Za-z0-9]{24}$/);
  assert.deepEqual({ ...toolCall, id: "x" }, { id: "x", name: "check_hp", arguments: { who: "hero" } });
  c.reply(call.id as string, { output: { hp: 40 } });
  const response = await c.response("d1");
  const result = response.result as JsonObject;
  assert.equal(result.optionID, "flee");
  assert.equal(result.confidence, 90);
  const records = result.toolCalls as JsonObject[];
  assert.equal(records.length, 1);
  assert.deepEqual(Object.keys(records[0]), ["call", "output", "isError", "durationSeconds"]);
  assert.deepEqual(records[0].call, toolCall);
  assert.deepEqual(records[0].output, { hp: 40 });
  assert.deepEqual(result.warnings, ["Unknown parameter 'extra' was ignored."]);
  assert.deepEqual(c.related("d1").map(WireClient.kind), ["tool/call", "response"]);
  // Step 0 forced the tool; step 1 (the round budget used up) had tools disallowed.
  assert.deepEqual(p.requests.map((r) => r.toolCallingMode), ["required", "disallowed"]);
  assert.deepEqual(p.requests[0].tools.map((t) => t.name), ["check_hp"]);
  await c.close();
});

Deno.test("decide: guardrail or refusal with a fallback gives the fallback; without one the error", async () => {
  const c = new WireClient();
  for (const code of ["guardrail_violation", "refusal"]) {
    const result = await c.call("decision/decide", {
      situation: "Battle.",
      options: ["attack", "flee"],
      fallbackOptionID: " flee",
      model: scripted({ error: code }),
    });
    assert.deepEqual(result, {
      optionID: "flee",
      reasoning: "",
      confidence: 0,
      toolCalls: [],
      usage: ZERO_USAGE,
      isFallback: true,
    });
  }
  assert.deepEqual(
    await failure(c, "decision/decide", {
      situation: "Battle.",
      options: ["attack", "flee"],
      model: scripted({ error: "guardrail_violation", message: "Blocked." }),
    }),
    { code: -32002, message: "Blocked.", data: { code: "guardrail_violation" } },
  );
  // Other errors are not answered with the fallback.
  assert.deepEqual(
    await failure(c, "decision/decide", {
      situation: "Battle.",
      options: ["attack", "flee"],
      fallbackOptionID: "flee",
      model: scripted({ error: "context_size_exceeded", message: "Too long." }),
    }),
    { code: -32004, message: "Too long.", data: { code: "context_size_exceeded" } },
  );
  await c.close();
});

Deno.test("decide: answer parsing — case-insensitive choice, confidence clamp and default, bad choice", async () => {
  const c = new WireClient(new Probe().config());
  const decide = (json: JsonValue) =>
    c.request("decision/decide", { situation: "s", options: ["Flee", "fight"], model: probe({ json }) });
  let r = await c.response(decide({ reasoning: 5, choice: " flee ", confidence: 150 }));
  assert.deepEqual(
    { ...(r.result as JsonObject), usage: null },
    { optionID: "Flee", reasoning: "", confidence: 100, toolCalls: [], usage: null, isFallback: false },
  );
  r = await c.response(decide({ reasoning: "ok", choice: "fight", confidence: -3 }));
  assert.equal((r.result as JsonObject).confidence, 0);
  r = await c.response(decide({ reasoning: "ok", choice: "fight" }));
  assert.equal((r.result as JsonObject).confidence, 50);
  r = await c.response(decide({ reasoning: "ok", choice: "dance", confidence: 1 }));
  assert.deepEqual(r.error, {
    code: -32012,
    message: "The model chose 'dance', which is not one of: Flee, fight.",
    data: { code: "generation_failed" },
  });
  await c.close();
});

Deno.test("decide: cancelled when the bridge shuts down", async () => {
  const c = new WireClient();
  const id = c.request("decision/decide", {
    situation: "s",
    options: ["a", "b"],
    model: scripted({ json: { reasoning: "r", choice: "a", confidence: 1 }, delayMs: 60_000 }),
  });
  await c.close();
  const r = await c.response(id);
  assert.equal((r.error as JsonObject).code, -32009);
});

Deno.test("decideMany: every request is validated before any model call; an invalid one fails the call, data.index names it", async () => {
  const p = new Probe();
  const c = new WireClient(p.config());
  const valid = { situation: "ok", options: ["a", "b"] };
  const cases: Array<[JsonValue[], JsonObject]> = [
    [[valid, { situation: "two", options: ["a", "a"] }], {
      code: -32602,
      message: "Duplicate option id 'a' in 'requests[1].options'.",
      data: { code: "invalid_params", index: 1 },
    }],
    [[valid, valid, "nope"], {
      code: -32602,
      message: "'requests[2]' must be an object.",
      data: { code: "invalid_params", index: 2 },
    }],
    [[{ situation: "s", options: ["a", "b"], fallbackOptionID: "c" }], {
      code: -32602,
      message: "'requests[0].fallbackOptionID' must be one of the option ids (a, b); got 'c'.",
      data: { code: "invalid_params", index: 0 },
    }],
    [[valid, { situation: "s", options: ["a", "b"], toolChoice: 7 }], {
      code: -32602,
      message:
        '\'requests[1].toolChoice\' must be "auto", "none", "required", "explicit" or {"tool": "<name>"}; got 7.',
      data: { code: "invalid_params", index: 1 },
    }],
    [[valid, { situation: "five", options: ["x", "y"], actor: "ghost" }], {
      code: -32050,
      message: "No NPC with id 'ghost'.",
      data: { code: "npc_not_found", npc: "ghost", index: 1 },
    }],
    // The error's own data members stay next to the index.
    [[valid, valid, valid, {
      situation: "s",
      options: ["a", "b"],
      tools: [{
        name: "t",
        description: "T.",
        parameters: { type: "object", properties: { a: { type: "frob" } } },
      }],
    }], {
      code: -32007,
      message:
        "requests[3].tools[0].parameters: unsupported type 'frob' (a type is one of object, array, string, integer, number, boolean, null) (at #/properties/a)",
      data: {
        code: "invalid_schema",
        path: "requests[3].tools[0].parameters",
        schemaPath: "#/properties/a",
        index: 3,
      },
    }],
  ];
  for (const [requests, error] of cases) {
    const r = await c.response(c.request("decision/decideMany", {
      requests,
      model: probe({ json: { reasoning: "r", choice: "a", confidence: 1 } }),
    }));
    assert.deepEqual(r.error, error, JSON.stringify(requests));
  }
  assert.equal(p.requests.length, 0, "no decision reached the model");
  // The bridge goes on serving.
  assert.deepEqual((await c.response(c.request("ping", {}, "after"))).result, {});
  await c.close();
});

Deno.test("decideMany: results in order, a failed decision holds its error, warnings prefixed", async () => {
  const p = new Probe();
  const c = new WireClient(p.config());
  const result = await c.call("decision/decideMany", {
    requests: [
      { situation: "one", options: ["a", "b"], foo: 1 },
      { situation: "two", options: ["a", "b"] },
      { situation: "three", options: ["only"] },
      { situation: "six", options: ["a", "b"], tools: [{ name: "look" }], model: "system" },
    ],
    instructions: "Decide.",
    bar: 2,
    maxConcurrency: 1,
    model: probe(
      { json: { reasoning: "r", choice: "b", confidence: 60 } },
      { error: "refusal", message: "No." },
      { json: { reasoning: "s", choice: "a", confidence: 40 } },
    ),
  });
  const results = result.results as JsonObject[];
  assert.equal(results.length, 4);
  assert.deepEqual({ ...results[0], usage: null }, {
    optionID: "b",
    reasoning: "r",
    confidence: 60,
    toolCalls: [],
    usage: null,
    isFallback: false,
  });
  assert.deepEqual(results[1], { error: { code: -32003, message: "No.", data: { code: "refusal" } } });
  assert.deepEqual(results[2], {
    optionID: "only",
    reasoning: "It is the only option.",
    confidence: 100,
    toolCalls: [],
    usage: ZERO_USAGE,
    isFallback: false,
  });
  assert.equal((results[3] as JsonObject).optionID, "a");
  assert.deepEqual(result.warnings, [
    "Unknown parameter 'bar' was ignored.",
    "Unknown parameter 'requests[0].foo' was ignored.",
    "Unknown parameter 'requests[3].model' was ignored.",
    "requests[3]: look: no description; the model may not know when to call it.",
  ]);
  // Shared engine settings; one model for the whole call, its steps handed out in call order.
  assert.equal(p.instances, 1);
  assert.deepEqual(p.requests.map((r) => r.instructions), ["Decide.", "Decide.", "Decide."]);
  assert.deepEqual(p.requests.map((r) => r.prompt.split("\n")[0]), [
    "Situation: one",
    "Situation: two",
    "Situation: six",
  ]);
  await c.close();
});

Deno.test("decideMany: the decisions share one scripted model, steps in the order they are asked for", async () => {
  const c = new WireClient();
  // One answer, then a guardrail block: the second decision falls back, the third fails (its step is the
  // script's fallback, a text answer that is no decision, and its retry gets the same).
  const result = await c.call("decision/decideMany", {
    requests: [
      { situation: "npc 1", options: ["a", "b"] },
      { situation: "npc 2", options: ["a", "b"], fallbackOptionID: "b" },
      { situation: "npc 3", options: ["a", "b"], fallbackOptionID: "a" },
    ],
    model: {
      type: "scripted",
      steps: [{ json: { reasoning: "r", choice: "a", confidence: 70 } }, { error: "guardrail_violation" }],
      fallback: { error: "refusal" },
    },
  });
  assert.deepEqual((result.results as JsonObject[]).map((r) => [r.optionID, r.isFallback]), [
    ["a", false],
    ["b", true],
    ["a", true],
  ]);
  await c.close();
});

Deno.test("decideMany: with maxConcurrency > 1 the shared script's steps go in call order", async () => {
  const c = new WireClient();
  const answer = (choice: string, delayMs: number) => ({
    json: { reasoning: choice, choice, confidence: 50 },
    delayMs,
  });
  const result = await c.call("decision/decideMany", {
    requests: [1, 2, 3, 4].map((n) => ({ situation: `npc ${n}`, options: ["a", "b", "c", "d"] })),
    maxConcurrency: 2,
    // Decisions 1 and 2 ask first (steps 1 and 2); 2 finishes first, so decision 3 asks next (step 3),
    // then decision 4 (step 4).
    model: scripted(answer("a", 40), answer("b", 5), answer("c", 5), answer("d", 5)),
  });
  assert.deepEqual((result.results as JsonObject[]).map((r) => r.optionID), ["a", "b", "c", "d"]);
  await c.close();
});

Deno.test("decideMany: tool/call params carry the decision's index", async () => {
  const c = new WireClient();
  c.request("decision/decideMany", {
    requests: [
      { situation: "s0", options: ["only"] },
      { situation: "s1", options: ["a", "b"], tools: [CHECK_HP], toolChoice: { tool: "check_hp" } },
    ],
    model: scripted(
      { toolCalls: [{ name: "check_hp", arguments: { who: "me" } }] },
      { json: { reasoning: "r", choice: "b", confidence: 5 } },
    ),
  }, "many");
  const call = await c.toolCall(1);
  const params = call.params as JsonObject;
  assert.deepEqual(Object.keys(params), ["index", "requestId", "call"]);
  assert.equal(params.index, 1);
  assert.equal(params.requestId, "many");
  assert.deepEqual((params.call as JsonObject).arguments, { who: "me" });
  c.reply(call.id as string, { output: "hp 3" });
  const response = await c.response("many");
  const results = (response.result as JsonObject).results as JsonObject[];
  assert.equal((results[0] as JsonObject).optionID, "only");
  assert.equal((results[1] as JsonObject).optionID, "b");
  assert.deepEqual(((results[1] as JsonObject).toolCalls as JsonObject[])[0].output, "hp 3");
  await c.close();
});

Deno.test("decideMany: maxConcurrency bounds the decisions running at once", async () => {
  for (const [maxConcurrency, expected] of [[undefined, 2], [1, 1], [3, 3]] as const) {
    const p = new Probe();
    const c = new WireClient(p.config());
    const result = await c.call("decision/decideMany", {
      requests: [1, 2, 3, 4, 5].map((n) => ({ situation: `s${n}`, options: ["a", "b"] })),
      ...(maxConcurrency === undefined ? {} : { maxConcurrency }),
      model: probe(...Array(5).fill({ json: { reasoning: "r", choice: "a", confidence: 1 }, delayMs: 40 })),
    });
    assert.equal((result.results as JsonObject[]).filter((r) => r.optionID === "a").length, 5);
    assert.equal(p.maxActive, expected);
    assert.equal(p.instances, 1, "one model for the whole call");
    // Started in request order.
    assert.deepEqual(
      p.requests.map((r) => r.prompt.split("\n")[0]),
      [1, 2, 3, 4, 5].map((n) => `Situation: s${n}`),
    );
    await c.close();
  }
});

Deno.test("decideMany: invalid top-level params fail the whole request", async () => {
  const c = new WireClient();
  const cases: Array<[JsonObject, string]> = [
    [{}, "Missing required parameter 'requests'."],
    [{ requests: {} }, "Parameter 'requests' must be an array; got {}."],
    [{ requests: [], maxConcurrency: 0 }, "Parameter 'maxConcurrency' must be at least 1."],
    [{ requests: [], maxToolRounds: 1.5 }, "Parameter 'maxToolRounds' must be an integer; got 1.5."],
  ];
  for (const [params, message] of cases) {
    assert.deepEqual(await failure(c, "decision/decideMany", params), {
      code: -32602,
      message,
      data: { code: "invalid_params" },
    });
  }
  assert.deepEqual(await c.call("decision/decideMany", { requests: [] }), { results: [] });
  await c.close();
});

Deno.test("decideMany: cancelled as a whole when the bridge shuts down", async () => {
  const c = new WireClient();
  const id = c.request("decision/decideMany", {
    requests: [{ situation: "s", options: ["a", "b"] }, { situation: "t", options: ["only"] }],
    model: scripted({ json: { reasoning: "r", choice: "a", confidence: 1 }, delayMs: 60_000 }),
  });
  await c.close();
  const r = await c.response(id);
  assert.deepEqual(r.error, {
    code: -32009,
    message: "The request was cancelled.",
    data: { code: "cancelled" },
  });
});
