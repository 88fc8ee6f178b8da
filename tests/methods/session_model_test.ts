/**
 * Model-based test of session lifecycle and concurrency (PROTOCOL.md §2, §5 `session/*`, §7, §10): random, seeded
 * sequences of session requests, tool replies and bad input go over the wire to sessions on scripted models whose
 * turns stop at client tool calls, so the test decides when each turn goes on. A reference model written from
 * the protocol text predicts, for every request, the exact sequence of its messages (events, `tool/call`,
 * `tool/cancel`, response) and the per-session order of responses; the wire must match.
 *
 * Determinism: a batch of pipelined requests ends as soon as one of them starts work that runs on its own (a
 * turn starts or goes on, a queued setting runs on an idle session); the test then waits for everything the
 * model predicts. So a cancel only ever meets turns that wait for a tool reply (or queued operations), and
 * tool replies only answer `tool/call`s that arrived.
 */
import assert from "node:assert/strict";
import { WireClient } from "../helpers/wire.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import {
  assertSame,
  canonical,
  forEachSeed,
  modelSeeds,
  modelSteps,
  type Rng,
  type Trace,
} from "../helpers/model_check.ts";

const FILE = "tests/methods/session_model_test.ts";
const MAX_SESSIONS = 64;
const SESSION_IDS = ["guard", "s1", "s2", "s3", "__proto__", "constructor", "npc one", "é"];

/** A script step kind: a tool round (`ask`), the templated answer, a plain answer, a guardrail error. */
type StepKind = "tool" | "template" | "text" | "error";

/** One expected message of a request. */
type Item =
  | { kind: "event"; event: JsonObject }
  | { kind: "text"; text: string }
  | { kind: "toolCall"; id: string; params: JsonObject }
  | { kind: "toolCancel"; params: JsonObject }
  | { kind: "result"; result: JsonObject; warned?: boolean }
  | { kind: "error"; code: number; data?: JsonObject };

interface Op {
  kind: "respond" | "setInstructions" | "reset";
  owner: string;
  prompt?: string;
  stream?: boolean;
  instructions?: string | null;
  badTool?: boolean;
  warned?: boolean;
  /** `enabledTools: []` for this turn. */
  noTools?: boolean;
}

interface Running {
  op: Op;
  /** Tool records so far. */
  records: JsonObject[];
  steps: JsonObject[];
  rounds: number;
  /** The outstanding tool call: bridge request id and call id placeholder. */
  waiting?: { tid: string; callId: string; k: number };
  lastOutput: string;
  /** What the model saw of each tool output of this turn. */
  outputs: string[];
}

interface ModelSession {
  id: string;
  script: StepKind[];
  pointer: number;
  entries: number;
  instructions: string | null;
  /** The prompt and tool outputs of the last turn in the history (see the note on empty prompts). */
  last: { prompt: string; outputs: string[] } | null;
  queue: Op[];
  running?: Running;
}

const CALL = "$call"; // placeholder prefix of generated call ids
const ANY_STRING = "$any string";

/** The reference model. `expect(owner, item)` receives every predicted message. */
class SessionModel {
  readonly sessions = new Map<string, ModelSession>();
  #nextSession = 1;
  #nextTool = 1;
  #nextCall = 1;
  /** Open tool calls by bridge request id. */
  readonly toolCalls = new Map<string, ModelSession>();
  /** Per session, the owners of its ordered operations in arrival order (for the FIFO check). */
  readonly order: Array<{ session: string; owner: string; n: number }> = [];
  /** Owners whose response is still expected. */
  readonly pending = new Set<string>();
  /** Owners cancelled in this batch: their last messages may still be on the way. */
  readonly unwinding = new Set<string>();
  /** True when the last request started work that runs on its own. */
  freeRunning = false;

  constructor(
    readonly expect: (owner: string, item: Item) => void,
    readonly responsesOf: (owner: string) => number,
  ) {}

