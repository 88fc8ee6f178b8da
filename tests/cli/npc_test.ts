import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { Fixtures, oam, OAM_TASK_PERMISSIONS } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());
const persona = await fx.write(
  "mira.jsonc",
  `{
  // The innkeeper
  "npc": "mira",
  "persona": {"name": "Mira", "role": "the innkeeper"},
  "options": {"playerOptionCount": 2, "worldWritable": ["player.gold"], "memoryTools": ["changeRelationship"]},
  "tools": [
    {"name": "check_menu", "description": "Dishes and prices.", "x-oam": {"command": ["echo", "{\\"stew\\": 8}"]}},
    {"name": "ask_cook", "description": "Ask the cook.", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
  ],
  "world": {"player": {"name": "Aria", "gold": 30}},
  "greeting": "Aria walks in.",
}`,
);

Deno.test("npc: streamed lines, options menu, tools, world changes and the end of the conversation", async () => {
  const script = await fx.write("steps.json", [
    { text: "Come in, you're soaked!" },
    { toolCalls: [{ name: "check_menu", arguments: {} }] },
    {
      json: {
        emotion: "happy",
        line: "Stew's 8 gold.",
        player_options: ["The stew.", "No thanks."],
        ends_conversation: false,
      },
    },
    {
      toolCalls: [
        { name: "update_world_state", arguments: { path: "player.gold", value: "22" } },
        { name: "change_relationship", arguments: { reason: "paid", delta: 5 } },
      ],
    },
    { toolCalls: [{ name: "ask_cook", arguments: { q: "hot?" } }] },
    {
      json: {
        emotion: "grateful",
        line: "Here you go!",
        player_options: ["Thanks!", "Bye."],
        ends_conversation: true,
      },
    },
  ]);
  const r = await oam(["npc", persona, "--script", script], {
    stdin: "What's good?\n3\n1\npiping hot\nStill there?\n",
  });
  // The session goes on after the out-of-range pick "3"; the exit code says a line was refused (as for an
  // unknown /command), so a piped run with a wrong pick does not pass as clean.
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stdout,
    [
      "Mira: Come in, you're soaked!",
      "  ⚙ check_menu {}",
      '  ↳ {"stew":8}',
      "Mira [happy]: Stew's 8 gold.",
      "  1) The stew.",
      "  2) No thanks.",
      "you: The stew.",
      '  ⚙ update_world_state {"path":"player.gold","value":"22"} (built-in)',
      "  ◆ world player.gold 30 → 22",
      '  ⚙ change_relationship {"reason":"paid","delta":5} (built-in)',
      "  ↳ Set player.gold to 22 (was 30).",
      "  ↳ You now feel neutral toward the player (5).",
      '  ⚙ ask_cook {"q":"hot?"}',
      "  ↳ piping hot",
      "Mira [grateful]: Here you go!",
      "  ♥ relationship 0 → 5",
      "  1) Thanks!",
      "  2) Bye.",
      "(Mira ends the conversation.)",
      "(Mira has ended the conversation: /reset starts a new one, /exit quits.)",
      "",
    ].join("\n"),
  );
  assert.equal(
    r.stderr,
    "note: the greeting is a model call: it played step 1 of the script.\n" +
      "Error: pick a reply from 1 to 2. [usage]\n",
  );
});

