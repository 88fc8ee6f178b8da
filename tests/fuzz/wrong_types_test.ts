/**
 * Exhaustive wrong types (issue #7): every parameter of every method in `initialize`'s
 * `capabilities.methods` — and every field of the nested `options`, `persona`, `memory` and `model` objects —
 * gets each value of a pool of wrong-typed and extreme values, with the other parameters valid (the valid
 * params of each method are checked first: they must succeed). Each request must get exactly one response,
 * never `-32603` and never an "Internal error" in the log (an error the code did not anticipate), the
 * bridge must keep answering, and no prototype may be polluted. A value whose JSON type the parameter does
 * not take (see TYPES) must be rejected with `-32602` naming the parameter, apart from the documented
 * exceptions (see documentedException); `null` means absent (§1).
 */
import assert from "node:assert/strict";
import { ERROR_CODES } from "../../src/protocol/errors.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { jsonText, type Node, Raw } from "./json_text.ts";
import { EXCLUDED_METHODS, METHOD_PARAMS } from "./method_params.ts";
import { InProcessTarget } from "./fuzz_target.ts";
import { Rng } from "./rng.ts";

/** Wrong-typed and extreme values (raw JSON text). */
const WRONG = [
  "null",
  "true",
  "0",
  "-1",
  "1.5",
  "1e308",
  "1e400",
  "-1e400",
  "9007199254740993",
  '""',
  '"x"',
  '"\\u0000"',
  "[]",
  "[null]",
  '[1,"a",{}]',
  "{}",
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '"' + "a".repeat(20_000) + '"',
  "[".repeat(90) + "]".repeat(90),
];

/** Nested objects and their fields (PROTOCOL.md §5/§6). */
const NESTED: Record<string, Record<string, string[]>> = {
  "session/create": {
    options: [
      "toolChoice",
      "maxToolRounds",
      "maxToolCalls",
      "enabledTools",
      "temperature",
      "maxResponseTokens",
      "sampling",
      "toolTimeoutSeconds",
      "trimHistory",
      "reservedResponseTokens",
      "maxAttempts",
    ],
    model: ["type", "steps", "fallback"],
  },
  "npc/create": {
    persona: [
      "name",
      "role",
      "personality",
      "speakingStyle",
      "backstory",
      "goals",
      "knowledge",
      "secrets",
      "defaultEmotion",
      "maxSentences",
    ],
    options: [
      "replyFormat",
      "groundingTool",
      "toolChoice",
      "maxToolRounds",
      "maxToolCalls",
      "toolTimeoutSeconds",
      "worldReadable",
      "worldWritable",
      "worldContextPaths",
      "memoryTools",
      "maxFacts",
      "maxRelationshipChange",
      "secretsUnlockAtRelationship",
      "emotions",
      "playerOptionCount",
      "canEndConversation",
      "extraInstructions",
      "compactAfterTurns",
      "keepRecentTurns",
      "fallbackOnGuardrail",
      "fallbackLines",
      "temperature",
      "maximumResponseTokens",
      "barkMaximumTokens",
    ],
    memory: ["facts", "relationship", "summary"],
  },
  "npc/update": {
    persona: ["name", "goals"],
    options: ["replyFormat", "maxFacts"],
    memory: ["relationship"],
  },
  "decision/decide": { actor: ["name", "role"], model: ["type", "steps"] },
  "content/generate": { model: ["type", "steps"] },
};

/** JSON types a parameter accepts (PROTOCOL.md §5/§6); `any` takes every value. */
type Kind = "string" | "number" | "boolean" | "object" | "array" | "any";
const S: Kind[] = ["string"];
const N: Kind[] = ["number"];
const B: Kind[] = ["boolean"];
const O: Kind[] = ["object"];
const A: Kind[] = ["array"];
const ANY: Kind[] = ["any"];
const MODEL: Kind[] = ["string", "object"];
const CHOICE: Kind[] = ["string", "object"];

