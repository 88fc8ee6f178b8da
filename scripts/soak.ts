/**
 * Load and soak run against the real `deno run cli.ts stdio` process (issue #7): 64 sessions and 128 NPCs run
 * pipelined scripted turns with client tools, NPCs write a shared world that has subscriptions, the client
 * writes it too, and sessions and NPCs are recycled (delete + create) every few turns like a game loading
 * levels. Every 50 ms the client also makes a decision and generates content, each with a schema it has not
 * used lately (option ids and field names rotate through 600), and creates, subscribes to, writes and
 * deletes a short-lived world. Checks that no response is lost or duplicated, that the process exits 0,
 * that only the shared world and its 4 subscriptions are left, and that its RSS (sampled from /proc) stays
 * flat.
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
/** Distinct decision and content schemas the churn rotates through (more than the validator cache holds). */
const SCHEMA_ROTATION = 600;

const mb = (kb: number) => Math.round(kb / 102.4) / 10;
const mean = (xs: number[]) => xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;

/** Runs the soak and returns its report. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const run = new SoakRun(options.progress ?? (() => {}));
  run.setUpWorld();
  for (let i = 0; i < options.sessions; i++) run.startSession(`shop${i}`);
  for (let i = 0; i < options.npcs; i++) run.startNpc(`smith${i}`, i);
  const loadSeconds = await run.load(options);
  const lost = await run.drain();
  await run.checkWorlds();
  const exit = await run.shutDown();
  run.checkExit(exit);
  const rss = run.checkRss(options);
  return run.report({ loadSeconds, lost, exit, rss });
}

/** A session's client tool. */
const SESSION_TOOLS = [{
  name: "check_stock",
  description: "Returns the stock of an item.",
  parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
}];

/** A session's scripted model: a client tool call and a templated answer per turn, SESSION_TURNS turns. */
function sessionModel(): Record<string, unknown> {
  const steps: unknown[] = [];
  for (let i = 0; i < SESSION_TURNS; i++) {
    steps.push({ toolCalls: [{ name: "check_stock", arguments: { item: i % 2 ? "axe" : "sword" } }] });
    steps.push({ template: "Stock: {toolOutput}" });
  }
  return { type: "scripted", steps };
}

/** NPC `n`'s scripted model: a world write and a client tool call, then a line, NPC_TALKS talks. */
function npcModel(n: number): Record<string, unknown> {
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
}

/** `npc/create` params of NPC `n`: a blacksmith in the town with a client tool, allowed to write gold and log. */
function npcCreateParams(name: string, n: number): Record<string, unknown> {
  return {
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
  };
}

/** The output of a tool call the bridge sends (`tool/call` params' `call`). */
function toolOutput(call: Record<string, unknown>): Record<string, unknown> {
  return call.name === "check_stock"
    ? { item: (call.arguments as Record<string, unknown>).item ?? "sword", stock: 3, price: 45 }
    : { item: "sword", stock: 2 };
}

/** How the process ended: its exit code (null: it did not exit after shutdown) and its stderr. */
interface Exit {
  code: number | null;
  stderr: string;
}

/** The RSS figures the flatness check computed. */
interface RssThirds {
  firstThird: number;
  lastThird: number;
}

/** One soak run: the bridge process, the traffic it is sent and what came back. */
class SoakRun {
  readonly failures: string[] = [];
  readonly pending = new Map<Id, Pending>();
  readonly answered = new Set<Id>();
  readonly errors: Record<string, number> = {};
  readonly notifications: Record<string, number> = {};
  nextId = 1;
  requests = 0;
  responses = 0;
  duplicates = 0;
  unknownIds = 0;
  turns = 0;
  toolCalls = 0;
  recycled = 0;
  stopping = false;
  outBuffer: string[] = [];
  flushing: Promise<void> | null = null;
  /** RSS samples (kB) and when they were taken (seconds into the load phase). */
  readonly curve: number[] = [];
  readonly times: number[] = [];
  started = 0;
  readonly bridge: BridgeProcess;

