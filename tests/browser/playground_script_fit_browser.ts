/// <reference lib="dom" />
/**
 * A persona that replies in text (`personas/shopkeeper.jsonc`) started on the Model tab's sample script, whose
 * reply steps are JSON, in a real headless Chromium: the NPC would say the JSON as its line with no word of
 * why; the result under Start now says so, and what to do.
 *
 *   deno task test:browser      (needs Chromium: apt-get install -y chromium, or OAM_CHROMIUM=<path>)
 */
import assert from "node:assert/strict";
import { file, loaded, npcReady, withPlayground } from "./browser_fixture.ts";

const TEXT_PERSONA = { npc: "ada", persona: { name: "Ada" }, options: { replyFormat: "text" } };

Deno.test("a text-replying persona started on the sample script (json steps): the result under Start says it would say the JSON", async () => {
  await withPlayground("failed-script-fit", async ({ page, errors }) => {
    await page.setInputFiles("#load-persona", [file("ada.jsonc", TEXT_PERSONA)]);
    await loaded(page, "ada.jsonc");
    await page.click("#tab-model");
    await page.check("#model-script");
    await page.click("#start");
    await npcReady(page);
    // Before: "Started Ada (ada)." only, and her first reply was the raw JSON of the script's step.
    const warnings = await page.locator("#start-result ul.messages li.warning").allInnerTexts();
    assert.ok(
      warnings.some((w) =>
        w.startsWith(
          "The Model tab's script answers with json steps, but Ada replies in text (Options → Reply format): " +
            "each would be said as it is, JSON and all.",
        )
      ),
      JSON.stringify(warnings),
    );
    // The sample persona replies in JSON: no such warning.
    await page.click("#undo-load");
    await page.click("#start");
    await page.locator("#start-result").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    assert.equal(await page.locator("#start-result ul.messages li.warning").count(), 0);
    assert.deepEqual(errors, []);
  });
});
