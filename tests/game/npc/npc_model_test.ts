/**
 * Model-based test of NPC memory, relationship and state across talks (PROTOCOL.md §6 "NPCs"): random, seeded
 * sequences of `npc/*` requests — talks whose scripted model calls the memory tools, succeeds, fails or is
 * blocked by the guardrails, memory updates good and bad, saves, restores, resets — are pipelined per NPC, and every reply
 * is compared with a small reference model of the memory (facts, relationship), the turn count and the per-NPC
 * order. Streamed talks also check that their `npc/event`s come before the response and add up to it, and the
 * NPCs' `update_world_state` writes to a shared world must reach a subscriber as `world/changed` before the
 * response of the talk that made them (§7), blocked turns included.
 */
import assert from "node:assert/strict";
import { WireClient } from "../../helpers/wire.ts";
import type { JsonObject, JsonValue } from "../../../src/protocol/json.ts";
import {
  assertSame,
  forEachSeed,
  modelSeeds,
  modelSteps,
  type Rng,
  type Trace,
} from "../../helpers/model_check.ts";

const FILE = "tests/game/npc/npc_model_test.ts";
const NPC_IDS = ["gorm", "__proto__", "constructor", "mira one", "é"];
const FACTS = [
  "Aria likes axes.",
  "The mill burned.",
  "Gold is scarce.",
  "Wolves hunt at night.",
  "Bram owes money.",
];
const EMOTIONS = ["happy", "sad", "angry", "proud", "curious"];

/** A script step: a reply, memory tool calls, a failure or a guardrail block. */
type Step =
  | { kind: "reply"; emotion: string; line: string }
  | { kind: "memory"; calls: Array<{ name: string; arguments: JsonObject }> }
  | { kind: "error" }
  | { kind: "blocked" };

interface ModelNpc {
  id: string;
  script: Step[];
  pointer: number;
  facts: string[];
  relationship: number;
  turns: number;
  maxFacts: number;
  maxChange: number;
  /** Its part of the shared world: `npcs.<token>`. */
  token: string;
}

/** The expected response of one request (`null` members of a result are not compared: see `check`). */
type Expected =
  | { kind: "result"; result: JsonObject; talk?: boolean; warned?: boolean }
  | { kind: "error"; code: number; data: JsonObject };

const ANY = "$any";

class NpcModel {
  readonly npcs = new Map<string, ModelNpc>();
  #next = 1;
  /** Per NPC, the ids of its ordered requests in arrival order. */
  readonly order: Array<{ npc: string; id: number }> = [];
  /** The shared world "w" (subscribed at the root as sub1): gold per NPC token. */
  readonly gold = new Map<string, number>();
  /** The world/changed params each talk causes, by request id. */
  readonly changes = new Map<number, JsonObject[]>();

