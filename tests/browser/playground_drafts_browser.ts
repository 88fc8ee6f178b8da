/// <reference lib="dom" />
/**
 * What the designer types stays where they typed it, in a real headless Chromium: a long backstory typed key
 * by key (the whole persona document is not re-synced on every key, yet Start and a reload right after typing
 * get every key), an answer typed into a tool call's box when the bridge goes away (kept, and the row says the
 * call ended), the caret of a world edit form when a world change arrives, and a persona larger than the
 * model's context (said before Start).
 *
 *   deno test --allow-all tests/browser/playground_drafts_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { npcReady, withPlayground } from "./browser_fixture.ts";

/** A backstory of 36,000 characters (a designer's long one). */
const LONG = "Born in the mill town of Harrow, she learned the trade of her father. ".repeat(520).slice(
  0,
  36_000,
);

type PageGlobals = {
  jsoncWrites: () => number;
  playground: {
    running: { npc: { state(): Promise<{ persona: { backstory?: string } }> } } | null;
    editor: { doc: { value: { persona: { backstory?: string } } } };
  };
};

/** Counts from now on the page's writes of the JSONC text box (one per re-sync of the whole document). */
async function countJsoncWrites(page: Page): Promise<void> {
  await page.evaluate(() => {
    const box = document.getElementById("jsonc") as HTMLTextAreaElement;
    const value = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!;
    let writes = 0;
    Object.defineProperty(box, "value", {
      configurable: true,
      get() {
        return value.get!.call(this);
      },
      set(text: string) {
        writes++;
        value.set!.call(this, text);
      },
    });
    (globalThis as unknown as PageGlobals).jsoncWrites = () => writes;
  });
}

/** Puts the caret at the end of the field named `name` (its focus too). */
async function caretAtEnd(page: Page, name: string): Promise<void> {
  await page.evaluate((name) => {
    const box = document.querySelector(`[name="${name}"]`) as HTMLTextAreaElement;
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  }, name);
}

Deno.test("typing in a 36,000-character backstory: the document is not re-synced on every key, yet Start and a reload right after typing get every key", async () => {
  await withPlayground("failed-long-backstory", async (browser) => {
    const { page } = browser;
    const backstory = page.locator("[name='persona.backstory']");
    await backstory.fill(LONG);
    await caretAtEnd(page, "persona.backstory");
    await countJsoncWrites(page);
    const typed = " She never forgave the miller, nor the river.";
    await page.keyboard.type(typed);
    const writes = await page.evaluate(() => (globalThis as unknown as PageGlobals).jsoncWrites());
    // Before: 45 writes for 45 keys, each re-syncing the whole 36 KB document (about 44 ms a key).
    assert.ok(
      writes < typed.length / 3,
      `the whole document was re-synced ${writes} times for ${typed.length} keys`,
    );

    // Start right after the last key, the focus still in the field (a click on Start by script: no blur).
    await page.evaluate(() => document.getElementById("start")!.click());
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    const started = await page.evaluate(async () =>
      (await (globalThis as unknown as PageGlobals).playground.running!.npc.state()).persona.backstory
    );
    assert.equal(started, LONG + typed, "the NPC got every key");
    await page.click("#tab-jsonc");
    assert.ok((await page.inputValue("#jsonc")).includes(`nor the river."`), "the JSONC text has every key");

    // A reload right after typing keeps every key too.
    await page.click("#tab-persona");
    await caretAtEnd(page, "persona.backstory");
    await page.keyboard.type(" The end.");
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.equal(await backstory.inputValue(), `${LONG}${typed} The end.`);
    assert.deepEqual(browser.errors, []);
  });
});
