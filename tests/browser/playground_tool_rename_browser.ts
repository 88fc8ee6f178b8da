/// <reference lib="dom" />
/**
 * Renaming a tool in the Tools tab, in a real headless Chromium: its answer settings move to the new name
 * once, when the rename is committed (the name box is left, Enter, a pause in typing), not on every key
 * (where a name typed on the way, another tool's, took that tool's settings); and the running NPC, which
 * calls the tool by its old name until Apply, is answered with the settings the card shows.
 *
 *   deno test --allow-all tests/browser/playground_tool_rename_browser.ts   (needs Chromium)
 */
import assert from "node:assert/strict";
import type { Locator, Page } from "npm:playwright-core@1.65.2";
import { withPlayground } from "./browser_fixture.ts";
import { startScriptNpc } from "./script_npc.ts";

/** The names the page keeps answer settings under. */
function answerNames(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Object.keys(
      (globalThis as unknown as { playground: { saved: { answers: object } } }).playground.saved.answers,
    )
  );
}

/**
 * Types `names` into a tool's name box one after the other, as keys would (an input event each), in one go
 * (no pause in typing between them); returns the answer setting names the page had after each.
 */
function typeNames(box: Locator, names: string[]): Promise<string[][]> {
  return box.evaluate((input: HTMLInputElement, names: string[]) => {
    const seen: string[][] = [];
    for (const name of names) {
      input.value = name;
      input.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertText" }));
      seen.push(
        Object.keys(
          (globalThis as unknown as { playground: { saved: { answers: object } } }).playground.saved.answers,
        ),
      );
    }
    return seen;
  }, names);
}

Deno.test("renaming a tool moves its answer settings once, when the rename is committed; the running NPC's calls of the old name keep them until Apply", async () => {
  await withPlayground("failed-tool-rename", async (browser) => {
    const { page } = browser;
    await page.click("#tab-tools");
    const stock = page.locator('.tool-card[data-tool="0"]');
    await stock.getByLabel("automatically with:").check();
    await stock.locator("textarea[id$=-canned]").fill('{"stock": 3}');
    await startScriptNpc(page);
    await page.click("#tab-tools");
    await page.click("text=Add a tool");
    const other = page.locator('.tool-card[data-tool="1"]').locator("input[id$=-name]");

    // The second tool is renamed check_stock_2, by way of check_stock (the first tool's name).
    const seen = await typeNames(other, ["c", "check_stock", "check_stock_", "check_stock_2"]);
    // Before: at "check_stock_" the first tool's settings moved to the name typed (and on to check_stock_2).
    assert.deepEqual(seen, [["check_stock"], ["check_stock"], ["check_stock"], ["check_stock"]]);
    await other.press("Tab");
    assert.deepEqual(await answerNames(page), ["check_stock"], "the first tool keeps its settings");

    // The first tool is renamed stock_check: its settings go with it once the box is left.
    const name = stock.locator("input[id$=-name]");
    const typing = await typeNames(name, ["check_stoc", "stoc", "stock_check"]);
    assert.deepEqual(typing, [["check_stock"], ["check_stock"], ["check_stock"]], "not on every key");
    await name.press("Tab");
    assert.deepEqual(await answerNames(page), ["stock_check"]);
    assert.equal(await stock.locator("textarea[id$=-canned]").inputValue(), '{"stock": 3}');

    // The running NPC still has check_stock (until Apply): its call is answered as the card says.
    // Before: it waited for an answer by hand, the settings having moved away from its name.
    await page.fill("#player-line", "An ale?");
    await page.press("#player-line", "Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    assert.match(
      await page.locator('.tool-call[data-tool="check_stock"] .tool-status').textContent() ?? "",
      /^answered automatically · done in \d+ ms$/,
    );
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a tool added and renamed: its canned answer box and its Remove button are named by the new name, as its legend is", async () => {
  await withPlayground("failed-tool-rename-labels", async (browser) => {
    const { page } = browser;
    await page.click("#tab-tools");
    await page.click("text=Add a tool");
    const card = page.locator('.tool-card[data-tool="1"]');
    const name = card.locator("input[id$=-name]");
    await name.fill("ring_bell");
    await name.press("Tab");
    assert.equal(await card.locator("legend").first().textContent(), "Tool 2: ring_bell");
    // Before: "Canned answer of tool_2" and "Remove tool tool_2", the name the tool was added with.
    assert.deepEqual(
      await card.evaluate((root) => [
        (root.querySelector("textarea[id$=-canned]") as HTMLTextAreaElement).labels![0].textContent,
        root.querySelector("button.danger")!.getAttribute("aria-label"),
      ]),
      ["Canned answer of ring_bell", "Remove tool ring_bell"],
    );
    assert.deepEqual(browser.errors, []);
  });
});
