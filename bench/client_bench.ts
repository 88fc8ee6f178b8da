// deno-lint-ignore-file no-console -- a benchmark script prints its report on stdout
/**
 * The typed client's in-process overhead: scripted NPC talks per second through `Bridge.open()` (the typed
 * client over the in-process transport: messages cross as values, copied or, when made fresh for them,
 * handed over, so that neither side shares objects with the other) against the same talks through
 * `BridgeEngine.call` (no transport), both with its `send` callback only counting notifications and with
 * it parsing them (what a script using `call` does to see its events and world changes). Same workload as
 * bench/npc_bench.ts, in this process: NPCs × talks, each talk one `update_world_state` tool round
 * (watched by one `world/subscribe`) and a structured reply, all talks pipelined.
 *
 *   deno run -A bench/client_bench.ts                    # 128 NPCs × 20 talks, 7 alternating repeats
 *   deno run -A bench/client_bench.ts --npcs 16 --talks 50 --stream
 *
 * Each run is a fresh process (so neither side pays for the other's garbage or JIT state) that builds the
 * engine, plays `--warmup` untimed rounds (default 3), then the measured round; the sides alternate
 * `--repeat` times. What is measured is steady state, as `deno task bench` measures it: a round of 2,560
 * talks lasts about 150 ms, and after a single warm-up round the last JIT tier-ups and collections still
 * fall inside it and move a side by several percent from run to run (`--warmup 1` shows that); more talks per
 * NPC (`--talks 60`) make the runs steadier still.
 * Reported: the medians (and the range) of talks per wall-clock second and per CPU second of the measuring
 * process (steadier on a shared machine; it includes the collector's helper threads), the client's
 * overhead relative to `BridgeEngine.call` (issue 12's bar: at most 10 %), and the machine's load average
 * before and after.
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { BridgeEngine } from "../engine.ts";
import { Bridge, type Npc, type ScriptStep } from "../mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    npcs: { type: "string", default: "128" },
    talks: { type: "string", default: "20" },
    repeat: { type: "string", default: "7" },
    stream: { type: "boolean", default: false },
    warmup: { type: "string", default: "3" },
    child: { type: "string" },
  },
});
const NPCS = Number(values.npcs);
const TALKS = Number(values.talks);
const WARMUP = Math.max(0, Number(values.warmup));
const REPEAT = Math.max(1, Number(values.repeat));
const STREAM = values.stream;

/** One talk per visit: a world write, then the reply (for the warm-up rounds and the measured one). */
function script(n: number): ScriptStep[] {
  const steps: ScriptStep[] = [];
  for (let t = 1; t <= (WARMUP + 1) * TALKS; t++) {
    steps.push({
      toolCalls: [{ name: "update_world_state", arguments: { path: `visits.npc${n}`, value: String(t) } }],
    });
    steps.push({
      json: {
        emotion: "neutral",
        line: `Visit ${t}, noted. Anything else?`,
        player_options: ["Yes.", "No.", "Maybe."],
        ends_conversation: false,
      },
    });
  }
  return steps;
}

const visits: Record<string, number> = {};
for (let n = 0; n < NPCS; n++) visits[`npc${n}`] = 0;
const npcParams = (n: number) => ({
  npc: `npc${n}`,
  persona: { name: `Villager ${n}`, role: "a villager" },
  world: "town",
  options: { worldWritable: [`visits.npc${n}`], worldReadable: [], compactAfterTurns: 0 },
  model: { type: "scripted" as const, steps: script(n) },
});

interface Run {
  perSecond: number;
  perCpuSecond: number;
}

function measure(count: number, start: number, cpuStart: NodeJS.CpuUsage): Run {
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  return { perSecond: count / seconds, perCpuSecond: count / ((cpu.user + cpu.system) / 1e6) };
}

/**
 * `BridgeEngine.call`; with `parse`, its `send` callback parses each notification (world changes, streamed
 * events), as a script must to use them (the typed client always does).
 */
