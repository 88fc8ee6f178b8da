/**
 * docs/scripting.md says what a designer's script does: its first example runs as written (its tool call
 * is answered, not an error output), and what it says about scripts that go wrong (an invalid reply step
 * is retried with the next step; alone it fails naming that step and its problem; a typo in a step's key; a
 * key the scripted model does not read is a warning; a text step in a structured turn; a tool the NPC does not
 * have) is what the bridge does, and so is what it says of decision and content steps (their keys, the
 * order decideMany plays them, what of a content schema a step is held to, nullable values left out).
 */
import assert from "node:assert/strict";
import { Bridge, BridgeError, type NpcOptions, type NpcReply, type ScriptStep } from "../../mod.ts";

const DOC = await Deno.readTextFile(new URL("../../docs/scripting.md", import.meta.url));
const MOD = new URL("../../mod.ts", import.meta.url).href;

const REPLY = (line: string): ScriptStep => ({
  json: { emotion: "proud", line, player_options: ["Buy.", "Haggle.", "Leave."], ends_conversation: false },
});

Deno.test("docs/scripting.md: the first example runs as written, and its tool call is answered", async () => {
  const snippet = DOC.match(/```ts\n([\s\S]*?)```/)?.[1];
  assert.ok(snippet, "the page has a ts example");
  const source = `import { Bridge } from "${MOD}";\n` +
    "export default async function () {\n  await using bridge = await Bridge.open();\n" +
    `${snippet}\n  return await npc.talk("Any swords?");\n}\n`;
  const module = await import(`data:application/typescript;base64,${btoa(source)}`);
  const reply: NpcReply = await module.default();
  assert.equal(reply.line, "Three on the rack.");
  assert.deepEqual(reply.toolCalls.map((r) => [r.call.name, r.isError]), [["check_inventory", false]]);
});

