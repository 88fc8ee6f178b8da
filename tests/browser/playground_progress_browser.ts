/// <reference lib="dom" />
/**
 * A turn on a slow model: a local GGUF model can take a minute before its first words (longer while it writes
 * a tool call, which is not streamed). Meanwhile the NPC's bubble says it is thinking and for how long, and the
 * line goes once the reply's first words come or the turn ends. Here the bridge's messages are held back in the
 * browser's socket once the line is sent, so the turn stays open for as long as the test needs, and the page's
 * clock is moved by hand.
 *
 *   deno task test:browser      (needs Chromium: apt-get install -y chromium, or OAM_CHROMIUM=<path>)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { openPage, screenshot, servePlayground } from "./browser_fixture.ts";
import { answerCall, startScriptNpc } from "./script_npc.ts";
import { type Hold, holdBridgeMessages } from "./socket_hold.ts";

/**
 * Once `npc/talk` is sent on a socket the page opens from now on, holds back the bridge's messages on it;
 * `release` sends them on (and stops holding). Resolves `held` once a message is held.
 */
function holdAfterTalk(page: Page): Promise<Hold> {
  let holding = false;
  return holdBridgeMessages(page, {
    sent: (message) => {
      if (message.method === "npc/talk") holding = true;
    },
    holds: () => holding,
  });
}

Deno.test("while a turn waits for the model, the NPC's bubble says it is thinking and for how long", async () => {
  const served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    const hold = await holdAfterTalk(page);
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await startScriptNpc(page);
    await page.clock.install({ time: new Date("2026-03-01T10:00:00Z") });
    await page.clock.pauseAt(new Date("2026-03-01T10:00:01Z"));
    await page.fill("#player-line", "An ale?");
    await page.press("#player-line", "Enter");
    await hold.held;
    const progress = page.locator("li.turn[data-turn='1'] .npc .progress");
    await progress.filter({ hasText: "thinking… 0 s" }).waitFor();
    await page.clock.runFor(12_000);
    await progress.filter({ hasText: "thinking… 12 s" }).waitFor();
    await screenshot(page, "turn-progress");
    await page.clock.resume();
    hold.release();
    // The model called check_stock: the call's row says it waits for the designer, the bubble no longer thinks.
    await page.locator(".tool-call.pending .tool-answer textarea").waitFor();
    assert.equal(await progress.count(), 0);
    await answerCall(page, '{"stock": 3}');
    await page.locator("li.turn[data-turn='1'] .meta").filter({ hasText: "done in" }).waitFor();
    assert.equal(await progress.count(), 0);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-turn-progress").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("while a bark waits for the model, its entry says it is thinking and for how long", async () => {
  const served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    let holding = false;
    const hold = await holdBridgeMessages(page, {
      sent: (message) => {
        if (message.method === "npc/bark") holding = true;
      },
      holds: () => holding,
    });
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await startScriptNpc(page);
    await page.clock.install({ time: new Date("2026-03-01T10:00:00Z") });
    await page.clock.pauseAt(new Date("2026-03-01T10:00:01Z"));
    await page.click("#bark");
    await hold.held;
    // Before: the bark's entry showed "…" and nothing else, however long the model took.
    const progress = page.locator("li.bark .progress");
    await progress.filter({ hasText: "thinking… 0 s" }).waitFor();
    // Nothing but the progress line says it waits (as a turn's bubble; before, "…" stood above it).
    assert.equal(await page.locator("li.bark .line").textContent(), "");
    await page.clock.runFor(12_000);
    await progress.filter({ hasText: "thinking… 12 s" }).waitFor();
    await page.clock.resume();
    hold.release();
    await page.locator("li.bark .meta").filter({ hasText: "done in" }).waitFor();
    assert.equal(await progress.count(), 0);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-bark-progress").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});
