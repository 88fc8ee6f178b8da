// deno-lint-ignore-file no-console -- a benchmark script prints its report on stdout
/**
 * Throughput benchmark of the stdio bridge against a raw floor (bench/floor.ts), both driven the same way:
 * pipelined request lines with a bounded window of outstanding requests, counting responses.
 *
 *   deno task bench                     # 200,000 pings and 200,000 scripted turns over 16 sessions
 *   deno task bench -- --n 5000
 *   deno task bench -- --warm 2000       # a shorter untimed warm-up (JIT not yet settled)
 *
 * Both programs first get `--warm` untimed requests (default: as many as are measured), so what is measured is
 * steady state — what a game sees minutes into a session — rather than V8 still compiling the request path.
 * Each measurement alternates floor and bridge runs `--repeat` times and reports the medians.
 *
 * 200,000 by default: a 20,000-ping window lasts about 25 ms, so one garbage collection or JIT tier-up inside it
 * moved the ratio by up to ±30 %; ten times as many make the medians steady (about 30 s for the whole run).
 *
 * Targets (issue #2): pings ≥ 0.6 × floor throughput, scripted turns ≥ 0.25 × floor.
 *
 * Turns are also measured against a second floor that answers with the bridge's own result for a turn
 * (`bench/floor.ts --answer`, the "same bytes" line): the same parse-and-answer loop, writing as many bytes as
 * the bridge does, so the line shows the bridge's own cost apart from the cost of its answers' size.
 */
import { parseArgs } from "node:util";
import { cpuSeconds } from "./proc.ts";

const { values } = parseArgs({
  // `deno task <name> -- <flags>` passes the `--` through; there are no positional arguments.
  args: Deno.args.filter((a) => a !== "--"),
  options: {
    n: { type: "string", default: "200000" },
    window: { type: "string", default: "2048" },
    repeat: { type: "string", default: "7" },
    warm: { type: "string" },
  },
});
const REPEAT = Math.max(1, Number(values.repeat));
const N = Number(values.n);
const WINDOW = Number(values.window);
const SESSIONS = 16;
const root = new URL("..", import.meta.url).pathname;

interface Run {
  seconds: number;
  perSecond: number;
  /** Messages per CPU second of the serving process (user + system), robust on a busy machine. */
  perCpuSecond: number;
  errors: number;
}

/**
 * Counts a bridge's responses on its stdout (a notification or tool call is not a response) and the errors
 * among them. The counter must stay cheaper than what it measures (both processes share the machine's cores):
 * it counts lines on the bytes and only looks into a chunk's text when an error or a notification appears in it.
 */
class ResponseCounter {
  received = 0;
  errors = 0;
  #wake: (() => void) | null = null;
  readonly #decoder = new TextDecoder();

  /** Reads `stdout` until `expected` responses arrived (or it ends). */
  async read(stdout: ReadableStream<Uint8Array>, expected: number): Promise<void> {
    let partial = "";
    for await (const chunk of stdout) {
      let lines = 0;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      const text = partial + this.#decoder.decode(chunk, { stream: true });
      if (text.includes('"error"') || text.includes('"method"')) {
        const parts = text.split("\n");
        partial = parts.pop() ?? "";
        for (const p of parts) {
          if (p === "") continue;
          if (p.includes('"error"')) this.errors++;
          if (p.includes('"method"')) lines--;
        }
      } else {
        const nl = text.lastIndexOf("\n");
        partial = nl === -1 ? text : text.slice(nl + 1);
      }
      this.received += lines;
      this.#wake?.();
      if (this.received >= expected) break;
    }
  }

  /** Resolves at the next chunk of responses. */
  next(): Promise<void> {
    return new Promise<void>((r) => this.#wake = r);
  }

  /** Resolves when `count` responses in all have arrived. */
  async until(count: number): Promise<void> {
    while (this.received < count) await this.next();
  }
}

/**
 * Sends `lines` pipelined, with at most WINDOW requests outstanding, in writes of at most 512 lines; resolves
 * when all of them are answered.
 */
async function pipeline(
  writer: WritableStreamDefaultWriter<Uint8Array>,
  counter: ResponseCounter,
  lines: string[],
): Promise<void> {
  const encoder = new TextEncoder();
  const base = counter.received;
  let sent = 0;
  while (sent < lines.length) {
    const room = WINDOW - (sent - (counter.received - base));
    if (room <= 0) {
      await counter.next();
      continue;
    }
    const batch = lines.slice(sent, sent + Math.min(room, 512));
    sent += batch.length;
    await writer.write(encoder.encode(batch.join("\n") + "\n"));
  }
  await counter.until(base + lines.length);
}

/** Starts `deno <args>` in the repository with piped input and output. */
function startDeno(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
}

/**
 * Starts `args`, answers `setup` (in chunks of 200, below the per-session queue bound, each answered before the
 * next), then `warm` untimed and `lines` timed, both pipelined.
 */
async function drive(args: string[], setup: string[], warm: string[], lines: string[]): Promise<Run> {
  const child = startDeno(args);
  const writer = child.stdin.getWriter();
  const counter = new ResponseCounter();
  const reading = counter.read(child.stdout, setup.length + warm.length + lines.length);
  const encoder = new TextEncoder();
  for (let i = 0; i < setup.length; i += 200) {
    const chunk = setup.slice(i, i + 200);
    await writer.write(encoder.encode(chunk.join("\n") + "\n"));
    await counter.until(i + chunk.length);
  }
  await pipeline(writer, counter, warm);
  counter.errors = 0;
  const start = performance.now();
  const cpuStart = cpuSeconds(child.pid);
  await pipeline(writer, counter, lines);
  const seconds = (performance.now() - start) / 1000;
  const cpu = cpuSeconds(child.pid) - cpuStart;
  await writer.close();
  await reading;
  await child.status;
  return {
    seconds,
    perSecond: lines.length / seconds,
    perCpuSecond: lines.length / cpu,
    errors: counter.errors,
  };
}

const bridge = [
  "run",
  "--allow-read",
  "--allow-env",
  "--allow-ffi",
  "cli.ts",
  "stdio",
];
const floor = ["run", "bench/floor.ts"];
const pings = Array.from(
  { length: N },
  (_, i) => JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "ping" }),
);
const sessionSetup = Array.from({ length: SESSIONS }, (_, s) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: `c${s}`,
    method: "session/create",
    params: {
      session: `s${s}`,
      model: { type: "scripted", fallback: { text: "Hmph. Move along.", chunks: 1 } },
    },
  }));
