/**
 * stdout that cannot be written (a full disk, not a closed pipe) ends `oam chat` and `oam npc` with one error and
 * exit 1, as `oam respond`: they used to report the failed write of every turn and go on to exit 0.
 */
import assert from "node:assert/strict";
import { childEnv, CLI } from "./cli_helper.ts";

const root = new URL("../../", import.meta.url).pathname;

/** Runs `oam <args>` with `input` on stdin and stdout on /dev/full; its exit code and stderr. */
async function toFullDisk(args: string[], input: string): Promise<[number, string]> {
  const argv = [Deno.execPath(), "run", "--quiet", "-A", CLI, ...args].map((w) => `'${w}'`).join(" ");
  const child = new Deno.Command("sh", {
    args: ["-c", `exec ${argv} >/dev/full`],
    cwd: root,
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
    env: childEnv({ NO_COLOR: "1" }),
    clearEnv: true,
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  return [out.code, new TextDecoder().decode(out.stderr)];
}

const FULL = "Error: No space left on device (os error 28) [failure]\n";

Deno.test({
  name: "oam chat and oam npc stop at the first write stdout refuses: one error, exit 1",
  ignore: Deno.build.os !== "linux", // /dev/full
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      const script = `${dir}/steps.json`;
      await Deno.writeTextFile(script, JSON.stringify([{ text: "Hi there." }, { text: "Bye." }]));
      // A turn's streamed answer, and a command's output (/usage) after a turn.
      assert.deepEqual(await toFullDisk(["chat", "--script", script], "hello\nagain\n"), [1, FULL]);
      assert.deepEqual(await toFullDisk(["chat", "--script", script], "/usage\nhello\n"), [1, FULL]);
      const npc = ["npc", "personas/shopkeeper.jsonc", "--script", "personas/shopkeeper.steps.json"];
      assert.deepEqual(await toFullDisk(npc, "An ale, please.\nAnother!\n"), [1, FULL]);
      assert.deepEqual(await toFullDisk(npc, "/help\nAn ale, please.\n"), [1, FULL]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** Runs `sh -c <command>` in the repository with a clean environment; stdout and stderr ignored. */
async function shell(command: string): Promise<number> {
  const out = await new Deno.Command("sh", {
    args: ["-c", command],
    cwd: root,
    stdout: "null",
    stderr: "null",
    env: childEnv({ NO_COLOR: "1" }),
    clearEnv: true,
  }).output();
  return out.code;
}

Deno.test("oam chat stops reading input once stdout's reader is gone (| head): no turns nobody reads", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // Each answer takes 100 ms, so `head` has gone before the next one is written; 20 lines are waiting.
    const script = `${dir}/steps.json`;
    await Deno.writeTextFile(
      script,
      JSON.stringify({ steps: [], fallback: { text: "Hi there.", delayMs: 100 } }),
    );
    await Deno.writeTextFile(`${dir}/in.txt`, "hello\n".repeat(20));
    const deno = `'${Deno.execPath()}' run --quiet -A '${CLI}'`;
    const saved = `${dir}/chat.json`;
    const chat =
      `${deno} chat --script '${script}' --save-transcript '${saved}' < '${dir}/in.txt' | head -c 1`;
    assert.equal(await shell(chat), 0);
    const entries = (JSON.parse(await Deno.readTextFile(saved)).transcript.transcript.entries) as {
      role: string;
    }[];
    const prompts = entries.filter((e) => e.role === "user").length;
    assert.ok(prompts >= 1 && prompts <= 3, `${prompts} of 20 turns ran after stdout's reader was gone`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
