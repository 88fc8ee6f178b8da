/// <reference lib="dom" />
/**
 * The playground while the bridge loads its model: `initialize` is answered once the system model said whether
 * it can run, and a GGUF model (`oam playground --model gguf:…`) is loaded first, which takes seconds (more
 * for a large model). Here the bridge's answer to `initialize` is held back in the browser's socket, so the
 * page is in that wait for as long as the test needs: the top bar says the model is loading (not that the bridge
 * cannot be reached), and a Start pressed meanwhile waits and then starts the NPC.
 *
 *   deno task test:browser      (needs Chromium: apt-get install -y chromium, or OAM_CHROMIUM=<path>)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { npcReady, openPage, screenshot, servePlayground } from "./browser_fixture.ts";
import { type Hold, holdBridgeMessages } from "./socket_hold.ts";

/**
 * Holds back the bridge's answer to `initialize` on every socket the page opens from now on; the returned
 * `release` sends the held answers on. Resolves `held` once an answer is held.
 */
function holdInitialize(page: Page): Promise<Hold> {
  const ids = new Set<unknown>();
  return holdBridgeMessages(page, {
    sent: (message) => {
      if (message.method === "initialize") ids.add(message.id);
    },
    holds: (message) => ids.has(message.id),
  });
}

Deno.test("while the bridge loads its GGUF model, the top bar says so, and Start waits for it and then starts the NPC", async () => {
  const served = await servePlayground(0, { name: "llama", label: "llama: tiny-chat.gguf" });
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    const hold = await holdInitialize(page);
    await page.reload();
    await hold.held;
    await page.locator("#connection-status[data-state=waiting]").waitFor();
    assert.equal(
      await page.locator("#connection-status").textContent(),
      "Connected; the bridge is loading its model…",
    );
    assert.equal(
      await page.locator("#model-status").textContent(),
      "Model: llama: tiny-chat.gguf · loading the model…",
    );
    await page.click("#start");
    await page.locator("#start-result").filter({
      hasText: "Waiting for the bridge to load its model, then starting the NPC…",
    }).waitFor();
    await screenshot(page, "model-loading");
    hold.release();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    assert.equal(
      await page.locator("#model-status").textContent(),
      "Model: llama: tiny-chat.gguf · available",
    );
    assert.match(await page.locator("#start-result").innerText(), /Started Mira \(mira\)\./);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-model-loading").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});
