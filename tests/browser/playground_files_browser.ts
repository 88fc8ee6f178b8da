/// <reference lib="dom" />
/**
 * The playground's files and checks as a designer meets them, in a real headless Chromium: Save persona and
 * Save script say what they saved and where it went (as Export does); the page's check of its script agrees
 * with the bridge's, so "Ready to start." is not followed by a refused Start; a Start or a restore the bridge
 * refuses leaves the NPC that ran running, with its conversation.
 *
 *   deno test --allow-all tests/browser/playground_files_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { file, npcReady, withPlayground } from "./browser_fixture.ts";

async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).textContent() ?? "").trim();
}

/** Clicks `button` and returns the name of the file it downloaded. */
async function downloaded(page: Page, button: () => Promise<void>): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent("download"), button()]);
  return download.suggestedFilename();
}

Deno.test("Save persona and Save script say under Start which file they saved and where it went, as Export does", async () => {
  await withPlayground("failed-files-saved", async ({ page, errors }) => {
    const persona = await downloaded(page, () => page.click("#save-persona"));
    assert.equal(persona, "mira.jsonc");
    // Before: nothing on the page changed.
    assert.equal(
      await text(page, "#start-result"),
      "Saved mira.jsonc (the persona file) to your browser's downloads folder; Load file… opens it again.",
    );
    await page.click("#tab-model");
    const script = await downloaded(page, () => page.getByRole("button", { name: "Save script" }).click());
    assert.equal(script, "mira.steps.json");
    assert.equal(
      await text(page, "#start-result"),
      "Saved mira.steps.json (the script) to your browser's downloads folder; Load script… opens it again.",
    );
    const exported = await downloaded(page, () => page.click("#export-persona"));
    assert.match(
      await text(page, "#start-result"),
      new RegExp(
        `^Exported ${exported.replaceAll(".", "\\.")} to your browser's downloads folder: the params`,
      ),
    );
    assert.deepEqual(errors, []);
  });
});

Deno.test("a script the bridge would refuse is a problem before Start, named as the bridge names it; Start anyway shows the bridge agrees", async () => {
  await withPlayground("failed-files-script-check", async ({ page, errors }) => {
    await page.click("#tab-model");
    await page.locator("#model-script").check();
    await page.fill("#script", '{"steps":[{"text": 3}]}');
    // Before: "Ready to start.", and Start then showed the bridge's refusal.
    await page.locator("#editor-status .summary").filter({ hasText: "1 problem to fix" }).waitFor();
    assert.equal(await text(page, "#script-message"), "The script: 'script.steps[0].text' must be a string.");
    await page.click("#start");
    await page.locator("#start-result p.error").getByRole("button", { name: "Start anyway" }).click();
    await page.locator("#start-result p.error").filter({ hasText: "'model.steps[0].text' must be a string." })
      .waitFor();
    // A member the bridge ignores is said by the box, and does not block Start.
    await page.fill("#script", '{"step": [{"text": "Hi"}]}');
    await page.locator("#editor-status").filter({ hasText: "Ready to start." }).waitFor();
    assert.equal(
      await text(page, "#script-message"),
      "Unknown parameter 'script.step' was ignored (did you mean 'steps'?).",
    );
    assert.deepEqual(errors, []);
  });
});

/** Starts the sample NPC and says one line (its turn ends). */
async function startAndTalk(page: Page): Promise<void> {
  await page.click("#start");
  await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
  await npcReady(page);
  await page.fill("#player-line", "Hello");
  await page.press("#player-line", "Enter");
  await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
}

/** Says `line` and waits until turn `n` ends. */
async function talk(page: Page, line: string, n: number): Promise<void> {
  await page.fill("#player-line", line);
  await page.press("#player-line", "Enter");
  await page.locator(`.turn[data-turn="${n}"] .npc[aria-busy="false"]`).waitFor();
}