/** Accepted types by method, then by parameter path (`options.maxToolRounds`). */
const TYPES: Record<string, Record<string, Kind[]>> = {
  "initialize": { client: O, protocolVersion: S },
  "session/create": {
    session: S,
    instructions: S,
    tools: A,
    options: O,
    history: O,
    model: MODEL,
    "options.toolChoice": CHOICE,
    "options.maxToolRounds": N,
    "options.maxToolCalls": N,
    "options.enabledTools": A,
    "options.temperature": N,
    "options.maxResponseTokens": N,
    "options.sampling": ["string", "object"],
    "options.toolTimeoutSeconds": N,
    "options.trimHistory": B,
    "options.reservedResponseTokens": N,
    "options.maxAttempts": N,
    "model.type": S,
    "model.steps": A,
    "model.fallback": O,
  },
  "session/respond": {
    session: S,
    prompt: S,
    schema: O,
    stream: B,
    toolChoice: CHOICE,
    maxToolRounds: N,
    maxToolCalls: N,
    enabledTools: A,
  },
  "session/cancel": { session: S },
  "session/reset": { session: S },
  "session/delete": { session: S },
  "session/transcript": { session: S },
  "session/setInstructions": { session: S, instructions: S },
  "session/setContextNote": { session: S, note: S },
  "session/setTools": { session: S, tools: A },
  "session/compact": { session: S, keepRecentTurns: N, summaryInstructions: S },
  "schema/validate": { schema: ["object", "boolean"], name: S },
  "tools/validate": { tools: A },
  "npc/create": {
    npc: S,
    persona: O,
    tools: A,
    world: S,
    memory: O,
    options: O,
    model: MODEL,
    "persona.name": S,
    "persona.role": S,
    "persona.personality": S,
    "persona.speakingStyle": S,
    "persona.backstory": S,
    "persona.goals": A,
    "persona.knowledge": A,
    "persona.secrets": A,
    "persona.defaultEmotion": S,
    "persona.maxSentences": N,
    "options.replyFormat": S,
    "options.groundingTool": S,
    "options.toolChoice": CHOICE,
    "options.maxToolRounds": N,
    "options.maxToolCalls": N,
    "options.toolTimeoutSeconds": N,
    "options.worldReadable": A,
    "options.worldWritable": A,
    "options.worldContextPaths": A,
    "options.memoryTools": ["string", "array", "number"], // also the bit mask 1 | 2 (reference behaviour)
    "options.maxFacts": N,
    "options.maxRelationshipChange": N,
    "options.secretsUnlockAtRelationship": N,
    "options.emotions": A,
    "options.playerOptionCount": N,
    "options.canEndConversation": B,
    "options.extraInstructions": S,
    "options.compactAfterTurns": N,
    "options.keepRecentTurns": N,
    "options.fallbackOnGuardrail": B,
    "options.fallbackLines": A,
    "options.temperature": N,
    "options.maximumResponseTokens": N,
    "options.barkMaximumTokens": N,
    "memory.facts": A,
    "memory.relationship": N,
    "memory.summary": S,
  },
  "npc/talk": { npc: S, line: S, context: ANY, stream: B, toolChoice: CHOICE },
  "npc/bark": { npc: S, situation: ANY },
  "npc/state": { npc: S, settle: B },
  "npc/restore": { state: O, npc: S, tools: A, options: O, world: S, model: MODEL },
  "npc/update": {
    npc: S,
    persona: O,
    options: O,
    memory: O,
    tools: A,
    "persona.name": S,
    "persona.goals": A,
    "options.replyFormat": S,
    "options.maxFacts": N,
    "memory.relationship": N,
  },
  "npc/reset": { npc: S, clearMemory: B },
  "npc/cancel": { npc: S },
  "npc/delete": { npc: S },
  "decision/decide": {
    situation: ANY,
    options: A,
    actor: ["string", "object"],
    context: ANY,
    tools: A,
    toolChoice: CHOICE,
    fallbackOptionID: S,
    instructions: S,
    temperature: N,
    maxToolRounds: N,
    toolTimeoutSeconds: N,
    model: MODEL,
    "actor.name": S,
    "actor.role": S,
    "model.type": S,
    "model.steps": A,
  },
  "decision/decideMany": { requests: A, maxConcurrency: N, model: MODEL },
  "world/create": { world: S, state: O },
  "world/get": { world: S, path: S },
  "world/set": { world: S, path: S, value: ANY },
  "world/merge": { world: S, patch: ANY, path: S },
  "world/remove": { world: S, path: S },
  "world/snapshot": { world: S },
  "world/delete": { world: S },
  "world/subscribe": { world: S, path: S },
  "world/unsubscribe": { subscription: S },
  "content/generate": {
    prompt: S,
    schema: O,
    instructions: S,
    context: ANY,
    tools: A,
    toolTimeoutSeconds: N,
    temperature: N,
    model: MODEL,
    "model.type": S,
    "model.steps": A,
  },
};

