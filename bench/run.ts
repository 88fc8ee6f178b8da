// deno-lint-ignore-file no-console -- a benchmark script prints its report on stdout
/**
 * Throughput benchmark of the stdio bridge against a raw floor (bench/floor.ts), both driven the same way:
 * pipelined request lines with a bounded window of outstanding requests, counting responses.
 *
 *   deno task bench            # 20,000 pings and 20,000 scripted turns over 16 sessions
 *   deno task bench -- --n 5000
 *
 * Targets (issue #2): pings ≥ 0.6 × floor throughput, scripted turns ≥ 0.25 × floor.
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: { n: { type: "string", default: "20000" }, window: { type: "string", default: "2048" } },
});
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

/** User + system CPU seconds of a process, from /proc (Linux); NaN elsewhere. */
function cpuSeconds(pid: number): number {
  try {
    const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

async function drive(args: string[], setup: string[], lines: string[]): Promise<Run> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let received = 0;
  let errors = 0;
  let wake = null as (() => void) | null;
  const expected = setup.length + lines.length;
  const reading = (async () => {
    let rest = "";
    for await (const chunk of child.stdout) {
      const text = rest + decoder.decode(chunk, { stream: true });
      const parts = text.split("\n");
      rest = parts.pop() ?? "";
      for (const p of parts) {
        if (p === "") continue;
        if (p.includes('"error"')) errors++;
        if (p.includes('"id"') && !p.includes('"method"')) received++;
      }
      wake?.();
      if (received >= expected) break;
    }
  })();
  for (const s of setup) await writer.write(encoder.encode(s + "\n"));
  while (received < setup.length) await new Promise<void>((r) => wake = r);
  const start = performance.now();
  const cpuStart = cpuSeconds(child.pid);
  let sent = 0;
  while (sent < lines.length) {
    const room = WINDOW - (sent - (received - setup.length));
    if (room <= 0) {
      await new Promise<void>((r) => wake = r);
      continue;
    }
    const batch = lines.slice(sent, sent + Math.min(room, 512));
    sent += batch.length;
    await writer.write(encoder.encode(batch.join("\n") + "\n"));
  }
  while (received < expected) await new Promise<void>((r) => wake = r);
  const seconds = (performance.now() - start) / 1000;
  const cpu = cpuSeconds(child.pid) - cpuStart;
  await writer.close();
  await reading;
  await child.status;
  return { seconds, perSecond: lines.length / seconds, perCpuSecond: lines.length / cpu, errors };
}

const bridge = ["run", "--allow-read", "--allow-env", "--allow-ffi", "cli.ts", "stdio"];
const floor = ["run", "bench/floor.ts"];
const pings = Array.from({ length: N }, (_, i) => JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "ping" }));
const sessionSetup = Array.from({ length: SESSIONS }, (_, s) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: `c${s}`,
    method: "session/create",
    params: { session: `s${s}`, model: { type: "scripted", fallback: { text: "Hmph. Move along.", chunks: 1 } } },
  }));
const turns = Array.from({ length: N }, (_, i) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: i + 1,
    method: "session/respond",
    params: { session: `s${i % SESSIONS}`, prompt: "Open the gate." },
  }));

function report(name: string, run: Run, base: Run): void {
  const ratio = run.perSecond / base.perSecond;
  const cpuRatio = run.perCpuSecond / base.perCpuSecond;
  console.log(
    `${name.padEnd(16)} bridge ${run.perSecond.toFixed(0).padStart(7)}/s  floor ${
      base.perSecond.toFixed(0).padStart(7)
    }/s  ratio ${ratio.toFixed(2)}  | per CPU-second: bridge ${run.perCpuSecond.toFixed(0)} floor ${
      base.perCpuSecond.toFixed(0)
    } ratio ${cpuRatio.toFixed(2)}  (errors ${run.errors})`,
  );
}

// Warm up the module cache once so compile time is not measured.
await drive(bridge, [], pings.slice(0, 10));
await drive(floor, [], pings.slice(0, 10));
// One ping as setup: process start-up is not part of the measurement.
const warm = [JSON.stringify({ jsonrpc: "2.0", id: "warm", method: "ping" })];
const floorPings = await drive(floor, warm, pings);
const bridgePings = await drive(bridge, warm, pings);
report(`${N} pings`, bridgePings, floorPings);
const floorTurns = await drive(floor, sessionSetup, turns);
const bridgeTurns = await drive(bridge, sessionSetup, turns);
report(`${N} turns/16 s`, bridgeTurns, floorTurns);