Deno.test("a Start the bridge refuses leaves the NPC that ran running, with its conversation, memory and world", async () => {
  await withPlayground("failed-files-refused-start", async ({ page, errors }) => {
    await startAndTalk(page);
    // A negative temperature: the page lists it as a problem, and Start anyway shows what the bridge says.
    await page.click("#tab-jsonc");
    await page.fill("#jsonc", JSON.stringify({ persona: { name: "Mira" }, options: { temperature: -1 } }));
    await page.locator("#editor-status .summary").filter({ hasText: "1 problem to fix" }).waitFor();
    await page.click("#start");
    await page.locator("#start-result p.error").getByRole("button", { name: "Start anyway" }).click();
    await page.locator("#start-result p.error").filter({ hasText: /temperature.*Mira runs on as before\.$/ })
      .waitFor();
    await npcReady(page);
    // Before: "· not running (stopped for the new start)", and a button to restore her as last seen.
    assert.doesNotMatch(await text(page, ".conversation-head .npc-model"), /not running/);
    assert.equal(
      await text(page, "ol.turns li.note:last-child"),
      "The bridge refused the new start (see under Start): Mira runs on as before, with this conversation, " +
        "its memory and its world. Its script starts again from its first step (the NPC gets a new model).",
    );
    assert.equal(await page.locator("ol.turns li.note.offer").count(), 0);
    assert.equal(await page.locator('.turn[data-turn="1"]').count(), 1, "the conversation is kept");
    await page.click("#tab-state-world");
    await page.getByRole("button", { name: /^player\.gold is 20; change it/ }).waitFor();
    await talk(page, "Still there?", 2);
    assert.deepEqual(errors, []);
  });
});

Deno.test("a restore the bridge refuses leaves the NPC that ran running, with its conversation", async () => {
  await withPlayground("failed-files-refused-restore", async ({ page, errors }) => {
    await startAndTalk(page);
    await page.click("#tab-state-save");
    // A state file whose transcript is not one: the bridge refuses it (after the running NPC was stopped).
    const bad = { state: { persona: { name: "Mira" }, transcript: {} } };
    await page.setInputFiles("#restore-state", [file("bad.state.json", bad)]);
    const refused =
      /^Could not restore from bad\.state\.json: 'state\.transcript' must be.* Mira runs on as before\.$/;
    await page.locator("#start-result .error").filter({ hasText: refused }).waitFor();
    await npcReady(page);
    assert.doesNotMatch(await text(page, ".conversation-head .npc-model"), /not running/);
    assert.match(
      await text(page, "ol.turns li.note:last-child"),
      /^The bridge refused the restore \(see under Start\): Mira runs on as before, with this conversation/,
    );
    assert.equal(await page.locator('.turn[data-turn="1"]').count(), 1, "the conversation is kept");
    await talk(page, "Still there?", 2);
    assert.deepEqual(errors, []);
  });
});

Deno.test("a refused restore names the key as the editor does, and marks no field of the editor with it", async () => {
  await withPlayground("failed-files-refused-restore-key", async ({ page, errors }) => {
    const rounds = '[id^="f-options-maxToolRounds"][id$="-message"]';
    // The file's maxToolRounds is one the bridge refuses; the editor's (2) is fine.
    const bad = {
      state: { persona: { name: "Mira" }, options: { maxToolRounds: 1e20 }, transcript: { entries: [] } },
    };
    const refused =
      "Could not restore from bad.state.json: Parameter 'options.maxToolRounds' must be an integer; " +
      "got 100000000000000000000.";
    // With no NPC running, and with one running (put back after the refusal).
    for (const running of [false, true]) {
      if (running) await startAndTalk(page);
      await page.click("#tab-state-save");
      await page.setInputFiles("#restore-state", [file("bad.state.json", bad)]);
      await page.locator("#start-result .error").filter({ hasText: "Could not restore" }).waitFor();
      if (running) {
        await page.locator("#start-result .error").filter({ hasText: "Mira runs on as before." }).waitFor();
      }
      // Before: the message named 'state.options.maxToolRounds', a key the designer never wrote.
      assert.equal(
        await text(page, "#start-result .error"),
        running ? `${refused} Mira runs on as before.` : refused,
      );
      // Before: the editor's Max tool rounds field said "Bridge: Could not restore …" though its value is fine.
      assert.equal(await text(page, rounds), "");
    }
    assert.deepEqual(errors, []);
  });
});