Deno.test("docs/scripting.md: what it says about scripts that go wrong is what the bridge does", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const talk = async (steps: ScriptStep[]) => {
    const npc = await bridge.createNpc({ name: "Gorm" }, { model: { type: "scripted", steps } });
    return await npc.talk("Hello.");
  };
  const failure = async (steps: ScriptStep[]) => {
    const error = await talk(steps).then(() => null, (e: unknown) => e);
    assert.ok(error instanceof BridgeError, String(error));
    return error;
  };
  // "an invalid answer ... is tried again once, and the retry plays the next step"
  const badKeys: ScriptStep = {
    json: { emotion: "proud", line: "Hm.", playerOptions: ["a", "b", "c"], ends_conversation: false },
  };
  assert.equal((await talk([badKeys, REPLY("Second.")])).line, "Second.");
  assert.equal((await talk([{ text: "[happy] Hello." }, REPLY("Second.")])).line, "Second.");
  // "When the bad step was the last one, its retry finds no step left: the message names the bad step..."
  const alone = await failure([badKeys]);
  assert.equal(alone.code, -32012);
  assert.match(
    alone.message,
    /^The model gave an invalid answer: .*must have required property 'player_options'; the step has 'playerOptions', which is not a key of the answer \(its keys: emotion, line, player_options, ends_conversation\)\. It was step 1 of 1, and no step is left for its retry: fix that step/,
  );
  assert.ok(
    DOC.includes("its retry finds no step left: the message gives the\nproblem, then names the bad step"),
  );
  assert.ok(
    DOC.includes(
      "| `-32012` `The model gave an invalid answer: … It was step 2 of 2, and no step is left for its retry: …` |",
    ),
  );
  const gorm = await bridge.createNpc({ name: "Gorm" }, {
    model: { type: "scripted", steps: [REPLY("One."), badKeys] },
  });
  assert.equal((await gorm.talk("Hello.")).line, "One.");
  const second = await gorm.talk("Again.").then(() => null, (e: unknown) => e);
  assert.ok(second instanceof BridgeError);
  assert.match(
    second.message,
    /^The model gave an invalid answer: .* It was step 2 of 2, and no step is left for its retry: /,
  );
  assert.ok(DOC.includes("#: must have required property\n'player_options'"));
  // The table's rows.
  const twice = await failure([{ text: "[happy] Hello." }, { text: "[happy] Again." }]);
  assert.match(
    twice.message,
    /the answer is not valid JSON: \[happy\] Hello\. It was step 1 of 2, .* Fix step 1 first\. A text step played where the NPC replies in JSON \(reply format 'automatic'\): /,
  );
  assert.ok(
    DOC.includes(
      "`-32012` `… the answer is not valid JSON: [happy] Hello. … A text step played where the NPC replies in " +
        "JSON (reply format 'automatic'): …`",
    ),
  );
  // "When its retry is invalid too, the message leads with the first bad step"
  const both = await failure([badKeys, { text: "[happy] Again." }]);
  assert.match(
    both.message,
    /^The model gave an invalid answer: .*'player_options'; the step has 'playerOptions', which is not a key of the answer \(its keys: emotion, line, player_options, ends_conversation\)\. It was step 1 of 2, and its retry, step 2, was invalid too: the answer is not valid JSON: \[happy\] Again\. Fix step 1 first\.$/,
  );
  assert.ok(
    DOC.includes(
      "| `-32012` `The model gave an invalid answer: … It was step 1 of 2, and its retry, step 2, was invalid " +
        "too: … Fix step 1 first.` |",
    ),
  );
  const typo = await bridge.createNpc({ name: "Gorm" }, {
    model: { type: "scripted", steps: [REPLY("One."), REPLY("Two."), { tollCalls: [] } as never] },
  }).then(() => null, (e: unknown) => e);
  assert.ok(typo instanceof BridgeError);
  assert.equal(typo.code, -32602);
  assert.ok(DOC.includes(`\`-32602\` \`${typo.message}\``), typo.message);
  // "A key the scripted model does not know is ignored, with a warning": the npc/create warnings.
  const delayed = await bridge.createNpc({ name: "Gorm" }, {
    model: { type: "scripted", steps: [{ ...REPLY("One."), delay: 500 } as never] },
  });
  assert.deepEqual(delayed.warnings, [
    "Unknown parameter 'model.steps[0].delay' was ignored (did you mean 'delayMs'?).",
  ]);
  assert.ok(DOC.includes(`| \`${delayed.warnings[0]}\` in the \`warnings\` of \`npc/create\``));
  assert.ok(DOC.includes("A key the scripted model does not know is ignored, with a warning"));
  assert.ok(!DOC.includes("ignored without a warning"));
  // "the model just gets the error output `There is no tool named '…'` and the next step plays"
  const unknownTool = await talk([
    { toolCalls: [{ name: "check_inventory", arguments: {} }] },
    REPLY("Three."),
  ]);
  assert.equal(unknownTool.line, "Three.");
  assert.deepEqual(unknownTool.toolCalls.map((r) => [r.output, r.isError]), [
    ["There is no tool named 'check_inventory'.", true],
  ]);
});

Deno.test("docs/scripting.md: a save after compactAfterTurns turns plays a step for the summary, '(script exhausted)' when none is left", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const lines = Array.from({ length: 8 }, (_, i) => ({
    json: { emotion: "neutral", line: `Line ${i + 1}.`, ends_conversation: false },
  }));
  const saveAfterEight = async (options: NpcOptions, extra: ScriptStep[] = []) => {
    const npc = await bridge.createNpc({ name: "Gorm" }, {
      options: { playerOptionCount: 0, ...options },
      model: { type: "scripted", steps: [...lines, ...extra] },
    });
    for (let i = 0; i < 8; i++) await npc.talk(`Hello ${i}.`);
    return (await npc.state()).memory.summary;
  };
  assert.equal(await saveAfterEight({}), "(script exhausted)");
  assert.equal(await saveAfterEight({}, [{ text: "Gorm sold an axe." }]), "Gorm sold an axe.");
  assert.equal(await saveAfterEight({ compactAfterTurns: 0 }), undefined);
  assert.ok(
    DOC.includes(
      '| `"summary": "(script exhausted)"` in a save (`npc.state()`) after eight turns or more |',
    ),
  );
});

