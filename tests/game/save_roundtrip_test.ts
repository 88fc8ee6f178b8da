/**
 * Save → restore round trips as a game does them, over seeded random content: an NPC (`npc/state` →
 * `npc/restore`), its world (`world/snapshot` → `world/create`) and a session (`session/transcript` →
 * `session/create` `history`), saved to text as a file would hold them and restored in another bridge.
 * Nothing may be lost or changed: every persona field, memory fact (in order) and the relationship, every
 * option and tool definition, every entry of the conversation with its unicode text, numbers and tool calls,
 * and every world value. A restored NPC goes on exactly as the one that was saved.
 *
 * A failing seed is replayed alone with `SAVE_SEED=<n> deno test -A tests/game/save_roundtrip_test.ts`.
 */
import assert from "node:assert/strict";
import {
  Bridge,
  type BridgeOptions,
  type ClientTool,
  type NpcState,
  type ScriptStep,
  StdioTransport,
  type Transcript,
} from "../../mod.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { EMOTIONS } from "../../src/game/npc/emotions.ts";
import { Rng } from "../fuzz/rng.ts";
import { stdioCommand } from "../client/transports.ts";

const SEEDS = Deno.env.get("SAVE_SEED")
  ? [Number(Deno.env.get("SAVE_SEED"))]
  : Deno.env.get("SAVE_SEEDS")
  ? Array.from({ length: Number(Deno.env.get("SAVE_SEEDS")) }, (_, i) => i + 1)
  : [1, 2, 3, 4, 5, 6, 7, 8];
const quiet: BridgeOptions = { onWarning: () => {} };

/** Pieces of text a player, a designer or a model writes: scripts, escapes, emoji sequences, RTL. */
const PIECES = [
  "Aria",
  "iron sword",
  "Grüße",
  "ß",
  "naïve café",
  "世界",
  "剣と魔法",
  "안녕",
  "مرحبا",
  "שלום",
  "Ελλάδα",
  "🗡️",
  "👩‍👩‍👧",
  "🏳️‍🌈",
  "e\u0301",
  '"quoted"',
  "back\\slash",
  "line\nbreak",
  "tab\there",
  "\u2028",
  "\u0001",
  "{not json",
  "<b>",
  "45 gold",
  "-0",
  "1e3",
] as const;

/** Text of 1…`max` pieces, without spaces at either end (the bridge trims persona fields and facts). */
function text(rng: Rng, max = 4): string {
  const n = rng.range(1, max);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(rng.pick(PIECES));
  return parts.join(" ").trim() || "x";
}

/** A JSON number as the wire carries it (doubles: no -0, which JSON text cannot keep). */
function number(rng: Rng): number {
  return rng.pick([
    0,
    1,
    -1,
    45,
    0.1,
    0.30000000000000004,
    -2.5,
    1e-7,
    1.25e21,
    -1.5e300,
    5e-324,
    9007199254740991,
    -9007199254740991,
    rng.range(-1000, 1000),
    rng.next() * 1000,
  ]);
}

/**
 * A key that is not an array index: JavaScript objects put those first, so their order is not kept (see
 * docs/PROTOCOL.md, World state).
 */
function key(rng: Rng): string {
  const base = rng.pick([
    "gold",
    "hp",
    "name",
    "quest",
    "Ärger",
    "世界",
    "a b",
    "",
    "🗡️",
    "x-y",
    "_",
    "0x1",
    "1.5",
  ]);
  return base !== "" && rng.chance(0.5) ? base + String(rng.int(100)) : base;
}

function json(rng: Rng, depth = 3): JsonValue {
  const kind = rng.int(depth > 0 ? 7 : 4);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return number(rng);
    case 3:
      return text(rng);
    case 4:
    case 5: {
      const out: JsonObject = {};
      for (let i = rng.int(4); i > 0; i--) out[key(rng)] = json(rng, depth - 1);
      return out;
    }
    default:
      return Array.from({ length: rng.int(4) }, () => json(rng, depth - 1));
  }
}

function object(rng: Rng, depth = 3): JsonObject {
  const out: JsonObject = {};
  for (let i = rng.range(1, 5); i > 0; i--) out[key(rng)] = json(rng, depth - 1);
  return out;
}

/** Text as a save file holds it, read back. */
function throughFile<T>(value: T): T {
  return JSON.parse(JSON.stringify(value));
}

