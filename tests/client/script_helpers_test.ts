/**
 * The script helpers: `modelFromArgs` (which model a script's NPCs run on, from its command line) and
 * `loadPersona` (an NPC file and the step script beside it), including what they say about bad input.
 */
import assert from "node:assert/strict";
import { Bridge, loadPersona, modelFromArgs } from "../../mod.ts";

const STEPS = [{ text: "Hi." }];

Deno.test("modelFromArgs: scripted by default, --system, --model openai:… / gguf:… / JSON, and bad values", () => {
  assert.deepEqual(modelFromArgs([], STEPS), { type: "scripted", steps: STEPS });
  assert.deepEqual(modelFromArgs(["--verbose"], STEPS), { type: "scripted", steps: STEPS });
  assert.equal(modelFromArgs(["--system"], STEPS), "system");
  // `--model scripted` plays the script's steps, as no flag does (it played an empty script: "Script exhausted:
  // all 0 steps were played").
  assert.deepEqual(modelFromArgs(["--model", "scripted"], STEPS), { type: "scripted", steps: STEPS });
  assert.deepEqual(modelFromArgs(["--model=scripted"], STEPS), { type: "scripted", steps: STEPS });
  assert.deepEqual(modelFromArgs(["--model", "openai:http://127.0.0.1:8080/v1/#qwen2.5:7b"], STEPS), {
    type: "openai",
    baseURL: "http://127.0.0.1:8080/v1",
    model: "qwen2.5:7b",
  });
  assert.deepEqual(modelFromArgs(["--model", "gguf:models/tiny.gguf#threads=2,gpu=false"], STEPS), {
    type: "llama",
    path: "models/tiny.gguf",
    threads: 2,
    gpu: false,
  });
  assert.throws(() => modelFromArgs(["--model", "gguf:"], STEPS), /missing the model path/);
  assert.deepEqual(modelFromArgs(['--model={"type": "llama", "path": "m.gguf"}'], STEPS), {
    type: "llama",
    path: "m.gguf",
  });
  assert.throws(() => modelFromArgs(["--model"], STEPS), /--model takes system, scripted, .*; got nothing\./);
  assert.throws(() => modelFromArgs(["--model", "gpt-4"], STEPS), /; got 'gpt-4'\.$/);
  // a GGUF file without its gguf: prefix: the error says the form to use
  for (const file of ["/models/tiny.gguf", "tiny.GGUF"]) {
    assert.throws(
      () => modelFromArgs(["--model", file], STEPS),
      (error: Error) => error.message.endsWith(`; got '${file}'. For a GGUF file: --model gguf:${file}`),
    );
  }
  assert.throws(() => modelFromArgs(["--model", "{oops"], STEPS), /the JSON is invalid/);
  assert.throws(() => modelFromArgs(["--model", "openai:http://x/v1"], STEPS), /missing '#<model>'/);
});

Deno.test("modelFromArgs: a model to download (hf:…, gguf:hf:…, a .gguf URL) names the pull command and the value after it", () => {
  const hf = "hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf";
  const url = "https://example.com/models/tiny-chat.gguf";
  for (
    const [flag, source, name] of [
      [hf, hf, "qwen2.5-1.5b-instruct-q4_k_m"],
      [`gguf:${hf}`, hf, "qwen2.5-1.5b-instruct-q4_k_m"],
      [url, url, "tiny-chat"],
      [`gguf:${url}`, url, "tiny-chat"],
    ]
  ) {
    assert.throws(
      () => modelFromArgs(["--model", flag], STEPS),
      (error: Error) => {
        assert.equal(
          error.message,
          `modelFromArgs: --model ${flag} names a model to download, not a file on this computer: ` +
            `'oam models pull ${source}' downloads it once; then use --model gguf:${name}.`,
        );
        return true;
      },
    );
  }
  // A cached name or a path is not a download.
  assert.equal((modelFromArgs(["--model", "gguf:tiny-chat"], STEPS) as { path: string }).path, "tiny-chat");
});