Deno.test("Export for the engine of an editor with a problem listed downloads nothing and says so: the file would hold the schema, world or script from before, or a persona the bridge refuses", async () => {
  await withPlayground("failed-export-with-problem", async ({ page, errors }) => {
    const files: string[] = [];
    page.on("download", (d) => files.push(d.suggestedFilename()));
    const refused = async () => {
      await page.click("#export-persona");
      return text(page, "#start-result");
    };
    const expected =
      "Nothing was exported: fix the problems listed above first (the file would not hold what " +
      "the editor shows, or the bridge would refuse it).";
    // A schema box whose text is not JSON: before, the file held the schema from before the edit, as "Exported".
    await page.click("#tab-tools");
    const schema = page.locator(".tool-card textarea.code").first();
    const before = await schema.inputValue();
    await schema.fill('{"type": "object", "properties": {"qty": {"type": "integer"}}');
    await page.locator("#editor-status").filter({
      hasText: "Tool 1 (check_stock): The schema is not valid JSON",
    })
      .waitFor();
    assert.equal(await refused(), expected);
    await schema.fill(before);
    // The page's script not JSON: before, the file had no "model" (the NPC would run on the bridge's own).
    await page.click("#tab-model");
    await page.locator("#model-script").check();
    const script = await page.inputValue("#script");
    await page.fill("#script", script.replace('"steps": [', '"steps": [ oops'));
    await page.locator("#editor-status").filter({ hasText: "Script: The script is not valid JSON" })
      .waitFor();
    assert.equal(await refused(), expected);
    await page.fill("#script", script);
    // The World tab's box not JSON: before, the file held the world from before the edit.
    await page.click("#tab-world");
    const world = page.locator("#panel-world textarea").first();
    const seed = await world.inputValue();
    await world.fill('{"player": {"gold": 50}, ');
    await page.locator("#editor-status").filter({ hasText: "World: The world is not valid JSON" }).waitFor();
    assert.equal(await refused(), expected);
    await world.fill(seed);
    // No name: before, a persona without one (npc/create refuses it).
    await page.click("#tab-persona");
    await page.fill("[name='persona.name']", "");
    await page.locator("#editor-status").filter({ hasText: "Name is required." }).waitFor();
    assert.equal(await refused(), expected);
    assert.deepEqual(files, []);
    await page.fill("[name='persona.name']", "Mira");
    await page.locator("#editor-status .summary").filter({ hasText: "Ready to start." }).waitFor();
    assert.equal(await downloaded(page, () => page.click("#export-persona")), "mira.npc-create.json");
    assert.deepEqual(errors, []);
  });
});

Deno.test("Save persona and Save script of a text with a problem save it, and say (as a warning) that it has one", async () => {
  await withPlayground("failed-files-saved-with-problem", async ({ page, errors }) => {
    await page.click("#tab-jsonc");
    await page.fill("#jsonc", '{"npc": "gorm", "persona": {"name": "Gorm",}');
    await downloaded(page, () => page.click("#save-persona"));
    // Before: "Saved …" in green, as for a file that loads and starts (Export refuses such a text).
    const persona = page.locator("#start-result p.warning");
    assert.match(
      (await persona.textContent()) ?? "",
      /^Saved mira\.jsonc \(the persona file\) to your browser's downloads folder; Load file… opens it again\. The NPC's name cannot be read from the text \(it has a syntax problem\), so it is saved under the name of its last valid version \(mira\)\. It has a problem to fix before it starts: .+/,
    );
    await page.click("#tab-model");
    await page.locator("#model-script").check();
    await page.fill("#script", '[{"say": "Hi"}]');
    await downloaded(page, () => page.getByRole("button", { name: "Save script" }).click());
    assert.match(
      (await page.locator("#start-result p.warning").textContent()) ?? "",
      /^Saved .+\.steps\.json \(the script\) to .+ It has a problem to fix before it starts: The script: 'script\[0\]' must contain/,
    );
    assert.deepEqual(errors, []);
  });
});

Deno.test("Save persona of a text whose NPC name cannot be read saves it under the file it was loaded from, or its last valid name, and says so", async () => {
  await withPlayground("failed-files-saved-broken-name", async ({ page, errors }) => {
    // A persona file with a syntax error, loaded over the sample (Mira): its own name cannot be read.
    await page.setInputFiles("#load-persona", [
      file("guard.jsonc", '{"npc": "gorm", "persona": {"name": "Gorm",}'),
    ]);
    await page.locator("#start-result").filter({ hasText: "Loaded guard.jsonc" }).waitFor();
    // Before: mira.jsonc, the name of the persona the text replaced (Gorm's text saved as Mira's file).
    assert.equal(await downloaded(page, () => page.click("#save-persona")), "guard.jsonc");
    const saidLoaded =
      /^Saved guard\.jsonc \(the persona file\) to your browser's downloads folder; Load file… opens it again\. The NPC's name cannot be read from the text \(it has a syntax problem\), so it is saved under the name of the file it was loaded from\. It has a problem to fix before it starts: /;
    assert.match(await text(page, "#start-result p.warning"), saidLoaded);
    // The page remembers it across a reload.
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.equal(await downloaded(page, () => page.click("#save-persona")), "guard.jsonc");
    assert.match(await text(page, "#start-result p.warning"), saidLoaded);
    // A valid text, then an edit that breaks it: the name of its last valid version.
    await page.click("#tab-jsonc");
    await page.fill("#jsonc", '{"npc": "bob", "persona": {"name": "Bob"}}');
    await page.fill("#jsonc", '{"npc": "bobby, "persona": {"name": "Bob"}}');
    assert.equal(await downloaded(page, () => page.click("#save-persona")), "bob.jsonc");
    assert.match(
      await text(page, "#start-result p.warning"),
      /^Saved bob\.jsonc .* The NPC's name cannot be read from the text \(it has a syntax problem\), so it is saved under the name of its last valid version \(bob\)\. It has a problem/,
    );
    assert.deepEqual(errors, []);
  });
});