/** A random NPC: persona, memory, options, tools, and the turns its scripted model plays. */
function npcSetup(rng: Rng) {
  const emotions = rng.chance(0.5) ? [] : [...new Set(Array.from({ length: 3 }, () => rng.pick(EMOTIONS)))];
  const allowed = emotions.length === 0 ? EMOTIONS : emotions;
  const playerOptionCount = rng.int(5);
  const persona = {
    name: text(rng, 2),
    role: text(rng),
    personality: text(rng),
    speakingStyle: text(rng),
    backstory: text(rng),
    goals: Array.from({ length: rng.int(3) }, () => text(rng)),
    knowledge: Array.from({ length: rng.int(3) }, () => text(rng)),
    secrets: Array.from({ length: rng.int(2) }, () => text(rng)),
    defaultEmotion: rng.pick(allowed),
    maxSentences: rng.range(1, 4),
  };
  let factId = 0;
  const fact = () => `f${factId++}: ${text(rng)}`;
  const memory: JsonObject = {
    facts: Array.from({ length: rng.int(4) }, fact),
    relationship: rng.range(-100, 100),
  };
  if (rng.chance(0.5)) memory.summary = text(rng, 6);
  const options: JsonObject = {
    replyFormat: rng.pick(["automatic", "structured"]),
    toolChoice: rng.pick(["auto", "explicit", "required"]),
    maxToolRounds: rng.range(2, 4),
    maxToolCalls: rng.range(6, 10),
    toolTimeoutSeconds: rng.pick([0, 30, 120.5]),
    worldReadable: [""],
    worldWritable: ["gold"],
    worldContextPaths: rng.chance(0.5) ? ["gold"] : [],
    memoryTools: "all",
    maxFacts: 40,
    maxRelationshipChange: rng.range(1, 20),
    secretsUnlockAtRelationship: rng.pick([null, 50, -20]),
    emotions,
    playerOptionCount,
    canEndConversation: rng.chance(0.5),
    extraInstructions: rng.chance(0.5) ? text(rng) : null,
    compactAfterTurns: 0,
    fallbackLines: Array.from({ length: rng.int(3) }, () => text(rng)),
    temperature: rng.pick([null, 0, 0.7, 1.25]),
    maximumResponseTokens: rng.pick([null, 200]),
    barkMaximumTokens: rng.range(16, 64),
  };
  const toolCount = rng.range(1, 2);
  const tools = Array.from({ length: toolCount }, (_, i) => ({
    name: `tool_${i}`,
    description: text(rng),
    parameters: {
      type: "object",
      properties: { item: { type: "string", description: text(rng) }, count: { type: "number" } },
      required: ["item"],
    },
    ...(rng.chance(0.5) ? { timeoutSeconds: rng.pick([0, 5, 7.5]) } : {}),
  }));
  /** One turn: the player's line, the steps the model plays, and what the tools answer. */
  const turn = () => {
    const steps: ScriptStep[] = [];
    const told: string[] = [];
    let delta = 0;
    if (rng.chance(0.6)) {
      const calls: { name: string; arguments: JsonObject }[] = [];
      for (let i = rng.range(1, 2); i > 0; i--) {
        calls.push({ name: rng.pick(tools).name, arguments: { item: text(rng), count: number(rng) } });
      }
      if (rng.chance(0.5)) {
        const f = fact();
        told.push(f);
        calls.push({ name: "remember_fact", arguments: { fact: f } });
      }
      if (rng.chance(0.5)) {
        const max = options.maxRelationshipChange as number;
        const d = rng.range(-max, max);
        delta += d;
        calls.push({ name: "change_relationship", arguments: { reason: text(rng), delta: d } });
      }
      steps.push({ toolCalls: calls });
    }
    const answer: JsonObject = { emotion: rng.pick(allowed), line: text(rng, 6) };
    if (playerOptionCount > 0) {
      answer.player_options = Array.from({ length: playerOptionCount }, () => text(rng, 2));
    }
    if (options.canEndConversation) answer.ends_conversation = rng.chance(0.3);
    steps.push({ json: answer });
    return { line: rng.chance(0.1) ? "" : text(rng, 5), steps, told, delta, output: json(rng) };
  };
  const turns = Array.from({ length: rng.range(1, 5) }, turn);
  return { persona, memory, options, tools, turns, next: turn() };
}

/** Entries of a saved transcript without their ids (a conversation that goes on makes ids of its own). */
function withoutIds(transcript: Transcript | JsonObject): JsonValue[] {
  const entries = (transcript.transcript as JsonObject).entries as JsonObject[];
  return entries.map((entry) =>
    JSON.parse(
      JSON.stringify(entry, (k, v) => (k === "id" || k === "toolCallID") && typeof v === "string" ? "" : v),
    )
  );
}