Deno.test("docs/scripting.md: a cancelled turn has used the steps it started, and the next turn plays the one after", async () => {
  assert.ok(DOC.includes("- **A cancelled turn** ("));
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const started = Promise.withResolvers<void>();
  bridge.tool({ name: "forge", description: "Forges." }, (_args, ctx) => {
    started.resolve();
    return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve("stopped")));
  });
  const gorm = await bridge.createNpc({ name: "Gorm" }, {
    tools: ["forge"],
    options: { replyFormat: "text", playerOptionCount: 0, canEndConversation: false },
    model: {
      type: "scripted",
      steps: [
        { toolCalls: [{ name: "forge", arguments: {} }] },
        { text: "[proud] Not reached by the first turn." },
        { text: "[happy] A long wait.", delayMs: 60_000 },
        { text: "[sad] After the wait." },
      ],
    },
  });
  const cancelled = (e: unknown) => e instanceof BridgeError && e.dataCode === "cancelled";
  const first = new AbortController();
  const turn = gorm.talk("Forge it.", { signal: first.signal });
  await started.promise;
  first.abort();
  await assert.rejects(turn, cancelled);
  assert.equal((await gorm.talk("Well?")).line, "Not reached by the first turn.");
  await assert.rejects(
    gorm.talk("Wait.", { timeoutMs: 20 }),
    (e) => e instanceof BridgeError && e.dataCode === "timeout",
  );
  assert.equal((await gorm.talk("And?")).line, "After the wait.");
});

Deno.test("docs/scripting.md: built-in tools come with the options it names, and each decide or generate plays its script from the start", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const remember: ScriptStep = {
    toolCalls: [{ name: "remember_fact", arguments: { fact: "The player is Arn." } }],
  };
  const off = await bridge.createNpc({ name: "Hilda" }, {
    model: { type: "scripted", steps: [remember, REPLY("Hm.")] },
  });
  assert.ok(!off.tools.includes("remember_fact"), off.tools.join(", "));
  const offReply = await off.talk("I'm Arn.");
  assert.deepEqual(offReply.toolCalls.map((r) => [r.output, r.isError]), [[
    "There is no tool named 'remember_fact'.",
    true,
  ]]);
  assert.deepEqual((await off.state()).memory.facts, []);
  const on = await bridge.createNpc({ name: "Hilda" }, {
    options: { memoryTools: ["rememberFact"] },
    model: { type: "scripted", steps: [remember, REPLY("Arn.")] },
  });
  assert.ok(on.tools.includes("remember_fact"), on.tools.join(", "));
  await on.talk("I'm Arn.");
  assert.deepEqual((await on.state()).memory.facts, ["The player is Arn."]);
  assert.ok(DOC.includes('(`memoryTools: ["rememberFact", "changeRelationship"]` or `"all"`, default none)'));
  assert.ok(DOC.includes("| `There is no tool named 'remember_fact'.` as a tool call's output"));

  // "one script passed to two decide calls plays its first step twice"
  const model = {
    type: "scripted" as const,
    steps: [
      { json: { reasoning: "Quiet night.", choice: "ask_papers", confidence: 60 } },
      { json: { reasoning: "The alarm rings.", choice: "raise_alarm", confidence: 95 } },
    ],
  };
  const options = ["let_pass", "ask_papers", "raise_alarm"];
  const first = await bridge.decide("A traveller comes.", options, { model });
  const second = await bridge.decide("A traveller comes; the alarm rings.", options, { model });
  assert.deepEqual([first.optionID, second.optionID], ["ask_papers", "ask_papers"]);
  const schema = { type: "object", properties: { title: { type: "string" } }, required: ["title"] } as const;
  const quests = {
    type: "scripted" as const,
    steps: [{ json: { title: "One" } }, { json: { title: "Two" } }],
  };
  const titles = [
    (await bridge.generate(schema, "A quest.", { model: quests })).title,
    (await bridge.generate(schema, "Another.", { model: quests })).title,
  ];
  assert.deepEqual(titles, ["One", "One"]);
  assert.ok(DOC.includes("so one script passed to two `decide` calls plays its first step twice"));
  // "An `actor` that names an NPC lends the decision its persona, not its model"
  const bram = await bridge.createNpc({ name: "Bram" }, { model });
  const asBram = await bridge.decide("A traveller comes.", options, { actor: bram.id })
    .then(() => null, (e: unknown) => e);
  assert.ok(asBram instanceof BridgeError && asBram.dataCode === "model_unavailable", String(asBram));
  assert.equal(
    (await bridge.decide("A traveller comes.", options, { actor: bram.id, model })).optionID,
    "ask_papers",
  );
  assert.ok(DOC.includes("An `actor` that names an\nNPC lends the decision its persona, not its model"));
});