  #invalid(): Expected {
    return { kind: "error", code: -32602, data: { code: "invalid_params" } };
  }

  #lookup(p: Record<string, unknown>): ModelNpc | Expected {
    if (!Object.hasOwn(p, "npc") || p.npc === null || typeof p.npc !== "string") return this.#invalid();
    return this.npcs.get(p.npc) ??
      { kind: "error", code: -32050, data: { code: "npc_not_found", npc: p.npc } };
  }

  apply(id: number, method: string, p: Record<string, unknown>): Expected {
    switch (method) {
      case "npc/create": {
        let npc = p.npc as string | undefined;
        if (npc !== undefined && this.npcs.has(npc)) {
          return { kind: "error", code: -32051, data: { code: "npc_exists", npc } };
        }
        while (npc === undefined) {
          const candidate = `npc${this.#next++}`;
          if (!this.npcs.has(candidate)) npc = candidate;
        }
        const memory = p.memory as JsonObject;
        const options = p.options as JsonObject;
        this.npcs.set(npc, {
          id: npc,
          script: p.script as Step[],
          pointer: 0,
          facts: [...memory.facts as string[]],
          relationship: memory.relationship as number,
          turns: 0,
          maxFacts: options.maxFacts as number,
          maxChange: options.maxRelationshipChange as number,
          token: p.token as string,
        });
        return {
          kind: "result",
          result: {
            npc,
            tools: ["update_world_state", "remember_fact", "change_relationship"],
            warnings: [],
          },
        };
      }
      case "npc/talk": {
        const n = this.#lookup(p);
        if (!("id" in n)) return n;
        if (typeof p.line !== "string") return this.#invalid();
        this.order.push({ npc: n.id, id });
        const changes: JsonObject[] = [];
        this.changes.set(id, changes);
        return this.#talk(n, p.stream === true, changes);
      }
      case "npc/update": {
        const n = this.#lookup(p);
        if (!("id" in n)) return n;
        const memory = p.memory;
        if (memory === null || typeof memory !== "object" || Array.isArray(memory)) return this.#invalid();
        const patch = memory as Record<string, unknown>;
        let facts = n.facts;
        let relationship = n.relationship;
        if (Object.hasOwn(patch, "relationship")) {
          const r = patch.relationship;
          if (r === null) relationship = 0;
          else if (typeof r !== "number" || r < -100 || r > 100) return this.#invalid();
          // PROTOCOL.md says -100…100; the implementation also takes fractions and rounds them (followed).
          else relationship = Math.round(r);
        }
        if (Object.hasOwn(patch, "facts")) {
          const f = patch.facts;
          if (f === null) facts = [];
          else if (!Array.isArray(f) || f.some((x) => typeof x !== "string")) return this.#invalid();
          else facts = [...f as string[]];
        }
        // All or nothing: applied only when the whole update is valid.
        n.facts = facts;
        n.relationship = relationship;
        this.order.push({ npc: n.id, id });
        return {
          kind: "result",
          result: { npc: n.id },
          // Unknown members, and facts sent beyond maxFacts (kept until a turn changes the memory).
          warned: Object.keys(patch).some((k) => k !== "facts" && k !== "relationship") ||
            (Object.hasOwn(patch, "facts") && facts.length > n.maxFacts),
        };
      }
      case "npc/state": {
        const n = this.#lookup(p);
        if (!("id" in n)) return n;
        this.order.push({ npc: n.id, id });
        return {
          kind: "result",
          result: { npc: n.id, memory: { facts: [...n.facts], relationship: n.relationship } },
        };
      }
      case "npc/reset": {
        const n = this.#lookup(p);
        if (!("id" in n)) return n;
        this.order.push({ npc: n.id, id });
        n.turns = 0;
        if (p.clearMemory === true) {
          n.facts = [];
          n.relationship = 0;
        }
        return { kind: "result", result: { npc: n.id } };
      }
      case "npc/cancel": {
        const n = this.#lookup(p);
        if (!("id" in n)) return n;
        return { kind: "result", result: { npc: n.id, cancelled: 0 } };
      }
      case "npc/restore": {
        // A save of a deleted NPC, with the rest of its script as the new model: memory, turns and options
        // come back from the save.
        const saved = p.restoreOf as ModelNpc;
        this.npcs.set(saved.id, { ...saved, script: p.script as Step[], pointer: 0 });
        return {
          kind: "result",
          result: {
            npc: saved.id,
            tools: ["update_world_state", "remember_fact", "change_relationship"],
          },
          // A save holding more facts than its maxFacts (an update stored them) is warned about.
          warned: saved.facts.length > saved.maxFacts,
        };
      }
      case "npc/delete": {
        const n = this.#lookup(p);
        if (!("id" in n)) return n;
        this.npcs.delete(n.id);
        return { kind: "result", result: { npc: n.id, deleted: true } };
      }
      case "npc/list":
        return {
          kind: "result",
          result: {
            npcs: [...this.npcs.values()].map((n) => ({
              npc: n.id,
              turnCount: n.turns,
              relationship: n.relationship,
              busy: false,
              pendingOperations: 0,
            })),
          },
        };
      default:
        return { kind: "error", code: -32601, data: { code: "method_not_found", method } };
    }
  }

  /** One talk: plays steps until a reply, an error or a block. Memory changes are staged and kept on success. */
  #talk(n: ModelNpc, stream: boolean, changes: JsonObject[]): Expected {
    const facts = [...n.facts];
    let added = false;
    let relationship = n.relationship;
    const toolCalls: JsonValue[] = [];
    for (;;) {
      const step = n.script[n.pointer++] ?? { kind: "reply", emotion: "neutral", line: "(script exhausted)" };
      if (step.kind === "error") {
        return { kind: "error", code: -32004, data: { code: "context_size_exceeded" } };
      }
      if (step.kind === "blocked") {
        // A fallback line; the blocked turn's memory changes are dropped (the implementation's reading of
        // "tool side effects stay", which PROTOCOL.md does not settle for memory tools).
        return {
          kind: "result",
          talk: stream,
          result: {
            npc: n.id,
            line: ANY,
            emotion: "neutral",
            playerOptions: [],
            endsConversation: false,
            toolCalls,
            relationship: n.relationship,
            isFallback: true,
          },
        };
      }
      if (step.kind === "memory") {
        for (const call of step.calls) {
          toolCalls.push({ call: { name: call.name, arguments: call.arguments }, isError: false });
          if (call.name === "update_world_state") {
            // World writes happen at once (they stay even when the turn is blocked afterwards).
            const path = call.arguments.path as string;
            const value = call.arguments.value as number;
            const old = this.gold.get(n.token);
            if (old !== value) {
              const change: JsonObject = { world: "w", subscription: "sub1", path };
              if (old !== undefined) change.oldValue = old;
              change.newValue = value;
              changes.push(change);
              this.gold.set(n.token, value);
            }
          } else if (call.name === "remember_fact") {
            const fact = call.arguments.fact as string;
            if (!facts.includes(fact)) {
              facts.push(fact);
              added = true;
            }
          } else {
            relationship = Math.max(-100, Math.min(100, relationship + (call.arguments.delta as number)));
          }
        }
        continue;
      }
      // Not in PROTOCOL.md (the implementation's rule): a turn that changed the memory keeps the newest
      // maxFacts facts (an update may store more).
      const changed = added || relationship !== n.relationship;
      while (changed && facts.length > n.maxFacts) facts.shift();
      n.facts = facts;
      n.relationship = relationship;
      n.turns++;
      return {
        kind: "result",
        talk: stream,
        result: {
          npc: n.id,
          line: step.line,
          emotion: step.emotion,
          playerOptions: [],
          endsConversation: false,
          toolCalls,
          relationship,
          isFallback: false,
        },
      };
    }
  }
}

