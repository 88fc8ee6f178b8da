/**
 * Load and soak run against the real `deno run cli.ts stdio` process (issue #7): 64 sessions and 128 NPCs run
 * pipelined scripted turns with client tools, NPCs write a shared world that has subscriptions, the client
 * writes it too, and sessions and NPCs are recycled (delete + create) every few turns like a game loading
 * levels. Checks that no response is lost or duplicated, that the process exits 0, and that its RSS
 * (sampled from /proc) stays flat.
 *
 * ```sh
 * deno run -A scripts/soak.ts                 # 600 s
 * deno run -A scripts/soak.ts --seconds 30    # the CI version (tests/slow/soak_slow.ts, `deno task test:slow`)
 * ```
 *
 * Prints progress to stderr and a JSON report to stdout; exits 1 when a check failed.
 * @module
 */
import { parseArgs } from "node:util";
import { BridgeProcess } from "../tests/helpers/process.ts";

/** Options of {@link runSoak}. */
export interface SoakOptions {
  /** Duration of the load phase. */
  seconds: number;
  /** Sessions (at most 64, the bridge's default limit). */
  sessions: number;
  /** NPCs (at most 128). */
  npcs: number;
  /** RSS sampling interval. */
  sampleSeconds: number;
  /** Allowed RSS growth from the first to the last third of the samples after the warm-up (MB). */
  maxGrowthMb: number;
  /** Samples in the first seconds are left out of the flatness check (default: a sixth of the run). */
  warmupSeconds?: number;
  /** Progress output. */
  progress?: (text: string) => void;
}

/** What a soak run saw. */
export interface SoakReport {
  seconds: number;
  requests: number;
  responses: number;
  errors: Record<string, number>;
  lost: number;
  duplicates: number;
  unknownIds: number;
  turns: number;
  turnsPerSecond: number;
  toolCalls: number;
  notifications: Record<string, number>;
  recycled: number;
  rss: {
    startMb: number;
    endMb: number;
    peakMb: number;
    firstThirdMb: number;
    lastThirdMb: number;
    curveMb: number[];
  };
  exitCode: number | null;
  stderr: string;
  failures: string[];
}

type Id = number;

interface Pending {
  kind: string;
  onResult?: (message: Record<string, unknown>) => void;
}

const encoder = new TextEncoder();
const SESSION_TURNS = 12;
const NPC_TALKS = 8;

const mb = (kb: number) => Math.round(kb / 102.4) / 10;
const mean = (xs: number[]) => xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;