/** The JSON type of a raw value. */
function kindOf(raw: string): Kind | "null" {
  const v: unknown = JSON.parse(raw);
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v as Kind;
}

const CODES = new Map<string, number>(Object.entries(ERROR_CODES));
/**
 * A model whose answer is valid for plain turns, decisions and schema turns with {@link FAST_SCHEMA} (a
 * scripted answer outside the schema would fail and be retried after 300 ms).
 */
const FAST_MODEL = {
  type: "scripted",
  steps: [],
  fallback: { json: { reasoning: "r", choice: "a", confidence: 5 } },
};
/** The schema of the valid params of schema turns (`session/respond`, `content/generate`). */
const FAST_SCHEMA = {
  type: "object",
  properties: { reasoning: { type: "string" }, choice: { type: "string" }, confidence: { type: "integer" } },
};
const NPC_MODEL = { type: "scripted", steps: [], fallback: { text: "[happy] Aye." } };

/**
 * The documented exceptions to "a wrong type is -32602 naming the parameter": `schema/validate` reports a
 * schema that is not a schema object as `-32007 invalid_schema` with `data.path` (§5 `schema/validate`).
 */
function documentedException(method: string, what: string, e: JsonObject | undefined): boolean {
  const data = e?.data as JsonObject | undefined;
  return method === "schema/validate" && what === "schema" && e?.code === -32007 && data?.path === "schema";
}

/** Methods that create the object their id names: each case uses a fresh id, and what it created is deleted. */
const CREATES: Record<string, { param: string; result: string; delete: string }> = {
  "session/create": { param: "session", result: "session", delete: "session/delete" },
  "npc/create": { param: "npc", result: "npc", delete: "npc/delete" },
  "npc/restore": { param: "npc", result: "npc", delete: "npc/delete" },
  "world/create": { param: "world", result: "world", delete: "world/delete" },
};

/** A minimal valid object for a nested field whose valid parent value is not an object (`actor` as an NPC id). */
const NESTED_BASE: Record<string, { [k: string]: Node }> = { actor: { name: "Snik" } };

/** Whether a -32602 message names the parameter `what` (`'options.maxToolRounds'`, or `'model'` … `'type'`). */
function names(message: string, what: string): boolean {
  if (message.includes(`'${what}'`)) return true;
  const dot = what.indexOf(".");
  return dot > 0 && message.includes(`'${what.slice(0, dot)}'`) &&
    message.includes(`'${what.slice(dot + 1)}'`);
}

