/**
 * Every command whose `--model` takes `system` (the on-device model, over OAM_SCRIPT and OAM_MODEL) says so in
 * its --help, beside the other values the flag takes.
 */
import assert from "node:assert/strict";
import { CHAT_HELP } from "../../src/cli/chat.ts";
import { NPC_HELP } from "../../src/cli/npc.ts";
import { RESPOND_HELP } from "../../src/cli/respond.ts";
import { STDIO_HELP } from "../../src/cli/stdio.ts";

/** The --model entry of a help text: from its flag to the next option line. */
function modelEntry(help: string): string {
  const start = help.indexOf("--model <spec>");
  assert.ok(start >= 0, "no --model entry");
  const rest = help.slice(start);
  const next = rest.slice(1).search(/\n {2}-/);
  return next < 0 ? rest : rest.slice(0, next + 1);
}

Deno.test("oam chat, respond, npc and stdio --help: --model takes system, the on-device model over OAM_SCRIPT", () => {
  for (const [name, help] of Object.entries({ CHAT_HELP, RESPOND_HELP, NPC_HELP, STDIO_HELP })) {
    const entry = modelEntry(help).replace(/\s+/g, " ");
    assert.match(
      entry,
      /\bsystem for the on-device model even when OAM_SCRIPT or OAM_MODEL is set\b/,
      `${name}: ${entry}`,
    );
  }
});

Deno.test("oam stdio runs --model system on the on-device model although OAM_SCRIPT is set", async () => {
  const script = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(script, JSON.stringify([{ text: "scripted" }]));
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("../../cli.ts", import.meta.url).pathname, "stdio", "--model", "system"],
      env: { OAM_SCRIPT: script, OAM_FM_LIBRARY: "/nonexistent/libfm.so" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(
      new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"session/create","params":{}}\n'),
    );
    await writer.close();
    const { stdout, code } = await child.output();
    assert.equal(code, 0);
    const created = JSON.parse(new TextDecoder().decode(stdout).trim().split("\n")[0]);
    // The on-device model (unavailable here) was chosen, not the script.
    assert.match(created.result.warnings[0], /^The system model is unavailable/);
  } finally {
    await Deno.remove(script);
  }
});