async function direct(parse: boolean): Promise<Run> {
  let notifications = 0;
  const engine = new BridgeEngine({}, (line) => {
    if (parse && JSON.parse(line).method === undefined) throw new Error("not a notification");
    notifications++;
  });
  await engine.call("world/create", { world: "town", state: { visits } });
  await engine.call("world/subscribe", { world: "town", path: "visits" });
  for (let n = 0; n < NPCS; n++) await engine.call("npc/create", JSON.parse(JSON.stringify(npcParams(n))));
  let id = 0;
  const round = () => {
    const all: Promise<unknown>[] = [];
    for (let t = 0; t < TALKS; t++) {
      for (let n = 0; n < NPCS; n++) {
        all.push(engine.call("npc/talk", { npc: `npc${n}`, line: "Hello again.", stream: STREAM }, ++id));
      }
    }
    return Promise.all(all);
  };
  for (let w = 0; w < WARMUP; w++) await round();
  const start = performance.now();
  const cpu = process.cpuUsage();
  await round();
  const run = measure(NPCS * TALKS, start, cpu);
  await engine.shutdown();
  if (notifications < NPCS * TALKS) throw new Error(`only ${notifications} notifications`);
  return run;
}

async function client(): Promise<Run> {
  await using bridge = await Bridge.open({ onWarning: (w) => console.error(w) });
  let changes = 0;
  const world = await bridge.createWorld({ visits }, { world: "town" });
  await world.subscribe("visits", () => changes++);
  const npcs: Npc[] = [];
  for (let n = 0; n < NPCS; n++) {
    const { npc, ...rest } = npcParams(n);
    const { persona, ...options } = rest;
    npcs.push(await bridge.createNpc(persona, { ...options, npc }));
  }
  let deltas = 0;
  const onLine = STREAM ? () => deltas++ : undefined;
  const round = () => {
    const all: Promise<unknown>[] = [];
    for (let t = 0; t < TALKS; t++) {
      for (const npc of npcs) all.push(npc.talk("Hello again.", onLine ? { onLine } : {}));
    }
    return Promise.all(all);
  };
  for (let w = 0; w < WARMUP; w++) await round();
  const start = performance.now();
  const cpu = process.cpuUsage();
  await round();
  const run = measure(NPCS * TALKS, start, cpu);
  if (changes < NPCS * TALKS || (STREAM && deltas === 0)) throw new Error(`only ${changes} world changes`);
  return run;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs one measurement in a fresh process (no heap or JIT state shared between the two sides). */
type Side = "direct" | "parsed" | "client";

async function inChild(side: Side): Promise<Run> {
  const args = ["run", "-A", new URL(import.meta.url).pathname, "--child", side, "--npcs", String(NPCS)];
  args.push("--talks", String(TALKS), "--warmup", String(WARMUP), ...(STREAM ? ["--stream"] : []));
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "inherit" }).output();
  if (!out.success) throw new Error(`the ${side} run failed`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

if (values.child) {
  const side = values.child;
  console.log(JSON.stringify(side === "client" ? await client() : await direct(side === "parsed")));
  Deno.exit(0);
}
const loadAverage = () => Deno.loadavg()[0].toFixed(2);
const loadBefore = loadAverage();
const runs: Record<Side, Run[]> = { direct: [], parsed: [], client: [] };
const SIDES: Side[] = ["direct", "parsed", "client"];
for (let r = 0; r < REPEAT; r++) {
  // Rotate the order: no side always runs first.
  for (let i = 0; i < SIDES.length; i++) {
    const side = SIDES[(i + r) % SIDES.length];
    runs[side].push(await inChild(side));
  }
}
const range = (xs: number[]) => `[${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}]`;
const report = (name: string, xs: Run[]) => {
  const walls = xs.map((x) => x.perSecond);
  const cpus = xs.map((x) => x.perCpuSecond);
  const wall = median(walls);
  const cpu = median(cpus);
  console.log(
    `  ${name.padEnd(22)} ${wall.toFixed(0).padStart(7)} talks/s wall ${range(walls).padEnd(13)} ${
      cpu.toFixed(0).padStart(7)
    } talks/CPU-s ${range(cpus)}`,
  );
  return { wall, cpu };
};
console.log(
  `${NPCS} NPCs × ${TALKS} talks = ${NPCS * TALKS} talks per run (1 world write each${
    STREAM ? ", streamed" : ""
  }; ${WARMUP} warm-up round${
    WARMUP === 1 ? "" : "s"
  }), median [range] of ${REPEAT} runs each, one process per run; load average ${loadBefore} → ${loadAverage()}`,
);
const d = report("BridgeEngine.call", runs.direct);
const p = report("  + parsing its events", runs.parsed);
const c = report("typed client (in-proc)", runs.client);
const overhead = (base: { wall: number; cpu: number }) =>
  `${((base.wall / c.wall - 1) * 100).toFixed(1)} % wall, ${((base.cpu / c.cpu - 1) * 100).toFixed(1)} % CPU`;
console.log(`  client overhead (time per talk) vs call: ${overhead(d)}; vs call + parsing: ${overhead(p)}`);
