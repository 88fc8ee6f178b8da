/**
 * The memory of a long-running GGUF bridge: the real `cli.ts stdio --model gguf:<path>` process driven over its
 * pipes, its resident set (VmRSS from /proc/<pid>/status, Linux only) read every few turns, in phases a game
 * meets when it keeps a bridge running for an hour:
 *
 * - `respond`: one session, `session/respond` turn after turn (reset every `--reset` turns: a GGUF session
 *   does not trim its history, so it would outgrow the context);
 * - `talk`: one NPC, `npc/talk` turn after turn (background compaction on, as by default);
 * - `sessions`: `session/create` → `session/respond` → `session/delete`, over and over;
 * - `npcs`: `npc/create` → `npc/talk` → `npc/delete`, over and over;
 * - `schemas`: one session, each turn with a response schema never seen before (grammars per schema).
 *
 *   deno task bench:gguf --rss                               # every phase, 300 turns each
 *   deno run --no-lock -A bench/gguf_bench.ts --rss --turns 600 --every 50 --phases respond,talk
 *
 * Prints, per phase, VmRSS in MiB every `--every` turns, then the growth from the phase's first reading to its
 * last and over its second half (a heap settling grows early and flattens; a leak keeps its slope).
 * @module
 */
// deno-lint-ignore-file no-console