Deno.test("modelFromArgs: a misspelt --model or --system is an Error naming the flag it meant, not the scripted model", () => {
  const meant = (flag: string, wanted: string) => (error: Error) => {
    assert.equal(
      error.message,
      `modelFromArgs: '${flag}' is not an option it reads; did you mean '${wanted}'? (Without it the scripted ` +
        `model plays.)`,
    );
    return true;
  };
  assert.throws(() => modelFromArgs(["--sytem"], STEPS), meant("--sytem", "--system"));
  assert.throws(() => modelFromArgs(["-system"], STEPS), meant("-system", "--system"));
  assert.throws(() => modelFromArgs(["--modle", "gguf:tiny.gguf"], STEPS), meant("--modle", "--model"));
  assert.throws(() => modelFromArgs(["--models=openai:http://x/v1#m"], STEPS), meant("--models", "--model"));
  assert.throws(() => modelFromArgs(["-model", "system"], STEPS), meant("-model", "--model"));
  // A script's own flags stay its own: one that is not followed by a model, or not near either name.
  assert.deepEqual(modelFromArgs(["--mode", "fast"], STEPS), { type: "scripted", steps: STEPS });
  assert.deepEqual(modelFromArgs(["--modal"], STEPS), { type: "scripted", steps: STEPS });
  assert.deepEqual(modelFromArgs(["--stem", "--systems2"], STEPS), { type: "scripted", steps: STEPS });
  assert.deepEqual(modelFromArgs(["--seed", "7", "--verbose"], STEPS), { type: "scripted", steps: STEPS });
  // With the real flag there too, nothing is guessed.
  assert.equal(modelFromArgs(["--system", "--sytem"], STEPS), "system");
});

Deno.test("modelFromArgs: --system with a value is an Error saying it takes none, not a guess of itself", () => {
  assert.throws(
    () => modelFromArgs(["--system=yes"], STEPS),
    (error: Error) => {
      assert.equal(
        error.message,
        "modelFromArgs: '--system=yes': --system takes no value (write --system, or --model system).",
      );
      return true;
    },
  );
});

Deno.test("modelFromArgs: --system=1 is refused also beside --system or --model (it was taken silently)", () => {
  for (
    const args of [["--system", "--system=1"], ["--system=1", "--system"], [
      "--model",
      "system",
      "--system=1",
    ]]
  ) {
    assert.throws(() => modelFromArgs(args, STEPS), {
      message: "modelFromArgs: '--system=1': --system takes no value (write --system, or --model system).",
    }, args.join(" "));
  }
});