function scriptJson(script: Step[]): JsonValue[] {
  return script.map((step): JsonValue => {
    switch (step.kind) {
      case "reply":
        return { text: `[${step.emotion}] ${step.line}` };
      case "memory":
        return { toolCalls: step.calls };
      case "error":
        return { error: "context_size_exceeded" };
      default:
        return { error: "guardrail_violation" };
    }
  });
}

function genScript(rng: Rng, maxChange: number, token: string): Step[] {
  const steps: Step[] = [];
  const reply = (): Step => ({ kind: "reply", emotion: rng.pick(EMOTIONS), line: `line ${steps.length}` });
  const memory = (): Step => {
    const calls: Array<{ name: string; arguments: JsonObject }> = [];
    const n = rng.range(1, 3);
    for (let i = 0; i < n; i++) {
      const roll = rng.int(3);
      calls.push(
        roll === 0 ? { name: "remember_fact", arguments: { fact: rng.pick(FACTS) } } : roll === 1
          ? {
            name: "change_relationship",
            arguments: { reason: "r", delta: rng.range(-maxChange, maxChange) },
          }
          : { name: "update_world_state", arguments: { path: `npcs.${token}.gold`, value: rng.range(0, 3) } },
      );
    }
    return { kind: "memory", calls };
  };
  while (steps.length < 120) {
    const plan = rng.weighted<string>([[4, "reply"], [6, "memory"], [1, "error"], [1, "blocked"], [
      1,
      "memoryBlocked",
    ]]);
    if (plan === "reply") steps.push(reply());
    else if (plan === "memory") steps.push(memory(), reply());
    else if (plan === "error") steps.push({ kind: "error" });
    else if (plan === "blocked") steps.push({ kind: "blocked" });
    else steps.push(memory(), { kind: "blocked" });
  }
  return steps;
}