  /** A respond or queued op: validation happened; it joins the queue and may start. */
  #enqueue(s: ModelSession, op: Op): void {
    this.pending.add(op.owner);
    this.order.push({ session: s.id, owner: op.owner, n: this.responsesOf(op.owner) });
    s.queue.push(op);
    if (!s.running && s.queue.length === 1) this.#startNext(s);
  }

  #startNext(s: ModelSession): void {
    while (!s.running && s.queue.length > 0) {
      const op = s.queue[0];
      this.freeRunning = true;
      if (op.kind !== "respond") {
        if (op.kind === "setInstructions") s.instructions = op.instructions ?? null;
        else {
          s.entries = 0;
          s.last = null;
        }
        this.#finish(s, op, { kind: "result", result: { session: s.id } });
        continue;
      }
      if (op.badTool) {
        this.#finish(s, op, { kind: "error", code: -32602, data: { code: "invalid_params" } });
        continue;
      }
      s.running = { op, records: [], steps: [], rounds: 0, lastOutput: "", outputs: [] };
      this.#infer(s);
    }
  }

  #finish(s: ModelSession, op: Op, item: Item): void {
    s.queue.shift();
    s.running = undefined;
    this.pending.delete(op.owner);
    this.expect(op.owner, item);
  }

  /** Plays script steps until the turn ends or waits for a tool reply. */
  #infer(s: ModelSession): void {
    const run = s.running!;
    const op = run.op;
    const step: JsonObject = {
      index: run.steps.length,
      completedToolRounds: run.rounds,
      toolCallingMode: op.noTools ? "disallowed" : "allowed",
      enabledTools: op.noTools ? [] : ["ask"],
      trimmedEntries: 0,
    };
    run.steps.push(step);
    if (op.stream) this.expect(op.owner, { kind: "event", event: { type: "modelStep", step } });
    const k = s.pointer;
    const kind: StepKind = s.script[s.pointer++] ?? "text";
    if (kind === "error") {
      this.#finish(s, op, { kind: "error", code: -32002, data: { code: "guardrail_violation" } });
      return;
    }
    if (kind === "tool" && op.noTools) {
      // `enabledTools: []`: the call is not offered, so it never reaches the client (docs/scripting.md).
      const call = { id: `${CALL}${this.#nextCall++}`, name: "ask", arguments: { k } };
      if (op.stream) {
        this.expect(op.owner, {
          kind: "event",
          event: { type: "toolCallStarted", call, execution: "local" },
        });
      }
      const record = { call, output: "There is no tool named 'ask'.", isError: true };
      run.records.push(record);
      if (op.stream) this.expect(op.owner, { kind: "event", event: { type: "toolCallCompleted", record } });
      run.rounds++;
      run.lastOutput = "Error: There is no tool named 'ask'.";
      run.outputs.push(run.lastOutput);
      this.#infer(s);
      return;
    }
    if (kind === "tool") {
      const tid = `t-${this.#nextTool++}`;
      const callId = `${CALL}${this.#nextCall++}`;
      const call = { id: callId, name: "ask", arguments: { k } };
      if (op.stream) {
        this.expect(op.owner, {
          kind: "event",
          event: { type: "toolCallStarted", call, execution: "client" },
        });
      }
      this.expect(op.owner, {
        kind: "toolCall",
        id: tid,
        params: { session: s.id, requestId: ownerId(op.owner), call },
      });
      run.waiting = { tid, callId, k };
      this.toolCalls.set(tid, s);
      return;
    }
    let prompt = op.prompt!;
    let output = run.lastOutput;
    if (prompt === "" && run.rounds === 0 && s.last !== null) {
      // Not as PROTOCOL.md §10 says ("{toolOutput}: latest tool output of this turn"): on the first step of a
      // turn with an empty prompt, the scripted model's template looks back to the last prompt in the history
      // and the tool outputs after it, so a previous turn's prompt and tool output appear. Reported, modelled.
      prompt = s.last.prompt;
      output = s.last.outputs[s.last.outputs.length - 1] ?? "";
    }
    const text = kind === "template" ? `${prompt}|${output}` : `plain ${k}`;
    if (op.stream) this.expect(op.owner, { kind: "text", text });
    s.entries += 2 + 2 * run.rounds;
    s.last = { prompt: op.prompt!, outputs: run.outputs };
    const result: JsonObject = { session: s.id, text, toolCalls: run.records, steps: run.steps };
    this.#finish(s, op, { kind: "result", result, warned: op.warned });
    this.#startNext(s);
  }

  /** The client answered tool call `tid` with what the model sees as `seen` and the record's output. */
  reply(tid: string, output: JsonValue, isError: boolean, seen: string): void {
    const s = this.toolCalls.get(tid);
    this.freeRunning = false;
    if (!s) return; // unknown, answered or cancelled: ignored
    this.toolCalls.delete(tid);
    const run = s.running!;
    const waiting = run.waiting!;
    run.waiting = undefined;
    const record = {
      call: { id: waiting.callId, name: "ask", arguments: { k: waiting.k } },
      output,
      isError,
    };
    run.records.push(record);
    if (run.op.stream) {
      this.expect(run.op.owner, { kind: "event", event: { type: "toolCallCompleted", record } });
    }
    run.rounds++;
    run.lastOutput = seen;
    run.outputs.push(seen);
    this.freeRunning = true;
    this.#infer(s);
    this.#startNext(s);
  }

  /** Cancels the running turn and every queued operation; returns how many. */
  #cancelAll(s: ModelSession): number {
    let n = 0;
    const run = s.running;
    if (run?.waiting) {
      this.toolCalls.delete(run.waiting.tid);
      this.expect(run.op.owner, {
        kind: "toolCancel",
        params: {
          session: s.id,
          requestId: ownerId(run.op.owner),
          id: run.waiting.tid,
          callId: run.waiting.callId,
        },
      });
    }
    if (run?.waiting && run.op.stream) {
      // The cancelled call completes with an error output (its text is not specified).
      const call = { id: run.waiting.callId, name: "ask", arguments: { k: run.waiting.k } };
      this.expect(run.op.owner, {
        kind: "event",
        event: { type: "toolCallCompleted", record: { call, output: ANY_STRING, isError: true } },
      });
    }
    s.running = undefined;
    for (const op of s.queue) {
      this.pending.delete(op.owner);
      this.unwinding.add(op.owner);
      this.expect(op.owner, { kind: "error", code: -32009, data: { code: "cancelled" } });
      n++;
    }
    s.queue = [];
    return n;
  }

  request(owner: string, method: string, p: Record<string, unknown>, notification = false): void {
    this.freeRunning = false;
    const reply = (item: Item) => {
      if (!notification) this.expect(owner, item);
    };
    const invalid = () => reply({ kind: "error", code: -32602, data: { code: "invalid_params" } });
    const has = (key: string) => Object.hasOwn(p, key) && p[key] !== null;
    const lookup = (): ModelSession | undefined => {
      if (!has("session")) return void invalid();
      if (typeof p.session !== "string") return void invalid();
      const s = this.sessions.get(p.session);
      if (!s) reply({ kind: "error", code: -32020, data: { code: "session_not_found", session: p.session } });
      return s;
    };
    switch (method) {
      case "session/create": {
        let id: string | undefined;
        if (has("session")) {
          if (typeof p.session !== "string" || p.session.length === 0 || p.session.length > 128) {
            return invalid();
          }
          id = p.session;
          if (this.sessions.has(id)) {
            return reply({ kind: "error", code: -32021, data: { code: "session_exists" } });
          }
        }
        if (this.sessions.size >= MAX_SESSIONS) {
          return reply({ kind: "error", code: -32022, data: { code: "session_limit", limit: MAX_SESSIONS } });
        }
        while (id === undefined) {
          const candidate = `s${this.#nextSession++}`;
          if (!this.sessions.has(candidate)) id = candidate;
        }
        const script = p.script as StepKind[];
        // `history` (a transcript of an idle session): its entries and instructions carry over.
        const from = p.restore as
          | { entries: number; instructions: string | null; last: ModelSession["last"] }
          | undefined;
        this.sessions.set(id, {
          id,
          script,
          pointer: 0,
          entries: from?.entries ?? 0,
          instructions: from?.instructions ?? null,
          last: from?.last ?? null,
          queue: [],
        });
        return reply({ kind: "result", result: { session: id, warnings: [] } });
      }
      case "session/respond": {
        const s = lookup();
        if (!s) return;
        if (!has("prompt") || typeof p.prompt !== "string") return invalid();
        if (has("stream") && typeof p.stream !== "boolean") return invalid();
        const badTool = isObjectWithTool(p.toolChoice);
        return this.#enqueue(s, {
          kind: "respond",
          owner,
          prompt: p.prompt,
          stream: p.stream === true,
          badTool,
          warned: Object.hasOwn(p, "unknownMember"),
          noTools: Array.isArray(p.enabledTools) && p.enabledTools.length === 0,
        });
      }
      case "session/setInstructions": {
        const s = lookup();
        if (!s) return;
        if (has("instructions") && typeof p.instructions !== "string") return invalid();
        return this.#enqueue(s, {
          kind: "setInstructions",
          owner,
          instructions: (p.instructions as string) ?? null,
        });
      }
      case "session/reset": {
        const s = lookup();
        if (!s) return;
        return this.#enqueue(s, { kind: "reset", owner });
      }
      case "session/cancel": {
        const s = lookup();
        if (!s) return;
        const n = this.#cancelAll(s);
        // The cancelled turn unwinds on its own: until it has, session/list may still count it (not specified).
        if (n > 0) this.freeRunning = true;
        return reply({ kind: "result", result: { session: s.id, cancelled: n } });
      }
      case "session/transcript": {
        const s = lookup();
        if (!s) return;
        return reply({ kind: "result", result: { session: s.id, transcript: ANY_STRING } });
      }
      case "session/delete": {
        const s = lookup();
        if (!s) return;
        if (this.#cancelAll(s) > 0) this.freeRunning = true;
        this.sessions.delete(s.id);
        return reply({ kind: "result", result: { session: s.id, deleted: true } });
      }
      case "session/list": {
        const sessions = [...this.sessions.values()].map((s) => {
          const entry: JsonObject = { session: s.id, model: "scripted" };
          if (s.instructions !== null) entry.instructions = s.instructions;
          entry.tools = ["ask"];
          entry.busy = s.queue.length > 0;
          entry.pendingOperations = s.queue.length;
          entry.entries = s.entries;
          return entry;
        });
        return reply({ kind: "result", result: { sessions } });
      }
      default:
        return reply({ kind: "error", code: -32601, data: { code: "method_not_found", method } });
    }
  }
}