/** Runs the soak and returns its report. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.progress ?? (() => {});
  const failures: string[] = [];
  const pending = new Map<Id, Pending>();
  const answered = new Set<Id>();
  const errors: Record<string, number> = {};
  const notifications: Record<string, number> = {};
  let nextId = 1;
  let requests = 0;
  let responses = 0;
  let duplicates = 0;
  let unknownIds = 0;
  let turns = 0;
  let toolCalls = 0;
  let recycled = 0;
  let stopping = false;
  let outBuffer: string[] = [];
  let flushing: Promise<void> | null = null;

  // Batches writes per tick (like a game engine's frame).
  const flush = async () => {
    while (outBuffer.length > 0) {
      const text = outBuffer.join("");
      outBuffer = [];
      await bridge.write(encoder.encode(text));
    }
    flushing = null;
  };
  const sendLine = (line: string) => {
    outBuffer.push(line + "\n");
    flushing ??= Promise.resolve().then(flush);
  };
  const request = (
    method: string,
    params: Record<string, unknown>,
    kind: string,
    onResult?: Pending["onResult"],
  ) => {
    const id = nextId++;
    requests++;
    pending.set(id, { kind, onResult });
    sendLine(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return id;
  };

  // ---- stdout: one message per line ----
  const onMessage = (m: Record<string, unknown>) => {
    if (typeof m.method === "string") {
      if (m.method === "tool/call") {
        toolCalls++;
        const call = (m.params as Record<string, Record<string, unknown>>).call;
        const output = call.name === "check_stock"
          ? { item: (call.arguments as Record<string, unknown>).item ?? "sword", stock: 3, price: 45 }
          : { item: "sword", stock: 2 };
        sendLine(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { output } }));
      } else notifications[m.method] = (notifications[m.method] ?? 0) + 1;
      return;
    }
    const id = m.id as Id;
    responses++;
    if (answered.has(id)) {
      duplicates++;
      failures.push(`duplicate response to ${id}`);
      return;
    }
    const p = pending.get(id);
    if (!p) {
      unknownIds++;
      failures.push(`response to unknown id ${JSON.stringify(m.id)}`);
      return;
    }
    pending.delete(id);
    answered.add(id);
    if ("error" in m) {
      const code = String(((m.error as Record<string, unknown>).data as Record<string, unknown>)?.code);
      const key = `${p.kind}:${code}`;
      errors[key] = (errors[key] ?? 0) + 1;
    }
    p.onResult?.(m);
  };
  // The tests' process harness; lines are handled as they arrive and not kept (long runs).
  const bridge = new BridgeProcess(["--tool-timeout", "10"], {
    discard: true,
    onLine: (line) => {
      try {
        onMessage(JSON.parse(line));
      } catch (error) {
        failures.push(`bad output line (${String(error)}): ${line.slice(0, 200)}`);
      }
    },
  });

  // ---- set-up: a world with subscriptions ----
  request("initialize", { client: { name: "soak" }, protocolVersion: "1.0" }, "setup");
  request(
    "world/create",
    { world: "town", state: { gold: 100, log: "", stock: { sword: 3, axe: 1 } } },
    "setup",
  );
  for (const path of ["", "gold", "stock", "log"]) {
    request("world/subscribe", { world: "town", path }, "setup");
  }

  // ---- sessions: a client tool, SESSION_TURNS turns per life, two turns in flight ----
  const sessionTools = [{
    name: "check_stock",
    description: "Returns the stock of an item.",
    parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
  }];
  const sessionModel = () => {
    const steps: unknown[] = [];
    for (let i = 0; i < SESSION_TURNS; i++) {
      steps.push({ toolCalls: [{ name: "check_stock", arguments: { item: i % 2 ? "axe" : "sword" } }] });
      steps.push({ template: "Stock: {toolOutput}" });
    }
    return { type: "scripted", steps };
  };
  const startSession = (name: string) => {
    let sent = 0;
    let done = 0;
    const turn = () => {
      if (stopping || sent >= SESSION_TURNS) return;
      sent++;
      request(
        "session/respond",
        { session: name, prompt: `How many? (${sent})`, stream: sent % 3 === 0 },
        "respond",
        () => {
          turns++;
          done++;
          if (done === SESSION_TURNS) recycle();
          else turn();
        },
      );
    };
    const recycle = () => {
      if (stopping) return;
      recycled++;
      request("session/delete", { session: name }, "delete");
      create();
    };
    const create = () => {
      sent = 0;
      done = 0;
      request("session/create", {
        session: name,
        instructions: "You run the shop.",
        tools: sessionTools,
        model: sessionModel(),
      }, "create");
      turn();
      turn(); // pipelined: two turns in flight
    };
    create();
  };

  // ---- NPCs: a client tool and world writes through update_world_state ----
  const npcModel = (n: number) => {
    const steps: unknown[] = [];
    for (let i = 0; i < NPC_TALKS; i++) {
      steps.push({
        toolCalls: [
          {
            name: "update_world_state",
            arguments: { path: "gold", value: String(100 + ((n * 7 + i) % 50)) },
          },
          { name: "check_inventory", arguments: { item: "sword" } },
        ],
      });
      steps.push({ text: "[happy] Here you go, traveller." });
    }
    return { type: "scripted", steps };
  };
  const startNpc = (name: string, n: number) => {
    let sent = 0;
    let done = 0;
    const talk = () => {
      if (stopping || sent >= NPC_TALKS) return;
      sent++;
      request(
        "npc/talk",
        { npc: name, line: `Got swords? (${sent})`, stream: sent % 2 === 0 },
        "talk",
        () => {
          turns++;
          done++;
          if (done === NPC_TALKS) recycle();
          else talk();
        },
      );
    };
    const recycle = () => {
      if (stopping) return;
      recycled++;
      // Save, then unload and load again (the save answers before the delete is sent).
      request("npc/state", { npc: name }, "state", () => {
        if (stopping) return;
        request("npc/delete", { npc: name }, "delete");
        create();
      });
    };
    const create = () => {
      sent = 0;
      done = 0;
      request("npc/create", {
        npc: name,
        persona: { name: `Smith ${n}`, role: "a blacksmith", goals: ["sell swords"] },
        world: "town",
        tools: [{ name: "check_inventory", description: "Counts an item in the shop." }],
        options: {
          replyFormat: "text",
          toolChoice: "auto",
          worldWritable: ["gold", "log"],
          compactAfterTurns: 0,
        },
        model: npcModel(n),
      }, "npc/create");
      talk();
    };
    create();
  };

  for (let i = 0; i < options.sessions; i++) startSession(`shop${i}`);
  for (let i = 0; i < options.npcs; i++) startNpc(`smith${i}`, i);

  // ---- the client writes the world too ----
  let tick = 0;
  const worldWriter = setInterval(() => {
    if (stopping) return;
    tick++;
    request("world/set", { world: "town", path: "log", value: `tick ${tick}` }, "world");
    request("world/merge", { world: "town", patch: { stock: { sword: tick % 5, axe: null } } }, "world");
    request("world/get", { world: "town", path: "gold" }, "world");
  }, 50);

  // ---- RSS samples ----
  const started = Date.now();
  const curve: number[] = [];
  const times: number[] = [];
  const sample = () => {
    const kb = bridge.rssKb();
    if (kb !== null) {
      curve.push(kb);
      times.push((Date.now() - started) / 1000);
    }
    return kb;
  };
  const sampler = setInterval(() => {
    const kb = sample();
    log(
      `${Math.round((Date.now() - started) / 1000)} s: ${turns} turns, ${requests} requests, ` +
        `${pending.size} in flight, RSS ${kb === null ? "?" : mb(kb)} MB`,
    );
  }, options.sampleSeconds * 1000);
  await new Promise((r) => setTimeout(r, options.seconds * 1000));
  stopping = true;
  clearInterval(worldWriter);
  clearInterval(sampler);
  sample();
  const loadSeconds = (Date.now() - started) / 1000;

  // ---- drain: every request still in flight must be answered ----
  const deadline = Date.now() + 30_000;
  while (pending.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const lost = pending.size;
  for (const [id, p] of [...pending].slice(0, 10)) failures.push(`no response to ${id} (${p.kind})`);
  request("shutdown", {}, "shutdown");
  if (flushing) await flushing;
  await bridge.closeInput();
  let exitCode: number | null = null;
  try {
    exitCode = await bridge.exit(15_000);
  } catch {
    failures.push("the bridge did not exit after shutdown");
  }
  const stderr = bridge.stderr;
  if (exitCode !== 0) failures.push(`exit code ${exitCode}`);
  if (stderr.trim() !== "") failures.push(`stderr: ${stderr.slice(0, 1000)}`);
  for (const k of Object.keys(errors)) failures.push(`error responses ${k}: ${errors[k]}`);

  // RSS: compare the first and the last third of the samples after the warm-up.
  const warmup = options.warmupSeconds ?? options.seconds / 6;
  const steady = curve.filter((_, i) => times[i] >= warmup);
  const third = Math.max(1, Math.floor(steady.length / 3));
  const firstThird = mean(steady.slice(0, third));
  const lastThird = mean(steady.slice(-third));
  const growthMb = (lastThird - firstThird) / 1024;
  if (growthMb > options.maxGrowthMb) {
    failures.push(`RSS grew by ${growthMb.toFixed(1)} MB (limit ${options.maxGrowthMb} MB)`);
  }
  return {
    seconds: Math.round(loadSeconds * 10) / 10,
    requests,
    responses,
    errors,
    lost,
    duplicates,
    unknownIds,
    turns,
    turnsPerSecond: Math.round(turns / loadSeconds),
    toolCalls,
    notifications,
    recycled,
    rss: {
      startMb: mb(curve[0] ?? 0),
      endMb: mb(curve[curve.length - 1] ?? 0),
      peakMb: mb(Math.max(...curve)),
      firstThirdMb: mb(firstThird),
      lastThirdMb: mb(lastThird),
      curveMb: curve.map(mb),
    },
    exitCode,
    stderr,
    failures,
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    // `deno task <name> -- <flags>` passes the `--` through; there are no positional arguments.
    args: Deno.args.filter((a) => a !== "--"),
    options: {
      seconds: { type: "string", default: "600" },
      sessions: { type: "string", default: "64" },
      npcs: { type: "string", default: "128" },
      sample: { type: "string", default: "5" },
      "max-growth-mb": { type: "string", default: "40" },
    },
  });
  const report = await runSoak({
    seconds: Number(values.seconds),
    sessions: Number(values.sessions),
    npcs: Number(values.npcs),
    sampleSeconds: Number(values.sample),
    maxGrowthMb: Number(values["max-growth-mb"]),
    progress: (text) => Deno.stderr.writeSync(encoder.encode(text + "\n")),
  });
  Deno.stdout.writeSync(encoder.encode(JSON.stringify(report, null, 2) + "\n"));
  Deno.exit(report.failures.length === 0 ? 0 : 1);
}
