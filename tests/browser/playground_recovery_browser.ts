/// <reference lib="dom" />
/**
 * What the playground says when something goes wrong around the NPC rather than in a turn, in a real headless
 * Chromium: while the bridge is gone the model pill and the Model tab do not claim to know the model's
 * availability, and the State panel's World tab says the world went with it. (A Start or a restore the bridge
 * refuses: playground_files_browser.ts.)
 *
 *   deno test --allow-all tests/browser/playground_recovery_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { npcReady, openPage, screenshot, servePlayground } from "./browser_fixture.ts";

async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).textContent() ?? "").trim();
}

Deno.test("the bridge goes away: the model pill and the Model tab say its model's availability is not known, not 'available' or 'checking…'", async () => {
  const served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await page.locator("#model-status").filter({ hasText: "Model: scripted (test) · available" }).waitFor();
    await page.click("#tab-model");
    // Every state of the connection pill and every text of the model pill, in order, from now on.
    await page.evaluate(() => {
      const seen: string[] = [];
      (globalThis as unknown as { seen: string[] }).seen = seen;
      const connection = document.getElementById("connection-status")!;
      const model = document.getElementById("model-status")!;
      new MutationObserver(() => seen.push(`state: ${connection.dataset.state}`))
        .observe(connection, { attributes: true, attributeFilter: ["data-state"] });
      new MutationObserver(() => seen.push(`model: ${model.textContent}`))
        .observe(model, { childList: true, characterData: true, subtree: true });
    });
    await served.stop();
    await page.locator("#connection-status[data-state=closed]").waitFor();
    // Before: the pill kept "available" until the page's first retry, then said "checking…" while nothing
    // was being checked (the server was gone).
    assert.equal(await text(page, "#model-status"), "Model: scripted (test) · not known (not connected)");
    assert.equal(await text(page, "#bridge-model-detail"), "scripted (test), not known (not connected)");
    // The page's own retry (connecting again, refused) says the same, while it connects and after.
    await page.waitForFunction(() => {
      const seen = (globalThis as unknown as { seen: string[] }).seen;
      const retry = seen.indexOf("state: connecting");
      return retry !== -1 && seen.slice(retry).includes("state: closed");
    });
    const seen = await page.evaluate(() => (globalThis as unknown as { seen: string[] }).seen);
    const models = seen.filter((s) => s.startsWith("model: "));
    assert.ok(models.length > 0, JSON.stringify(seen));
    assert.deepEqual(
      [...new Set(models)],
      ["model: Model: scripted (test) · not known (not connected)"],
      JSON.stringify(seen),
    );
    assert.deepEqual(
      browser.errors.filter((e) => !e.includes("ERR_CONNECTION_REFUSED")),
      [],
    );
  } catch (error) {
    await screenshot(page, "failed-recovery-model-pill").catch(() => {});
    throw error;
  } finally {
    await browser.close();
  }
});

Deno.test("the bridge goes away: the State panel's World tab says the world went with it and how to get it back, not to add one", async () => {
  const served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    await page.click("#tab-state-world");
    await page.getByRole("button", { name: /^player\.gold is 20; change it/ }).waitFor();
    await served.stop();
    await page.locator("#connection-status[data-state=closed]").waitFor();
    // Before: "No world: add an initial world in the editor's World tab.", though the World tab has one.
    assert.equal(
      await text(page, "#state-body .world-title"),
      "The world 'mira-world' went with the bridge: start the NPC again, or restore the last state seen (its " +
        "world comes back with it).",
    );
  } catch (error) {
    await screenshot(page, "failed-recovery-world-gone").catch(() => {});
    throw error;
  } finally {
    await browser.close();
  }
});