function isObjectWithTool(value: unknown): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    (value as Record<string, unknown>).tool === "nope";
}

/** The owner key of a request id (canonical JSON, so 1 and "1" differ). */
function ownerKey(id: JsonValue): string {
  return canonical(id);
}

function ownerId(owner: string): JsonValue {
  return JSON.parse(owner);
}

// ---------------------------------------------------------------------------------------------------------
// Checking actual messages against the expected streams

/** The owner of an actual message: the request id of responses, the `requestId` of events and bridge requests. */
function ownerOf(m: JsonObject): string {
  if (typeof m.method === "string") return ownerKey((m.params as JsonObject).requestId);
  return ownerKey(m.id as JsonValue);
}

/** Actual messages of one owner with consecutive text events collapsed into one text item. */
function collapse(messages: JsonObject[], what: string): JsonObject[] {
  const out: JsonObject[] = [];
  let text: { deltas: string; text: string } | undefined;
  const flush = () => {
    if (text) {
      assert.equal(text.deltas, text.text, `${what}: text deltas add up to the text`);
      out.push({ collapsedText: text.text });
      text = undefined;
    }
  };
  for (const m of messages) {
    const event = m.method === "session/event" ? (m.params as JsonObject).event as JsonObject : undefined;
    if (event?.type === "text") {
      assert.equal(event.isReset, false, `${what}: no reset`);
      text ??= { deltas: "", text: "" };
      text.deltas += event.delta as string;
      text.text = event.text as string;
      continue;
    }
    flush();
    out.push(m);
  }
  flush();
  return out;
}