/** A field of /proc/<pid>/status in MiB (e.g. VmRSS, VmHWM); NaN when unavailable. */
export function statusMiB(pid: number, field: string): number {
  try {
    const line = Deno.readTextFileSync(`/proc/${pid}/status`).split("\n").find((l) =>
      l.startsWith(`${field}:`)
    );
    return line ? Number(line.split(/\s+/)[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

type Json = Record<string, unknown>;

/** A JSON-RPC client over the bridge process's stdin/stdout (one message per line). */
class Bridge {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending = new Map<number, { resolve: (v: Json) => void }>();
  #next = 1;
  readonly done: Promise<void>;

  constructor(root: string, model: string) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-lock", "-A", `${root}cli.ts`, "stdio", "--model", model],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.done = this.#read();
  }

  get pid(): number {
    return this.#child.pid;
  }

  async #read(): Promise<void> {
    let buffer = "";
    const decoder = new TextDecoder();
    for await (const chunk of this.#child.stdout) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() === "") continue;
        const message = JSON.parse(line) as Json;
        const id = message.id as number | undefined;
        if (id === undefined || !("result" in message || "error" in message)) continue;
        this.#pending.get(id)?.resolve(message);
        this.#pending.delete(id);
      }
    }
  }

  /** Sends a request and waits for its response (the whole message: `result` or `error`). */
  async call(method: string, params: Json): Promise<Json> {
    const id = this.#next++;
    const reply = new Promise<Json>((resolve) => this.#pending.set(id, { resolve }));
    const line = JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n";
    await this.#writer.write(new TextEncoder().encode(line));
    return await reply;
  }

  async close(): Promise<void> {
    await this.call("shutdown", {}).catch(() => {});
    await this.#writer.close().catch(() => {});
    await this.#child.status;
    await this.done;
  }
}

const LINES = ["Hello", "What is the capital of France?", "Count to five.", "Thank you."];
const PERSONA = { name: "Gorm", role: "the village blacksmith", speakingStyle: "Short, plain sentences." };

/** One phase: turn `i` (the phase's own setup happens on turn 0). */
type Phase = (bridge: Bridge, i: number) => Promise<Json>;

function phases(reset: number): Record<string, Phase> {
  return {
    async respond(bridge, i) {
      if (i === 0) {
        await bridge.call("session/create", {
          session: "long",
          instructions: "You are a helpful assistant.",
          options: { sampling: "greedy", maxResponseTokens: 24 },
        });
      } else if (i % reset === 0) await bridge.call("session/reset", { session: "long" });
      return await bridge.call("session/respond", { session: "long", prompt: LINES[i % LINES.length] });
    },
    async talk(bridge, i) {
      if (i === 0) {
        await bridge.call("npc/create", {
          npc: "gorm",
          persona: PERSONA,
          options: { replyFormat: "text", toolChoice: "none", maximumResponseTokens: 24 },
        });
      }
      return await bridge.call("npc/talk", { npc: "gorm", line: LINES[i % LINES.length] });
    },
    async sessions(bridge, i) {
      const session = `s${i}`;
      await bridge.call("session/create", {
        session,
        instructions: "You are a helpful assistant.",
        options: { sampling: "greedy", maxResponseTokens: 24 },
      });
      const reply = await bridge.call("session/respond", { session, prompt: LINES[i % LINES.length] });
      await bridge.call("session/delete", { session });
      return reply;
    },
    async npcs(bridge, i) {
      const npc = `n${i}`;
      await bridge.call("npc/create", {
        npc,
        persona: PERSONA,
        options: { replyFormat: "text", toolChoice: "none", maximumResponseTokens: 24 },
      });
      const reply = await bridge.call("npc/talk", { npc, line: LINES[i % LINES.length] });
      await bridge.call("npc/delete", { npc });
      return reply;
    },
    async schemas(bridge, i) {
      if (i === 0) {
        await bridge.call("session/create", {
          session: "shapes",
          options: { sampling: "greedy", maxResponseTokens: 24 },
        });
      } else if (i % reset === 0) await bridge.call("session/reset", { session: "shapes" });
      const schema = {
        type: "object",
        properties: { [`k${i}`]: { type: "integer", minimum: 0, maximum: 9 } },
        required: [`k${i}`],
      };
      return await bridge.call("session/respond", { session: "shapes", prompt: "Hello", schema });
    },
  };
}

/** Options of {@link runRssBench}. */
export interface RssOptions {
  /** The `--model` value, e.g. `gguf:/path/tiny-chat.gguf`. */
  model: string;
  turns: number;
  every: number;
  /** Turns between resets of the long sessions. */
  reset: number;
  phases: string[];
}

/** Runs the phases in one bridge process and prints the readings. */
export async function runRssBench(options: RssOptions): Promise<void> {
  const root = new URL("..", import.meta.url).pathname;
  const bridge = new Bridge(root, options.model);
  const all = phases(options.reset);
  const ready = await bridge.call("model/availability", {});
  console.log(`bridge pid ${bridge.pid}; ${JSON.stringify(ready.result ?? ready.error)}`);
  console.log(`start: VmRSS ${statusMiB(bridge.pid, "VmRSS").toFixed(1)} MiB`);
  for (const name of options.phases) {
    const phase = all[name];
    if (phase === undefined) throw new Error(`unknown phase '${name}' (${Object.keys(all).join(", ")})`);
    const readings: Array<[number, number]> = [];
    const errors = new Map<string, number>();
    const started = performance.now();
    for (let i = 0; i < options.turns; i++) {
      const reply = await phase(bridge, i);
      if ("error" in reply) {
        const code = String((reply.error as Json).message ?? "").slice(0, 60);
        errors.set(code, (errors.get(code) ?? 0) + 1);
      }
      if (i % options.every === 0 || i === options.turns - 1) {
        const mib = statusMiB(bridge.pid, "VmRSS");
        readings.push([i + 1, mib]);
        console.log(`  ${name} turn ${i + 1}: VmRSS ${mib.toFixed(1)} MiB`);
      }
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(`${name}: ${options.turns} turns in ${seconds.toFixed(0)} s`);
    console.log(readings.map(([turn, mib]) => `${turn}:${mib.toFixed(1)}`).join("  "));
    const first = readings[0][1];
    const last = readings.at(-1)![1];
    const half = readings[Math.floor(readings.length / 2)];
    console.log(
      `growth ${(last - first).toFixed(1)} MiB over the phase; ${
        (last - half[1]).toFixed(1)
      } MiB from turn ` +
        `${half[0]} on; peak VmHWM ${statusMiB(bridge.pid, "VmHWM").toFixed(1)} MiB`,
    );
    if (errors.size > 0) console.log(`errors: ${JSON.stringify(Object.fromEntries(errors))}`);
  }
  await bridge.close();
}
