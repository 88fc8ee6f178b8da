/**
 * NPC throughput through the real stdio bridge process: 128 NPCs × 20 scripted talks, each turn writing the
 * shared world once (`update_world_state`, watched by one `world/subscribe`), all talks pipelined.
 *
 *   deno run -A bench/npc_bench.ts             # 128 NPCs × 20 talks
 *   deno run -A bench/npc_bench.ts --npcs 32 --talks 50 --stream
 *
 * Prints talks per second (wall clock and per CPU-second of the bridge) and the bridge's peak RSS (VmHWM from
 * /proc/<pid>/status, read after the last response; Linux only). Compaction is off (`compactAfterTurns: 0`)
 * so every script step is one talk step.
 */
// deno-lint-ignore-file no-console
import { parseArgs } from "node:util";
import { cpuSeconds, statusMiB } from "./proc.ts";

const { values } = parseArgs({
  // `deno task <name> -- <flags>` passes the `--` through; there are no positional arguments.
  args: Deno.args.filter((a) => a !== "--"),
  options: {
    npcs: { type: "string", default: "128" },
    talks: { type: "string", default: "20" },
    stream: { type: "boolean", default: false },
  },
});
const NPCS = Number(values.npcs);
const TALKS = Number(values.talks);
const STREAM = values.stream;
const root = new URL("..", import.meta.url).pathname;

function message(id: string | number, method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

function npcScript(n: number): Record<string, unknown> {
  const steps: unknown[] = [];
  for (let t = 1; t <= TALKS; t++) {
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
  return { type: "scripted", steps };
}

const visits: Record<string, number> = {};
for (let n = 0; n < NPCS; n++) visits[`npc${n}`] = 0;
const setup = [
  message("w", "world/create", { world: "town", state: { visits } }),
  message("s", "world/subscribe", { world: "town", path: "visits" }),
  ...Array.from({ length: NPCS }, (_, n) =>
    message(`c${n}`, "npc/create", {
      npc: `npc${n}`,
      persona: { name: `Villager ${n}`, role: "a villager" },
      world: "town",
      options: { worldWritable: [`visits.npc${n}`], worldReadable: [], compactAfterTurns: 0 },
      model: npcScript(n),
    })),
];
const talks: string[] = [];
for (let t = 0; t < TALKS; t++) {
  for (let n = 0; n < NPCS; n++) {
    talks.push(
      message(t * NPCS + n + 1, "npc/talk", { npc: `npc${n}`, line: "Hello again.", stream: STREAM }),
    );
  }
}

const child = new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "cli.ts", "stdio"],
  cwd: root,
  stdin: "piped",
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const writer = child.stdin.getWriter();
const encoder = new TextEncoder();
const decoder = new TextDecoder();
let responses = 0;
let errors = 0;
let notifications = 0;
let firstError = "";
let wake = null as (() => void) | null;
const expected = setup.length + talks.length;
const reading = (async () => {
  let rest = "";
  for await (const chunk of child.stdout) {
    const text = rest + decoder.decode(chunk, { stream: true });
    const parts = text.split("\n");
    rest = parts.pop() ?? "";
    for (const p of parts) {
      if (p === "") continue;
      if (p.startsWith('{"jsonrpc":"2.0","method"')) {
        notifications++;
        continue;
      }
      responses++;
      if (p.includes('"error"')) {
        errors++;
        if (firstError === "") firstError = p;
      }
    }
    wake?.();
  }
})();
const waitFor = async (n: number) => {
  while (responses < n) await new Promise<void>((r) => wake = r);
};

await writer.write(encoder.encode(setup.join("\n") + "\n"));
await waitFor(setup.length);
const rssBefore = statusMiB(child.pid, "VmRSS");
const start = performance.now();
const cpuStart = cpuSeconds(child.pid);
for (let i = 0; i < talks.length; i += 512) {
  await writer.write(encoder.encode(talks.slice(i, i + 512).join("\n") + "\n"));
}
await waitFor(expected);
const seconds = (performance.now() - start) / 1000;
const cpu = cpuSeconds(child.pid) - cpuStart;
const peak = statusMiB(child.pid, "VmHWM");
await writer.write(encoder.encode(message("bye", "shutdown", {}) + "\n"));
await writer.close();
await reading;
await child.status;

console.log(
  `${NPCS} NPCs × ${TALKS} talks = ${talks.length} talks (1 world write each${STREAM ? ", streamed" : ""})`,
);
console.log(
  `  ${(talks.length / seconds).toFixed(0)} talks/s wall (${seconds.toFixed(2)} s), ` +
    `${(talks.length / cpu).toFixed(0)} talks per bridge CPU-second`,
);
console.log(`  ${notifications} notifications (world/changed${STREAM ? " + npc/event" : ""})`);
console.log(`  bridge RSS after setup ${rssBefore.toFixed(1)} MiB, peak (VmHWM) ${peak.toFixed(1)} MiB`);
console.log(`  errors: ${errors}${firstError ? ` (first: ${firstError.slice(0, 200)})` : ""}`);
if (errors > 0) Deno.exit(1);
