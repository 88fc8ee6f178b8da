/**
 * The examples of the commands' help texts run as written, in a folder with the files they name (written
 * here as a newcomer would, from the help), by `sh` with `oam` on the PATH and a scripted model: a chain of
 * examples (a turn that pauses for a client tool, then its resume) must chain, the id of the call printed
 * by the first standing in for the example's `call_abc`. Examples that download
 * (`models pull`) or serve until stopped (`serve`, `playground`) are not run here.
 */
import assert from "node:assert/strict";
import { CHAT_HELP } from "../../src/cli/chat.ts";
import { NPC_HELP } from "../../src/cli/npc.ts";
import { RESPOND_HELP } from "../../src/cli/respond.ts";
import { SCHEMA_HELP } from "../../src/cli/schema_convert.ts";
import { STDIO_HELP } from "../../src/cli/stdio.ts";
import { TOOLS_HELP } from "../../src/cli/tools_validate.ts";
import { AVAILABLE_HELP } from "../../src/cli/available.ts";
import { Fixtures } from "./cli_helper.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/** The example command lines of a help text: the lines under "Example:"/"Examples:" ("#" lines are notes). */
function examples(help: string): string[] {
  const section = help.split(/\nExamples?:\n/)[1] ?? "";
  return section.split("\n").filter((line) => /^ {2}\S/.test(line) && !line.trim().startsWith("#"))
    .map((line) => line.trim());
}

/** Runs `line` with sh in `dir`; `oam` is this checkout's cli.ts. */
async function run(line: string, dir: string, env: Record<string, string>) {
  const bin = `${dir}/bin`;
  const out = await new Deno.Command("sh", {
    args: ["-c", line],
    cwd: dir,
    env: { ...env, PATH: `${bin}:${Deno.env.get("PATH")}`, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("help examples of respond, chat, npc, schema, tools, stdio and available run as written", async () => {
  const fx = await Fixtures.create();
  try {
    await Deno.mkdir(fx.path("bin"));
    await Deno.writeTextFile(
      fx.path("bin/oam"),
      `#!/bin/sh\nexec '${Deno.execPath()}' run --quiet -A '${CLI}' "$@"\n`,
    );
    await Deno.chmod(fx.path("bin/oam"), 0o755);
    // The files the examples name, as the help texts describe them.
    await fx.write("tools.json", [{
      name: "get_weather",
      description: "The weather in a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    }]);
    await fx.write("questions.txt", "Who are you?\nWhere am I?\n");
    await fx.write("steps.json", [{ text: "Ahoy." }]);
    await fx.write("mira.jsonc", { persona: { name: "Mira", role: "the innkeeper" } });
    await fx.write("mira.steps.json", [
      { json: { emotion: "happy", line: "Welcome!", player_options: ["Hi."], ends_conversation: true } },
    ]);
    // The model: calls the weather tool (as call_abc, the id the resume example answers), then says it.
    const script = await fx.write("weather.steps.json", [
      { toolCalls: [{ id: "call_abc", name: "get_weather", arguments: { city: "Paris" } }] },
      { template: "It is {toolOutput}." },
    ]);
    const helps = [RESPOND_HELP, CHAT_HELP, NPC_HELP, SCHEMA_HELP, TOOLS_HELP, STDIO_HELP, AVAILABLE_HELP];
    const lines = helps.flatMap(examples);
    assert.ok(lines.length >= 12, lines.join("\n"));
    // A call's id is the bridge's (call_<random>): the example's `call_abc` stands for the one printed before.
    let pendingId = "call_abc";
    for (const written of lines) {
      const line = written.replace("call_abc", pendingId);
      const r = await run(line, fx.dir, { OAM_SCRIPT: script });
      pendingId = /"id":"(call_[^"]+)"/.exec(r.stdout)?.[1] ?? pendingId;
      assert.equal(r.code, 0, `${line}\n${r.stdout}\n${r.stderr}`);
      assert.doesNotMatch(r.stderr, /^Error:/m, `${line}\n${r.stderr}`);
    }
  } finally {
    await fx.remove();
  }
});