Deno.test("every parameter of every method, and every nested field, with every wrong value", async () => {
  const rng = new Rng(1);
  const target = new InProcessTarget(rng, 1 << 20, { toolTimeoutSeconds: 1 });
  let id = 0;
  const send = async (method: string, params: Node): Promise<JsonObject[]> => {
    const rid = `w${++id}`;
    const before = target.messages.length;
    await target.write(
      new TextEncoder().encode(jsonText({ jsonrpc: "2.0", id: rid, method, params }) + "\n"),
    );
    await target.write(new TextEncoder().encode(`{"jsonrpc":"2.0","id":"p${id}","method":"ping"}\n`));
    const ok = await target.waitForCount(before + 2, 5000);
    assert.ok(ok, `no answer to ${method}`);
    // The ping answers at once; the request may be deferred (a turn): answer its tool calls, wait for it.
    const deadline = Date.now() + 5000;
    let seen = before;
    while (!target.messages.some((m, i) => i >= before && m.id === rid && !("method" in m))) {
      for (; seen < target.messages.length; seen++) {
        const m = target.messages[seen];
        if (m.method !== "tool/call") continue;
        const reply = { jsonrpc: "2.0", id: m.id, result: { output: "ok" } };
        await target.write(new TextEncoder().encode(JSON.stringify(reply) + "\n"));
      }
      if (Date.now() > deadline) break;
      await target.waitForCount(target.messages.length + 1, 20);
    }
    return target.messages.slice(before).filter((m) => m.id === rid && !("method" in m));
  };
  /** Sends and asserts a success (set-up steps). */
  const succeed = async (method: string, params: Node): Promise<JsonObject> => {
    const responses = await send(method, params);
    assert.equal(responses.length, 1, `${method}: ${JSON.stringify(responses)}`);
    assert.ok(
      "result" in responses[0],
      `${method} ${jsonText(params).slice(0, 300)}: ${JSON.stringify(responses[0])}`,
    );
    return responses[0].result as JsonObject;
  };
  // Objects the valid params refer to; each set-up step must succeed.
  const world = { world: "fz-w1", state: { player: { gold: 60 }, list: [1, 2] } };
  const setup = async () => {
    for (
      const [method, params] of [["world/delete", { world: "fz-w1" }], ["session/delete", {
        session: "fz-s1",
      }], ["npc/delete", { npc: "fz-n1" }]] as const
    ) {
      await send(method, params); // absent after an earlier case deleted it: ignored
    }
    await succeed("world/create", world);
    await succeed("session/create", { session: "fz-s1", model: FAST_MODEL });
    await succeed("npc/create", {
      npc: "fz-n1",
      persona: { name: "N" },
      options: { replyFormat: "text" },
      model: NPC_MODEL,
    });
    return (await succeed("world/subscribe", { world: "fz-w1", path: "player" })).subscription as string;
  };
  let subscription = await setup();

  const init = await succeed("initialize", {});
  const methods = (init.capabilities as JsonObject).methods as string[];
  let requests = 0;
  let wrongTyped = 0;
  let fresh = 0;
  const problems: string[] = [];
  for (const method of methods) {
    if (EXCLUDED_METHODS.has(method)) continue;
    assert.ok(Object.hasOwn(METHOD_PARAMS, method), `no param table for ${method}`);
    assert.ok(
      Object.hasOwn(TYPES, method) || Object.keys(METHOD_PARAMS[method].params).length === 0,
      `no types for ${method}`,
    );
    const table = METHOD_PARAMS[method];
    const create = CREATES[method];
    const valid = (): { [k: string]: Node } => {
      const out: { [k: string]: Node } = {};
      for (const [name, gen] of Object.entries(table.params)) out[name] = gen(rng);
      // Keep the targets stable: the ids name the set-up objects.
      if ("session" in out) out.session = "fz-s1";
      if ("npc" in out) out.npc = "fz-n1";
      if ("world" in out) out.world = "fz-w1";
      if ("subscription" in out) out.subscription = subscription;
      if (create) out[create.param] = `fz-new-${++fresh}`;
      // Answers every kind of turn at once (a failed JSON answer would be retried after 300 ms).
      if ("model" in out) out.model = FAST_MODEL;
      if ("schema" in out && (method === "session/respond" || method === "content/generate")) {
        out.schema = FAST_SCHEMA;
      }
      if (method === "decision/decide") out.options = ["a", "b"];
      if (method === "decision/decideMany") {
        out.requests = [{ situation: "x", options: ["a", "b"] }, { situation: "y", options: ["a", "b"] }];
      }
      return out;
    };
    /** After a case: delete what a create made; restore what a delete or an unsubscribe removed. */
    const cleanUp = async (responses: JsonObject[]) => {
      const result = responses[0]?.result as JsonObject | undefined;
      if (create && result && typeof result[create.result] === "string") {
        await succeed(create.delete, { [create.param]: result[create.result] });
      }
      if (method.endsWith("/delete") || method === "world/unsubscribe") subscription = await setup();
    };
    // The set-up of this method: random valid params until one succeeds (the tables are valid-looking, not
    // always valid: an actor NPC id may not exist, a toolChoice may name a tool that is not there).
    let base: { [k: string]: Node } | null = null;
    for (let attempt = 0; attempt < 30 && base === null; attempt++) {
      const candidate = valid();
      const responses = await send(method, candidate);
      if (responses.length === 1 && "result" in responses[0]) base = candidate;
      await cleanUp(responses);
    }
    if (base === null) {
      problems.push(`${method}: no valid params found for the set-up`);
      continue;
    }
    const withFreshId = (params: { [k: string]: Node }) =>
      create && params[create.param] === base![create.param]
        ? { ...params, [create.param]: `fz-new-${++fresh}` }
        : params;
    const cases: Array<[string, string, { [k: string]: Node }]> = [];
    for (const name of Object.keys(table.params)) {
      for (const w of WRONG) cases.push([name, w, { ...base, [name]: new Raw(w) }]);
    }
    for (const [object, fields] of Object.entries(NESTED[method] ?? {})) {
      for (const field of fields) {
        for (const w of WRONG) {
          const params: { [k: string]: Node } = { ...base };
          const parent = params[object];
          const inner = parent !== null && typeof parent === "object" && !Array.isArray(parent) &&
              !(parent instanceof Raw)
            ? { ...(parent as { [k: string]: Node }) }
            : { ...(NESTED_BASE[object] ?? {}) };
          inner[field] = new Raw(w);
          params[object] = inner;
          cases.push([`${object}.${field}`, w, params]);
        }
      }
    }
    for (const [what, wrong, caseParams] of cases) {
      requests++;
      const params = withFreshId(caseParams);
      const logs = target.logs.length;
      const responses = await send(method, params);
      if (responses.length !== 1) problems.push(`${method} ${what}: ${responses.length} responses`);
      const e = responses[0]?.error as JsonObject | undefined;
      if (e) {
        const name = (e.data as JsonObject)?.code as string;
        if (CODES.get(name) !== e.code || e.code === -32603) {
          problems.push(`${method} ${what}: ${JSON.stringify(e).slice(0, 200)}`);
        }
      }
      // A value of a type the parameter does not take is rejected with -32602 naming the parameter.
      const accepted = TYPES[method]?.[what];
      if (accepted === undefined) problems.push(`${method} ${what}: no type in the table`);
      const kind = kindOf(wrong);
      if (accepted && kind !== "null" && !accepted.includes("any") && !accepted.includes(kind)) {
        wrongTyped++;
        const rejected = e !== undefined && e.code === -32602 && names(String(e.message), what);
        if (!rejected && !documentedException(method, what, e)) {
          problems.push(
            `${method} ${what} = ${wrong.slice(0, 40)}: ${
              JSON.stringify(responses[0] ?? null).slice(0, 240)
            }`,
          );
        }
      }
      for (const l of target.logs.slice(logs)) {
        if (l.startsWith("error:")) problems.push(`${method} ${what}: log ${l.slice(0, 300)}`);
      }
      await cleanUp(responses);
    }
  }
  problems.push(...target.prototypeProblems());
  assert.deepEqual(problems.slice(0, 30), []);
  assert.ok(requests >= 3000, `${requests} requests`);
  assert.ok(wrongTyped >= 2000, `${wrongTyped} wrong-typed values`);
  await target.close();
});
