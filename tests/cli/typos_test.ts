/**
 * What a misspelt command, option, slash command or persona file key gets: the name it most likely meant, in
 * the one-line error (or warning) it already had.
 */
import assert from "node:assert/strict";
import { nearestName } from "../../src/protocol/edit_distance.ts";
import { Fixtures, oam } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());
const chatScript = await fx.write("chat.json", [{ text: "Hi." }]);
const npcScript = await fx.write("npc.json", [{ text: "[happy] Hi." }]);
const persona = await fx.write("gorm.jsonc", {
  persona: { name: "Gorm", role: "the smith" },
  options: { replyFormat: "text" },
});

Deno.test("nearestName: the one name a typo is closest to, if it is close enough", () => {
  assert.equal(nearestName("scirpt", ["script", "model"]), "script");
  assert.equal(nearestName("chta", ["chat", "npc"]), "chat");
  assert.equal(nearestName("Options", ["options"]), "options");
  assert.equal(nearestName("frobnicate", ["chat", "npc"]), undefined);
  assert.equal(nearestName("mdl", ["model", "models"]), undefined); // two edits from a five-letter name
  assert.equal(nearestName("ab", ["abc"]), undefined); // too short to tell
  assert.equal(nearestName("cat", ["bat", "hat"]), undefined); // two as close: none is meant
});

Deno.test("nearestName: a compound name with another form of one of its words, or other separators", () => {
  const persona = ["name", "role", "personality", "speakingStyle", "backstory", "defaultEmotion"];
  assert.equal(nearestName("speechStyle", persona), "speakingStyle"); // the same stem, the same other words
  assert.equal(nearestName("speakStyle", persona), "speakingStyle");
  assert.equal(nearestName("speaking_style", persona), "speakingStyle");
  assert.equal(nearestName("default-emotion", persona), "defaultEmotion");
  assert.equal(nearestName("talkingStyle", persona), undefined); // another word, not another form of it
  assert.equal(nearestName("speakingVoice", persona), undefined);
  assert.equal(nearestName("maxToolRounds", ["maxToolCalls", "maxTurns"]), undefined);
  assert.equal(nearestName("speechStyle", ["speakingStyle", "spellingStyle"]), undefined); // two as close
});

Deno.test("a misspelt command or option names the one it most likely meant", async () => {
  const cases: Array<[string[], string]> = [
    [
      ["chta"],
      "Error: Unknown command 'chta'; did you mean 'chat'? Run 'deno run -A cli.ts --help'. [usage]\n",
    ],
    [["frobnicate"], "Error: Unknown command 'frobnicate'. Run 'deno run -A cli.ts --help'. [usage]\n"],
    [
      ["chat", "--scirpt", chatScript],
      "Error: Unknown option '--scirpt'; did you mean '--script'? Run 'deno run -A cli.ts chat --help'. [usage]\n",
    ],
    [
      ["respond", "--jsn", "hi"],
      "Error: Unknown option '--jsn'; did you mean '--json'? Run 'deno run -A cli.ts respond --help'. [usage]\n",
    ],
    [
      ["npc", persona, "--restor", "x.json"],
      "Error: Unknown option '--restor'; did you mean '--restore'? Run 'deno run -A cli.ts npc --help'. [usage]\n",
    ],
    [["chat", "--bogus"], "Error: Unknown option '--bogus'. Run 'deno run -A cli.ts chat --help'. [usage]\n"],
    // modelFromArgs's flag for the on-device model, typed to oam, whose flag is --model system.
    [
      ["respond", "--system", "hi"],
      "Error: Unknown option '--system'; did you mean '--model system'? Run 'deno run -A cli.ts respond --help'. [usage]\n",
    ],
    [
      ["npc", persona, "--system"],
      "Error: Unknown option '--system'; did you mean '--model system'? Run 'deno run -A cli.ts npc --help'. [usage]\n",
    ],
  ];
  for (const [args, stderr] of cases) {
    const r = await oam(args, { stdin: "" });
    assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", stderr], args.join(" "));
  }
});

Deno.test("chat and npc: a misspelt slash command, or the other command's name for saving, gets a hint", async () => {
  const chat = await oam(["chat", "--script", chatScript], { stdin: "/tols\n/state x.json\n" });
  assert.deepEqual([chat.code, chat.stdout], [2, ""]);
  assert.equal(
    chat.stderr,
    "Error: unknown command '/tols'; did you mean '/tools'? Type /help. [usage]\n" +
      "Error: unknown command '/state'; did you mean '/save'? Type /help. [usage]\n",
  );
  const npc = await oam(["npc", persona, "--script", npcScript], { stdin: "/wrold\n/save x.json\n" });
  assert.deepEqual([npc.code, npc.stdout], [2, ""]);
  assert.equal(
    npc.stderr,
    "Error: unknown command '/wrold'; did you mean '/world'? Type /help. [usage]\n" +
      "Error: unknown command '/save'; did you mean '/state'? Type /help. [usage]\n",
  );
});