Deno.test("a restore refused for the Model tab's script says so by the script, and marks no field of the editor", async () => {
  await withPlayground("failed-files-refused-restore-script", async ({ page, errors }) => {
    const rounds = '[id^="f-options-maxToolRounds"][id$="-message"]';
    // A file the bridge takes; the restore runs on the Model tab's script, which it refuses.
    const good = { state: { persona: { name: "Ada" }, transcript: { entries: [] } } };
    const refused = "Could not restore from ada.state.json: 'model.steps[0].text' must be a string.";
    // With no NPC running, and with one running (put back after the refusal).
    for (const running of [false, true]) {
      if (running) {
        // Mira runs on the bridge's model; then the page's script is chosen, and the restore runs on it.
        await page.click("#tab-model");
        await page.locator("#model-bridge").check();
        await startAndTalk(page);
      }
      await page.click("#tab-model");
      await page.locator("#model-script").check();
      await page.fill("#script", '{"steps":[{"text": 3}]}');
      await page.locator("#editor-status .summary").filter({ hasText: "1 problem to fix" }).waitFor();
      await page.click("#tab-state-save");
      await page.setInputFiles("#restore-state", [file("ada.state.json", good)]);
      await page.locator("#start-result .error").filter({ hasText: "Could not restore" }).waitFor();
      if (running) {
        await page.locator("#start-result .error").filter({ hasText: "Mira runs on as before." }).waitFor();
      }
      assert.equal(
        await text(page, "#start-result .error"),
        running ? `${refused} Mira runs on as before.` : refused,
      );
      // The Model tab says what the bridge refused there; the editor's fields say nothing of it.
      await page.click("#tab-model");
      assert.equal(await text(page, "#script-message"), `Bridge: ${refused}`);
      assert.equal(await text(page, rounds), "");
      await npcReady(page);
    }
    assert.deepEqual(errors, []);
  });
});

Deno.test("Undo load after Load file… with a persona and its script brings back both: the persona text, the script and the model chosen", async () => {
  await withPlayground("failed-undo-load-script", async ({ page, errors }) => {
    await page.click("#tab-model");
    await page.check("#model-bridge");
    const script = '[{"text": "My own first step."}]';
    await page.check("#model-script");
    await page.fill("#script", script);
    await page.check("#model-bridge");
    await page.click("#tab-jsonc");
    const persona = await page.inputValue("#jsonc");
    await page.setInputFiles("#load-persona", [
      file("gorm.jsonc", { npc: "gorm", persona: { name: "Gorm" }, options: { replyFormat: "text" } }),
      file("gorm.steps.json", [{ text: "Gorm's step." }]),
    ]);
    await page.locator("#start-result").filter({ hasText: "Loaded gorm.jsonc" }).waitFor();
    assert.equal(await page.isChecked("#model-script"), true);
    await page.click("#undo-load");
    // Before: "The persona text from before the load is back." — with Gorm's script in the box and chosen.
    await page.locator("#start-result .note").filter({ hasText: "from before the load" }).waitFor();
    assert.equal(
      await text(page, "#start-result .note"),
      "The persona text and the script from before the load are back.",
    );
    assert.equal(await page.inputValue("#jsonc"), persona);
    assert.equal(await page.inputValue("#script"), script);
    assert.equal(await page.isChecked("#model-bridge"), true);
    // A script loaded alone is undone alone.
    await page.setInputFiles("#load-persona", [file("gorm.steps.json", [{ text: "Gorm's step." }])]);
    await page.locator("#start-result").filter({ hasText: "Loaded the script gorm.steps.json" }).waitFor();
    await page.click("#undo-load");
    await page.locator("#start-result .note").filter({ hasText: "The script from before the load is back." })
      .waitFor();
    assert.equal(await page.inputValue("#script"), script);
    assert.equal(await page.inputValue("#jsonc"), persona);
    assert.deepEqual(errors, []);
  });
});