Deno.test("npc: /state saves the NPC and its world; --restore loads both", async () => {
  const script = await fx.write("state.json", [
    { text: "Hello." },
    { json: { emotion: "happy", line: "Hi Aria.", player_options: ["a", "b"], ends_conversation: false } },
  ]);
  const save = fx.path("save.json");
  const a = await oam(["npc", persona, "--script", script], { stdin: `hi\n/state ${save}\n` });
  assert.equal(a.code, 0, a.stderr);
  assert.ok(a.stdout.endsWith(`(saved to ${save})\n`), a.stdout);
  // A save into a folder that does not exist or onto a folder says so; the NPC goes on.
  const nowhere = fx.path("no_such_folder/save.json");
  const failed = await oam(["npc", persona, "--script", script], {
    stdin: `/state ${nowhere}\n/state ${fx.dir}\n`,
  });
  assert.deepEqual([failed.code, failed.stderr], [
    1, // io_error: the first save that failed
    "note: the greeting is a model call: it played step 1 of the script.\n" +
    `Error: Cannot write '${nowhere}': the folder '${
      fx.path("no_such_folder")
    }' does not exist. [io_error]\n` +
    `Error: Cannot write '${fx.dir}': it is a folder. [io_error]\n`,
  ]);
  const saved = await fx.read("save.json") as JsonObject;
  assert.deepEqual(saved.oam, { version: 1, kind: "npc" });
  assert.deepEqual(saved.world, { id: "world", state: { player: { name: "Aria", gold: 30 } } });
  assert.equal(((saved.state as JsonObject).persona as JsonObject).name, "Mira");

  const later = await fx.write("later.json", [
    {
      json: {
        emotion: "sad",
        line: "Back so soon?",
        player_options: ["Yes.", "No."],
        ends_conversation: false,
      },
    },
  ]);
  const b = await oam(["npc", "--restore", save, "--script", later], { stdin: "again\n/world\n" });
  assert.equal(b.code, 0, b.stderr);
  assert.equal(
    b.stdout,
    `(restored Mira from ${save})\nMira [sad]: Back so soon?\n  1) Yes.\n  2) No.\n${
      JSON.stringify({ player: { name: "Aria", gold: 30 } }, null, 2)
    }\n`,
  );
});

Deno.test("npc: bad files and flags are usage errors", async () => {
  const noPersona = await fx.write("none.json", { options: {} });
  const r = await oam(["npc", noPersona]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /none\.json: 'persona' must be an object with a 'name'\. \[invalid_input\]/);
  const broken = await fx.write("broken.jsonc", '{\n  "persona": {"name": "X"\n');
  const b = await oam(["npc", broken]);
  assert.equal(b.code, 2);
  assert.equal(
    b.stderr,
    `Error: ${broken}: not valid JSON: expected ',' or '}' at line 3, column 1 (found the end of the input). ` +
      "[invalid_input]\n",
  );
  const none = await oam(["npc"]);
  assert.equal(none.code, 2);
  // A missing file and a malformed one are both invalid input (exit 2).
  const missing = await oam(["npc", fx.path("nope.jsonc")]);
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, `Error: No such file: '${fx.path("nope.jsonc")}'. [invalid_input]\n`);
  // A missing file named by a flag says which flag: the NPC file was there, the script was not.
  const persona = await fx.write("here.jsonc", { persona: { name: "Here" } });
  const noScript = await oam(["npc", persona, "--script", fx.path("nope.steps.json")]);
  assert.equal(noScript.code, 2);
  assert.equal(
    noScript.stderr,
    `Error: --script: No such file: '${fx.path("nope.steps.json")}'. [invalid_input]\n`,
  );
  const script = await fx.write("empty.json", []);
  const badPersona = await fx.write("bad_persona.json", { persona: { name: "" } });
  const bp = await oam(["npc", badPersona, "--script", script]);
  assert.equal(bp.code, 2);
  assert.match(bp.stderr, /\[invalid_params\]/);
  // stdin is what the player types: a file cannot come from it.
  const fromStdin = await oam(["npc", "-", "--script", script], { stdin: await Deno.readTextFile(persona) });
  assert.deepEqual([fromStdin.code, fromStdin.stdout, fromStdin.stderr], [
    2,
    "",
    "Error: oam npc reads what you type from stdin: the persona file cannot come from stdin ('-'); give a file. " +
    "[usage]\n",
  ]);
});

Deno.test("npc: a greeting that plays a json step is reported, not spoken as raw JSON", async () => {
  const plain = await fx.write("plain.jsonc", '{"persona": {"name": "Mira"}, "greeting": "Aria walks in."}');
  const script = await fx.write("json_first.json", [
    {
      json: { emotion: "happy", line: "Welcome!", player_options: ["a", "b", "c"], ends_conversation: false },
    },
  ]);
  const r = await oam(["npc", plain, "--script", script], { stdin: "" });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    "warning: the greeting played step 1 of the script, a json step (an npc/talk reply), so it is not " +
      "spoken; start the script with a {\"text\": …} step for the greeting, or drop 'greeting'.\n",
  );
});

