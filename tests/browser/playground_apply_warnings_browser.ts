/// <reference lib="dom" />
/**
 * Apply sends the running NPC's state with the editor's persona, options and tools (`npc/restore`), so the
 * bridge names a key it ignored under `state.`; the designer never wrote `state.`: Apply's warning names the
 * key as the editor has it, as Start's does, with the same "did you mean". A restore sends a state too: its
 * warnings name the keys as the persona file (and the editor) does, not under `state.`.
 *
 *   deno task test:browser      (needs Chromium: apt-get install -y chromium, or OAM_CHROMIUM=<path>)
 */
import assert from "node:assert/strict";
import { file, loaded, npcReady, withPlayground } from "./browser_fixture.ts";
import { startScriptNpc } from "./script_npc.ts";

/** `maxSentences` is a persona field, written under options by mistake. */
const PERSONA = {
  npc: "ada",
  persona: { name: "Ada", role: "a shopkeeper" },
  options: { replyFormat: "text", maxSentences: 3 },
};

Deno.test("Apply's warning about an ignored key names it as the editor has it (options.maxSentences), as Start's does", async () => {
  await withPlayground("failed-apply-warnings", async (browser) => {
    const { page } = browser;
    await page.setInputFiles("#load-persona", [file("ada.jsonc", PERSONA)]);
    await loaded(page, "ada.jsonc");
    await startScriptNpc(page);
    const warning = page.locator("#start-result li.warning");
    const atStart = await warning.allInnerTexts();
    assert.ok(
      atStart.some((w) => w.startsWith("Unknown parameter 'options.maxSentences' was ignored.")),
      JSON.stringify(atStart),
    );
    await page.click("#apply");
    await page.locator("#start-result").filter({ hasText: "Applied to Ada." }).waitFor();
    await npcReady(page);
    assert.deepEqual(await warning.allInnerTexts(), atStart);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a restore's warning about an ignored key names it as the editor has it (options.maxSentences), not under state.", async () => {
  await withPlayground("failed-restore-warnings", async (browser) => {
    const { page } = browser;
    await startScriptNpc(page);
    await page.click("#tab-state-save");
    const save = { state: { persona: { name: "Ada", role: "a shopkeeper" }, options: PERSONA.options } };
    await page.setInputFiles("#restore-state", [file("ada.state.json", save)]);
    await page.locator("#start-result").filter({ hasText: "Restored Ada." }).waitFor();
    await npcReady(page);
    // Before: "Unknown parameter 'state.options.maxSentences' was ignored.", a key no file of the designer has,
    // and so for the options the script's warnings name.
    assert.deepEqual(await page.locator("#start-result li.warning").allInnerTexts(), [
      "Unknown parameter 'options.maxSentences' was ignored.",
      "The script calls 'update_world_state', which this NPC does not have. The built-in 'update_world_state' " +
      "is on when the NPC has a 'world' and 'options.worldWritable' names paths.",
      "The script calls 'change_relationship', which this NPC does not have. The built-in 'change_relationship' " +
      `is on when 'options.memoryTools' names "changeRelationship" (or is "all").`,
      "The script calls 'remember_fact', which this NPC does not have. The built-in 'remember_fact' is on when " +
      `'options.memoryTools' names "rememberFact" (or is "all").`,
    ]);
    assert.deepEqual(browser.errors, []);
  });
});