const turns = Array.from({ length: N }, (_, i) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: i + 1,
    method: "session/respond",
    params: { session: `s${i % SESSIONS}`, prompt: "Open the gate." },
  }));

/**
 * Prints the medians of the bridge's and the floor's runs and their ratio, and the range of the ratios of the
 * paired runs (floor run i, then bridge run i): on a shared machine that range shows how far one run can be
 * trusted.
 */
function report(name: string, bridgeRuns: Run[], floorRuns: Run[]): void {
  const run = median(bridgeRuns);
  const base = median(floorRuns);
  const ratio = run.perSecond / base.perSecond;
  const cpuRatio = run.perCpuSecond / base.perCpuSecond;
  const paired = bridgeRuns.map((r, i) => r.perSecond / floorRuns[i].perSecond);
  console.log(
    `${name.padEnd(16)} bridge ${run.perSecond.toFixed(0).padStart(7)}/s  floor ${
      base.perSecond.toFixed(0).padStart(7)
    }/s  ratio ${ratio.toFixed(2)} (runs ${Math.min(...paired).toFixed(2)}–${
      Math.max(...paired).toFixed(2)
    })  | per CPU-second: bridge ${run.perCpuSecond.toFixed(0)} floor ${base.perCpuSecond.toFixed(0)} ratio ${
      cpuRatio.toFixed(2)
    }  (errors ${run.errors})`,
  );
}

/** The run with the median throughput. */
function median(runs: Run[]): Run {
  const sorted = [...runs].sort((a, b) => a.perSecond - b.perSecond);
  return sorted[Math.floor(sorted.length / 2)];
}

// Warm up the module cache once so compile time is not measured.
await drive(bridge, [], [], pings.slice(0, 10));
await drive(floor, [], [], pings.slice(0, 10));
/**
 * Runs floor and bridge alternately `REPEAT` times; reports the median of each and the paired ratios' range.
 * With `sameBytes`, a third program runs in each round, and the bridge is also reported against it.
 */
async function measure(
  name: string,
  traffic: { setup: string[]; warm: string[]; lines: string[] },
  sameBytes?: string[],
): Promise<void> {
  const { setup, warm, lines } = traffic;
  const bridgeRuns: Run[] = [];
  const floorRuns: Run[] = [];
  const sameBytesRuns: Run[] = [];
  for (let i = 0; i < REPEAT; i++) {
    floorRuns.push(await drive(floor, setup, warm, lines));
    if (sameBytes) sameBytesRuns.push(await drive(sameBytes, setup, warm, lines));
    bridgeRuns.push(await drive(bridge, setup, warm, lines));
  }
  report(name, bridgeRuns, floorRuns);
  if (sameBytes) report("  same bytes", bridgeRuns, sameBytesRuns);
}

/**
 * The result the bridge answers a benchmark turn with (one turn on a fresh bridge), so the floor can write the
 * same bytes.
 */
async function turnAnswer(): Promise<unknown> {
  const input = [sessionSetup[0], turns[0]].join("\n") + "\n";
  const child = startDeno(bridge);
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const output = new TextDecoder().decode((await child.output()).stdout);
  const answer = JSON.parse(output.trim().split("\n")[1]);
  if (answer.result === undefined) throw new Error(`The bridge did not answer the benchmark turn: ${output}`);
  return answer.result;
}

// Untimed warm-up, the same for bridge and floor: the measured traffic itself (same methods, same 16 sessions),
// so process start-up and V8's compilation of the request path are not measured — steady state is what a
// game session sees.
const WARM = Number(values.warm ?? N);
const warmPings = Array.from(
  { length: WARM },
  (_, i) => JSON.stringify({ jsonrpc: "2.0", id: `w${i}`, method: "ping" }),
);
const warmTurns = Array.from({ length: WARM }, (_, i) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: `w${i}`,
    method: "session/respond",
    params: { session: `s${i % SESSIONS}`, prompt: "Open the gate." },
  }));
console.log(
  `median of ${REPEAT} runs each, window ${WINDOW} outstanding requests, ${WARM} untimed warm-up requests`,
);
await measure(`${N} pings`, { setup: [], warm: warmPings, lines: pings });
// The floor answers `{}`; a turn's answer is about ten times as long. The second floor writes the bridge's own
// answer bytes, to show how much of the gap is writing (and the driver reading) them.
const sameBytes = [...floor, "--answer", JSON.stringify(await turnAnswer())];
await measure(`${N} turns/16 s`, { setup: sessionSetup, warm: warmTurns, lines: turns }, sameBytes);