Deno.test("docs/scripting.md: decision and content steps are held as it says", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const model = (...steps: ScriptStep[]) => ({ type: "scripted" as const, steps });
  const decision = await bridge.decide("A troll charges.", ["fight", "flee"], {
    model: model({ json: { reasoning: "Cornered, so it fights.", choice: "fight", confidence: 70 } }),
  });
  assert.equal(decision.optionID, "fight");
  assert.ok(DOC.includes('`{"reasoning": "Cornered, so it fights.", "choice": "fight", "confidence": 70}`'));
  const wrongKey = await bridge.decide("A troll charges.", ["fight", "flee"], {
    model: model({ json: { reasoning: "r", optionID: "fight", confidence: 70 } }),
  }).then(() => null, (e: unknown) => e);
  assert.ok(wrongKey instanceof BridgeError && /required property 'choice'/.test(wrongKey.message));
  const st = (choice: string): ScriptStep => ({ json: { reasoning: "r", choice, confidence: 50 } });
  const crowd = await bridge.decideMany([
    { situation: "1", options: ["a", "b"] },
    { situation: "2", options: ["only"] },
    { situation: "3", options: ["a", "b"] },
    { situation: "4", options: ["a", "b"], fallbackOptionID: "a" },
    { situation: "5", options: ["a", "b"] },
  ], { model: model(st("a"), st("b"), { error: "guardrail_violation" }, st("b")) });
  assert.deepEqual(crowd.map((r) => "error" in r ? r.error.dataCode : [r.optionID, r.isFallback]), [
    ["a", false],
    ["only", false],
    ["b", false],
    ["a", true],
    ["b", false],
  ]);
  assert.ok(DOC.includes("A decision with a single option plays no step"));

  const quest = {
    type: "object",
    properties: {
      title: { type: "string", minLength: 3 },
      reward: { $ref: "#/$defs/reward" },
      twist: { anyOf: [{ type: "string" }, { type: "null" }] },
    },
    required: ["title", "reward", "twist"],
    $defs: {
      reward: { type: "object", properties: { amount: { type: "integer", minimum: 1, maximum: 500 } } },
    },
  };
  const generate = (...steps: ScriptStep[]) => bridge.generate(quest, "A quest.", { model: model(...steps) });
  const fails = async (...steps: ScriptStep[]) => {
    const error = await generate(...steps).then(() => null, (e: unknown) => e);
    assert.ok(error instanceof BridgeError, String(error));
    assert.equal(error.code, -32012);
    return error.message;
  };
  // Described only: a one-letter title passes. A nullable value is left out, and comes back left out.
  assert.deepEqual(await generate({ json: { title: "A", reward: { amount: 5 } } }), {
    title: "A",
    reward: { amount: 5 },
  });
  assert.match(
    await fails({ json: { title: "Rats", reward: { amount: 5 }, twist: null } }),
    /#\/properties\/twist: must be string/,
  );
  assert.ok(DOC.includes("(`#/properties/twist: must be string`)"));
  // No keys beyond the schema's properties, although the schema does not say additionalProperties: false.
  assert.match(
    await fails({ json: { title: "Rats", reward: { amount: 5 }, extra: 1 } }),
    /must NOT have additional properties 'extra'/,
  );
  const range = await fails({ json: { title: "Rats", reward: { amount: 9999 } } });
  assert.ok(
    range.startsWith("The model gave an invalid answer: the answer does not match the response schema: "),
  );
  assert.ok(
    range.includes(
      "#/properties/reward/properties/amount: must be <= 500. It was step 1 of 1",
    ),
  );
  assert.ok(
    DOC.includes("#/properties/reward/properties/amount: must be <= 500. It was step 1 of 1"),
  );
  assert.deepEqual(
    await generate({ json: { title: "Rats", reward: { amount: 9999 } } }, {
      json: { title: "Rats", reward: { amount: 9 } },
    }),
    {
      title: "Rats",
      reward: { amount: 9 },
    },
  );
  assert.match(await fails({ text: "A quest." }), /the answer is not valid JSON/);
  assert.match(
    await fails(),
    /^Script exhausted: all 0 steps were played and this turn needs a structured answer/,
  );
});

