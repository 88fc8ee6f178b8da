/// <reference lib="dom" />
/**
 * The State panel's relationship history with a chatty model: each change_relationship reason is shown cut to
 * its first 160 characters (the whole reason in the entry's tooltip), and only the latest 8 changes are listed,
 * after a line saying how many earlier ones the chart above still shows.
 *
 *   deno task test:browser      (needs Chromium: apt-get install -y chromium, or OAM_CHROMIUM=<path>)
 */
import assert from "node:assert/strict";
import { npcReady, openPage, screenshot, servePlayground } from "./browser_fixture.ts";
import type { Script } from "../../src/models/scripted.ts";

const TURNS = 11;

/** The long reason the model gives on turn `n`. */
function reason(n: number): string {
  return `turn ${n}: ` +
    "the player was polite and paid up front and asked after the family, ".repeat(6).trim();
}

Deno.test("the relationship history shows each reason cut short (whole in its tooltip) and the latest 8 changes", async () => {
  const steps: Script["steps"] = [];
  for (let n = 1; n <= TURNS; n++) {
    steps.push({ toolCalls: [{ name: "change_relationship", arguments: { delta: 1, reason: reason(n) } }] });
    steps.push({
      json: {
        emotion: "happy",
        line: `Thanks (${n}).`,
        player_options: ["A", "B", "C"],
        ends_conversation: false,
      },
    });
  }
  const served = await servePlayground(0, { name: "scripted", label: "scripted (test)" }, { steps });
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await page.click("#start");
    await npcReady(page);
    for (let n = 1; n <= TURNS; n++) {
      await page.fill("#player-line", `Hello ${n}`);
      await page.press("#player-line", "Enter");
      await page.locator(`.turn[data-turn="${n}"] .npc[aria-busy="false"]`).waitFor();
    }
    await page.click("#tab-state-memory");
    const history = page.locator(".relationship-history");
    await history.locator("li").filter({ hasText: `turn ${TURNS}: ${TURNS}` }).waitFor();
    // start + 11 turns = 12 points: the latest 8 shown, numbered as in the whole history.
    const items = history.locator("li");
    assert.equal(await items.count(), 8);
    assert.equal(await history.getAttribute("start"), "5");
    assert.equal(
      await page.locator(".relationship-earlier").textContent(),
      "4 earlier changes not listed (the chart shows them all).",
    );
    const last = items.last();
    const shown = await last.locator(".reason").textContent() ?? "";
    assert.ok(shown.length <= 165, `a reason ${shown.length} characters long`);
    assert.match(shown, /^\+1 turn 11: the player was polite.*…$/);
    assert.equal(await last.locator(".reason").getAttribute("title"), `+1 ${reason(TURNS)}`);
    await screenshot(page, "relationship-history");
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-relationship-history").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});