/** Checks a streamed talk's events: before the response, tool events match the result, lines add up. */
function checkStream(events: JsonObject[], result: JsonObject, what: string): void {
  let line = "";
  let emotion: unknown;
  const started: JsonValue[] = [];
  for (const e of events) {
    if (e.type === "lineDelta") line += e.delta as string;
    else if (e.type === "lineReset") line = e.line as string;
    else if (e.type === "emotion") emotion = e.emotion;
    else if (e.type === "toolCallStarted") {
      assert.equal(e.execution, "local", `${what}: memory tools are local`);
      started.push(e.call as JsonValue);
    }
  }
  assert.equal(line, result.line, `${what}: lineDelta/lineReset add up to the line`);
  if (emotion !== undefined) assert.equal(emotion, result.emotion, `${what}: the last emotion event`);
  assertSame(
    started,
    (result.toolCalls as JsonObject[]).map((r) => r.call),
    `${what}: toolCallStarted events`,
  );
}

function check(actual: JsonObject, expected: Expected, events: JsonObject[], what: string): void {
  if (expected.kind === "error") {
    assert.ok(
      "error" in actual,
      `${what}: expected error ${expected.code}, got ${JSON.stringify(actual).slice(0, 300)}`,
    );
    const error = actual.error as JsonObject;
    assert.equal(error.code, expected.code, `${what}: ${JSON.stringify(error)}`);
    assertSame(error.data, expected.data, `${what}: error data`);
    return;
  }
  assert.ok("result" in actual, `${what}: expected a result, got ${JSON.stringify(actual).slice(0, 400)}`);
  const result = { ...actual.result as JsonObject };
  const want = { ...expected.result };
  if (Object.hasOwn(result, "state")) {
    // The save holds much more (persona, transcript, options): the memory is what is modelled.
    const memory = (result.state as JsonObject).memory as JsonObject;
    result.memory = { facts: memory.facts, relationship: memory.relationship };
    delete result.state;
  }
  if (Array.isArray(result.npcs)) {
    result.npcs = (result.npcs as JsonObject[]).map((n) => ({
      npc: n.npc,
      turnCount: n.turnCount,
      relationship: n.relationship,
      busy: n.busy,
      pendingOperations: n.pendingOperations,
    }));
  }
  if (Object.hasOwn(result, "isFallback")) {
    assert.equal(typeof (result.usage as JsonObject | undefined)?.totalTokens, "number", `${what}: usage`);
    delete result.usage;
    result.toolCalls = (result.toolCalls as JsonObject[]).map((r) => {
      assert.equal(typeof r.output, "string", `${what}: memory tool output`);
      assert.equal(typeof (r.call as JsonObject).id, "string");
      return {
        call: { name: (r.call as JsonObject).name, arguments: (r.call as JsonObject).arguments },
        isError: r.isError,
      };
    });
    if (want.line === ANY) {
      assert.ok(typeof result.line === "string" && result.line.length > 0, `${what}: a fallback line`);
      result.line = ANY;
    }
    checkStreamIf(expected, events, actual.result as JsonObject, what);
  }
  if (expected.warned !== undefined) {
    const warnings = result.warnings as unknown[];
    assert.equal(warnings.length > 0, expected.warned, `${what}: warnings ${JSON.stringify(warnings)}`);
    delete result.warnings;
  }
  assertSame(result, want, what);
}

function checkStreamIf(expected: Expected, events: JsonObject[], result: JsonObject, what: string): void {
  if (expected.kind === "result" && expected.talk) checkStream(events, result, what);
  else assert.equal(events.length, 0, `${what}: npc/event only for stream: true`);
}

