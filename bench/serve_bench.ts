// deno-lint-ignore-file no-console -- a benchmark script prints its report on stdout
/**
 * Load benchmark of `oam serve`: N concurrent clients, each sending streaming requests back to back, on the
 * scripted model (every answer streams the same text in the same number of deltas) — requests/s, p50/p99
 * latency (request sent → last byte), and the serving process's RSS — next to the same workload over stdio
 * (N sessions on one `oam stdio`, `session/respond` with `stream: true`) and over the WebSocket bridge
 * (N connections to `/rpc`, one session each).
 *
 *   deno run -A bench/serve_bench.ts                       # 16 clients, 4000 requests per transport
 *   deno run -A bench/serve_bench.ts --clients 64 --requests 8000
 *
 * The client side (fetch and SSE parsing, or line parsing) runs in this process on the same machine, so the
 * numbers are what one machine does serving and driving itself, not the server alone.
 */
import { parseArgs } from "node:util";
import { cpuSeconds } from "./proc.ts";

const { values } = parseArgs({
  // `deno task <name> -- <flags>` passes the `--` through; there are no positional arguments.
  args: Deno.args.filter((a) => a !== "--"),
  options: {
    clients: { type: "string", default: "16" },
    requests: { type: "string", default: "4000" },
    warm: { type: "string", default: "400" },
    chunks: { type: "string", default: "8" },
  },
});
const CLIENTS = Number(values.clients);
const REQUESTS = Number(values.requests);
const WARM = Number(values.warm);
const CHUNKS = Number(values.chunks);
const root = new URL("..", import.meta.url).pathname;
const ANSWER = "The north gate is barred until dawn; come back when the bell rings twice, traveller.";

/** Resident and peak resident memory of a process (MiB), from /proc (Linux; NaN elsewhere). */
function memory(pid: number): { rss: number; peak: number } {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
  } catch {
    return { rss: NaN, peak: NaN };
  }
}

interface Result {
  requests: number;
  seconds: number;
  latencies: number[];
  rss: number;
  peak: number;
  cpu: number;
  /** Requests answered 429 (queue full): told to retry, not lost. */
  rejected: number;
  /** Requests neither answered in full nor rejected. */
  errors: number;
}

/** How one request ended. */
type Outcome = "ok" | "rejected" | "error";

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/**
 * Runs `count` requests with `CLIENTS` concurrent loops of `one()`, each request timed; `pid` is the server
 * process measured.
 */
async function load(pid: number, count: number, one: (client: number) => Promise<Outcome>): Promise<Result> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let rejected = 0;
  const cpuStart = cpuSeconds(pid);
  const start = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
    while (next < count) {
      next++;
      const t = performance.now();
      const outcome = await one(client);
      if (outcome === "ok") latencies.push(performance.now() - t);
      else if (outcome === "rejected") rejected++;
      else errors++;
    }
  }));
  const seconds = (performance.now() - start) / 1000;
  const { rss, peak } = memory(pid);
  return {
    requests: count,
    seconds,
    latencies,
    rss,
    peak,
    cpu: cpuSeconds(pid) - cpuStart,
    rejected,
    errors,
  };
}

function report(name: string, r: Result): void {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  const answered = r.requests - r.rejected - r.errors;
  console.log(
    `${name.padEnd(30)} ${(answered / r.seconds).toFixed(0).padStart(6)} req/s   p50 ${
      percentile(sorted, 0.5).toFixed(2).padStart(6)
    } ms   p99 ${percentile(sorted, 0.99).toFixed(2).padStart(7)} ms   RSS ${r.rss.toFixed(0)} MiB (peak ${
      r.peak.toFixed(0)
    })   server CPU ${(r.cpu / r.seconds * 100).toFixed(0)}%   429 ${r.rejected}   lost ${r.errors}`,
  );
}

const scriptDir = await Deno.makeTempDir({ prefix: "oam-serve-bench-" });
const scriptPath = `${scriptDir}/steps.json`;
await Deno.writeTextFile(
  scriptPath,
  JSON.stringify({ steps: [], fallback: { text: ANSWER, chunks: CHUNKS } }),
);

/** The pressure run's script: each answer takes PRESSURE_DELAY_MS, so slots stay taken and the queue fills. */
const PRESSURE_DELAY_MS = 5;
const slowScriptPath = `${scriptDir}/slow_steps.json`;
await Deno.writeTextFile(
  slowScriptPath,
  JSON.stringify({ steps: [], fallback: { text: ANSWER, chunks: CHUNKS, delayMs: PRESSURE_DELAY_MS } }),
);

function spawn(args: string[], script = scriptPath): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "cli.ts", ...args],
    cwd: root,
    env: { OAM_SCRIPT: script },
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
}

// --- HTTP: Chat Completions with stream: true ---------------------------------------------------------
async function startServe(
  args: string[],
  script = scriptPath,
): Promise<{ child: Deno.ChildProcess; port: number }> {
  const child = spawn(["serve", "--port", "0", "--log-level", "error", ...args], script);
  const reader = child.stdout.getReader();
  let banner = "";
  while (!banner.includes("Press Ctrl-C")) banner += new TextDecoder().decode((await reader.read()).value);
  reader.releaseLock();
  child.stdout.cancel();
  return { child, port: Number(/127\.0\.0\.1:(\d+)\/v1/.exec(banner)![1]) };
}

