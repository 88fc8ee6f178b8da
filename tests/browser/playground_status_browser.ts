/// <reference lib="dom" />
/**
 * The persona editor's status list in a real headless Chromium: while the JSONC text has a syntax error, the
 * list shows only it and says the other checks are paused until it is fixed; a tool added with "Add a tool"
 * has an empty description (a hint shows what to write), and the list warns about it before Start; Start
 * refused for a listed problem reads as two sentences with its Start anyway link.
 *
 *   deno test --allow-all tests/browser/playground_status_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import { withPlayground } from "./browser_fixture.ts";

Deno.test("a syntax error in the JSONC text: the list shows only it and says the other checks are paused until it is fixed", async () => {
  await withPlayground("failed-paused-status", async (browser) => {
    const { page } = browser;
    await page.click("#tab-jsonc");
    const good = '{\n  "persona": {"name": "Gorm", "mood": "grim"}\n}\n';
    await page.fill("#jsonc", good);
    await page.locator("#editor-status li.unknown-fields").waitFor();
    await page.fill("#jsonc", good.replace('"Gorm",', '"Gorm"'));
    const status = page.locator("#editor-status");
    await status.locator("p.error").filter({ hasText: "not valid JSON" }).waitFor();
    assert.match(
      await status.locator("p.error").first().textContent() ?? "",
      /^The persona file is not valid JSON: a comma was expected on line 2, column \d+\. Show it$/,
    );
    assert.equal(await status.locator(".summary").textContent(), "1 problem to fix before starting.");
    // Before: the unknown field of the last valid text followed under "The last valid version (the one the
    // form shows) had:", possibly already fixed in the text shown.
    assert.equal(
      await status.locator(".paused-note").textContent(),
      "The other checks are paused until the syntax error is fixed.",
    );
    assert.equal(await status.locator("li").count(), 0, "no checks of an older text");
    // Fixed: the checks are the text's own again.
    await page.fill("#jsonc", good.replace('"mood": "grim"', '"role": "the smith"'));
    assert.equal(await status.locator(".summary").textContent(), "Ready to start.");
    assert.equal(await status.locator(".paused-note, li").count(), 0);
    // A new mistake shows once the text is valid: the unknown field, not before.
    await page.fill("#jsonc", good);
    await status.locator("li.unknown-fields").waitFor();
    assert.equal(await status.locator(".paused-note").count(), 0);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("Add a tool: the description is left empty with a hint of what to write, and the list warns about it before Start", async () => {
  await withPlayground("failed-add-tool", async (browser) => {
    const { page } = browser;
    await page.click("#tab-jsonc");
    await page.fill("#jsonc", '{\n  "persona": {"name": "Gorm"}\n}\n');
    await page.click("#tab-tools");
    await page.getByRole("button", { name: "Add a tool" }).click();
    const description = page.locator(".tool-card textarea").first();
    // Before: the text "What it does and what it returns." was written into the file as the description.
    assert.equal(await description.inputValue(), "");
    assert.equal(await description.getAttribute("placeholder"), "What it does and what it returns.");
    await page.click("#tab-jsonc");
    assert.doesNotMatch(await page.inputValue("#jsonc"), /What it does/);
    assert.match(await page.inputValue("#jsonc"), /"description": ""/);
    assert.match(
      await page.locator("#editor-status ul.messages li.warning").filter({ hasText: "No description" })
        .textContent() ?? "",
      /^Tool 1: No description/,
    );
    // Typed: the warning goes.
    await page.click("#tab-tools");
    await description.fill("Opens the forge's door. Returns whether it opened.");
    assert.equal(
      await page.locator("#editor-status li").filter({ hasText: "No description" }).count(),
      0,
    );
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("Start with a problem listed: the refusal and its Start anyway link read as two sentences, and the link starts the NPC", async () => {
  await withPlayground("failed-start-anyway", async (browser) => {
    const { page } = browser;
    await page.click("#tab-jsonc");
    await page.fill("#jsonc", '{\n  "persona": {"name": "Gorm"},\n  "options": {}\n}\n');
    await page.locator("#editor-status .summary").filter({ hasText: "Ready to start." }).waitFor();
    await page.fill("#jsonc", '{\n  "persona": {"name": "Gorm"}\n  "options": {}\n}\n');
    await page.locator("#editor-status .summary").filter({ hasText: "1 problem to fix" }).waitFor();
    await page.click("#start");
    const refusal = page.locator("#start-result p.error");
    // Before: "…what the bridge says).Start anyway", the space lost at the start of the link's text.
    assert.equal(
      await refusal.evaluate((p) => (p as HTMLElement).innerText),
      "Fix the problems listed above first (or start anyway to see what the bridge says). Start anyway",
    );
    // The link still starts the NPC as the form shows it (the last valid version of the text).
    await refusal.getByRole("button", { name: "Start anyway" }).click();
    await page.locator("#start-result .note").filter({ hasText: "Started Gorm" }).waitFor();
    assert.deepEqual(browser.errors, []);
  });
});