Deno.test("Load file… of a JSON file that is no persona, script or save state says what it looks like and changes nothing", async () => {
  await withPlayground("failed-files-wrong-kind", async ({ page, errors }) => {
    const persona = await page.inputValue("#jsonc");
    const script = await page.inputValue("#script");
    const cases: [string, unknown, RegExp][] = [
      [
        "tools.json",
        [{ name: "check_stock", description: "Stock of an item.", parameters: { type: "object" } }],
        /^tools\.json looks like a list of tools \(1 item with a "name" and "parameters"\), not a file Load file… takes\./,
      ],
      [
        "world.json",
        { player: { gold: 5 }, weather: "rain" },
        /^world\.json looks like an object with "player", "weather"/,
      ],
      [
        "states.json",
        [{ npc: "mira", state: {} }],
        /^states\.json looks like a list of save states \(1 item\)/,
      ],
      [
        "people.json",
        [{ persona: { name: "Gorm" } }],
        /^people\.json looks like a list of persona files or personas/,
      ],
      ["numbers.json", [1, 2], /^numbers\.json looks like a list of numbers \(2 items\), not a file/],
    ];
    for (const [name, value, message] of cases) {
      await page.setInputFiles("#load-persona", [file(name, value)]);
      // Before: the list went to the Model tab as a script ("Loaded the script tools.json"), and the object
      // replaced the persona text.
      await page.locator("#start-result p.error").filter({ hasText: name }).waitFor();
      assert.match(await text(page, "#start-result"), message);
      assert.match(await text(page, "#start-result"), /Nothing was changed\.$/);
      assert.equal(await page.inputValue("#jsonc"), persona);
      assert.equal(await page.inputValue("#script"), script);
      assert.equal(await page.locator("#undo-load").isHidden(), true);
    }
    assert.deepEqual(errors, []);
  });
});

Deno.test("a 5,000-character name is a warning before Start, and the page shows it cut short where it names the NPC", async () => {
  await withPlayground("failed-files-long-name", async ({ page, errors }) => {
    await page.fill("[name='persona.name']", "G".repeat(5000));
    await page.locator("#editor-status").filter({ hasText: "The name is 5,000 characters long" }).waitFor();
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started G" }).waitFor();
    await npcReady(page);
    const cut = "G".repeat(40) + "…";
    // Before: the whole name, 5,000 characters, in each of these (and a turn's speaker filled the conversation).
    assert.equal(await text(page, ".npc-name"), `${cut} (mira)`);
    assert.equal(await text(page, "#start-result"), `Started ${cut} (mira).`);
    assert.match(await text(page, "#editor-status .summary"), new RegExp(`^${cut} is running`));
    assert.deepEqual(errors, []);
  });
});

Deno.test("Load script… of a tools file or a world snapshot says what it looks like and keeps the script (it has no undo)", async () => {
  await withPlayground("failed-files-script-wrong-kind", async ({ page, errors }) => {
    await page.click("#tab-model");
    const script = await page.inputValue("#script");
    await page.setInputFiles("#load-script", [
      file("tools.json", [{ name: "check_stock", parameters: { type: "object" } }]),
    ]);
    // Before: the tools took the script's place ("Loaded the script tools.json; new NPCs run on it."), and the
    // designer's script was lost.
    await page.locator("#start-result p.error").filter({ hasText: "tools.json" }).waitFor();
    assert.equal(
      await text(page, "#start-result"),
      'tools.json looks like a list of tools (1 item with a "name" and "parameters"), not a script: a script is ' +
        'a list of steps such as [{"text": "Hello."}]. The script was not changed.',
    );
    await page.setInputFiles("#load-script", [file("world.json", { player: { gold: 5 } })]);
    await page.locator("#start-result p.error").filter({ hasText: "world.json" }).waitFor();
    assert.match(await text(page, "#start-result"), /^world\.json looks like an object with "player" /);
    assert.equal(await page.inputValue("#script"), script);
    assert.deepEqual(errors, []);
  });
});
