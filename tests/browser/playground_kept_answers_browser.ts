/// <reference lib="dom" />
/**
 * A tool call's answer typed but not sent outlives a reload, and a call the server's stop ended says so, in a
 * real headless Chromium: the answer typed in a waiting call's box is kept for the tab (the next call of that
 * tool starts with it, and the conversation says it was kept) until it is sent; a server stopped with Ctrl-C
 * during a turn (it cancels the turn, then closes with 1001) reads as the server stopping, not as a cancel.
 *
 *   deno test --allow-all tests/browser/playground_kept_answers_browser.ts   (needs Chromium)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { npcReady, openPage, screenshot, servePlayground, withPlayground } from "./browser_fixture.ts";
import { sayUntilCall, startScriptNpc } from "./script_npc.ts";

const KEY = "oam-playground/kept-answers/v1";

/** The answers the tab keeps (its session storage). */
async function keptAnswers(page: Page): Promise<unknown> {
  return await page.evaluate((key) => JSON.parse(sessionStorage.getItem(key) ?? "{}"), KEY);
}

Deno.test("an answer typed in a waiting call's box survives a reload: the next call of the tool starts with it, until it is sent", async () => {
  await withPlayground("failed-kept-answer-reload", async (browser) => {
    const { page } = browser;
    await startScriptNpc(page);
    const answer = '{"stock": 9, "note": "the cellar"}';
    const box = await sayUntilCall(page, "An ale?");
    await box.fill(answer);

    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    // Before: nothing said it, and the next call's box was empty: the answer had gone with the page.
    await page.locator("ol.turns li.note").filter({
      hasText:
        "Your answer to check_stock, typed before the page was reloaded, is kept: the next call of it starts with it.",
    }).waitFor();
    assert.deepEqual(await keptAnswers(page), { mira: { check_stock: answer } });
    // The turn went with the old connection: the NPC starts again and the line (back in the box) is said again.
    await page.click("#start");
    await npcReady(page);
    assert.equal(await page.inputValue("#player-line"), "An ale?");
    await page.press("#player-line", "Enter");
    const next = page.locator(".tool-call.pending .tool-answer textarea");
    await next.waitFor();
    assert.equal(await next.inputValue(), answer);

    // Kept while the box holds it (another reload keeps it too); sent, it is no longer kept.
    await next.press("Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    assert.deepEqual(await keptAnswers(page), {});
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.equal(await page.locator("ol.turns li.note").filter({ hasText: "is kept" }).count(), 0);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("an answer kept for a tool the persona no longer has goes with the tool", async () => {
  await withPlayground("failed-kept-answer-removed-tool", async (browser) => {
    const { page } = browser;
    await startScriptNpc(page);
    const box = await sayUntilCall(page, "An ale?");
    await box.fill('{"stock": 2}');
    await page.click("#cancel");
    await page.locator('.turn[data-turn="1"] .badge.cancelled').waitFor();
    assert.deepEqual(await keptAnswers(page), { mira: { check_stock: '{"stock": 2}' } });
    await page.click("#tab-tools");
    await page.getByRole("button", { name: "Remove tool check_stock" }).click();
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.deepEqual(await keptAnswers(page), {});
    assert.equal(await page.locator("ol.turns li.note").filter({ hasText: "is kept" }).count(), 0);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("the server stopped (Ctrl-C) while a call waits: the call's row and the turn say the server stopped, not that the turn was cancelled", async () => {
  const served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await startScriptNpc(page);
    await sayUntilCall(page, "An ale?");
    // What Ctrl-C does: the server cancels every turn (tool/cancel, the turn's -32009), then closes with 1001.
    await served.stop();
    await page.locator("#banner").filter({ hasText: "The bridge went away." }).waitFor();
    const row = page.locator('.tool-call[data-tool="check_stock"]');
    // Before: "not answered: the turn was cancelled", which reads as the designer's cancel.
    await row.locator(".tool-status").filter({ hasText: /^not answered: the server stopped/ }).waitFor();
    assert.equal(
      await page.locator('.turn[data-turn="1"] .meta').textContent(),
      "cancelled: The server stopped, and cancelled the reply with it.",
    );
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-server-stopped-row").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});
