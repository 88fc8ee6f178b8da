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

import { Bridge, StdioTransport } from "../mod.ts";
import { statusMiB } from "./proc.ts";

type Json = Record<string, unknown>;

/** The bridge process, driven through the typed client; `call` answers `{result}` or `{error}`, never throws. */
class RssBridge {
  private constructor(readonly pid: number, readonly client: Bridge) {}

  /** Starts `cli.ts stdio --model <model>` and connects (the bridge answers once its model is loaded). */
  static async start(root: string, model: string): Promise<RssBridge> {
    const transport = new StdioTransport({
      command: [Deno.execPath(), "run", "--no-lock", "-A", `${root}cli.ts`, "stdio", "--model", model],
    });
    const client = await Bridge.connect(transport);
    return new RssBridge(transport.pid!, client);
  }

  /** Sends a request and waits for its response: its result, or its error's message. */
  call(method: string, params: Json): Promise<Json> {
    return this.client.request<unknown>(method, params).then(
      (result) => ({ result }),
      (error) => ({ error: { message: error instanceof Error ? error.message : String(error) } }),
    );
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

const LINES = ["Hello", "What is the capital of France?", "Count to five.", "Thank you."];
const PERSONA = { name: "Gorm", role: "the village blacksmith", speakingStyle: "Short, plain sentences." };

/** One phase: turn `i` (the phase's own setup happens on turn 0). */
type Phase = (bridge: RssBridge, i: number) => Promise<Json>;

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
  const bridge = await RssBridge.start(root, options.model);
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