/** Plays a setup's turns on a new NPC in `bridge`; returns the NPC and the world. */
async function playNpc(bridge: Bridge, setup: ReturnType<typeof npcSetup>, worldState: JsonObject) {
  const world = await bridge.createWorld({ ...worldState, gold: 100 }, { world: "village" });
  let output: JsonValue = null;
  const tools: ClientTool[] = setup.tools.map((definition) => bridge.tool(definition, () => output));
  const npc = await bridge.createNpc(setup.persona, {
    npc: "gorm",
    tools,
    world,
    memory: setup.memory,
    options: setup.options,
    model: { type: "scripted", steps: setup.turns.flatMap((t) => t.steps) },
  });
  for (const t of setup.turns) {
    output = t.output;
    const reply = await npc.talk(t.line);
    assert.equal(reply.isFallback, false);
  }
  return { npc, world, tools, setOutput: (value: JsonValue) => output = value };
}

for (const seed of SEEDS) {
  Deno.test(`NPC and world save → file → new bridge: nothing lost or changed, the NPC goes on the same (seed ${seed})`, async () => {
    const rng = new Rng(seed);
    const setup = npcSetup(rng);
    const worldState = object(rng);
    await using first = await Bridge.open(quiet);
    const a = await playNpc(first, setup, worldState);
    const save = throughFile(await a.npc.state());
    const snapshot = throughFile(await a.world.snapshot());

    // What was sent is what was saved.
    assert.deepEqual(save.persona, setup.persona);
    assert.deepEqual(save.tools, setup.tools);
    for (const [k, v] of Object.entries(setup.options)) {
      const saved = (save.options as Record<string, unknown>)[k];
      if (k === "memoryTools") assert.deepEqual(saved, ["rememberFact", "changeRelationship"]);
      else assert.deepEqual(saved, v, `options.${k}`);
    }
    const told = setup.turns.flatMap((t) => t.told);
    assert.deepEqual(save.memory.facts, [...(setup.memory.facts as string[]), ...told], "facts, in order");
    // Each turn's change is committed (and kept within -100…100) when the turn ends.
    const relationship = setup.turns.reduce(
      (r, t) => Math.max(-100, Math.min(100, r + t.delta)),
      setup.memory.relationship as number,
    );
    assert.equal(save.memory.relationship, relationship);
    assert.equal(save.memory.summary, setup.memory.summary);
    // Compared as text: the order of keys counts too.
    assert.equal(JSON.stringify(snapshot), JSON.stringify({ ...worldState, gold: 100 }));
    const prompts = withoutIds(save.transcript).filter((e) => (e as JsonObject).role === "user");
    assert.equal(prompts.length, setup.turns.length);

    // Another bridge: the world first (the NPC's world must exist), then the NPC.
    await using second = await Bridge.open(quiet);
    const world = await second.createWorld(snapshot, { world: "village" });
    assert.equal(JSON.stringify(await world.snapshot()), JSON.stringify(snapshot));
    let output: JsonValue = null;
    for (const definition of setup.tools) second.tool(definition, () => output);
    const restored = await second.restoreNpc(save, { model: { type: "scripted", steps: setup.next.steps } });
    assert.deepEqual(restored.warnings.filter((w) => !w.includes("tools: Apple recommends")), []);
    assert.equal(
      JSON.stringify(await restored.state()),
      JSON.stringify(save),
      "the restored NPC saves the same",
    );

    // The same next turn in both bridges (the first one from a copy of the save, its own script being used
    // up): the same reply, and the same save after it (ids and timings aside).
    a.setOutput(setup.next.output);
    output = setup.next.output;
    const copy = await first.restoreNpc(save, {
      npc: "gorm-2",
      model: { type: "scripted", steps: setup.next.steps },
    });
    const comparable = (reply: JsonObject) =>
      JSON.parse(
        JSON.stringify({ ...reply, npc: null, usage: null }, (k, v) =>
          k === "durationSeconds" || k === "id" ? null : v),
      );
    const r1 = await copy.talk(setup.next.line);
    const r2 = await restored.talk(setup.next.line);
    assert.deepEqual(comparable(r2 as unknown as JsonObject), comparable(r1 as unknown as JsonObject));
    const [s1, s2] = [await copy.state(), await restored.state()];
    assert.deepEqual(
      { ...s2, npc: null, transcript: withoutIds(s2.transcript) },
      { ...s1, npc: null, transcript: withoutIds(s1.transcript) },
    );
    assert.equal(s2.memory.facts?.length, (save.memory.facts?.length ?? 0) + setup.next.told.length);
  });
}

