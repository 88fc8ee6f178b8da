/**
 * The read loop `oam chat` and `oam npc` share (src/cli/prompt_loop.ts), through both processes: what a line,
 * a slash command and its failure do is the same in each. (Ctrl-C and the terminal: chat_turns_test.ts and
 * npc_turns_test.ts.)
 */
import assert from "node:assert/strict";
import { Fixtures, oam } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());
const chatScript = await fx.write("chat.json", [{ text: "Hi." }, { text: "Again." }]);
const npcScript = await fx.write("npc.json", [{ text: "[happy] Hi." }, { text: "[happy] Again." }]);
const persona = await fx.write("gorm.jsonc", {
  persona: { name: "Gorm", role: "the smith" },
  options: { replyFormat: "text" },
});

/** `oam chat` and `oam npc`, each with its script: the arguments before the piped lines. */
const COMMANDS: Array<{ name: string; args: string[]; answer: string }> = [
  { name: "chat", args: ["chat", "--script", chatScript], answer: "Hi.\n" },
  { name: "npc", args: ["npc", persona, "--script", npcScript], answer: "Gorm [happy]: Hi.\n" },
];

Deno.test("chat and npc: a command without its file name is a failure for the exit code", async () => {
  const chat = await oam(["chat", "--script", chatScript], { stdin: "/save\nhello\n" });
  assert.deepEqual([chat.code, chat.stdout, chat.stderr], [
    2,
    "Hi.\n",
    "Error: /save needs a file name, e.g. /save chat.json [usage]\n",
  ]);
  const npc = await oam(["npc", persona, "--script", npcScript], { stdin: "/state\nhello\n" });
  assert.deepEqual([npc.code, npc.stdout, npc.stderr], [
    2,
    "Gorm [happy]: Hi.\n",
    "Error: /state needs a file name, e.g. /state mira_save.json [usage]\n",
  ]);
});

Deno.test("chat and npc: /exit and /quit end the session; the lines after them are not read", async () => {
  for (const { name, args, answer } of COMMANDS) {
    for (const exit of ["/exit", "/quit"]) {
      const r = await oam(args, { stdin: `hello\n   \n${exit}\nagain\n` });
      assert.deepEqual([r.code, r.stdout, r.stderr], [0, answer, ""], `${name} ${exit}`);
    }
  }
});

Deno.test("chat and npc: an unknown /command is reported, the session goes on, the exit code says it", async () => {
  for (const { name, args, answer } of COMMANDS) {
    const r = await oam(args, { stdin: "/bogus now\nhello\n" });
    assert.deepEqual(
      [r.code, r.stdout, r.stderr],
      [
        2,
        answer,
        "Error: unknown command '/bogus'; type /help, or start the line with // to say it. [usage]\n",
      ],
      name,
    );
  }
});

Deno.test("chat and npc: /exit typed at a tool question ends the session as Ctrl-D does; it is no tool output", async () => {
  const tool = {
    name: "get_weather",
    description: "Weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  };
  const tools = await fx.write("tools.json", [tool]);
  const call = { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] };
  const chat = await fx.write("chat_tool.json", [call, { template: "Output: {toolOutput}" }]);
  const npcTools = await fx.write("gorm_tools.jsonc", {
    persona: { name: "Gorm", role: "the smith" },
    options: { replyFormat: "text" },
    tools: [tool],
  });
  const npc = await fx.write("npc_tool.json", [call, { template: "[happy] Output: {toolOutput}" }]);
  const runs: Array<[string[], string]> = [
    [["chat", "--tools", tools, "--script", chat], '  ⚙ get_weather {"city":"Oslo"}\n(stopped)\n'],
    [["npc", npcTools, "--script", npc], '  ⚙ get_weather {"city":"Oslo"}\n(stopped)\n'],
  ];
  for (const [args, stdout] of runs) {
    for (const exit of ["/exit", "/quit", " /exit now"]) {
      const r = await oam(args, { stdin: `Weather?\n${exit}\nmore\n` });
      assert.deepEqual([r.code, r.stdout, r.stderr], [0, stdout, ""], `${args[0]} ${exit}`);
    }
  }
});

Deno.test("chat and npc: a line starting with // says the line with one slash less; it is no command", async () => {
  const heard = { template: "Heard: {prompt}" };
  const chat = await fx.write("chat_slash.json", [heard, heard]);
  const npcHeard = { template: "[happy] Heard: {prompt}" };
  const npc = await fx.write("npc_slash.json", [npcHeard, npcHeard]);
  const runs: Array<[string[], string]> = [
    [["chat", "--script", chat], "Heard: /shrug\nHeard:   //two slashes\n"],
    [
      ["npc", persona, "--script", npc],
      "Gorm [happy]: Heard: Player: /shrug\nGorm [happy]: Heard: Player:   //two slashes\n",
    ],
  ];
  for (const [args, stdout] of runs) {
    const r = await oam(args, { stdin: "//shrug\n  ///two slashes\n" });
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, stdout, ""], args[0]);
  }
});

Deno.test("chat and npc: /help tells how to say a line that starts with a slash", async () => {
  for (const { name, args } of COMMANDS) {
    const r = await oam(args, { stdin: "/help\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^Start a line with \/\/ to say one that begins with a slash: \/\/shrug says \/shrug\.$/m,
      name,
    );
  }
});