async function run(rng: Rng, trace: Trace, steps: number): Promise<void> {
  const c = new WireClient();
  const model = new NpcModel();
  await c.call("world/create", { world: "w" });
  await c.call("world/subscribe", { world: "w" });
  let tokens = 1;
  let ids = 1;
  let step = 0;
  const pickNpc = (): string => {
    const known = [...model.npcs.keys()];
    return known.length === 0 || rng.chance(0.08) ? rng.pick([...NPC_IDS, "nobody"]) : rng.pick(known);
  };
  while (step < steps) {
    const start = c.messages.length;
    const batch: Array<{ id: number; method: string; params: Record<string, unknown>; expected: Expected }> =
      [];
    const send = (method: string, params: Record<string, unknown>) => {
      const id = ids++;
      const wire = { ...params };
      if (method === "npc/create" || method === "npc/restore") {
        wire.model = { type: "scripted", steps: scriptJson(params.script as Step[]) };
        delete wire.script;
        delete wire.token;
        delete wire.restoreOf;
      }
      const line = JSON.stringify({ jsonrpc: "2.0", id, method, params: wire });
      trace.add(`→ ${id} ${method} ${JSON.stringify(params).slice(0, 200)}`);
      c.sendLine(line);
      batch.push({ id, method, params, expected: model.apply(id, method, structuredClone(params)) });
      step++;
      return id;
    };
    // Immediate requests whose answer depends on timing go first, when every NPC is idle.
    const first = rng.weighted<string>([[2, "list"], [1, "delete"], [1, "cancel"], [1, "restore"], [
      6,
      "none",
    ]]);
    if (first === "restore" && model.npcs.size > 0) {
      // Save, delete and restore an NPC (the save as the `state` value or the whole result).
      const npc = model.npcs.get(rng.pick([...model.npcs.keys()]))!;
      const saved = { ...npc, facts: [...npc.facts] };
      const rest = npc.script.slice(npc.pointer);
      const stateId = send("npc/state", { npc: npc.id });
      const result = (await c.response(stateId)).result as JsonObject;
      send("npc/delete", { npc: npc.id });
      send("npc/restore", { state: rng.chance(0.5) ? result.state : result, script: rest, restoreOf: saved });
    } else if (first === "list") send("npc/list", {});
    else if (first === "delete") send("npc/delete", { npc: pickNpc() });
    else if (first === "cancel") send("npc/cancel", { npc: pickNpc() });
    const size = rng.range(1, 6);
    for (let i = 0; i < size; i++) {
      const op = rng.weighted<string>([
        [model.npcs.size < 4 ? 3 : 0.5, "create"],
        [10, "talk"],
        [4, "update"],
        [2, "bad update"],
        [3, "state"],
        [1, "reset"],
        [2, "bad"],
      ]);
      switch (op) {
        case "create": {
          const maxFacts = rng.range(2, 4);
          const maxChange = rng.range(5, 20);
          const params: Record<string, unknown> = {
            persona: { name: rng.pick(["Gorm", "Mira", "__proto__"]) },
            memory: { facts: FACTS.slice(0, rng.int(maxFacts + 1)), relationship: rng.range(-100, 100) },
            world: "w",
            options: {
              replyFormat: "text",
              worldReadable: [],
              worldWritable: [""],
              memoryTools: "all",
              toolChoice: "auto",
              compactAfterTurns: 0,
              maxFacts,
              maxRelationshipChange: maxChange,
            },
            script: genScript(rng, maxChange, `k${tokens}`),
            token: `k${tokens++}`,
          };
          if (rng.chance(0.7)) params.npc = rng.pick(NPC_IDS);
          send("npc/create", params);
          break;
        }
        case "talk": {
          const params: Record<string, unknown> = {
            npc: pickNpc(),
            line: rng.pick(["Hello.", "", "Any news?"]),
          };
          if (rng.chance(0.4)) params.stream = true;
          send("npc/talk", params);
          break;
        }
        case "update": {
          const memory: Record<string, unknown> = {};
          if (rng.chance(0.6)) memory.relationship = rng.chance(0.2) ? null : rng.range(-100, 100);
          if (rng.chance(0.5)) memory.facts = rng.chance(0.2) ? null : FACTS.filter(() => rng.chance(0.4));
          if (rng.chance(0.1)) {
            Object.defineProperty(memory, "__proto__", { value: { x: 1 }, enumerable: true });
          }
          send("npc/update", { npc: pickNpc(), memory });
          break;
        }
        case "bad update":
          send("npc/update", {
            npc: pickNpc(),
            memory: rng.pick<JsonValue>([
              { relationship: 101 },
              { relationship: -1000 },
              { relationship: "high" },
              { relationship: 2.5, facts: ["kept?"] },
              { facts: [1, 2] },
              { facts: "x", relationship: 3 },
              "x",
              [1],
            ]),
          });
          break;
        case "state":
          send("npc/state", { npc: pickNpc() });
          break;
        case "reset":
          send("npc/reset", { npc: pickNpc(), clearMemory: rng.chance(0.5) });
          break;
        default:
          rng.pick<() => void>([
            () => send("npc/talk", { npc: pickNpc(), line: 5 }),
            () => send("npc/talk", { npc: 7, line: "x" }),
            () => send("npc/talk", { npc: "nobody", line: "x" }),
            () => send("npc/frobnicate", { npc: pickNpc() }),
          ])();
      }
    }
    // Wait for every response, then compare each with the model.
    for (const r of batch) await c.response(r.id);
    const positions = new Map<number, number>();
    c.messages.forEach((m, i) => {
      if (!("method" in m) && typeof m.id === "number") positions.set(m.id, i);
    });
    for (const r of batch) {
      const at = positions.get(r.id)!;
      const events = c.messages.filter((m) =>
        m.method === "npc/event" && (m.params as JsonObject).requestId === r.id
      );
      for (const e of events) {
        assert.ok(c.messages.indexOf(e) < at, `request ${r.id}: npc/event after the response`);
      }
      check(
        c.messages[at],
        r.expected,
        events.map((e) => (e.params as JsonObject).event as JsonObject),
        `request ${r.id} ${r.method}`,
      );
    }
    // world/changed from the NPCs' update_world_state: per path as the model says, each before its talk's response.
    const notes = new Map<string, number[]>(); // path → positions of world/changed notifications
    for (let i = start; i < c.messages.length; i++) {
      const m = c.messages[i];
      if (m.method !== "world/changed") continue;
      const path = (m.params as JsonObject).path as string;
      if (!notes.has(path)) notes.set(path, []);
      notes.get(path)!.push(i);
    }
    const wanted = new Map<string, Array<{ id: number; change: JsonObject }>>();
    for (const r of batch) {
      for (const change of model.changes.get(r.id) ?? []) {
        const path = change.path as string;
        if (!wanted.has(path)) wanted.set(path, []);
        wanted.get(path)!.push({ id: r.id, change });
      }
    }
    for (const path of new Set([...notes.keys(), ...wanted.keys()])) {
      const got = (notes.get(path) ?? []).map((i) => c.messages[i].params);
      const want = (wanted.get(path) ?? []).map((w) => w.change);
      assertSame(got, want, `world/changed for ${path}`);
      (wanted.get(path) ?? []).forEach((w, k) => {
        assert.ok(
          notes.get(path)![k] < positions.get(w.id)!,
          `world/changed for ${path} after the response to ${w.id}`,
        );
      });
    }
    // Per-NPC order: responses of one NPC's ordered requests in arrival order.
    const last = new Map<string, number>();
    for (const { npc, id } of model.order) {
      const at = positions.get(id);
      if (at === undefined) continue;
      assert.ok((last.get(npc) ?? -1) < at, `npc ${npc}: the response to ${id} came out of order`);
      last.set(npc, at);
    }
  }
  // The shared world holds what the NPCs wrote.
  const npcs: JsonObject = {};
  for (const [token, gold] of model.gold) npcs[token] = { gold };
  const snapshot = await c.call("world/snapshot", { world: "w" });
  assertSame(snapshot.state, model.gold.size === 0 ? {} : { npcs }, "the world after the run");
  assert.ok(model.gold.size > 0 || steps < 50, "some world writes happened");
  // No message without a request, nothing after the responses.
  await new Promise((resolve) => setTimeout(resolve, 0));
  for (const m of c.messages) {
    if (m.method === "npc/event" || m.method === "world/changed") continue;
    assert.ok(!("method" in m), `unexpected ${JSON.stringify(m).slice(0, 200)}`);
  }
  await c.close();
}

Deno.test("npc/* model: memory, relationship and state across random talks, updates and saves match the reference model", async () => {
  await forEachSeed(FILE, modelSeeds([1, 2, 3]), (rng, trace) => run(rng, trace, modelSteps(200)));
});
