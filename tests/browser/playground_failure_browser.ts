/// <reference lib="dom" />
/**
 * What the playground shows in a real headless Chromium when the bridge's model cannot answer: the top bar stays
 * one row on a laptop however long the model's unavailability reads (the pill is cut short, its whole text in
 * its tooltip), and a turn that fails for it says where to look and how to go on without it.
 *
 *   deno test --allow-all tests/browser/playground_failure_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { npcReady, openPage, screenshot, servePlayground } from "./browser_fixture.ts";

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

Deno.test("a turn on the bridge's model fails as unavailable: the turn says where to look and that the page's script runs anyway", async () => {
  // As `oam playground --model openai:http://127.0.0.1:9/v1#qwen` with no server there: every turn fails with
  // model_unavailable ("Cannot reach the model server at …").
  const message = "Cannot reach the model server at http://127.0.0.1:9/v1/chat/completions: Fetch failed.";
  const served = await servePlayground(0, { name: "openai", label: "openai: http://127.0.0.1:9/v1#qwen" }, {
    steps: [],
    fallback: { error: "model_unavailable", message },
  });
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await page.click("#start");
    await npcReady(page);
    await page.fill("#player-line", "Hello?");
    await page.press("#player-line", "Enter");
    const turn = page.locator('.turn[data-turn="1"]');
    await turn.locator(".badge.error").waitFor();
    // Before: the error alone; the way round it (the page's script) was only in the first note of the page.
    assert.deepEqual(await turn.locator(".meta > *").allTextContents(), [
      `model_unavailable: ${message}`,
      "The bridge's model cannot answer (the Model pill at the top says why): start it, or run this NPC on " +
      "the page's script (Model tab → The page's script, then Start NPC).",
    ]);
    // A bark fails the same way, and says the same. Before: the error alone.
    await page.click("#bark");
    const bark = page.locator(".bark.failed");
    await bark.locator(".error").waitFor();
    assert.deepEqual(await bark.locator("p.error, p.hint").allTextContents(), [
      `model_unavailable: ${message}`,
      "The bridge's model cannot answer (the Model pill at the top says why): start it, or run this NPC on " +
      "the page's script (Model tab → The page's script, then Start NPC).",
    ]);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-model-unavailable-turn").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});