Deno.test("loadPersona: JSONC with the steps beside it; no steps file means no steps", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/mira.jsonc`,
      `{
  // comments and trailing commas are fine
  "npc": "mira",
  "persona": {"name": "Mira", "role": "the innkeeper"},
  "options": {"playerOptionCount": 2},
  "tools": [{"name": "check_stock", "description": "Stock."}],
  "memory": {"facts": ["Likes cats."]},
  "world": {"player": {"gold": 5}},
  "greeting": "Rain.",
}`,
    );
    await Deno.writeTextFile(`${dir}/mira.steps.json`, JSON.stringify({ steps: STEPS }));
    assert.deepEqual(await loadPersona(`${dir}/mira.jsonc`), {
      npc: "mira",
      persona: { name: "Mira", role: "the innkeeper" },
      options: { playerOptionCount: 2 },
      tools: [{ name: "check_stock", description: "Stock." }],
      memory: { facts: ["Likes cats."] },
      world: { player: { gold: 5 } },
      greeting: "Rain.",
      steps: STEPS,
    });
    await Deno.writeTextFile(`${dir}/bram.json`, '{"persona": {"name": "Bram"}}');
    assert.deepEqual(await loadPersona(new URL(`file://${dir}/bram.json`)), {
      persona: { name: "Bram" },
      steps: [],
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadPersona: a misspelt persona, option or memory field is left out with one warning that names the file and the field it meant", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/gorm.jsonc`,
      JSON.stringify({
        persona: { name: "Gorm", personalty: "Gruff.", role: "the smith" },
        options: { replyFormt: "text", playerOptionCount: 0, zzz: 1 },
        memory: { fact: ["Owes the player."] },
      }),
    );
    const warnings: string[] = [];
    const gorm = await loadPersona(`${dir}/gorm.jsonc`, { onWarning: (w) => warnings.push(w) });
    // The bridge only said "Unknown parameter 'persona.personalty' was ignored." at npc/create: no file, no hint.
    assert.deepEqual(warnings, [
      `${dir}/gorm.jsonc: unknown key 'persona.personalty' was ignored (did you mean 'personality'?).`,
      `${dir}/gorm.jsonc: unknown key 'options.replyFormt' was ignored (did you mean 'replyFormat'?).`,
      `${dir}/gorm.jsonc: unknown key 'options.zzz' was ignored.`,
      `${dir}/gorm.jsonc: unknown key 'memory.fact' was ignored (did you mean 'facts'?).`,
    ]);
    assert.deepEqual(gorm.persona, { name: "Gorm", role: "the smith" });
    assert.deepEqual(gorm.options, { playerOptionCount: 0 });
    assert.deepEqual(gorm.memory, {});
    // Left out, so the bridge does not warn about them a second time.
    const bridgeWarnings: string[] = [];
    await using bridge = await Bridge.open({ onWarning: (w) => bridgeWarnings.push(w) });
    await bridge.createNpc(gorm.persona, { options: gorm.options, memory: gorm.memory, model: "scripted" });
    assert.deepEqual(bridgeWarnings, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadPersona: a step member nothing reads is left out with a warning that names the steps file and the step", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/gorm.jsonc`, JSON.stringify({ persona: { name: "Gorm" } }));
    await Deno.writeTextFile(
      `${dir}/gorm.steps.json`,
      JSON.stringify([
        { text: "Halt!", chunk: 2 },
        { toolCalls: [{ name: "look", argument: { at: "gate" } }], delay: 5 },
        { json: { emotion: "neutral", line: "Go." }, chunks: 3 },
      ]),
    );
    const warnings: string[] = [];
    const gorm = await loadPersona(`${dir}/gorm.jsonc`, { onWarning: (w) => warnings.push(w) });
    // The bridge said "Unknown parameter 'model.steps[0].chunk' was ignored …" at npc/create: not the file.
    assert.deepEqual(warnings, [
      `${dir}/gorm.steps.json: step 1: unknown key 'chunk' was ignored (did you mean 'chunks'?).`,
      `${dir}/gorm.steps.json: step 2: unknown key 'toolCalls[0].argument' was ignored (did you mean 'arguments'?).`,
      `${dir}/gorm.steps.json: step 2: unknown key 'delay' was ignored (did you mean 'delayMs'?).`,
      `${dir}/gorm.steps.json: step 3: 'chunks' has no effect: only a 'text' step streams in pieces; ` +
      "a 'json' step's answer comes whole.",
    ]);
    assert.deepEqual(gorm.steps, [
      { text: "Halt!" },
      { toolCalls: [{ name: "look" }] },
      { json: { emotion: "neutral", line: "Go." } },
    ]);
    // Left out, so the bridge does not warn about them a second time with the model's path.
    const bridgeWarnings: string[] = [];
    await using bridge = await Bridge.open({ onWarning: (w) => bridgeWarnings.push(w) });
    await bridge.createNpc(gorm.persona, { model: { type: "scripted", steps: gorm.steps } });
    assert.deepEqual(bridgeWarnings, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadPersona: a broken file, a file without a persona name, bad steps or tools are clear errors", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/broken.jsonc`, '{\n  "persona": {"name": "X"\n  "options": {}\n}');
    await assert.rejects(loadPersona(`${dir}/broken.jsonc`), /broken\.jsonc: CommaExpected on line 3\./);
    await Deno.writeTextFile(`${dir}/nameless.json`, '{"persona": {"role": "a ghost"}}');
    await assert.rejects(
      loadPersona(`${dir}/nameless.json`),
      /expected an object with a 'persona' that has a 'name'/,
    );
    await Deno.writeTextFile(`${dir}/nme.json`, '{"persona": {"nme": "Gorm", "role": "the smith"}}');
    await assert.rejects(
      loadPersona(`${dir}/nme.json`),
      /nme\.json: expected an object with a 'persona' that has a 'name'; the persona has 'nme' \(did you mean 'name'\?\)\.$/,
    );
    await Deno.writeTextFile(`${dir}/flat.json`, '{"name": "Mira", "role": "the innkeeper"}');
    await assert.rejects(
      loadPersona(`${dir}/flat.json`),
      /flat\.json: expected an object with a 'persona' that has a 'name' \(the persona's fields go under 'persona': \{"persona": \{"name": "Mira", …\}\}\)\.$/,
    );
    await Deno.writeTextFile(`${dir}/a.json`, '{"persona": {"name": "A"}}');
    await Deno.writeTextFile(`${dir}/a.steps.json`, '{"stepz": []}');
    await assert.rejects(
      loadPersona(`${dir}/a.json`),
      /a\.steps\.json: expected an array of steps or \{"steps": \[…\]\}/,
    );
    // A step with no kind: the bridge said "'model.steps[1]' must contain one of …" when the NPC was created,
    // naming neither the file nor what was meant.
    await Deno.writeTextFile(
      `${dir}/a.steps.json`,
      '[{"text": "Hi."}, {"txt": "[happy] Hello.", "chunks": 2}]',
    );
    await assert.rejects(
      loadPersona(`${dir}/a.json`),
      (error: unknown) => {
        assert.ok(error instanceof TypeError, String(error));
        assert.equal(
          error.message,
          `${dir}/a.steps.json: step 2 has none of 'text', 'toolCalls', 'json', 'template' or 'error' (did you ` +
            `mean 'text'?); got {"txt":"[happy] Hello.","chunks":2}.`,
        );
        return true;
      },
    );
    await Deno.writeTextFile(`${dir}/a.steps.json`, '[{"delayMs": 5}]');
    await assert.rejects(
      loadPersona(`${dir}/a.json`),
      /step 1 has none of .* or 'error'; got \{"delayMs":5\}\.$/,
    );
    await Deno.writeTextFile(`${dir}/a.steps.json`, '[{"json": null}, {"error": "guardrail_violation"}]');
    assert.equal((await loadPersona(`${dir}/a.json`)).steps.length, 2);
    await Deno.writeTextFile(
      `${dir}/b.json`,
      '{"persona": {"name": "B"}, "tools": [{"name": "ok"}, "check_stock"]}',
    );
    await assert.rejects(loadPersona(`${dir}/b.json`), /tools\[1\] is not a tool definition/);
    await assert.rejects(loadPersona(`${dir}/missing.json`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadPersona: a missing file is NotFound saying where it looked; a relative path is told to use import.meta.url", async () => {
  const missing = await loadPersona("no_such_npc.jsonc").then(() => null, (e: unknown) => e);
  assert.ok(missing instanceof Deno.errors.NotFound, String(missing));
  assert.equal(
    missing.message,
    `loadPersona: there is no file 'no_such_npc.jsonc' in ${Deno.cwd()}, the folder deno runs in. A relative ` +
      `path starts there, not beside your script: new URL("./no_such_npc.jsonc", import.meta.url) names the ` +
      "file beside it.",
  );
  const dir = await Deno.makeTempDir();
  try {
    const absolute = await loadPersona(`${dir}/missing.json`).then(() => null, (e: unknown) => e);
    assert.ok(absolute instanceof Deno.errors.NotFound, String(absolute));
    assert.equal(absolute.message, `loadPersona: there is no file '${dir}/missing.json'.`);
    const url = await loadPersona(new URL(`file://${dir}/missing.json`)).then(() => null, (e: unknown) => e);
    assert.ok(url instanceof Deno.errors.NotFound, String(url));
    assert.equal(url.message, `loadPersona: there is no file 'file://${dir}/missing.json'.`);
    // a persona without a .steps.json beside it still loads, with no steps
    await Deno.writeTextFile(`${dir}/alone.json`, '{"persona": {"name": "Alone"}}');
    assert.deepEqual((await loadPersona(`${dir}/alone.json`)).steps, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadPersona: a key of the wrong kind is a TypeError naming it; an unknown key is ignored with a warning that guesses the key meant", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const warnings: string[] = [];
    const onWarning = (warning: string) => warnings.push(warning);
    await Deno.writeTextFile(
      `${dir}/gorm.jsonc`,
      '{"persona": {"name": "Gorm"}, "optoins": {"replyFormat": "text"}, "Tools": [], "mood": "grim"}',
    );
    assert.deepEqual(await loadPersona(`${dir}/gorm.jsonc`, { onWarning }), {
      persona: { name: "Gorm" },
      steps: [],
    });
    const keys = "an NPC file's keys are npc, persona, options, tools, memory, world, greeting.";
    assert.deepEqual(warnings, [
      `${dir}/gorm.jsonc: unknown key 'optoins' was ignored (did you mean 'options'?); ${keys}`,
      `${dir}/gorm.jsonc: unknown key 'Tools' was ignored (did you mean 'tools'?); ${keys}`,
      `${dir}/gorm.jsonc: unknown key 'mood' was ignored; ${keys}`,
    ]);
    for (
      const [body, message] of [
        ['"options": ["text"]', /c\.json: 'options' must be an object; got \["text"\]\.$/],
        ['"world": "village"', /c\.json: 'world' must be an object; got "village"\.$/],
        ['"memory": null', /c\.json: 'memory' must be an object; got null\.$/],
        [
          '"tools": {"name": "x"}',
          /c\.json: 'tools' must be an array of tool definitions; got \{"name":"x"\}\.$/,
        ],
        ['"npc": 7', /c\.json: 'npc' must be a string \(the NPC id\); got 7\.$/],
        [
          '"greeting": false',
          /c\.json: 'greeting' must be a string \(the situation of an opening bark\); got false\.$/,
        ],
      ] as const
    ) {
      await Deno.writeTextFile(`${dir}/c.json`, `{"persona": {"name": "C"}, ${body}}`);
      await assert.rejects(loadPersona(`${dir}/c.json`, { onWarning }), (error: unknown) => {
        assert.ok(error instanceof TypeError, String(error));
        assert.match(error.message, message);
        return true;
      });
    }
    // As `oam npc` reads it: `"greeting": true` is a bark with no situation.
    await Deno.writeTextFile(`${dir}/d.json`, '{"persona": {"name": "D"}, "greeting": true}');
    assert.equal((await loadPersona(`${dir}/d.json`, { onWarning })).greeting, "");
    assert.equal(warnings.length, 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadPersona: a steps file's fallback comes back with the steps, checked as a step; an unknown key of the file is named", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/guard.jsonc`, '{"persona": {"name": "Bram"}}');
    await Deno.writeTextFile(
      `${dir}/guard.steps.json`,
      JSON.stringify({ steps: [{ text: "Halt." }], fallback: { text: "Move along.", delay: 5 }, fallbak: 1 }),
    );
    const warnings: string[] = [];
    const guard = await loadPersona(`${dir}/guard.jsonc`, { onWarning: (w) => warnings.push(w) });
    assert.deepEqual(guard, {
      persona: { name: "Bram" },
      steps: [{ text: "Halt." }],
      fallback: { text: "Move along." },
    });
    assert.deepEqual(warnings, [
      `${dir}/guard.steps.json: unknown key 'fallbak' was ignored (did you mean 'fallback'?); ` +
      `a steps file is an array of steps or {"steps": […], "fallback"?: step}.`,
      `${dir}/guard.steps.json: fallback: unknown key 'delay' was ignored (did you mean 'delayMs'?).`,
    ]);
    await Deno.writeTextFile(
      `${dir}/guard.steps.json`,
      JSON.stringify({ steps: [], fallback: { txt: "Move along." } }),
    );
    await assert.rejects(
      loadPersona(`${dir}/guard.jsonc`),
      new TypeError(
        `${dir}/guard.steps.json: fallback has none of 'text', 'toolCalls', 'json', 'template' or 'error' ` +
          `(did you mean 'text'?); got {"txt":"Move along."}.`,
      ),
    );
    await Deno.writeTextFile(
      `${dir}/guard.steps.json`,
      JSON.stringify({ steps: [], fallback: "Move along." }),
    );
    await assert.rejects(
      loadPersona(`${dir}/guard.jsonc`),
      new TypeError(`${dir}/guard.steps.json: 'fallback' must be a step object; got "Move along.".`),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("modelFromArgs: a steps file's fallback (loadPersona's) goes to the scripted model with the steps", () => {
  const fallback = { text: "Move along." };
  assert.deepEqual(modelFromArgs([], { steps: [{ text: "Halt." }], fallback }), {
    type: "scripted",
    steps: [{ text: "Halt." }],
    fallback,
  });
  assert.deepEqual(modelFromArgs(["--model", "scripted"], { steps: [], fallback }), {
    type: "scripted",
    steps: [],
    fallback,
  });
  assert.deepEqual(modelFromArgs([], { steps: [] }), { type: "scripted", steps: [] });
  assert.equal(modelFromArgs(["--system"], { steps: [], fallback }), "system");
});

Deno.test("modelFromArgs(Deno.args) without a script: the model a flag names, else a TypeError naming the fix", () => {
  // Plain JavaScript, or a script the type checker did not see: the script is needed only for the default.
  const withoutScript = modelFromArgs as (args: readonly string[]) => ReturnType<typeof modelFromArgs>;
  assert.equal(withoutScript(["--system"]), "system");
  assert.deepEqual(withoutScript(["--model", "openai:http://127.0.0.1:8080/v1#qwen"]), {
    type: "openai",
    baseURL: "http://127.0.0.1:8080/v1",
    model: "qwen",
  });
  for (const args of [[], ["--model", "scripted"]]) {
    assert.throws(() => withoutScript(args), (error: Error) => {
      assert.ok(error instanceof TypeError, String(error));
      assert.equal(
        error.message,
        "modelFromArgs: no script for the scripted model it plays without --system or --model: pass its " +
          'steps, modelFromArgs(Deno.args, [{ text: "Hello." }]) (or a persona file\'s loadPersona(…) result), ' +
          "or run with --system or --model <model>.",
      );
      return true;
    });
  }
  assert.throws(() => modelFromArgs([], "hello" as never), {
    name: "TypeError",
    message: "modelFromArgs: the script must be a list of steps or { steps, fallback }; got a string.",
  });
});