Deno.test("npc: when the script runs out the error says so, and the exit code is the failure's", async () => {
  const plain = await fx.write("plain2.jsonc", '{"persona": {"name": "Mira"}}');
  const script = await fx.write("empty_script.json", []);
  const r = await oam(["npc", plain, "--script", script], { stdin: "Hello?\n" });
  assert.equal(r.code, 1, r.stderr); // generation_failed: CI sees the failed turn
  assert.equal(
    r.stderr,
    "Error: Script exhausted: all 0 steps were played and this turn needs a structured answer; add steps or a " +
      "'fallback' step. [generation_failed]\n",
  );
});

Deno.test("npc: after the NPC ends the conversation the lines already typed are still processed", async () => {
  const plain = await fx.write(
    "ending.jsonc",
    '{"persona": {"name": "Mira"}, "options": {"playerOptionCount": 0}, "world": {"gold": 3}}',
  );
  const script = await fx.write("ending.json", [
    { json: { emotion: "sad", line: "Off you go.", ends_conversation: true } },
    { json: { emotion: "happy", line: "Back again?", ends_conversation: false } },
  ]);
  const save = fx.path("after_end.json");
  const r = await oam(["npc", plain, "--script", script], {
    stdin: `Bye.\nWait!\n/world\n/state ${save}\n/reset\nHello again.\n`,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      "Mira [sad]: Off you go.",
      "(Mira ends the conversation.)",
      "(Mira has ended the conversation: /reset starts a new one, /exit quits.)",
      '{\n  "gold": 3\n}',
      `(saved to ${save})`,
      "(conversation forgotten)",
      "Mira [happy]: Back again?",
      "",
    ].join("\n"),
  );
  assert.equal(r.stderr, "");
  assert.equal(((await fx.read("after_end.json")) as JsonObject).oam !== undefined, true);
});

Deno.test("npc: usage errors exit 2; the file is checked before the model, an unavailable model exits 3", async () => {
  const plain = await fx.write("usage.jsonc", '{"persona": {"name": "Mira"}}');
  const gone = `gguf:${fx.path("none.gguf")}`;
  const needsOne =
    "Error: oam npc needs one persona file, e.g. 'oam npc mira.jsonc' (or --restore <save>). [usage]\n";
  const cases: Array<[string[], string]> = [
    [[], needsOne],
    [[plain, plain], needsOne],
    [
      ["--restore", plain, plain],
      // The natural try (the persona file for its tools, the save for the conversation) says the save is enough.
      `Error: Use either a persona file or --restore <save>, not both: the save holds the NPC's persona, ` +
      `options and tools, so 'deno run -A cli.ts npc --restore ${plain}' goes on with it alone. [usage]\n`,
    ],
    [["--bogus", plain], "Error: Unknown option '--bogus'. Run 'deno run -A cli.ts npc --help'. [usage]\n"],
    [
      [plain, "--model", "bogus"],
      "Error: --model must look like openai:<baseURL>#<model> or gguf:<path|cached name>; got 'bogus'. [usage]\n",
    ],
  ];
  for (const [args, stderr] of cases) {
    const r = await oam(["npc", ...args]);
    assert.deepEqual([r.code, r.stderr, r.stdout], [2, stderr, ""], args.join(" "));
  }
  // A file that is not a persona is reported before the model is looked at (this model does not exist).
  const notObject = await fx.write("list.json", [1]);
  const badWorld = await fx.write("bad_world.json", { persona: { name: "Mira" }, world: 5 });
  const fileCases: Array<[string, string]> = [
    [notObject, `${notObject}: expected an object with a 'persona'.`],
    [badWorld, `${badWorld}: 'world' must be an object (the world seed).`],
  ];
  for (const [path, message] of fileCases) {
    const r = await oam(["npc", path, "--model", gone]);
    assert.deepEqual([r.code, r.stderr, r.stdout], [2, `Error: ${message} [invalid_input]\n`, ""], path);
  }
  const unavailable = await oam(["npc", plain, "--model", gone], { stdin: "hi\n" });
  assert.equal(unavailable.code, 3, unavailable.stderr);
  assert.equal(
    unavailable.stderr,
    `Error: The model ${fx.path("none.gguf")} is unavailable: The model file '${
      fx.path("none.gguf")
    }' does not exist; the folder ${fx.path("none.gguf").slice(0, -"/none.gguf".length)} has no .gguf ` +
      "file. [model_unavailable]\n",
  );
  assert.equal(unavailable.stdout, "");
  // Bad tools and a file that is not a save are file problems too: reported before the model is looked at.
  const badTools = await fx.write("bad_tools.json", { persona: { name: "Mira" }, tools: "x" });
  const t = await oam(["npc", badTools, "--model", gone]);
  assert.deepEqual([t.code, t.stdout], [2, ""]);
  assert.equal(
    t.stderr,
    `Error: ${badTools}: tools: expected an array of tool definitions or {"tools": [...]}. [invalid_input]\n`,
  );
  const notSave = await fx.write("not_save.json", { oam: { version: 1, kind: "chat" }, state: {} });
  const s = await oam(["npc", "--restore", notSave, "--model", gone]);
  assert.deepEqual(
    [s.code, s.stderr, s.stdout],
    [
      2,
      `Error: ${notSave}: not an NPC save (write one with /state <file>, or save what npc/state returns). ` +
      "[invalid_input]\n",
      "",
    ],
  );
});

