/**
 * Valid-looking params for every method of PROTOCOL.md §5/§6, and a pool of wrong-typed values. The fuzzer
 * takes the method list from `initialize` (`capabilities.methods`) and these tables for the params; a method
 * without a table gets random params.
 *
 * Object ids come from small pools (`fz-…`, and the generated `s1`, `npc1`, `w1`, `sub1` forms) that never
 * include the harness's sentinel objects, so any change to a sentinel is a bug.
 */
import type { Rng } from "./rng.ts";
import { Raw } from "./json_text.ts";
import type { Node } from "./json_text.ts";

/** Ids the generator may use. The sentinels are never among them. */
export const POOLS = {
  session: ["fz-s1", "fz-s2", "fz-s3", "s1", "s2", "s3"],
  npc: ["fz-n1", "fz-n2", "npc1", "npc2"],
  world: ["fz-w1", "fz-w2", "w1", "w2"],
  subscription: ["sub1", "sub2", "sub3", "sub4", "sub99"],
  tool: ["door", "look", "read_world_state", "update_world_state", "remember_fact"],
} as const;

const ERROR_CODES = [
  "guardrail_violation",
  "refusal",
  "generation_failed",
  "rate_limited",
  "context_size_exceeded",
  "model_unavailable",
  "tool_failed",
  "cancelled",
];

/** A scripted model step. */
function step(g: Rng): Node {
  const delay = g.chance(0.2) ? { delayMs: g.int(20) } : {};
  switch (g.int(7)) {
    case 0:
    case 1:
      return { text: g.pick(["Hmph.", "[happy] Hello there.", '{"a":"x"}', "Aye.", ""]), ...delay };
    case 2:
      return {
        toolCalls: [{ name: g.pick(POOLS.tool), arguments: g.pick([{ gate: "north" }, {}, { path: "a" }]) }],
        ...delay,
      };
    case 3:
      return {
        json: g.pick([{ a: "x" }, { optionID: "a", reasoning: "r", confidence: 5 }, { name: "loot" }]),
      };
    case 4:
      return { template: g.pick(["Gate says: {toolOutput}", "{prompt}", "{toolOutputs}"]), ...delay };
    case 5:
      return { error: g.pick(ERROR_CODES), ...delay };
    default:
      return {
        toolCalls: [{ name: "door", arguments: { gate: "a" } }, { name: "look", arguments: {} }],
        ...delay,
      };
  }
}

/** A `model` param: mostly scripted. */
export function model(g: Rng): Node {
  if (g.chance(0.1)) return g.pick(["scripted", "system"]);
  const steps: Node[] = [];
  for (let i = g.int(5); i > 0; i--) steps.push(step(g));
  const spec: { [k: string]: Node } = { type: "scripted", steps };
  if (g.chance(0.3)) spec.fallback = step(g);
  return spec;
}

/** Client tool definitions. */
export function tools(g: Rng): Node {
  const out: Node[] = [];
  const names = ["door", "look"];
  for (let i = g.int(3); i > 0; i--) {
    const name = names[i - 1];
    const def: { [k: string]: Node } = {
      name,
      description: `The ${name} tool.`,
      parameters: { type: "object", properties: { gate: { type: "string" } } },
    };
    if (g.chance(0.7)) def.timeoutSeconds = g.pick([0.2, 0.5, 1]);
    out.push(def);
  }
  return out;
}