Deno.test("npc: a misspelt key of the persona file is named with the key it most likely meant", async () => {
  const path = await fx.write("typos.jsonc", {
    persona: { name: "Gorm" },
    optons: { replyFormat: "text" },
    greting: "hi",
    colour: "red",
  });
  const r = await oam(["npc", path, "--script", npcScript], { stdin: "" });
  assert.equal(
    r.stderr,
    `warning: ${path}: unknown key 'optons' was ignored (did you mean 'options'?).\n` +
      `warning: ${path}: unknown key 'greting' was ignored (did you mean 'greeting'?).\n` +
      `warning: ${path}: unknown key 'colour' was ignored.\n`,
  );
});

Deno.test("a misspelt key of a tool definition is named with the key it meant, in every command that reads one", async () => {
  // Before, '"paramters"' left the tool without arguments and 'oam tools validate' said "1 tool OK." alone.
  const params = { type: "object", properties: { city: { type: "string" } } };
  const tools = await fx.write("typo_tools.json", [
    { name: "get_weather", description: "Weather in a city.", paramters: params },
    { type: "function", function: { name: "get_time", descripton: "The time.", parameters: params } },
  ]);
  const validate = await oam(["tools", "validate", tools]);
  assert.equal(validate.code, 0, validate.stderr);
  assert.equal(
    validate.stdout,
    "✓ get_weather client (answered by you or your engine)\n" +
      "    warning: unknown key 'paramters' was ignored (did you mean 'parameters'?).\n" +
      "✓ get_time client (answered by you or your engine)\n" +
      "    warning: unknown key 'function.descripton' was ignored (did you mean 'description'?).\n" +
      "    warning: no description; the model may not know when to call it.\n" +
      "2 tools OK.\n",
  );
  const json = JSON.parse((await oam(["tools", "validate", tools, "--json"])).stdout);
  assert.deepEqual(json.tools[0].warnings, [
    "unknown key 'paramters' was ignored (did you mean 'parameters'?).",
  ]);
  const named = [
    `warning: ${tools}: unknown key 'tools[0].paramters' was ignored (did you mean 'parameters'?).`,
    `warning: ${tools}: unknown key 'tools[1].function.descripton' was ignored (did you mean 'description'?).`,
  ];
  const chat = await oam(["chat", "--tools", tools, "--script", chatScript], { stdin: "" });
  assert.equal(chat.code, 0, chat.stderr);
  assert.deepEqual(chat.stderr.split("\n").filter((l) => l.includes("unknown key")), named);
  const respond = await oam(["respond", "-v", "--tools", tools, "--script", chatScript, "--no-stdin", "hi"]);
  assert.equal(respond.code, 0, respond.stderr);
  assert.deepEqual(respond.stderr.split("\n").filter((l) => l.includes("unknown key")), named);
  const persona = await fx.write("typo_tools.jsonc", {
    persona: { name: "Gorm" },
    options: { replyFormat: "text" },
    tools: [{ name: "get_weather", description: "Weather in a city.", paramters: params }],
  });
  const npc = await oam(["npc", persona, "--script", npcScript], { stdin: "" });
  assert.equal(npc.code, 0, npc.stderr);
  // A server's tools file: said before anything else about it (here a schema it refuses).
  const server = await fx.write("typo_server_tools.json", [
    { name: "roll", descripton: "Roll.", "x-oam": { command: ["true"] }, parameters: { type: "strin" } },
  ]);
  const serve = await oam(["serve", "--port", "0", "--tools", server, "--script", chatScript]);
  assert.equal(serve.code, 2);
  assert.equal(
    serve.stderr.split("\n")[0],
    `warning: ${server}: unknown key 'tools[0].descripton' was ignored (did you mean 'description'?).`,
  );
  assert.equal(
    npc.stderr,
    `warning: ${persona}: unknown key 'tools[0].paramters' was ignored (did you mean 'parameters'?).\n`,
  );
});

Deno.test("respond and chat: a misspelt --tool-choice keyword is named as such, not taken for a tool", async () => {
  const tools = await fx.write("tools.json", [{ name: "get_weather", description: "Weather" }]);
  const hint =
    "Error: --tool-choice 'requried' is none of auto, none, required, explicit and no tool's name; " +
    "did you mean 'required'? [usage]\n";
  for (const command of [["respond", "hi"], ["chat"]]) {
    for (const withTools of [[], ["--tools", tools]]) {
      const args = [
        command[0],
        ...withTools,
        "--tool-choice",
        "requried",
        "--script",
        chatScript,
        ...command.slice(1),
      ];
      const r = await oam(args, { stdin: "" });
      assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", hint], args.join(" "));
    }
  }
});

Deno.test("--model system picks the on-device model, as modelFromArgs's does, also over OAM_SCRIPT and OAM_MODEL", async () => {
  // It was "--model must look like openai:… or gguf:…; got 'system'" (exit 2). Here the on-device model is
  // unavailable: exit 3, where OAM_SCRIPT would have answered.
  const env = { OAM_SCRIPT: chatScript, OAM_MODEL: "gguf:none.gguf" };
  const r = await oam(["respond", "--model", "system", "hi"], { env });
  assert.equal(r.code, 3, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^Error: The on-device model is unavailable: /);
  const available = await oam(["available", "--json", "--model", "system"], { env });
  assert.equal(available.code, 3, available.stderr);
  assert.equal(JSON.parse(available.stdout).model, "system");
});