Deno.test("npc: unknown file keys and npc/create's warnings; the memory's relationship; 'greeting': true", async () => {
  const path = await fx.write("keys.jsonc", {
    persona: { name: "Mira" },
    options: { playerOptionCount: 0, memoryTools: ["changeRelationship"], sparkle: 1 },
    memory: { relationship: 10 },
    greeting: true,
    colour: "red",
  });
  const script = await fx.write("keys_steps.json", [
    { text: "Oh, a guest." },
    { toolCalls: [{ name: "change_relationship", arguments: { reason: "kind", delta: 5 } }] },
    { json: { emotion: "happy", line: "Welcome back.", ends_conversation: false } },
  ]);
  const r = await oam(["npc", path, "--script", script], { stdin: "Hello!\n" });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      "Mira: Oh, a guest.",
      '  ⚙ change_relationship {"reason":"kind","delta":5} (built-in)',
      "  ↳ You now feel neutral toward the player (15).",
      "Mira [happy]: Welcome back.",
      "  ♥ relationship 10 → 15",
      "",
    ].join("\n"),
  );
  assert.equal(
    r.stderr,
    `warning: ${path}: unknown key 'colour' was ignored.\n` +
      `warning: ${path}: unknown key 'options.sparkle' was ignored.\n` +
      "note: the greeting is a model call: it played step 1 of the script.\n",
  );
});

Deno.test("npc: --restore takes the save's tools (commands run from its toolsDir) and relationship; no world", async () => {
  const home = await Deno.makeTempDir({ dir: fx.dir, prefix: "tools-" });
  await Deno.writeTextFile(`${home}/menu.txt`, "stew 8");
  const persona = `${home}/cook.json`;
  await Deno.writeTextFile(
    persona,
    JSON.stringify({
      persona: { name: "Mira" },
      options: { playerOptionCount: 0, memoryTools: ["changeRelationship"] },
      memory: { relationship: 10 },
      tools: [{
        name: "check_menu",
        description: "The menu.",
        "x-oam": { command: ["cat", "menu.txt"], cwd: "." },
      }],
    }),
  );
  const save = fx.path("cook_save.json");
  const a = await oam(["npc", persona, "--script", await fx.write("cook_none.json", [])], {
    stdin: `/state ${save}\n`,
  });
  assert.equal(a.code, 0, a.stderr);
  const script = await fx.write("cook_steps.json", [
    { toolCalls: [{ name: "check_menu", arguments: {} }] },
    { toolCalls: [{ name: "change_relationship", arguments: { reason: "hungry", delta: -5 } }] },
    { json: { emotion: "happy", line: "Stew, 8 gold.", ends_conversation: false } },
  ]);
  // Run from another folder: the command's cwd is relative to the save's toolsDir.
  const r = await oam(["npc", "--restore", save, "--script", script], {
    stdin: "Food?\n/world\n",
    cwd: fx.dir,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      `(restored Mira from ${save})`,
      "  ⚙ check_menu {}",
      "  ↳ stew 8",
      '  ⚙ change_relationship {"reason":"hungry","delta":-5} (built-in)',
      "  ↳ You now feel neutral toward the player (5).",
      "Mira [happy]: Stew, 8 gold.",
      "  ♥ relationship 10 → 5",
      "(this NPC has no world)",
      "",
    ].join("\n"),
  );
  assert.equal(r.stderr, "");
});

