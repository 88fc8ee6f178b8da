/**
 * stdout whose reader goes away (`oam respond … | head -c 10`): the command ends quietly, as Unix tools do,
 * with exit 0 and nothing on stderr (no stack trace, no "Broken pipe" error): the reader took what it wanted.
 * Each command runs as a real child whose stdout is closed after its first bytes, with more output to come
 * than a pipe holds, so its next write meets the closed pipe.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { childEnv, CLI, Fixtures } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());

/** About 1 MB of words: far more than a pipe holds, so writes go on after the reader has gone. */
const LONG = "word ".repeat(200_000);

/** Runs `oam <args>` with `input` on stdin, closes its stdout after the first bytes; its exit code and stderr. */
async function closedEarly(args: string[], input = ""): Promise<{ code: number; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "-A", CLI, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: childEnv({ NO_COLOR: "1" }),
    clearEnv: true,
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.getReader();
  const first = await reader.read();
  assert.ok(!first.done && first.value.length > 0, `oam ${args.join(" ")} wrote nothing`);
  // What `head -c 10` does once it has its bytes: it exits, and the pipe's read end is closed.
  await reader.cancel();
  const { code } = await child.status;
  return { code, stderr: await stderr };
}

Deno.test("respond, chat, npc and schema convert end quietly with exit 0 when stdout's reader is gone", async () => {
  const script = await fx.write("long.json", { steps: [], fallback: { text: LONG } });
  const persona = await fx.write("mira.json", {
    persona: { name: "Mira", role: "the innkeeper" },
    options: { replyFormat: "text" },
  });
  const properties: JsonObject = {};
  for (let i = 0; i < 15_000; i++) properties[`property_with_a_long_name_${i}`] = { type: "string" };
  const schema = await fx.write("wide.json", { type: "object", properties });
  const runs: [string[], string][] = [
    [["respond", "--script", script, "--no-stdin", "Talk."], ""],
    [["respond", "--script", script, "--no-stdin", "--no-stream", "Talk."], ""],
    [["respond", "--script", script, "--no-stdin", "--events", "Talk."], ""],
    [["chat", "--script", script], "Talk.\nMore.\n"],
    [["npc", persona, "--script", script], "Talk.\nMore.\n"],
    [["schema", "convert", schema], ""],
  ];
  for (const [args, input] of runs) {
    assert.deepEqual(await closedEarly(args, input), { code: 0, stderr: "" }, `oam ${args.join(" ")}`);
  }
});