/** The section of the page on golden tests, up to the next section. */
function goldenSection(): string {
  const start = DOC.indexOf("## Golden tests");
  assert.ok(start >= 0, "the page has a section on golden tests");
  return DOC.slice(start, DOC.indexOf("\n## ", start + 1));
}

Deno.test("docs/scripting.md: the golden test writes its file, passes, and fails with a diff when a line changes", async () => {
  const snippet = goldenSection().match(/```ts golden\n([\s\S]*?)```/)?.[1];
  assert.ok(snippet, "the section has a ts example");
  const dir = await Deno.makeTempDir({ prefix: "oam-golden-" });
  try {
    const file = `${dir}/guard_golden_test.ts`;
    await Deno.writeTextFile(
      file,
      snippet.replace('"../mod.ts"', JSON.stringify(MOD)).replace(
        'new URL("../personas/guard.jsonc", import.meta.url)',
        `new URL(${JSON.stringify(new URL("../../personas/guard.jsonc", import.meta.url).href)})`,
      ),
    );
    const run = async (env: Record<string, string> = {}) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["test", "-A", "--no-lock", "--no-check", file],
        env: { NO_COLOR: "1", ...env },
        stdout: "piped",
        stderr: "piped",
      }).output();
      return {
        code: out.code,
        text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr),
      };
    };
    const written = await run({ UPDATE_GOLDEN: "1" });
    assert.equal(written.code, 0, written.text);
    const golden = await Deno.readTextFile(`${dir}/bram.golden.json`);
    assert.ok(golden.includes('"line": "Go on, then. Mind the old mine road."'), golden);
    assert.ok(golden.includes('"id": "e1"'), "the save's ids are the stable ones");
    const again = await run();
    assert.equal(again.code, 0, again.text);
    // A persona or a script that changes behaviour: the test fails, naming the line.
    await Deno.writeTextFile(
      `${dir}/bram.golden.json`,
      golden.replace("Mind the old mine road.", "Be quick."),
    );
    const changed = await run();
    assert.equal(changed.code, 1, changed.text);
    assert.match(changed.text, /Be quick\./);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("docs/scripting.md: the shell golden job prints and saves the same conversation twice, with no absolute path, and exits 0", async () => {
  const sh = goldenSection().match(/```sh\n([\s\S]*?)```/)?.[1];
  assert.ok(sh, "the section has a shell example");
  const dir = await Deno.makeTempDir({ prefix: "oam-golden-sh-" });
  const root = new URL("../..", import.meta.url).pathname;
  const oam = `${Deno.execPath()} run --no-lock -A ${root}cli.ts`;
  // The job without its git diff, run from the repository's root as written; the output kept in `dir`.
  const job = sh.replace("deno task oam", oam).replace("> bram.txt", `> ${dir}/bram.txt`)
    .replace("/state bram.save.json", `/state ${dir}/bram.save.json`).replace(/\ngit diff[^\n]*/, "");
  try {
    const outputs = [];
    for (let i = 0; i < 2; i++) {
      const out = await new Deno.Command("bash", {
        args: ["-c", `set -o pipefail\n${job}`],
        cwd: root,
        stderr: "piped",
      })
        .output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      outputs.push(
        await Deno.readTextFile(`${dir}/bram.txt`) + await Deno.readTextFile(`${dir}/bram.save.json`),
      );
    }
    assert.equal(outputs[1], outputs[0]);
    assert.match(outputs[0], /Bram \[neutral\]: Go on, then\. Mind the old mine road\./);
    // The save holds no path of this machine: the folder of the tools is relative to the save.
    const saved = JSON.parse(await Deno.readTextFile(`${dir}/bram.save.json`));
    assert.ok(!saved.toolsDir.startsWith("/"), saved.toolsDir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
