/**
 * The fuzz campaign: sets up sentinel objects, sends generated lines (each followed by a ping), answers the
 * bridge's `tool/call`s like a sloppy game engine (late, twice, with errors or garbage, sometimes never),
 * and checks the invariants of issue #7 after every line:
 *
 * - the bridge is alive and the ping after the line answers `{}`;
 * - a line that must be rejected gets exactly one error with id null, other lines none;
 * - every request with a valid id gets exactly one response (checked continuously for duplicates and at
 *   the end for missing ones), and no response carries an id that was never sent;
 * - every error is a §8 error (code and `data.code` match the table), never `-32603`, and the engine logs
 *   no "Internal error" (a bug the code did not anticipate, logged with its stack);
 * - the sentinel session, NPC and world are unchanged, and no JS prototype is polluted (in-process).
 */
import { ERROR_CODES } from "../../src/protocol/errors.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { type Expect, FuzzLines, type Id } from "./fuzz_lines.ts";
import type { FuzzTarget } from "./fuzz_target.ts";
import { Rng } from "./rng.ts";

/** Options of a campaign. */
export interface FuzzRunOptions {
  seed: number;
  lines: number;
  target: FuzzTarget;
  maxLineBytes: number;
  /** Lines between sentinel checks (default 200). */
  checkEvery?: number;
  /**
   * Lines between clean-ups that delete every non-sentinel session, NPC and world (default 5000), like a
   * game unloading a level; without them long runs sit at the object limits.
   */
  cleanEvery?: number;
  /** Progress output (default none). */
  progress?: (text: string) => void;
  /** Allow multi-megabyte lines. */
  bigLines?: boolean;
  /** Prints every line before it is sent (debugging). */
  trace?: (text: string) => void;
  /** Stop after this many findings (default 20). */
  maxFindings?: number;
}

/** What a campaign saw. */
export interface FuzzReport {
  seed: number;
  lines: number;
  seconds: number;
  linesPerSecond: number;
  bytes: number;
  categories: Record<string, number>;
  responses: number;
  errorsByCode: Record<string, number>;
  /** Per category: responses by outcome ("ok" or the error's data.code). */
  outcomes: Record<string, Record<string, number>>;
  toolCalls: number;
  toolReplies: number;
  notifications: number;
  exitCode: number | null;
  untabledMethods: string[];
  findings: string[];
}

const encoder = new TextEncoder();
const CODE_BY_NAME = new Map<string, number>(Object.entries(ERROR_CODES));

function idKey(id: JsonValue | undefined): string {
  return typeof id === "number" ? `n:${id}` : `s:${String(id)}`;
}

function isResponse(m: JsonObject): boolean {
  return !Object.hasOwn(m, "method") && (Object.hasOwn(m, "result") || Object.hasOwn(m, "error"));
}

interface Pending {
  id: Id;
  line: number;
  category: string;
  /** true: exactly one response is required; false: at most one. */
  required: boolean;
  answers: number;
}

interface ToolReply {
  due: number;
  text: string;
}