function schema(g: Rng): Node {
  return g.pick<Node>([
    { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
    { type: "object", properties: { name: { type: "string" }, n: { type: "integer", minimum: 0 } } },
    {
      type: "object",
      properties: { e: { enum: ["x", "y"] }, l: { type: "array", items: { type: "number" } } },
    },
  ]);
}

function toolChoice(g: Rng): Node {
  return g.pick<Node>(["auto", "none", "required", "explicit", { tool: "door" }]);
}

function text(g: Rng): Node {
  return g.pick(["", "Open the north gate.", "héllo 👋", "a\nb\tc", g.word(20)]);
}

function anyJson(g: Rng, depth = 0): Node {
  const k = g.int(depth > 2 ? 5 : 7);
  switch (k) {
    case 0:
      return null;
    case 1:
      return g.chance(0.5);
    case 2:
      return g.pick([0, -1, 2.5, 1e21, 45]);
    case 3:
    case 4:
      return g.word();
    case 5: {
      const out: Node[] = [];
      for (let i = g.int(4); i > 0; i--) out.push(anyJson(g, depth + 1));
      return out;
    }
    default: {
      const out: { [k: string]: Node } = {};
      for (let i = g.int(4); i > 0; i--) out[g.word(4)] = anyJson(g, depth + 1);
      return out;
    }
  }
}

function worldPath(g: Rng): Node {
  return g.pick([
    "",
    "a",
    "a.b",
    "player.gold",
    "list.0",
    "list.1",
    "a..b",
    ".a",
    "list.9999",
    "x.__proto__",
  ]);
}

const TRANSCRIPT = {
  type: "FoundationModels.Transcript",
  version: "1.1",
  transcript: {
    entries: [
      { id: "i1", role: "user", contents: [{ type: "text", id: "s1", text: "Hi" }], options: {} },
      { id: "r1", role: "response", contents: [{ type: "text", id: "s2", text: "Hello." }], assets: [] },
    ],
  },
};

const persona = (g: Rng): Node => ({
  name: g.pick(["Gorm", "Aria", "Snik"]),
  ...(g.chance(0.5) ? { role: "a smith" } : {}),
  ...(g.chance(0.3) ? { goals: ["sell"], secrets: ["owes money"] } : {}),
});

const npcOptions = (g: Rng): Node => ({
  replyFormat: g.pick(["text", "structured", "automatic"]),
  ...(g.chance(0.5) ? { compactAfterTurns: g.pick([0, 1, 2]) } : {}),
  ...(g.chance(0.3) ? { worldWritable: ["a", ""], memoryTools: "all" } : {}),
  ...(g.chance(0.3) ? { toolChoice: toolChoice(g) } : {}),
  ...(g.chance(0.3) ? { toolTimeoutSeconds: 0.3 } : {}),
});

const decisionOptions = (g: Rng): Node =>
  g.pick<Node>([["a", "b"], [{ id: "flee", description: "Run" }, { id: "fight" }], ["only"], ["a", "a"]]);

const decision = (g: Rng): Node => ({
  situation: text(g),
  options: decisionOptions(g),
  ...(g.chance(0.4) ? { model: model(g) } : { model: "scripted" }),
  ...(g.chance(0.3) ? { actor: g.chance(0.5) ? persona(g) : g.pick(POOLS.npc) } : {}),
  ...(g.chance(0.3) ? { fallbackOptionID: "a" } : {}),
});

type Gen = (g: Rng) => Node;

/** One method's params: generators by name and the required names. */
export interface MethodParams {
  params: Record<string, Gen>;
  required: string[];
}

const p = (params: Record<string, Gen>, required: string[] = []): MethodParams => ({ params, required });
// Sometimes a generated id (`s17`, `npc90`, `w40`), so that objects created without an id get deleted too
// and long runs do not stay at the session/NPC/world limits.
const session = (g: Rng) => g.chance(0.8) ? g.pick(POOLS.session) : `s${g.range(1, 40)}`;
const npc = (g: Rng) => g.chance(0.8) ? g.pick(POOLS.npc) : `npc${g.range(1, 100)}`;
const world = (g: Rng) => g.chance(0.8) ? g.pick(POOLS.world) : `w${g.range(1, 40)}`;
const bool = (g: Rng) => g.chance(0.5);

/** Param tables by method (PROTOCOL.md §5 and §6). */
export const METHOD_PARAMS: Record<string, MethodParams> = {
  "initialize": p({
    client: () => ({ name: "Fuzz" }),
    protocolVersion: (g) => g.pick(["1.0", "1.1", "2.0"]),
  }),
  "ping": p({}),
  "model/availability": p({}),
  "session/create": p({
    session,
    instructions: text,
    tools,
    options: (g) => ({
      toolChoice: toolChoice(g),
      maxToolRounds: g.int(4),
      ...(g.chance(0.5) ? { toolTimeoutSeconds: g.pick([0.2, 1]) } : {}),
      ...(g.chance(0.2) ? { sampling: g.pick<Node>(["greedy", { topK: 3, seed: 1 }]) } : {}),
    }),
    history: () => TRANSCRIPT,
    model,
  }),
  "session/respond": p({
    session,
    prompt: text,
    schema,
    stream: bool,
    toolChoice,
    maxToolRounds: (g) => g.int(4),
    maxToolCalls: (g) => g.int(5),
    enabledTools: (g) => g.pick<Node>([["door"], [], ["look", "door"]]),
  }, ["session", "prompt"]),
  "session/cancel": p({ session }, ["session"]),
  "session/reset": p({ session }, ["session"]),
  "session/delete": p({ session }, ["session"]),
  "session/list": p({}),
  "session/transcript": p({ session }, ["session"]),
  "session/setInstructions": p({ session, instructions: text }, ["session", "instructions"]),
  "session/setContextNote": p({ session, note: text }, ["session", "note"]),
  "session/setTools": p({ session, tools }, ["session", "tools"]),
  "session/compact": p(
    { session, keepRecentTurns: (g) => g.int(3), summaryInstructions: text },
    ["session"],
  ),
  "schema/validate": p({ schema, name: (g) => g.pick(["Response", "X y", ""]) }, ["schema"]),
  "tools/validate": p({ tools }, ["tools"]),
  "npc/create": p({
    npc,
    persona,
    tools,
    world,
    memory: () => ({ facts: ["Likes axes."], relationship: 10 }),
    options: npcOptions,
    model,
  }, ["persona"]),
  "npc/talk": p({
    npc,
    line: text,
    context: (g) => g.chance(0.5) ? text(g) : anyJson(g),
    stream: bool,
    toolChoice,
  }, ["npc", "line"]),
  "npc/bark": p({ npc, situation: text }, ["npc"]),
  "npc/state": p({ npc, settle: bool }, ["npc"]),
  "npc/restore": p({
    state: (g) => ({ version: 1, persona: persona(g), memory: { facts: [], relationship: 0 } }),
    npc,
    tools,
    options: npcOptions,
    world,
    model,
  }, ["state"]),
  "npc/update": p({
    npc,
    persona: (g) => ({ role: g.word() }),
    options: (g) => ({ maxToolRounds: g.int(3) }),
    memory: () => ({ relationship: 40, facts: ["Returned the ring."] }),
    tools,
  }, ["npc"]),
  "npc/reset": p({ npc, clearMemory: bool }, ["npc"]),
  "npc/cancel": p({ npc }, ["npc"]),
  "npc/delete": p({ npc }, ["npc"]),
  "npc/list": p({}),
  "decision/decide": p({
    situation: text,
    options: decisionOptions,
    actor: (g) => g.chance(0.5) ? persona(g) : g.pick(POOLS.npc),
    context: anyJson,
    tools,
    toolChoice,
    fallbackOptionID: () => "a",
    instructions: text,
    temperature: (g) => g.pick([0, 0.7]),
    maxToolRounds: (g) => g.int(3),
    toolTimeoutSeconds: () => 0.3,
    model,
  }, ["situation", "options"]),
  "decision/decideMany": p({
    requests: (g) => [decision(g), decision(g)],
    maxConcurrency: (g) => g.range(1, 3),
    model,
  }, ["requests"]),
  "world/create": p({ world, state: (g) => ({ player: { gold: 60 }, list: [1, 2], a: anyJson(g) }) }),
  "world/get": p({ world, path: worldPath }, ["world"]),
  "world/set": p({ world, path: worldPath, value: anyJson }, ["world", "value"]),
  "world/merge": p({
    world,
    patch: (g) => ({ a: anyJson(g), player: { gold: g.int(100) } }),
    path: worldPath,
  }, [
    "world",
    "patch",
  ]),
  "world/remove": p({ world, path: worldPath }, ["world", "path"]),
  "world/snapshot": p({ world }, ["world"]),
  "world/delete": p({ world }, ["world"]),
  "world/list": p({}),
  "world/subscribe": p({ world, path: worldPath }, ["world"]),
  "world/unsubscribe": p({ subscription: (g) => g.pick(POOLS.subscription) }, ["subscription"]),
  "content/generate": p({
    prompt: text,
    schema,
    instructions: text,
    context: anyJson,
    tools,
    toolTimeoutSeconds: () => 0.3,
    temperature: () => 0.5,
    model,
  }, ["prompt", "schema"]),
};

/** Methods the fuzzer never calls (they end the run). */
export const EXCLUDED_METHODS = new Set(["shutdown"]);

/** Wrong-typed and extreme values, as raw JSON text. */
export function wrongValue(g: Rng): Node {
  const big = g.chance(0.05);
  return new Raw(g.pick([
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1.5",
    "-0",
    "1e308",
    "1e400",
    "-1e400",
    "1e-400",
    "9007199254740993",
    "123456789012345678901234567890",
    '""',
    '"x"',
    '"\\u0000"',
    '"\\ud83d\\ude00"',
    "[]",
    "[null]",
    '[1,"a",{}]',
    "{}",
    '{"__proto__":{"polluted":"yes"}}',
    '{"constructor":{"prototype":{"polluted":"yes"}}}',
    '{"type":"object","properties":{"__proto__":{"type":"string"}}}',
    '"' + "a".repeat(big ? 200_000 : 5000) + '"',
    "[".repeat(60) + "]".repeat(60),
    '{"toString":1,"valueOf":"x","hasOwnProperty":null}',
  ]));
}

/** Random params for a method without a table. */
export function randomParams(g: Rng): Node {
  const out: { [k: string]: Node } = {};
  for (let i = g.int(4); i > 0; i--) out[g.word(6)] = g.chance(0.5) ? anyJson(g) : wrongValue(g);
  return out;
}
