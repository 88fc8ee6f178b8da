/// <reference lib="dom" />
/**
 * What the playground shows in a real headless Chromium when the bridge's model cannot answer: the top bar stays
 * one row on a laptop however long the model's unavailability reads (the pill is cut short, its whole text in
 * its tooltip).
 *
 *   deno test --allow-all tests/browser/playground_failure_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { openPage, screenshot, servePlayground } from "./browser_fixture.ts";

/** The top bar's visible parts: their text, their top and bottom, and whether their text is cut short. */
function topBarParts(page: Page): Promise<{ name: string; top: number; bottom: number; clipped: boolean }[]> {
  return page.evaluate(() =>
    [...document.querySelector(".topbar")!.children]
      .filter((el) => (el as HTMLElement).offsetParent !== null && (el.textContent ?? "").trim() !== "")
      .map((el) => {
        const box = el.getBoundingClientRect();
        const html = el as HTMLElement;
        return {
          name: (el.textContent ?? "").trim(),
          top: Math.round(box.top),
          bottom: Math.round(box.bottom),
          clipped: html.scrollWidth > html.clientWidth,
        };
      })
  );
}

Deno.test("layout: a model whose label or unavailability is long keeps the top bar one row on a laptop, the pill cut short with its whole text in the tooltip", async () => {
  // As `oam playground --model openai:…` labels a model on a long address (its reason, when unreachable, is
  // longer still: "Cannot reach the model server at …: Fetch failed: …").
  const label = `openai: http://127.0.0.1:8080/v1#${"qwen2.5-7b-instruct-q4_k_m-".repeat(5)}`;
  const served = await servePlayground(0, { name: "openai", label });
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    for (const width of [1440, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.locator("#model-status").filter({ hasText: "available" }).waitFor();
      const parts = await topBarParts(page);
      assert.equal(parts.length, 4, JSON.stringify(parts));
      // One row: every part overlaps every other vertically. Before: the model pill took the first row with
      // the title, and "Connected to the bridge" and the log button went to a second one.
      const oneRow = Math.max(...parts.map((p) => p.top)) < Math.min(...parts.map((p) => p.bottom));
      assert.ok(oneRow, `one row at ${width} px: ${JSON.stringify(parts)}`);
      const model = parts.find((p) => p.name.startsWith("Model:"))!;
      assert.equal(model.clipped, true);
      assert.equal(await page.getAttribute("#model-status", "title"), model.name);
    }
    await screenshot(page, "long-model-top-bar");
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-long-model-top-bar").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});
