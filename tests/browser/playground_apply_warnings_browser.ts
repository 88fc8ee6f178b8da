/// <reference lib="dom" />
/**
 * Apply sends the running NPC's state with the editor's persona, options and tools (`npc/restore`), so the
 * bridge names a key it ignored under `state.`; the designer never wrote `state.`: Apply's warning names the
 * key as the editor has it, as Start's does, with the same "did you mean".
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