  constructor(readonly log: (text: string) => void) {
    // The tests' process harness; lines are handled as they arrive and not kept (long runs).
    this.bridge = new BridgeProcess(["--tool-timeout", "10"], {
      discard: true,
      onLine: (line) => {
        try {
          this.onMessage(JSON.parse(line));
        } catch (error) {
          this.failures.push(`bad output line (${String(error)}): ${line.slice(0, 200)}`);
        }
      },
    });
  }

  // ---- stdin: requests, batched per tick ----

  /** Batches writes per tick (like a game engine's frame). */
  async flush(): Promise<void> {
    while (this.outBuffer.length > 0) {
      const text = this.outBuffer.join("");
      this.outBuffer = [];
      await this.bridge.write(encoder.encode(text));
    }
    this.flushing = null;
  }

  sendLine(line: string): void {
    this.outBuffer.push(line + "\n");
    this.flushing ??= Promise.resolve().then(() => this.flush());
  }

  request(method: string, params: Record<string, unknown>, kind: string, onResult?: Pending["onResult"]): Id {
    const id = this.nextId++;
    this.requests++;
    this.pending.set(id, { kind, onResult });
    this.sendLine(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return id;
  }

  // ---- stdout: one message per line ----

  onMessage(m: Record<string, unknown>): void {
    if (typeof m.method === "string") {
      if (m.method === "tool/call") {
        this.toolCalls++;
        const call = (m.params as Record<string, Record<string, unknown>>).call;
        this.sendLine(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { output: toolOutput(call) } }));
      } else this.notifications[m.method] = (this.notifications[m.method] ?? 0) + 1;
      return;
    }
    this.onResponse(m);
  }

  /** Matches a response to its request: each answered exactly once, errors counted by request kind. */
  onResponse(m: Record<string, unknown>): void {
    const id = m.id as Id;
    this.responses++;
    if (this.answered.has(id)) {
      this.duplicates++;
      this.failures.push(`duplicate response to ${id}`);
      return;
    }
    const p = this.pending.get(id);
    if (!p) {
      this.unknownIds++;
      this.failures.push(`response to unknown id ${JSON.stringify(m.id)}`);
      return;
    }
    this.pending.delete(id);
    this.answered.add(id);
    if ("error" in m) {
      const code = String(((m.error as Record<string, unknown>).data as Record<string, unknown>)?.code);
      const key = `${p.kind}:${code}`;
      this.errors[key] = (this.errors[key] ?? 0) + 1;
    }
    p.onResult?.(m);
  }

  // ---- set-up: a world with subscriptions ----

  setUpWorld(): void {
    this.request("initialize", { client: { name: "soak" }, protocolVersion: "1.0" }, "setup");
    this.request(
      "world/create",
      { world: "town", state: { gold: 100, log: "", stock: { sword: 3, axe: 1 } } },
      "setup",
    );
    for (const path of ["", "gold", "stock", "log"]) {
      this.request("world/subscribe", { world: "town", path }, "setup");
    }
  }

  // ---- traffic: sessions, NPCs and the client's world writes ----

  /** A session with a client tool, SESSION_TURNS turns per life, two turns in flight; then deleted and made again. */
  startSession(name: string): void {
    let sent = 0;
    let done = 0;
    const turn = () => {
      if (this.stopping || sent >= SESSION_TURNS) return;
      sent++;
      this.request(
        "session/respond",
        { session: name, prompt: `How many? (${sent})`, stream: sent % 3 === 0 },
        "respond",
        () => {
          this.turns++;
          done++;
          if (done === SESSION_TURNS) recycle();
          else turn();
        },
      );
    };
    const recycle = () => {
      if (this.stopping) return;
      this.recycled++;
      this.request("session/delete", { session: name }, "delete");
      create();
    };
    const create = () => {
      sent = 0;
      done = 0;
      this.request("session/create", {
        session: name,
        instructions: "You run the shop.",
        tools: SESSION_TOOLS,
        model: sessionModel(),
      }, "create");
      turn();
      turn(); // pipelined: two turns in flight
    };
    create();
  }

  /** An NPC with a client tool that writes the world through update_world_state; saved, unloaded and loaded again. */
  startNpc(name: string, n: number): void {
    let sent = 0;
    let done = 0;
    const talk = () => {
      if (this.stopping || sent >= NPC_TALKS) return;
      sent++;
      this.request(
        "npc/talk",
        { npc: name, line: `Got swords? (${sent})`, stream: sent % 2 === 0 },
        "talk",
        () => {
          this.turns++;
          done++;
          if (done === NPC_TALKS) recycle();
          else talk();
        },
      );
    };
    const recycle = () => {
      if (this.stopping) return;
      this.recycled++;
      // Save, then unload and load again (the save answers before the delete is sent).
      this.request("npc/state", { npc: name }, "state", () => {
        if (this.stopping) return;
        this.request("npc/delete", { npc: name }, "delete");
        create();
      });
    };
    const create = () => {
      sent = 0;
      done = 0;
      this.request("npc/create", npcCreateParams(name, n), "npc/create");
      talk();
    };
    create();
  }

  /**
   * Every 50 ms the client writes the world too (a set, a merge and a get), and churns: a decision and a
   * generation with a schema not used lately, and a world that lives for one tick with a subscription.
   */
  startWorldWriter(): ReturnType<typeof setInterval> {
    let tick = 0;
    return setInterval(() => {
      if (this.stopping) return;
      tick++;
      this.request("world/set", { world: "town", path: "log", value: `tick ${tick}` }, "world");
      this.request(
        "world/merge",
        { world: "town", patch: { stock: { sword: tick % 5, axe: null } } },
        "world",
      );
      this.request("world/get", { world: "town", path: "gold" }, "world");
      this.churn(tick);
    }, 50);
  }

  /** One tick of churn: new schemas (rotating through SCHEMA_ROTATION) and a short-lived world. */
  churn(tick: number): void {
    const n = tick % SCHEMA_ROTATION;
    const options = [`attack${n}`, `flee${n}`];
    this.request("decision/decide", {
      situation: "A wolf blocks the road.",
      actor: { name: "Snik", role: "a goblin scout" },
      options,
      model: {
        type: "scripted",
        steps: [{ json: { reasoning: "It is hungry.", choice: options[1], confidence: 60 } }],
      },
    }, "decide");
    const field = `rumor${n}`;
    this.request("content/generate", {
      prompt: "A rumor.",
      schema: { type: "object", properties: { [field]: { type: "string" } }, required: [field] },
      model: { type: "scripted", steps: [{ json: { [field]: "The mill is haunted." } }] },
    }, "content");
    const world = `camp${tick}`;
    this.request("world/create", { world, state: { fire: false } }, "world");
    this.request("world/subscribe", { world, path: "fire" }, "world");
    this.request("world/set", { world, path: "fire", value: true }, "world");
    this.request("world/delete", { world }, "world");
  }

  // ---- the load phase, with RSS samples ----

  sampleRss(): number | null {
    const kb = this.bridge.rssKb();
    if (kb !== null) {
      this.curve.push(kb);
      this.times.push((Date.now() - this.started) / 1000);
    }
    return kb;
  }

  /** Writes the world and samples RSS for `options.seconds`, then stops the traffic; resolves with how long it ran. */
  async load(options: SoakOptions): Promise<number> {
    const worldWriter = this.startWorldWriter();
    this.started = Date.now();
    const sampler = setInterval(() => {
      const kb = this.sampleRss();
      this.log(
        `${
          Math.round((Date.now() - this.started) / 1000)
        } s: ${this.turns} turns, ${this.requests} requests, ` +
          `${this.pending.size} in flight, RSS ${kb === null ? "?" : mb(kb)} MB`,
      );
    }, options.sampleSeconds * 1000);
    await new Promise((r) => setTimeout(r, options.seconds * 1000));
    this.stopping = true;
    clearInterval(worldWriter);
    clearInterval(sampler);
    this.sampleRss();
    return (Date.now() - this.started) / 1000;
  }

  // ---- drain and shut down ----

  /** Waits (at most 30 s) for every request still in flight to be answered; resolves with how many were not. */
  async drain(): Promise<number> {
    const deadline = Date.now() + 30_000;
    while (this.pending.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const lost = this.pending.size;
    for (const [id, p] of [...this.pending].slice(0, 10)) {
      this.failures.push(`no response to ${id} (${p.kind})`);
    }
    return lost;
  }

  /** After the drain, the bridge holds only the shared world, with the 4 subscriptions made at set-up. */
  async checkWorlds(): Promise<void> {
    const listed = await new Promise<Record<string, unknown>>((resolve) =>
      this.request("world/list", {}, "list", resolve)
    );
    if (this.flushing) await this.flushing;
    type Listed = { worlds?: { world: string; subscriptions: { path: string }[] }[] };
    const worlds = ((listed.result ?? {}) as Listed).worlds;
    const left = JSON.stringify(worlds?.map((w) => [w.world, w.subscriptions.map((s) => s.path)]));
    const expected = JSON.stringify([["town", ["", "gold", "stock", "log"]]]);
    if (left !== expected) this.failures.push(`worlds left after the run: ${left}`);
  }

  /** Sends `shutdown`, closes stdin and waits for the process to exit. */
  async shutDown(): Promise<Exit> {
    this.request("shutdown", {}, "shutdown");
    if (this.flushing) await this.flushing;
    await this.bridge.closeInput();
    let code: number | null = null;
    try {
      code = await this.bridge.exit(15_000);
    } catch {
      this.failures.push("the bridge did not exit after shutdown");
    }
    return { code, stderr: this.bridge.stderr };
  }

  // ---- checks ----

  /** The process exits 0 with nothing on stderr, and no request got an error. */
  checkExit(exit: Exit): void {
    if (exit.code !== 0) this.failures.push(`exit code ${exit.code}`);
    if (exit.stderr.trim() !== "") this.failures.push(`stderr: ${exit.stderr.slice(0, 1000)}`);
    for (const k of Object.keys(this.errors)) this.failures.push(`error responses ${k}: ${this.errors[k]}`);
  }

  /** RSS: compares the first and the last third of the samples after the warm-up. */
  checkRss(options: SoakOptions): RssThirds {
    const warmup = options.warmupSeconds ?? options.seconds / 6;
    const steady = this.curve.filter((_, i) => this.times[i] >= warmup);
    const third = Math.max(1, Math.floor(steady.length / 3));
    const firstThird = mean(steady.slice(0, third));
    const lastThird = mean(steady.slice(-third));
    const growthMb = (lastThird - firstThird) / 1024;
    if (growthMb > options.maxGrowthMb) {
      this.failures.push(`RSS grew by ${growthMb.toFixed(1)} MB (limit ${options.maxGrowthMb} MB)`);
    }
    return { firstThird, lastThird };
  }

  // ---- report ----

  report(
    outcome: { loadSeconds: number; lost: number; exit: Exit; rss: RssThirds },
  ): SoakReport {
    const { loadSeconds, rss } = outcome;
    const curve = this.curve;
    return {
      seconds: Math.round(loadSeconds * 10) / 10,
      requests: this.requests,
      responses: this.responses,
      errors: this.errors,
      lost: outcome.lost,
      duplicates: this.duplicates,
      unknownIds: this.unknownIds,
      turns: this.turns,
      turnsPerSecond: Math.round(this.turns / loadSeconds),
      toolCalls: this.toolCalls,
      notifications: this.notifications,
      recycled: this.recycled,
      rss: {
        startMb: mb(curve[0] ?? 0),
        endMb: mb(curve[curve.length - 1] ?? 0),
        peakMb: mb(Math.max(...curve)),
        firstThirdMb: mb(rss.firstThird),
        lastThirdMb: mb(rss.lastThird),
        curveMb: curve.map(mb),
      },
      exitCode: outcome.exit.code,
      stderr: outcome.exit.stderr,
      failures: this.failures,
    };
  }
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