/** A random session: instructions, client tools, and turns (text, tool rounds, schema answers, tool errors). */
function sessionSetup(rng: Rng) {
  const tools = Array.from({ length: rng.range(1, 3) }, (_, i) => ({
    name: `look_${i}`,
    description: text(rng),
    parameters: { type: "object", properties: { what: { type: "string" }, n: { type: "number" } } },
  }));
  const schema = {
    type: "object",
    properties: { reason: { type: "string" }, choice: { type: "string", enum: ["flee", "fight"] } },
    required: ["reason", "choice"],
  };
  const turn = () => {
    const steps: ScriptStep[] = [];
    const outputs: Array<{ value: JsonValue; fails: boolean }> = [];
    for (let round = rng.int(3); round > 0; round--) {
      const calls = Array.from({ length: rng.range(1, 2) }, () => ({
        name: rng.pick(tools).name,
        arguments: { what: text(rng), n: number(rng) },
      }));
      steps.push({ toolCalls: calls });
      for (const _ of calls) {
        outputs.push({ value: rng.chance(0.5) ? json(rng) : text(rng), fails: rng.chance(0.2) });
      }
    }
    const structured = rng.chance(0.3);
    steps.push(
      structured
        ? { json: { reason: text(rng), choice: rng.pick(["flee", "fight"]) } }
        : { text: text(rng, 6) },
    );
    return {
      prompt: rng.chance(0.1) ? "" : text(rng, 5),
      steps,
      outputs,
      schema: structured ? schema : undefined,
    };
  };
  return {
    instructions: rng.chance(0.8) ? text(rng, 6) : undefined,
    tools,
    turns: Array.from({ length: rng.range(1, 5) }, turn),
    next: turn(),
  };
}

/** Registers the setup's tools on `bridge`, answering from `outputs` in call order (a failing one throws). */
function sessionTools(bridge: Bridge, setup: ReturnType<typeof sessionSetup>) {
  const queue: Array<{ value: JsonValue; fails: boolean }> = [];
  const handles = setup.tools.map((definition) =>
    bridge.tool(definition, () => {
      const next = queue.shift()!;
      if (next.fails) {
        throw new Error(typeof next.value === "string" ? next.value : JSON.stringify(next.value));
      }
      return next.value;
    })
  );
  return { handles, answer: (outputs: typeof queue) => queue.push(...outputs) };
}

/** Plays `setup`'s turns on a new scripted session of `bridge`, its client tools answered from the setup. */
async function playSession(bridge: Bridge, setup: ReturnType<typeof sessionSetup>, id?: string) {
  const tools = sessionTools(bridge, setup);
  const session = await bridge.createSession({
    ...(id === undefined ? {} : { session: id }),
    instructions: setup.instructions,
    tools: tools.handles,
    model: { type: "scripted", steps: setup.turns.flatMap((t) => t.steps) },
  });
  for (const t of setup.turns) {
    tools.answer(t.outputs);
    await session.respond(t.prompt, { schema: t.schema });
  }
  return { session, tools };
}

for (const seed of SEEDS) {
  Deno.test(`session transcript → file → history in a new bridge: the same transcript, the same next turn (seed ${seed})`, async () => {
    const rng = new Rng(seed);
    const setup = sessionSetup(rng);
    await using first = await Bridge.open(quiet);
    const { session, tools: a } = await playSession(first, setup, "guard");
    const saved = throughFile(await session.transcript());
    const entries = (saved.transcript as JsonObject).entries as JsonObject[];
    assert.equal(entries.filter((e) => e.role === "user").length, setup.turns.length);
    assert.equal(
      entries.filter((e) => e.role === "tool").length,
      setup.turns.flatMap((t) => t.outputs).length,
    );

    await using second = await Bridge.open(quiet);
    const b = sessionTools(second, setup);
    // `history` alone: the saved instructions and tool definitions come back with it.
    const resumed = await second.createSession({
      session: "guard",
      history: saved,
      model: { type: "scripted", steps: setup.next.steps },
    });
    assert.equal(JSON.stringify(await resumed.transcript()), JSON.stringify(saved));
    const info = (await second.listSessions())[0];
    assert.deepEqual([info.instructions, info.tools], [setup.instructions, setup.tools.map((t) => t.name)]);

    // The same next turn on a copy in the first bridge and on the resumed session.
    const copy = await first.createSession({
      session: "copy",
      history: saved,
      model: { type: "scripted", steps: setup.next.steps },
    });
    a.answer(setup.next.outputs);
    const r1 = await copy.respond(setup.next.prompt, { schema: setup.next.schema });
    b.answer(setup.next.outputs);
    const r2 = await resumed.respond(setup.next.prompt, { schema: setup.next.schema });
    const comparable = (value: unknown) =>
      JSON.parse(
        JSON.stringify(value, (k, v) => ["durationSeconds", "session", "id"].includes(k) ? null : v),
      );
    assert.deepEqual(comparable({ ...r2, usage: null }), comparable({ ...r1, usage: null }));
    const t1 = throughFile(await copy.transcript());
    const t2 = throughFile(await resumed.transcript());
    assert.deepEqual(withoutIds(t2), withoutIds(t1));
  });
}