/** Runs a campaign and returns its report (findings empty = all invariants held). */
export async function runFuzz(options: FuzzRunOptions): Promise<FuzzReport> {
  const { target, seed } = options;
  const maxFindings = options.maxFindings ?? 20;
  const trace = options.trace;
  const checkEvery = options.checkEvery ?? 200;
  const cleanEvery = options.cleanEvery ?? 5000;
  const findings: string[] = [];
  const finding = (text: string) => {
    if (findings.length < maxFindings) findings.push(text);
  };
  const expected = new Map<string, Pending>();
  const categories: Record<string, number> = {};
  const errorsByCode: Record<string, number> = {};
  const outcomes: Record<string, Record<string, number>> = {};
  const rng = new Rng(seed ^ 0x5bd1e995);
  const replies: ToolReply[] = [];
  let consumed = 0;
  let lineNo = 0;
  let responses = 0;
  let toolCalls = 0;
  let toolReplies = 0;
  let notifications = 0;
  let bytes = 0;
  let nextCheck = 0;
  const answeredTools = new Set<string>();

  const send = async (text: string | Uint8Array) => {
    const data = typeof text === "string" ? encoder.encode(text + "\n") : text;
    bytes += data.length;
    await target.write(data);
  };

  let nullErrors = 0;
  /** Looks at every message not seen yet (counting errors with id null in `nullErrors`). */
  const consume = () => {
    while (consumed < target.messages.length) {
      const m = target.messages[consumed++];
      if (m.jsonrpc !== "2.0") finding(`message without jsonrpc 2.0: ${JSON.stringify(m).slice(0, 200)}`);
      if (isResponse(m)) {
        responses++;
        if (Object.hasOwn(m, "error")) {
          const e = m.error as JsonObject;
          const name = (e?.data as JsonObject | undefined)?.code;
          errorsByCode[String(name)] = (errorsByCode[String(name)] ?? 0) + 1;
          if (
            typeof name !== "string" || CODE_BY_NAME.get(name) !== e.code || typeof e.message !== "string"
          ) {
            finding(`error outside the §8 table: ${JSON.stringify(m).slice(0, 300)}`);
          } else if (e.code === -32603) finding(`internal error: ${JSON.stringify(m).slice(0, 300)}`);
        }
        if (m.id === null) {
          if (!Object.hasOwn(m, "error")) finding(`result with id null: ${JSON.stringify(m).slice(0, 200)}`);
          nullErrors++;
          continue;
        }
        const key = idKey(m.id);
        const pending = expected.get(key);
        if (!pending) {
          finding(`response to an id never sent: ${JSON.stringify(m).slice(0, 200)}`);
          continue;
        }
        pending.answers++;
        const outcome = Object.hasOwn(m, "error")
          ? String(((m.error as JsonObject)?.data as JsonObject | undefined)?.code)
          : "ok";
        const byCategory = outcomes[pending.category] ??= {};
        byCategory[outcome] = (byCategory[outcome] ?? 0) + 1;
        if (pending.answers > 1) {
          finding(
            `id ${JSON.stringify(pending.id)} (line ${pending.line}, ${pending.category}) answered twice`,
          );
        }
        if (typeof pending.id === "string" && pending.id.startsWith("ping-") && !Object.hasOwn(m, "result")) {
          finding(`ping failed: ${JSON.stringify(m).slice(0, 200)}`);
        }
        continue;
      }
      if (m.method === "tool/call") {
        toolCalls++;
        scheduleReplies(m);
        continue;
      }
      if (typeof m.method === "string") notifications++;
      else finding(`unclassifiable message: ${JSON.stringify(m).slice(0, 200)}`);
    }
  };

  const scheduleReplies = (m: JsonObject) => {
    const id = m.id as string;
    const r = rng.next();
    const output = rng.pick([
      '{"result":{"output":"The gate opened."}}',
      '{"result":{"output":{"opened":true,"n":[1,2]}}}',
      '{"result":{"output":"Chain jammed.","isError":true}}',
      '{"result":{"opened":true}}',
      '{"result":{"output":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":1}}}}}',
    ]);
    const line = (body: string) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},${body.slice(1, -1)}}`;
    if (r < 0.7) replies.push({ due: lineNo + rng.int(10), text: line(output) });
    else if (r < 0.78) {
      const due = lineNo + rng.int(5);
      replies.push({ due, text: line(output) }, { due: due + 1 + rng.int(5), text: line(output) });
    } else if (r < 0.85) {
      replies.push({ due: lineNo + rng.int(5), text: line('{"error":{"code":-32000,"message":"offline"}}') });
    } else if (r < 0.9) {
      const garbage = rng.pick([
        '{"result":5}',
        '{"result":null}',
        '{"error":"x"}',
        '{"error":{"code":"x"}}',
      ]);
      replies.push({ due: lineNo + rng.int(5), text: line(garbage) });
    } else replies.push({ due: Number.POSITIVE_INFINITY, text: line(output) });
  };

  const deliverReplies = async (all: boolean) => {
    replies.sort((a, b) => a.due - b.due);
    while (replies.length > 0 && (all || replies[0].due <= lineNo)) {
      const reply = replies.shift()!;
      toolReplies++;
      answeredTools.add(reply.text);
      await send(reply.text);
    }
  };

  let pingCount = 0;
  /** Sends a ping and waits for its response; returns false when it did not come. */
  const ping = async (): Promise<boolean> => {
    const id = `ping-${++pingCount}`;
    expected.set(idKey(id), { id, line: lineNo, category: "ping", required: true, answers: 0 });
    await send(`{"jsonrpc":"2.0","id":"${id}","method":"ping"}`);
    return await waitAnswered(id, 10_000);
  };

  const waitAnswered = async (id: Id, timeoutMs: number): Promise<boolean> => {
    const pending = expected.get(idKey(id))!;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      consume();
      if (pending.answers > 0) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await target.waitForCount(target.messages.length + 1, Math.min(left, 200));
    }
  };

  let callCount = 0;
  /** A request of the harness itself; returns the response. */
  const call = async (method: string, params: JsonObject): Promise<JsonObject | null> => {
    const id = `h-${++callCount}`;
    expected.set(idKey(id), { id, line: lineNo, category: "harness", required: true, answers: 0 });
    const start = target.messages.length;
    await send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    if (!(await waitAnswered(id, 10_000))) return null;
    for (let i = start; i < target.messages.length; i++) {
      const m = target.messages[i];
      if (m.id === id && isResponse(m)) return m;
    }
    return null;
  };

  const result = async (method: string, params: JsonObject): Promise<JsonObject> => {
    const r = await call(method, params);
    if (!r || !Object.hasOwn(r, "result")) throw new Error(`${method} failed: ${JSON.stringify(r)}`);
    return r.result as JsonObject;
  };

  // ---- set-up: methods and sentinels ----
  const init = await result("initialize", { client: { name: "fuzz" }, protocolVersion: "1.0" });
  const methods = ((init.capabilities as JsonObject).methods as string[]).slice();
  const gen = new FuzzLines(seed, methods, {
    maxLineBytes: options.maxLineBytes,
    bigLines: options.bigLines,
  });
  await result("session/create", {
    session: "sentinel",
    instructions: "Guard the gate.",
    tools: [{ name: "door", description: "Opens doors.", parameters: { type: "object", properties: {} } }],
    model: { type: "scripted", steps: [{ text: "Halt." }] },
  });
  await result("session/respond", { session: "sentinel", prompt: "Hello" });
  await result("world/create", {
    world: "sentinel-world",
    state: { gold: 60, items: ["sword"], m: { k: 1 } },
  });
  await result("npc/create", {
    npc: "sentinel-npc",
    persona: { name: "Sentinel", role: "a watchman" },
    world: "sentinel-world",
    options: { replyFormat: "text", worldWritable: [""], toolChoice: "auto" },
    model: { type: "scripted", steps: [{ text: "[happy] All quiet." }] },
  });
  await result("npc/talk", { npc: "sentinel-npc", line: "Report." });

  const sentinelState = async (): Promise<string> => {
    const parts: JsonValue[] = [];
    parts.push(await result("session/transcript", { session: "sentinel" }));
    const sessions = (await result("session/list", {})).sessions as JsonObject[];
    parts.push(sessions.find((s) => s.session === "sentinel") ?? null);
    parts.push(await result("npc/state", { npc: "sentinel-npc", settle: false }));
    const npcs = (await result("npc/list", {})).npcs as JsonObject[];
    parts.push(npcs.find((n) => n.npc === "sentinel-npc") ?? null);
    parts.push(await result("world/snapshot", { world: "sentinel-world" }));
    const worlds = (await result("world/list", {})).worlds as JsonObject[];
    parts.push(worlds.find((w) => w.world === "sentinel-world") ?? null);
    return JSON.stringify(parts, (_key, value) => {
      // The instructions entry of an exported transcript gets fresh ids on every export.
      if (value && typeof value === "object" && value.role === "instructions") {
        return {
          ...value,
          id: "-",
          contents: (value.contents as JsonObject[]).map((c) => ({ ...c, id: "-" })),
        };
      }
      return value;
    });
  };
  const sentinel = await sentinelState();

  const checkState = async (when: string) => {
    for (const p of target.prototypeProblems()) finding(`${when}: ${p}`);
    try {
      const now = await sentinelState();
      if (now !== sentinel) finding(`${when}: a sentinel changed:\nbefore ${sentinel}\nafter  ${now}`);
    } catch (error) {
      finding(`${when}: sentinel check failed: ${String(error)}`);
    }
  };

  const clean = async () => {
    const sessions = (await result("session/list", {})).sessions as JsonObject[];
    for (const s of sessions) {
      if (s.session !== "sentinel") await call("session/delete", { session: s.session });
    }
    const npcs = (await result("npc/list", {})).npcs as JsonObject[];
    for (const n of npcs) if (n.npc !== "sentinel-npc") await call("npc/delete", { npc: n.npc });
    const worlds = (await result("world/list", {})).worlds as JsonObject[];
    for (const w of worlds) if (w.world !== "sentinel-world") await call("world/delete", { world: w.world });
  };

  // ---- the campaign ----
  const started = performance.now();
  for (lineNo = 1; lineNo <= options.lines; lineNo++) {
    if (findings.length >= maxFindings) break;
    await deliverReplies(false);
    const c = gen.next();
    categories[c.category] = (categories[c.category] ?? 0) + 1;
    consume();
    const expect: Expect = c.expect;
    if (expect.kind === "request" || (expect.kind === "unknown" && expect.id !== undefined)) {
      const id = expect.id!;
      expected.set(idKey(id), {
        id,
        line: lineNo,
        category: c.category,
        required: expect.kind === "request",
        answers: 0,
      });
    }
    if (trace) trace(`line ${lineNo} ${c.category}: ${new TextDecoder().decode(c.bytes.subarray(0, 300))}`);
    const logsBefore = target.logs.length;
    const nullsBefore = nullErrors;
    await send(c.bytes);
    if (!(await ping())) {
      finding(`line ${lineNo} (${c.category}): the ping after it got no answer; the bridge is stuck or dead`);
      break;
    }
    // Everything the line caused synchronously is before the ping's response.
    consume();
    const nulls = nullErrors - nullsBefore;
    const show = () => new TextDecoder().decode(c.bytes.subarray(0, 200)).replace(/\n$/, "");
    if (expect.kind === "invalid" && nulls !== 1) {
      finding(`line ${lineNo} (${c.category}): expected one error with id null, got ${nulls}: ${show()}`);
    } else if ((expect.kind === "request" || expect.kind === "silent") && nulls !== 0) {
      finding(`line ${lineNo} (${c.category}): unexpected error with id null: ${show()}`);
    } else if (expect.kind === "unknown" && nulls > 1) {
      finding(`line ${lineNo} (${c.category}): ${nulls} errors with id null for one line: ${show()}`);
    }
    if (expect.kind === "invalid" && expect.code !== undefined) {
      const last = [...target.messages].reverse().find((m) => m.id === null && isResponse(m));
      const code = (last?.error as JsonObject | undefined)?.code;
      if (nulls === 1 && code !== expect.code) {
        finding(`line ${lineNo} (${c.category}): expected code ${expect.code}, got ${code}: ${show()}`);
      }
    }
    if (expect.kind === "silent" && expect.warning && target.kind === "in-process") {
      if (!target.logs.slice(logsBefore).some((l) => l === `warning: ${expect.warning}`)) {
        finding(`line ${lineNo} (${c.category}): missing log "${expect.warning}"`);
      }
    }
    if (lineNo % 16 === 0) await target.yield();
    if (lineNo % cleanEvery === 0) await clean();
    if (lineNo >= nextCheck) {
      nextCheck = lineNo + checkEvery;
      await checkState(`after line ${lineNo}`);
      options.progress?.(
        `${lineNo} lines, ${
          ((performance.now() - started) / 1000).toFixed(1)
        } s, ${findings.length} findings`,
      );
    }
  }
  const seconds = (performance.now() - started) / 1000;

  // ---- the end: answer every tool call, wait for every response, check the sentinels ----
  await deliverReplies(true);
  const deadline = Date.now() + 20_000;
  for (;;) {
    consume();
    const missing = [...expected.values()].filter((p) => p.required && p.answers === 0);
    if (missing.length === 0) break;
    if (Date.now() > deadline) {
      for (const p of missing.slice(0, 10)) {
        finding(`no response for id ${JSON.stringify(p.id)} (line ${p.line}, ${p.category})`);
      }
      break;
    }
    await deliverReplies(true);
    await target.waitForCount(target.messages.length + 1, 200);
  }
  await checkState("at the end");
  const shutdown = await call("shutdown", {});
  if (!shutdown || !Object.hasOwn(shutdown, "result")) {
    finding(`shutdown did not answer: ${JSON.stringify(shutdown)}`);
  }
  const exitCode = await target.close(15_000);
  consume();
  if (target.kind === "process" && exitCode !== 0) finding(`the process exited with ${exitCode}`);
  for (const line of target.badOutput) finding(`bad output line: ${line}`);
  for (const line of target.logs) {
    if (/Internal error|Could not encode|panicked|Uncaught|error: /.test(line)) {
      finding(`log: ${line.slice(0, 500)}`);
    }
  }
  const lines = Object.values(categories).reduce((a, b) => a + b, 0);
  return {
    seed,
    lines,
    seconds,
    linesPerSecond: Math.round(lines / seconds),
    bytes,
    categories,
    responses,
    errorsByCode,
    outcomes,
    toolCalls,
    toolReplies,
    notifications,
    exitCode,
    untabledMethods: gen.untabled,
    findings,
  };
}
