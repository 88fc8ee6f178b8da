/**
 * What a command reads from stdin as what a person says (`oam respond`'s piped prompt, `oam chat`'s and
 * `oam npc`'s lines, `--tool-output <id>=@-`) must be UTF-8 text: bytes that are not (a file saved as
 * Windows-1252 and piped in) are refused with where the first bad byte is, exit 2, as an input file's are,
 * rather than reach the model as replacement characters. Spawned processes, whole stdout and stderr.
 */
import assert from "node:assert/strict";
import { Fixtures, oam } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());
const echo = await fx.write("echo.json", [{ template: "You said: {prompt}" }, {
  template: "Again: {prompt}",
}]);
const bytes = (...parts: Array<string | number[]>) =>
  new Uint8Array(parts.flatMap((p) => typeof p === "string" ? [...new TextEncoder().encode(p)] : p));
const refusal = (offset: number, line: number, column: number) =>
  `Error: <stdin>: not UTF-8 text (byte 0xFF at offset ${offset}: line ${line}, column ${column}); ` +
  "pipe it as UTF-8 (e.g. through 'iconv -f windows-1252 -t utf-8'). [invalid_input]\n";

Deno.test("respond: a piped prompt that is not UTF-8 is refused with the byte's offset, exit 2", async () => {
  // `printf 'ab\xff\xfecd' | oam respond`: it answered "You said: ab��cd", exit 0.
  const r = await oam(["respond", "--script", echo], { stdinBytes: bytes("ab", [0xff, 0xfe], "cd") });
  assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", refusal(2, 1, 3)]);
  // With a prompt in the arguments too: the piped part is still refused.
  const both = await oam(["respond", "--script", echo, "Hi"], { stdinBytes: bytes("é\n", [0xff]) });
  assert.deepEqual([both.code, both.stdout, both.stderr], [2, "", refusal(3, 2, 1)]);
  // UTF-8 (and its byte order mark) is read as before.
  const ok = await oam(["respond", "--script", echo], { stdinBytes: bytes([0xef, 0xbb, 0xbf], "Grüße") });
  assert.deepEqual([ok.code, ok.stdout, ok.stderr], [0, "You said: Grüße\n", ""]);
});

Deno.test("chat: a piped line that is not UTF-8 ends the conversation there, exit 2", async () => {
  // The lines before it are played; the bad one is not sent (it was, as "ab�cd").
  const r = await oam(["chat", "--script", echo], { stdinBytes: bytes("Hello\nab", [0xff], "cd\nBye\n") });
  assert.deepEqual([r.code, r.stdout, r.stderr], [2, "You said: Hello\n", refusal(8, 2, 3)]);
});

Deno.test("npc: a piped line that is not UTF-8 is refused, exit 2", async () => {
  const persona = await fx.write("gorm.jsonc", { persona: { name: "Gorm" } });
  const steps = await fx.write("gorm_steps.json", [
    { json: { emotion: "neutral", line: "Hm.", player_options: ["Bye."], ends_conversation: false } },
  ]);
  const r = await oam(["npc", persona, "--script", steps], { stdinBytes: bytes([0xff], "\n") });
  assert.equal(r.code, 2, r.stderr);
  assert.ok(r.stderr.endsWith(refusal(0, 1, 1)), r.stderr);
  assert.ok(!r.stdout.includes("Hm."), r.stdout);
});

Deno.test("respond --tool-output <id>=@-: a tool output piped in that is not UTF-8 is refused, exit 2", async () => {
  const tools = await fx.write("weather_tools.json", [{
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  }]);
  const steps = await fx.write("weather_steps.json", [
    { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
    { template: "It is {toolOutput}." },
  ]);
  const turn = fx.path("weather_turn.json");
  const paused = await oam([
    "respond",
    "--no-stdin",
    "--script",
    steps,
    "--tools",
    tools,
    "--save-transcript",
    turn,
    "?",
  ]);
  assert.equal(paused.code, 10, paused.stderr);
  const id = JSON.parse(paused.stdout).calls[0].id;
  const resume = ["respond", "--resume", turn, "--script", steps, "--tool-output", `${id}=@-`];
  // `iconv -t windows-1252 < out.txt | oam respond … --tool-output <id>=@-`: "sunny ÿ" in Windows-1252.
  const r = await oam(resume, { stdinBytes: bytes("sunny ", [0xff], "\n") });
  assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", refusal(6, 1, 7)]);
  // The turn still waits for that call: the same output as UTF-8 continues it.
  const ok = await oam(resume, { stdinBytes: bytes("sunny ÿ\n") });
  assert.deepEqual([ok.code, ok.stdout, ok.stderr], [0, "It is sunny ÿ.\n", ""]);
});
