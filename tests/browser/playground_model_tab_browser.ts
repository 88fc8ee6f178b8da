/// <reference lib="dom" />
/**
 * The Model tab's Load script… in a real headless Chromium: a file that is not a script (a persona file, a save
 * state) leaves the page's script as it was and says where that file goes; a script is loaded and run; a
 * chosen script that is not JSON is not replaced by the bridge's model at Start anyway or a restore.
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

Deno.test("Start anyway with the page's script chosen but not JSON: nothing starts on another model, the result says why", async () => {
  await withPlayground("failed-model-tab-start-anyway", async ({ page, errors }) => {
    await page.click("#tab-model");
    await page.check("#model-script");
    await page.fill("#script", "[ {text: } ]");
    await page.click("#start");
    await page.locator("#start-result button").filter({ hasText: "Start anyway" }).click();
    // Before: "Started Mira (mira)." with the conversation saying "scripted (the Model tab's script)", while
    // the NPC ran on the bridge's model (here: "The system model is unavailable …").
    const error = page.locator("#start-result p.error").filter({ hasText: "cannot send the page's script" });
    await error.waitFor();
    assert.match(
      (await error.textContent())?.trim() ?? "",
      /^Start anyway cannot send the page's script: The script is not valid JSON: .* Fix it in the Model tab, or choose the bridge's model there\.$/,
    );
    assert.equal(await page.locator("#start-result .note").count(), 0, "nothing started");
    // A state file restored meanwhile would run on the bridge's model the same way: refused, saying why.
    const state = { npc: "gorm", state: { persona: { name: "Gorm" }, transcript: { entries: [] } } };
    await page.setInputFiles("#restore-state", [file("gorm.state.json", state)]);
    const refused = page.locator("#start-result p.error").filter({ hasText: "gorm.state.json" });
    await refused.waitFor();
    assert.match(
      (await refused.textContent())?.trim() ?? "",
      /^Could not restore from gorm\.state\.json: the page's script cannot be sent: The script is not valid JSON: .* Fix it in the Model tab, or choose the bridge's model there\.$/,
    );
    assert.equal(await page.locator("#start-result .note").count(), 0, "nothing restored");
    assert.deepEqual(errors, []);
  });
});
