/// <reference lib="dom" />
/**
 * The Model tab's Load script… in a real headless Chromium: a file that is not a script (a persona file, a save
 * state) leaves the page's script as it was and says where that file goes; a script is loaded and run.
 *
 *   deno test --allow-all tests/browser/playground_model_tab_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import { file, withPlayground } from "./browser_fixture.ts";

Deno.test("Load script… with a persona file or a save state leaves the script as it was and says to load it with Load file…", async () => {
  await withPlayground("failed-model-tab-load-script", async ({ page, errors }) => {
    await page.click("#tab-model");
    await page.check("#model-bridge");
    const script = await page.inputValue("#script");
    const persona = { npc: "gorm", persona: { name: "Gorm" } };
    await page.setInputFiles("#load-script", [file("gorm.jsonc", persona)]);
    // Before: the persona's text replaced the script, the page's script was chosen, and the result said
    // "Loaded the script gorm.jsonc; new NPCs run on it." (with no way back to the script).
    await page.locator("#start-result .error").filter({ hasText: "gorm.jsonc" }).waitFor();
    assert.equal(
      (await page.locator("#start-result .error").textContent())?.trim(),
      "gorm.jsonc is a persona file, not a script: load it with Load file… above. The script was not changed.",
    );
    assert.equal(await page.inputValue("#script"), script);
    assert.equal(await page.isChecked("#model-bridge"), true);
    const state = { npc: "gorm", state: { persona: { name: "Gorm" }, transcript: { entries: [] } } };
    await page.setInputFiles("#load-script", [file("gorm.state.json", state)]);
    await page.locator("#start-result .error").filter({ hasText: "gorm.state.json" }).waitFor();
    assert.equal(
      (await page.locator("#start-result .error").textContent())?.trim(),
      "gorm.state.json is a save state, not a script: restore it with Load file… above (or State → Save). The " +
        "script was not changed.",
    );
    assert.equal(await page.inputValue("#script"), script);
    // A script is loaded as before.
    await page.setInputFiles("#load-script", [file("gorm.steps.json", [{ text: "Rain again." }])]);
    await page.locator("#start-result .note").filter({ hasText: "Loaded the script gorm.steps.json" })
      .waitFor();
    assert.equal(JSON.parse(await page.inputValue("#script"))[0].text, "Rain again.");
    assert.equal(await page.isChecked("#model-script"), true);
    assert.deepEqual(errors, []);
  });
});