Deno.test("a save made in one bridge restores in a new `oam stdio` process over the wire: world, NPC and session", async () => {
  const rng = new Rng(SEEDS[0]);
  const setup = npcSetup(rng);
  const worldState = object(rng);
  const talk = sessionSetup(rng);
  let saves: { npc: NpcState; world: JsonObject; session: Transcript };
  {
    await using first = await Bridge.open(quiet);
    const a = await playNpc(first, setup, worldState);
    const { session } = await playSession(first, talk);
    saves = throughFile({
      npc: await a.npc.state(),
      world: await a.world.snapshot(),
      session: await session.transcript(),
    });
  }
  await using process = await Bridge.connect(
    new StdioTransport({ command: stdioCommand(), stderr: "null" }),
    quiet,
  );
  for (const definition of setup.tools) process.tool(definition, () => null);
  const world = await process.createWorld(saves.world, { world: "village" });
  const npc = await process.restoreNpc(saves.npc, { model: "scripted" });
  const session = await process.createSession({ history: saves.session, model: "scripted" });
  assert.equal(JSON.stringify(await world.snapshot()), JSON.stringify(saves.world));
  assert.equal(JSON.stringify(await npc.state()), JSON.stringify(saves.npc));
  assert.equal(JSON.stringify(await session.transcript()), JSON.stringify(saves.session));
});

Deno.test("world snapshot → world/create: index-like keys come first, the version starts at 0, subscriptions are not saved", async () => {
  await using first = await Bridge.open(quiet);
  const world = await first.createWorld({ z: 1, "10": 2, a: { "2": true, b: null, "1": [3] }, "2": "x" });
  const seen: unknown[] = [];
  await world.subscribe("z", (change) => seen.push(change.newValue));
  await world.set("z", 5);
  assert.deepEqual(seen, [5]);
  const snapshot = throughFile(await world.snapshot());
  // As documented in docs/PROTOCOL.md (Saving a world): array-index keys first, in numeric order.
  assert.deepEqual(JSON.stringify(snapshot), '{"2":"x","10":2,"z":5,"a":{"1":[3],"2":true,"b":null}}');
  assert.equal(await world.version(), 1);

  await using second = await Bridge.open(quiet);
  const restored = await second.createWorld(snapshot, { world: world.id });
  assert.equal(JSON.stringify(await restored.snapshot()), JSON.stringify(snapshot));
  assert.equal(await restored.version(), 0);
  assert.deepEqual((await second.listWorlds())[0].subscriptions, []);
});

Deno.test("loading a world save in the same bridge: world/set at the root keeps its NPCs and subscriptions attached", async () => {
  await using bridge = await Bridge.open(quiet);
  const world = await bridge.createWorld({ gate: "open", player: { gold: 20 } }, { world: "village" });
  const changes: unknown[] = [];
  await world.subscribe("player", (change) => changes.push(change.path));
  const save = throughFile(await world.snapshot());
  const guard = await bridge.createNpc({ name: "Bram" }, {
    world,
    options: { worldContextPaths: ["gate"], playerOptionCount: 0, canEndConversation: false },
    model: {
      type: "scripted",
      steps: [
        { toolCalls: [{ name: "read_world_state", arguments: { path: "gate" } }] },
        { json: { emotion: "neutral", line: "Hm." } },
      ],
    },
  });
  await world.set("gate", "closed");
  await world.set("player.gold", 5);
  changes.length = 0;
  await world.set("", save);
  assert.equal(JSON.stringify(await world.snapshot()), JSON.stringify(save));
  assert.deepEqual(changes, [""]);
  assert.equal(await world.version(), 3);
  assert.equal((await bridge.listWorlds())[0].npcs, 1);
  // The NPC reads the loaded world.
  const reply = await guard.talk("Is the gate open?");
  assert.deepEqual(reply.toolCalls.map((c) => [c.call.name, c.output]), [["read_world_state", "open"]]);
});