async function stopServe(child: Deno.ChildProcess): Promise<void> {
  child.kill("SIGTERM");
  await child.status;
}

function chatRequest(port: number): () => Promise<Outcome> {
  const body = JSON.stringify({
    model: "system",
    stream: true,
    messages: [{ role: "user", content: "Can I pass the north gate?" }],
  });
  return async () => {
    const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const text = await response.text();
    if (response.status === 429) return "rejected";
    return response.status === 200 && text.endsWith("data: [DONE]\n\n") && !text.includes('"error"')
      ? "ok"
      : "error";
  };
}

async function overHttp(): Promise<{ http: Result; ws: Result }> {
  const { child, port } = await startServe(["--max-concurrent", String(CLIENTS)]);
  const request = chatRequest(port);
  await load(child.pid, WARM, request);
  const http = await load(child.pid, REQUESTS, request);

  // The bridge protocol over WebSocket on the same server: one connection and one session per client.
  const sockets = await Promise.all(Array.from({ length: CLIENTS }, () => rpcSocket(port)));
  await Promise.all(sockets.map((s, i) => s.call("session/create", { session: `s${i}` })));
  const turn = (client: number) =>
    sockets[client].call("session/respond", { session: `s${client}`, prompt: "Can I pass?", stream: true });
  await load(child.pid, WARM, turn);
  const ws = await load(child.pid, REQUESTS, turn);
  for (const s of sockets) s.socket.close();
  await stopServe(child);
  return { http, ws };
}

/**
 * Under pressure: fewer slots than clients, a queue shorter than the excess, and answers that take time —
 * every request is answered in full or with 429, none lost or hung. (Latencies count the answered ones.)
 */
async function underPressure(): Promise<Result> {
  const slots = Math.max(1, Math.floor(CLIENTS / 8));
  const queue = Math.max(1, Math.floor(CLIENTS / 4));
  const { child, port } = await startServe(
    ["--max-concurrent", String(slots), "--max-queued", String(queue)],
    slowScriptPath,
  );
  const request = chatRequest(port);
  await load(child.pid, WARM, request);
  const result = await load(child.pid, REQUESTS, request);
  await stopServe(child);
  console.log(
    `(pressure: --max-concurrent ${slots} --max-queued ${queue} for ${CLIENTS} clients, ${PRESSURE_DELAY_MS} ms per answer)`,
  );
  return result;
}

/** A bridge connection over WebSocket with a tiny request/response helper. */
async function rpcSocket(port: number) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/rpc`);
  await new Promise((resolve) => socket.onopen = resolve);
  const pending = new Map<string, (outcome: Outcome) => void>();
  let id = 0;
  socket.onmessage = (event) => {
    const text = event.data as string;
    if (text.includes('"method"')) return; // a streamed event
    const m = JSON.parse(text);
    pending.get(m.id)?.("error" in m ? "error" : "ok");
    pending.delete(m.id);
  };
  return {
    socket,
    call(method: string, params: Record<string, unknown>): Promise<Outcome> {
      const rid = `r${++id}`;
      return new Promise<Outcome>((resolve) => {
        pending.set(rid, resolve);
        socket.send(JSON.stringify({ jsonrpc: "2.0", id: rid, method, params }));
      });
    },
  };
}

// --- stdio: one process, one session per client ---------------------------------------------------------
async function overStdio(): Promise<Result> {
  const child = spawn(["stdio"]);
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const pending = new Map<string, (outcome: Outcome) => void>();
  const reading = (async () => {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const chunk of child.stdout) {
      const lines = (partial + decoder.decode(chunk, { stream: true })).split("\n");
      partial = lines.pop()!;
      for (const line of lines) {
        if (line.includes('"method"')) continue; // a streamed event
        const m = JSON.parse(line);
        pending.get(m.id)?.("error" in m ? "error" : "ok");
        pending.delete(m.id);
      }
    }
  })();
  let id = 0;
  const call = (method: string, params: Record<string, unknown>) => {
    const rid = `r${++id}`;
    return new Promise<Outcome>((resolve) => {
      pending.set(rid, resolve);
      writer.write(encoder.encode(JSON.stringify({ jsonrpc: "2.0", id: rid, method, params }) + "\n"));
    });
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => call("session/create", { session: `s${i}` })));
  const turn = (client: number) =>
    call("session/respond", { session: `s${client}`, prompt: "Can I pass?", stream: true });
  await load(child.pid, WARM, turn);
  const result = await load(child.pid, REQUESTS, turn);
  await writer.close();
  await reading;
  await child.status;
  return result;
}

console.log(
  `${CLIENTS} concurrent clients, ${REQUESTS} streamed requests each way (${WARM} untimed warm-up), ` +
    `answers of ${ANSWER.length} characters in ${CHUNKS} deltas`,
);
const { http, ws } = await overHttp();
report("HTTP chat completions", http);
report("WebSocket /rpc", ws);
report("stdio", await overStdio());
report("HTTP under pressure", await underPressure());
await Deno.remove(scriptDir, { recursive: true });