class Checker {
  readonly expected = new Map<string, Item[]>();
  readonly actual = new Map<string, JsonObject[]>();
  readonly bindings = new Map<string, string>();
  #seen = 0;

  constructor(readonly c: WireClient) {}

  /** Per owner, how many expected items and actual messages have been compared. */
  readonly #checked = new Map<string, [number, number]>();
  /** Owners with new expected or actual messages since the last comparison. */
  readonly #dirty = new Set<string>();

  add(owner: string, item: Item): void {
    this.#dirty.add(owner);
    if (!this.expected.has(owner)) this.expected.set(owner, []);
    this.expected.get(owner)!.push(item);
  }

  /** Moves new wire messages into the per-owner lists. */
  #take(): void {
    for (; this.#seen < this.c.messages.length; this.#seen++) {
      const m = this.c.messages[this.#seen];
      const owner = ownerOf(m);
      this.#dirty.add(owner);
      if (!this.actual.has(owner)) this.actual.set(owner, []);
      this.actual.get(owner)!.push(m);
    }
  }

  /** True when every owner has at least as many non-text messages as expected. */
  #complete(): boolean {
    this.#take();
    for (const owner of this.#dirty) {
      const [doneItems, doneMessages] = this.#checked.get(owner) ?? [0, 0];
      const items = (this.expected.get(owner) ?? []).slice(doneItems);
      const want = items.filter((i) => i.kind !== "text").length;
      const got = (this.actual.get(owner) ?? []).slice(doneMessages).filter((m) =>
        !(m.method === "session/event" && ((m.params as JsonObject).event as JsonObject).type === "text")
      ).length;
      if (got < want) {
        return false;
      }
    }
    return true;
  }

  async settle(final = false): Promise<void> {
    // The predicate runs for each message in the list: evaluate it once, at the last one.
    if (!this.#complete()) {
      await this.c.waitFor((m) => m === this.c.messages[this.c.messages.length - 1] && this.#complete());
    }
    // Anything unexpected still under way is caught by a later settle (the last one waits a macrotask).
    if (final) await new Promise((resolve) => setTimeout(resolve, 0));
    this.#take();
    for (const owner of this.#dirty) {
      assert.ok(
        this.expected.has(owner),
        `unexpected messages for ${owner}: ${JSON.stringify(this.actual.get(owner))}`,
      );
    }
    for (const owner of this.#dirty) {
      // Only what came since the last comparison (a text run always ends in the same settle: a response follows).
      const items = this.expected.get(owner) ?? [];
      const messages = this.actual.get(owner) ?? [];
      const [doneItems, doneMessages] = this.#checked.get(owner) ?? [0, 0];
      this.#compare(owner, items.slice(doneItems), messages.slice(doneMessages));
      this.#checked.set(owner, [items.length, messages.length]);
    }
    this.#dirty.clear();
  }

  #bind(value: JsonValue): JsonValue {
    if (typeof value === "string" && value.startsWith(CALL)) return this.bindings.get(value) ?? value;
    if (Array.isArray(value)) return value.map((v) => this.#bind(v));
    if (value !== null && typeof value === "object") {
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.#bind(v);
      return out;
    }
    return value;
  }

  /** Learns generated call ids: the first time a placeholder meets an actual call id. */
  #learn(expected: JsonValue, actual: JsonValue): void {
    if (typeof expected === "string" && expected.startsWith(CALL) && !this.bindings.has(expected)) {
      assert.equal(typeof actual, "string", "call ids are strings");
      assert.ok(![...this.bindings.values()].includes(actual as string), `call id ${actual} is reused`);
      this.bindings.set(expected, actual as string);
      return;
    }
    if (Array.isArray(expected) && Array.isArray(actual)) {
      expected.forEach((e, i) => this.#learn(e, actual[i]));
    } else if (
      expected !== null && typeof expected === "object" && actual !== null && typeof actual === "object"
    ) {
      for (const [k, v] of Object.entries(expected)) this.#learn(v, (actual as JsonObject)[k]);
    }
  }

  #compare(owner: string, items: Item[], messages: JsonObject[]): void {
    const what = `request ${owner}`;
    const got = collapse(messages, what);
    // The last messages of the owner (reused ids collect many), with their positions.
    const describe = () =>
      `${what}\n expected: ${items.map((i) => i.kind).slice(-10).join(", ")}\n actual: ${
        got.map((m, i) => `${i}: ${JSON.stringify(m).slice(0, 240)}`).slice(-10).join("\n   ")
      }`;
    assert.equal(got.length, items.length, `message count of ${describe()}`);
    items.forEach((item, i) => {
      const m = got[i];
      const at = `${what} message ${i} (${item.kind})`;
      switch (item.kind) {
        case "text":
          assert.equal(m.collapsedText, item.text, `${at}: ${describe()}`);
          return;
        case "event": {
          assert.equal(m.method, "session/event", `${at}: ${describe()}`);
          const params = m.params as JsonObject;
          this.#learn(item.event, params.event);
          const event = { ...params.event as JsonObject };
          if (event.type === "toolCallCompleted") {
            const record = withoutDuration(event.record as JsonObject, at);
            const wanted = ((item.event as JsonObject).record as JsonObject).output;
            if (wanted === ANY_STRING) {
              assert.equal(typeof record.output, "string", `${at}: output`);
              record.output = ANY_STRING;
            }
            event.record = record;
          }
          assertSame(event, this.#bind(item.event), at);
          assert.equal(canonical(params.requestId), owner, at);
          return;
        }
        case "toolCall":
          assert.equal(m.method, "tool/call", `${at}: ${describe()}`);
          this.#learn(item.params, m.params as JsonValue);
          assertSame({ id: m.id, params: m.params }, { id: item.id, params: this.#bind(item.params) }, at);
          return;
        case "toolCancel": {
          assert.equal(m.method, "tool/cancel", `${at}: ${describe()}`);
          assert.ok(!("id" in m), `${at}: a notification`);
          const { reason, ...params } = m.params as JsonObject;
          assert.equal(typeof reason, "string", at);
          assertSame(params, this.#bind(item.params), at);
          return;
        }
        case "error": {
          assert.ok("error" in m && !("method" in m), `${at}: ${describe()}`);
          const error = m.error as JsonObject;
          assert.equal(error.code, item.code, `${at}: ${describe()}`);
          assert.equal(typeof error.message, "string");
          assert.equal((error.data as JsonObject).code, (item.data as JsonObject).code, at);
          for (const [k, v] of Object.entries(item.data ?? {})) {
            assertSame((error.data as JsonObject)[k], v, `${at}: data.${k}`);
          }
          return;
        }
        case "result": {
          assert.ok("result" in m && !("method" in m), `${at}: ${describe()}`);
          this.#learn(item.result, m.result as JsonValue);
          const result = { ...m.result as JsonObject };
          if (Object.hasOwn(result, "toolCalls")) {
            result.toolCalls = (result.toolCalls as JsonObject[]).map((r) => withoutDuration(r, at));
            const usage = result.usage as JsonObject;
            for (const key of ["inputTokens", "outputTokens", "totalTokens"]) {
              assert.equal(typeof usage[key], "number", `${at}: usage.${key}`);
            }
            delete result.usage;
            if (item.warned) {
              assert.ok(Array.isArray(result.warnings) && result.warnings.length > 0, `${at}: warnings`);
            } else assert.ok(!("warnings" in result), `${at}: no warnings member without warnings`);
            delete result.warnings;
          }
          if ((item.result as JsonObject).transcript === ANY_STRING) {
            const transcript = result.transcript as JsonObject;
            assert.equal(transcript.type, "FoundationModels.Transcript", `${at}: transcript`);
            result.transcript = ANY_STRING;
          }
          if (Array.isArray(result.sessions)) {
            result.sessions = (result.sessions as JsonObject[]).map((s) => {
              assert.equal(typeof s.createdAt, "string");
              const { createdAt: _, ...rest } = s;
              return rest;
            });
          }
          assertSame(result, this.#bind(item.result), `${at}\n${describe()}`);
          return;
        }
      }
    });
  }
}

function withoutDuration(record: JsonObject, at: string): JsonObject {
  const { durationSeconds, ...rest } = record;
  assert.ok(typeof durationSeconds === "number" && durationSeconds >= 0, `${at}: durationSeconds`);
  return rest;
}

// ---------------------------------------------------------------------------------------------------------
// Generators

function genScript(rng: Rng): StepKind[] {
  const steps: StepKind[] = [];
  while (steps.length < 160) {
    steps.push(...rng.weighted<StepKind[]>([
      [8, ["tool", "template"]],
      [3, ["text"]],
      [1, ["error"]],
      [2, ["tool", "tool", "template"]],
      [1, ["tool", "error"]],
    ]));
  }
  return steps;
}

function scriptJson(script: StepKind[]): JsonValue[] {
  return script.map((kind, k): JsonValue => {
    switch (kind) {
      case "tool":
        return { toolCalls: [{ name: "ask", arguments: { k } }] };
      case "template":
        return { template: "{prompt}|{toolOutput}" };
      case "text":
        return { text: `plain ${k}`, chunks: 2 };
      default:
        return { error: "guardrail_violation" };
    }
  });
}

async function run(rng: Rng, trace: Trace, steps: number): Promise<void> {
  const c = new WireClient();
  const checker = new Checker(c);
  const model = new SessionModel(
    (owner, item) => {
      if (Deno.env.get("OAM_MODEL_DEBUG")) {
        trace.add(`  expect ${owner} ${JSON.stringify(item).slice(0, 150)}`);
      }
      checker.add(owner, item);
    },
    (owner) =>
      (checker.expected.get(owner) ?? []).filter((i) => i.kind === "result" || i.kind === "error").length,
  );
  let fresh = 0;
  const batchIds = new Set<string>();

  const pickSession = (): string => {
    const ids = [...model.sessions.keys()];
    if (ids.length === 0 || rng.chance(0.1)) return rng.pick(SESSION_IDS.concat(["nope", "hasOwnProperty"]));
    return rng.pick(ids);
  };
  /** A request id not in use by a pending request: fresh, or reused from a small pool. */
  const pickId = (): JsonValue => {
    for (;;) {
      const id: JsonValue = rng.chance(0.6)
        ? fresh++
        : rng.pick<JsonValue>(["r", "", 0, -7, 1.5, "t-1", 2 ** 53 - 1, "é", `x${rng.int(5)}`]);
      // Not one of a pending request, nor one used in this batch (a cancelled request's messages may still come).
      if (
        !model.pending.has(ownerKey(id)) && !batchIds.has(ownerKey(id)) && !model.unwinding.has(ownerKey(id))
      ) {
        batchIds.add(ownerKey(id));
        return id;
      }
    }
  };
  const send = (method: string, params: Record<string, unknown>, notification = false): string => {
    const id = notification ? undefined : pickId();
    const wire = { ...params };
    if (method === "session/create") {
      wire.tools = [{ name: "ask", description: "Ask the game." }];
      wire.model = { type: "scripted", steps: scriptJson(params.script as StepKind[]) };
      delete wire.script;
      delete wire.restore;
    }
    const line = JSON.stringify({
      jsonrpc: "2.0",
      ...(id === undefined ? {} : { id }),
      method,
      params: wire,
    });
    trace.add(`→ ${method} ${JSON.stringify(id)} ${JSON.stringify(params).slice(0, 160)}`);
    c.sendLine(line);
    const owner = id === undefined ? "notification" : ownerKey(id);
    model.request(owner, method, params, notification);
    return owner;
  };

  let step = 0;
  while (step < steps) {
    // One batch: requests sent back to back until one starts work that finishes on its own.
    const size = rng.range(1, 5);
    for (let i = 0; i < size && step < steps; i++, step++) {
      const open = [...model.toolCalls.keys()];
      const op = rng.weighted<string>([
        [3, "create"],
        [14, "respond"],
        [open.length > 0 ? 14 : 0, "reply"],
        [2, "stale reply"],
        [4, "cancel"],
        [1, "cancel notification"],
        [2, "delete"],
        [3, "list"],
        [2, "setInstructions"],
        [2, "reset"],
        [3, "bad"],
        [1.5, "restore"],
        [0.2, "limit"],
      ]);
      switch (op) {
        case "create": {
          const params: Record<string, unknown> = { script: genScript(rng) };
          if (rng.chance(0.6)) params.session = rng.pick(SESSION_IDS);
          else if (rng.chance(0.1)) params.session = rng.pick(["", "x".repeat(129), 5]);
          send("session/create", params);
          break;
        }
        case "respond": {
          const params: Record<string, unknown> = {
            session: pickSession(),
            prompt: rng.pick(["hi", "", "gate?", "ü🙂\n"]),
          };
          if (rng.chance(0.5)) params.stream = true;
          if (rng.chance(0.05)) params.prompt = "long ".repeat(20000);
          if (rng.chance(0.05)) params.toolChoice = { tool: "nope" };
          if (rng.chance(0.05)) params.unknownMember = 1;
          if (rng.chance(0.1)) params.enabledTools = [];
          send("session/respond", params);
          break;
        }
        case "reply": {
          const tid = rng.pick(open);
          const roll = rng.int(4);
          trace.add(`← reply ${tid} (${roll})`);
          if (roll === 0) {
            c.reply(tid, { output: `o${step}` });
            model.reply(tid, `o${step}`, false, `o${step}`);
          } else if (roll === 1) {
            c.reply(tid, { output: { v: step } });
            model.reply(tid, { v: step }, false, `{"v":${step}}`);
          } else if (roll === 2) {
            c.send({ id: tid, error: { code: -32000, message: `down ${step}` } });
            model.reply(tid, `down ${step}`, true, `Error: down ${step}`);
          } else {
            c.reply(tid, { v: step }); // lenient: the whole result is the output
            model.reply(tid, { v: step }, false, `{"v":${step}}`);
          }
          break;
        }
        case "stale reply": {
          // Replies to unknown, answered or cancelled tool calls are ignored.
          const tid = rng.pick(["t-0", "t-999", `t-${rng.range(1, 20)}`]);
          if (model.toolCalls.has(tid)) break;
          trace.add(`← stale reply ${tid}`);
          c.reply(tid, { output: "late" });
          model.reply(tid, "late", false, "late");
          break;
        }
        case "cancel":
          send("session/cancel", { session: pickSession() });
          break;
        case "cancel notification":
          send("session/cancel", { session: pickSession() }, true);
          break;
        case "delete":
          send("session/delete", { session: pickSession() });
          break;
        case "list":
          send("session/list", {});
          break;
        case "setInstructions":
          send("session/setInstructions", {
            session: pickSession(),
            instructions: rng.pick([`rule ${step}`, null, "__proto__"]),
          });
          break;
        case "reset":
          send("session/reset", { session: pickSession() });
          break;
        case "restore": {
          // session/transcript of an idle session, then a new session from it (`history`), in the next batch.
          const idle = [...model.sessions.values()].filter((s) => s.queue.length === 0);
          if (idle.length === 0 || model.sessions.size >= MAX_SESSIONS) break;
          const source = rng.pick(idle);
          const owner = send("session/transcript", { session: source.id });
          await checker.settle();
          batchIds.clear();
          const response = c.messages.findLast((m) =>
            !("method" in m) && ownerKey(m.id as JsonValue) === owner
          )!;
          const history = (response.result as JsonObject).transcript;
          send("session/create", {
            script: genScript(rng),
            history: rng.chance(0.5) ? history : response.result,
            restore: { entries: source.entries, instructions: source.instructions, last: source.last },
          });
          break;
        }
        case "bad":
          rng.pick<() => void>([
            () => send("session/respond", { session: pickSession() }),
            () => send("session/respond", { session: pickSession(), prompt: 5 }),
            () => send("session/respond", { session: pickSession(), prompt: "x", stream: "yes" }),
            () => send("session/respond", { session: 7, prompt: "x" }),
            () => send("session/respond", { prompt: "x" }),
            () => send("session/cancel", {}),
            () => send("session/frobnicate", { session: pickSession() }),
            () => send("session/setInstructions", { session: pickSession(), instructions: 3 }),
          ])();
          break;
        default: {
          // Fill to the session limit, one more, then delete what the burst added.
          const added: string[] = [];
          while (model.sessions.size < MAX_SESSIONS) {
            const before = new Set(model.sessions.keys());
            send("session/create", { script: [] });
            for (const id of model.sessions.keys()) if (!before.has(id)) added.push(id);
          }
          send("session/create", { script: [] });
          for (const id of added) send("session/delete", { session: id });
        }
      }
      if (model.freeRunning) break;
    }
    await checker.settle();
    batchIds.clear();
    model.unwinding.clear();
    // Per-session order: responses of one session's ordered operations come in arrival order.
    checkFifo(c, model);
  }
  // Clean up: cancel everything, then the connection closes.
  for (const id of [...model.sessions.keys()]) send("session/delete", { session: id });
  await checker.settle(true);
  await c.close();
}

function checkFifo(c: WireClient, model: SessionModel): void {
  const responses = new Map<string, number[]>(); // owner → positions of its responses
  c.messages.forEach((m, i) => {
    if ("method" in m) return;
    const owner = ownerKey(m.id as JsonValue);
    if (!responses.has(owner)) responses.set(owner, []);
    responses.get(owner)!.push(i);
  });
  const last = new Map<string, { at: number; owner: string }>();
  for (const { session, owner, n } of model.order) {
    const at = responses.get(owner)?.[n];
    if (at === undefined) continue; // still waiting
    const before = last.get(session);
    assert.ok(
      before === undefined || at > before.at,
      `session ${session}: the response to ${owner} came before the one to ${before?.owner}, sent earlier`,
    );
    last.set(session, { at, owner });
  }
}

Deno.test("session/* model: random lifecycles, pipelining, cancels and tool replies match the reference model", async () => {
  await forEachSeed(FILE, modelSeeds([1, 2, 3]), (rng, trace) => run(rng, trace, modelSteps(150)));
});