Deno.test("npc: --restore also loads a game's own save of npc/state (the state, or the whole result)", async () => {
  const cliSave = fx.path("game_save_src.json");
  const a = await oam(["npc", persona, "--script", await fx.write("game_none.json", [])], {
    stdin: `/state ${cliSave}\n`,
  });
  assert.equal(a.code, 0, a.stderr);
  const state = (await fx.read("game_save_src.json") as JsonObject).state as JsonObject;
  const script = await fx.write("game_steps.json", [
    {
      json: {
        emotion: "happy",
        line: "Back again?",
        player_options: ["Yes.", "No."],
        ends_conversation: false,
      },
    },
  ]);
  for (
    const [name, value] of [["game_state.json", state], ["game_result.json", { npc: "mira", state }]] as const
  ) {
    const save = await fx.write(name, value);
    const r = await oam(["npc", "--restore", save, "--script", script], { stdin: "hi\n/world\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      `(restored Mira from ${save})\nMira [happy]: Back again?\n  1) Yes.\n  2) No.\n(this NPC has no world)\n`,
    );
    assert.equal(
      r.stderr,
      `warning: ${save}: The saved world 'world' does not exist; the NPC was restored without a world. ` +
        "Pass 'world' to attach one.\n",
    );
  }
});

Deno.test("npc: a /state save holds its toolsDir relative to the save, so the folder can move (a checkout elsewhere)", async () => {
  const home = await Deno.makeTempDir({ dir: fx.dir, prefix: "checkout-" });
  await Deno.mkdir(`${home}/npcs`);
  await Deno.writeTextFile(`${home}/npcs/menu.txt`, "stew 8");
  await Deno.writeTextFile(
    `${home}/npcs/cook.json`,
    JSON.stringify({
      persona: { name: "Mira" },
      options: { playerOptionCount: 0 },
      tools: [{
        name: "check_menu",
        description: "The menu.",
        "x-oam": { command: ["cat", "menu.txt"], cwd: "." },
      }],
    }),
  );
  await Deno.mkdir(`${home}/golden`);
  const a = await oam(["npc", "npcs/cook.json", "--script", await fx.write("moved_none.json", [])], {
    stdin: "/state golden/cook.save.json\n",
    cwd: home,
  });
  assert.equal(a.code, 0, a.stderr);
  const saved = JSON.parse(await Deno.readTextFile(`${home}/golden/cook.save.json`));
  assert.equal(saved.toolsDir, "../npcs");
  const moved = `${home}-moved`;
  await Deno.rename(home, moved);
  const script = await fx.write("moved_steps.json", [
    { toolCalls: [{ name: "check_menu", arguments: {} }] },
    { json: { emotion: "happy", line: "Stew, 8 gold.", ends_conversation: false } },
  ]);
  const r = await oam(["npc", "--restore", `${moved}/golden/cook.save.json`, "--script", script], {
    stdin: "Food?\n",
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /↳ stew 8\n/);
});

Deno.test("npc: what the bridge refuses or warns about in the persona file names the file", async () => {
  const script = await fx.write("named.json", [{ text: "[happy] Hi." }]);
  const cases: Array<[JsonObject, string, string]> = [
    [
      { persona: { name: "Gorm" }, options: { playerOptionCount: "two" } },
      "",
      `Parameter 'options.playerOptionCount' must be an integer; got "two". [invalid_params]`,
    ],
    [
      { persona: { nme: "Gorm" } },
      // The misspelt field is said first, with the one it meant.
      "unknown key 'persona.nme' was ignored (did you mean 'name'?).",
      "Missing required parameter 'persona.name'. [invalid_params]",
    ],
  ];
  for (const [value, warning, message] of cases) {
    const path = await fx.write("named.jsonc", value);
    const r = await oam(["npc", path, "--script", script], { stdin: "hi\n" });
    const warned = warning === "" ? "" : `warning: ${path}: ${warning}\n`;
    assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", `${warned}Error: ${path}: ${message}\n`]);
  }
  const warned = await fx.write("warned.jsonc", {
    persona: { name: "Gorm" },
    options: { replyFormat: "text", replyFormt: "text" },
    tools: [{ name: "give", parameters: { type: "object" } }],
  });
  const r = await oam(["npc", warned, "--script", script], { stdin: "hi\n" });
  assert.deepEqual([r.code, r.stdout, r.stderr], [
    0,
    "Gorm [happy]: Hi.\n",
    // As loadPersona says it: the field it meant (the bridge's own warning named none).
    `warning: ${warned}: unknown key 'options.replyFormt' was ignored (did you mean 'replyFormat'?).\n` +
    `warning: ${warned}: give: no description; the model may not know when to call it.\n`,
  ]);
});

Deno.test("npc, chat and respond: a save of the other kind names the command that reads it", async () => {
  const script = await fx.write("kinds.json", [{ text: "[happy] Hi." }]);
  const persona = await fx.write("kinds.jsonc", {
    persona: { name: "Gorm" },
    options: { replyFormat: "text" },
  });
  const npcSave = fx.path("kinds_npc_save.json");
  const chatSave = fx.path("kinds_chat_save.json");
  assert.equal(
    (await oam(["npc", persona, "--script", script], { stdin: `hi\n/state ${npcSave}\n` })).code,
    0,
  );
  assert.equal((await oam(["chat", "--script", script], { stdin: `hi\n/save ${chatSave}\n` })).code, 0);
  const cases: Array<[string[], string]> = [
    [
      ["npc", npcSave],
      `${npcSave} is an NPC save (from /state): load it with 'deno run -A cli.ts npc --restore ${npcSave}'.`,
    ],
    [
      ["npc", chatSave],
      `${chatSave} is a saved conversation (from oam chat or oam respond): continue it with ` +
      `'oam chat --resume ${chatSave}'.`,
    ],
    [
      ["chat", "--resume", npcSave],
      `${npcSave} is an NPC save (from /state): load it with 'deno run -A cli.ts npc --restore ${npcSave}'.`,
    ],
    [
      ["respond", "--resume", npcSave, "hi"],
      `${npcSave} is an NPC save (from /state): load it with 'deno run -A cli.ts npc --restore ${npcSave}'.`,
    ],
  ];
  for (const [args, message] of cases) {
    const r = await oam([...args, "--script", script], { stdin: "" });
    assert.deepEqual(
      [r.code, r.stdout, r.stderr],
      [2, "", `Error: ${message} [invalid_input]\n`],
      args.join(" "),
    );
  }
});

Deno.test("npc: on the unavailable on-device model, a persona file with its script beside it says how to play it", async () => {
  // loadPersona reads guard.steps.json beside guard.jsonc; oam npc needs --script for it, and said only
  // "--script <file> … for a scripted model".
  const persona = await fx.write("beside.jsonc", {
    persona: { name: "Bram" },
    options: { replyFormat: "text" },
  });
  await fx.write("beside.steps.json", [{ text: "[neutral] Halt." }]);
  const env = { OAM_FM_LIBRARY: fx.path("no_plugin.dylib") }; // the on-device model is unavailable anywhere
  // Run as `deno task oam` runs it, the command is that task's (a bare 'oam npc …' is no command there).
  const task = OAM_TASK_PERMISSIONS;
  const r = await oam(["npc", persona], { stdin: "Hello.\n", env, permissions: task });
  assert.equal(r.code, 3, r.stderr);
  assert.ok(
    r.stderr.endsWith(
      ` The persona file has its script beside it: 'deno task oam npc ${persona} --script ${
        fx.path("beside.steps.json")
      }' plays it. [model_unavailable]\n`,
    ),
    r.stderr,
  );
  // Without a script beside it, the advice is as it was.
  const alone = await fx.write("alone.jsonc", { persona: { name: "Bram" } });
  const a = await oam(["npc", alone], { stdin: "Hello.\n", env });
  assert.equal(a.code, 3, a.stderr);
  assert.ok(!a.stderr.includes("beside it"), a.stderr);
  // And with --script, it plays.
  const played = await oam(["npc", persona, "--script", fx.path("beside.steps.json")], { stdin: "Hello.\n" });
  assert.deepEqual([played.code, played.stdout], [0, "Bram [neutral]: Halt.\n"], played.stderr);
});
