/// <reference lib="dom" />
/**
 * The box where the designer answers a tool call by hand, in a real headless Chromium: how the answer is sent
 * ("Send as") is kept for the tool across calls and reloads; a long tool description is there to read whole;
 * answers kept for the tab follow the persona when its id is renamed and go when another persona is loaded.
 *
 *   deno test --allow-all tests/browser/playground_answer_box_browser.ts   (needs Chromium)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { file, loaded, npcReady, withPlayground } from "./browser_fixture.ts";
import { sayUntilCall, startScriptNpc } from "./script_npc.ts";

const KEPT = "oam-playground/kept-answers/v1";

/** The answers the tab keeps (its session storage). */
async function keptAnswers(page: Page): Promise<unknown> {
  return await page.evaluate((key) => JSON.parse(sessionStorage.getItem(key) ?? "{}"), KEPT);
}

/** Reloads the page and waits until it is connected again. */
async function reload(page: Page): Promise<void> {
  await page.reload();
  await page.locator("#connection-status[data-state=open]").waitFor();
}

/** Types `answer` in the waiting call's box and cancels the reply: the answer is kept for the next call. */
async function keepAnswer(page: Page, answer: string): Promise<void> {
  const box = await sayUntilCall(page, "An ale?");
  await box.fill(answer);
  await page.click("#cancel");
  await page.locator('.turn[data-turn="1"] .badge.cancelled').waitFor();
}

Deno.test("'Send as' picked for a tool's answer is kept for its next call, after a reload too", async () => {
  await withPlayground("failed-answer-send-as", async (browser) => {
    const { page } = browser;
    await startScriptNpc(page);
    await sayUntilCall(page, "An ale?");
    await page.selectOption(".tool-call.pending select", "text");
    await reload(page);
    await page.click("#start");
    await npcReady(page);
    await page.press("#player-line", "Enter");
    const select = page.locator(".tool-call.pending select");
    await select.waitFor();
    // Before: the new call's box was back on "JSON if it parses, else text".
    assert.equal(await select.inputValue(), "text");
    await page.locator(".tool-call.pending label").filter({ hasText: "Answer check_stock (text)" }).waitFor();
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a long tool description can be read whole in the call's answer box", async () => {
  await withPlayground("failed-answer-long-description", async (browser) => {
    const { page } = browser;
    const description = "How many of an item the inn has left and its price in gold. " +
      "Counts what is in the cellar and behind the bar, but not the barrels promised to the miners' guild, " +
      "which Mira keeps for them until the end of the month; a spoiled barrel counts as none.";
    await page.click("#tab-tools");
    await page.locator(".tool-card").first().getByLabel("Description").fill(description);
    await startScriptNpc(page);
    await sayUntilCall(page, "An ale?");
    // Before: only the box's two-line placeholder had it, cut after "…price in gold.".
    const shown = page.locator(".tool-call.pending").getByText(description, { exact: true });
    await shown.waitFor();
    const cut = await shown.evaluate((el) =>
      el.scrollHeight > el.clientHeight || el.scrollWidth > el.clientWidth
    );
    assert.equal(cut, false);
    // It stays while the designer types (a placeholder goes with the first key).
    await page.locator(".tool-call.pending textarea").fill('{"stock": 3}');
    assert.equal(await shown.isVisible(), true);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("answers kept for the tab follow the persona's renamed id, and go when another persona is loaded", async () => {
  await withPlayground("failed-answer-kept-persona", async (browser) => {
    const { page } = browser;
    await startScriptNpc(page);
    await keepAnswer(page, '{"stock": 2}');
    assert.deepEqual(await keptAnswers(page), { mira: { check_stock: '{"stock": 2}' } });

    await page.click("#tab-persona");
    await page.getByLabel("NPC id").fill("mira-2");
    await page.getByLabel("NPC id").blur();
    // Before: they stayed under "mira", and the renamed persona's next call started empty.
    await page.waitForFunction(
      (key) => JSON.parse(sessionStorage.getItem(key) ?? "{}")["mira-2"] !== undefined,
      KEPT,
    );
    assert.deepEqual(await keptAnswers(page), { "mira-2": { check_stock: '{"stock": 2}' } });

    const other = {
      npc: "ada",
      persona: { name: "Ada" },
      tools: [{ name: "check_stock", description: "Ada's stock.", parameters: { type: "object" } }],
    };
    await page.setInputFiles("#load-persona", [file("ada.jsonc", other)]);
    await loaded(page, "ada.jsonc");
    // Before: Mira's answer stayed in the tab, kept for a persona no longer in the page.
    assert.deepEqual(await keptAnswers(page), {});
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a new tool's canned answer box does not suggest another tool's answer", async () => {
  await withPlayground("failed-canned-placeholder", async (browser) => {
    const { page } = browser;
    await page.click("#tab-tools");
    await page.getByRole("button", { name: "Add a tool" }).click();
    const canned = page.locator(".tool-card").last().locator("textarea[id$='-canned']");
    // Before: every tool's box said '{"stock": 3} or plain text', the sample's check_stock answer.
    assert.equal(await canned.getAttribute("placeholder"), "JSON or plain text");
    assert.deepEqual(browser.errors, []);
  });
});
