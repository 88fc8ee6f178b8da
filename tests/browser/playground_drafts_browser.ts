/// <reference lib="dom" />
/**
 * What the designer types stays where they typed it, in a real headless Chromium: a long backstory typed key
 * by key (the whole persona document is not re-synced on every key, yet Start and a reload right after typing
 * get every key; the same in the JSONC tab, the World box and the Tools tab), an answer typed into a tool
 * call's box when the bridge goes away (kept, and the row says the call ended), the caret of a world edit
 * form when a world change arrives, and a persona larger than the model's context (said before Start).
 *
 *   deno test --allow-all tests/browser/playground_drafts_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { npcReady, openPage, screenshot, servePlayground, withPlayground } from "./browser_fixture.ts";
import { startScriptNpc } from "./script_npc.ts";

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

Deno.test("an answer typed into a tool call's box when the bridge goes away is kept, and the row says the call ended with it", async () => {
  let served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    // The page's sample script: turn 1 calls check_stock, answered by hand.
    await startScriptNpc(page);
    await page.fill("#player-line", "An ale?");
    await page.press("#player-line", "Enter");
    const answer = '{"stock": 7, "note": "the last barrel"}';
    await page.locator(".tool-call.pending textarea").fill(answer);
    await served.stop();
    await page.locator("#banner").filter({ hasText: "The bridge went away." }).waitFor();
    const row = page.locator('.tool-call[data-tool="check_stock"]');
    // Before: the answer form went, and the answer typed with it; the row read "not answered: the bridge no
    // longer needs it (The bridge was closed.)".
    assert.equal(await row.locator("textarea").inputValue(), answer, "the answer typed is kept");
    assert.equal(await row.locator("textarea").getAttribute("readonly"), "", "read-only: the call ended");
    // (A bridge that stops cancels the turn first; a connection that drops ends the call with it.)
    assert.match(
      await row.locator(".tool-status").textContent() ?? "",
      /^not answered: (the server stopped|the bridge went away, and the call with it)/,
    );
    assert.match(await row.textContent() ?? "", /Your answer was not sent: the call ended\./);

    await row.scrollIntoViewIfNeeded();
    await screenshot(page, "answer-kept-bridge-gone");
    served = await servePlayground(served.port);
    await page.locator("#reconnect").click({ timeout: 1000 }).catch(() => {});
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.equal(await row.locator("textarea").inputValue(), answer, "still there once connected again");
    // Restored, the NPC calls check_stock again (its script starts over): the new call's box has the answer.
    await page.getByRole("button", { name: "Restore it" }).last().click();
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Mira" }).waitFor();
    await npcReady(page);
    await page.press("#player-line", "Enter"); // the line the bridge cut off is back in the box
    const box = page.locator(".tool-call.pending textarea");
    assert.equal(await box.inputValue(), answer, "the next call of check_stock starts with it");
    await box.press("Enter");
    await page.locator('.tool-call[data-how="answered by hand"]').waitFor();
    assert.deepEqual(browser.errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(e)), []);
  } catch (error) {
    await screenshot(page, "failed-answer-bridge-gone").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("a world change while the designer types in a world edit form keeps the form's text, focus and caret", async () => {
  await withPlayground("failed-world-caret", async (browser) => {
    const { page } = browser;
    await startScriptNpc(page);
    await page.click("#tab-state-world");
    await page.getByRole("button", { name: /^player\.name is "Aria"; change it/ }).click();
    const value = page.getByRole("textbox", { name: "New value of player.name" });
    await value.fill('"Ariadne"');
    await value.evaluate((input: HTMLInputElement) => input.setSelectionRange(3, 6, "backward"));
    await page.evaluate(() =>
      (globalThis as unknown as {
        playground: { running: { world: { set(p: string, v: unknown): Promise<unknown> } } };
      }).playground.running.world.set("inn.open", false)
    );
    await page.locator("#state-body .world-log li").filter({ hasText: "inn.open: true → false" }).waitFor();
    // Before: the caret went to the end (the form was built again), the selection lost.
    assert.deepEqual(
      await value.evaluate((input: HTMLInputElement) => ({
        value: input.value,
        focused: document.activeElement === input,
        selection: [input.selectionStart, input.selectionEnd, input.selectionDirection],
      })),
      { value: '"Ariadne"', focused: true, selection: [3, 6, "backward"] },
    );
    await page.keyboard.type("X");
    assert.equal(await value.inputValue(), '"ArXne"', "typing goes on where the designer was");
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a persona larger than the model's context: the status list says so before Start, with a link to the field to shorten", async () => {
  await withPlayground("failed-context-warning", async (browser) => {
    const { page } = browser;
    await page.locator("[name='persona.backstory']").fill(LONG);
    await page.click("#tab-jsonc"); // leaves the field
    // Before: nothing until Start, then the bridge's warning under it.
    const item = page.locator("#editor-status li.warning").filter({ hasText: "more than the model's" });
    await item.waitFor();
    assert.match(
      await item.textContent() ?? "",
      /^Backstory: The persona takes at least about 12,\d{3} tokens \(estimated\), more than the model's 8192-token context: its turns will not fit\. Shorten the backstory\.$/,
    );
    await item.getByRole("button", { name: "Backstory" }).click();
    assert.equal(
      await page.evaluate(() => document.activeElement?.getAttribute("name")),
      "persona.backstory",
    );
    // Shortened, the warning goes.
    await page.locator("[name='persona.backstory']").fill("Born in Harrow.");
    await page.click("#tab-jsonc");
    await page.locator("#editor-status").filter({ hasText: "Ready to start" }).waitFor();
    assert.equal(await item.count(), 0);
    assert.deepEqual(browser.errors, []);
  });
});

/** Counts from now on the page's writes of the form's backstory box (one per re-sync of the form from the text). */
async function countBackstoryWrites(page: Page): Promise<void> {
  await page.evaluate(() => {
    const box = document.querySelector("[name='persona.backstory']") as HTMLTextAreaElement;
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
    (globalThis as unknown as { backstoryWrites: () => number }).backstoryWrites = () => writes;
  });
}

/** Puts the caret in the text box `selector` right after the first `after` in its text (its focus too). */
async function caretAfter(page: Page, selector: string, after: string): Promise<void> {
  await page.evaluate(({ selector, after }) => {
    const box = document.querySelector(selector) as HTMLTextAreaElement;
    box.focus();
    const at = box.value.indexOf(after) + after.length;
    box.setSelectionRange(at, at);
  }, { selector, after });
}

Deno.test("typing in the JSONC tab of a 36,000-character document: the form is not re-synced on every key, yet Start, the form and a reload right after typing get every key", async () => {
  await withPlayground("failed-long-jsonc", async (browser) => {
    const { page } = browser;
    await page.locator("[name='persona.backstory']").fill(LONG);
    await page.click("#tab-jsonc");
    await caretAfter(page, "#jsonc", LONG);
    await countBackstoryWrites(page);
    const typed = " She never forgave the miller, nor the river.";
    await page.keyboard.type(typed);
    const writes = await page.evaluate(() =>
      (globalThis as unknown as { backstoryWrites: () => number }).backstoryWrites()
    );
    // Before: the whole text was parsed and every view re-synced on each key.
    assert.ok(writes < typed.length / 3, `the form was re-synced ${writes} times for ${typed.length} keys`);

    // Start right after the last key, the focus still in the text box (a click by script: no blur).
    await page.evaluate(() => document.getElementById("start")!.click());
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    const started = await page.evaluate(async () =>
      (await (globalThis as unknown as PageGlobals).playground.running!.npc.state()).persona.backstory
    );
    assert.equal(started, LONG + typed, "the NPC got every key");
    await page.click("#tab-persona");
    assert.equal(await page.inputValue("[name='persona.backstory']"), LONG + typed, "the form agrees");

    // A reload right after typing keeps every key too.
    await page.click("#tab-jsonc");
    await caretAfter(page, "#jsonc", typed);
    await page.keyboard.type(" The end.");
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.equal(await page.inputValue("[name='persona.backstory']"), `${LONG}${typed} The end.`);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("typing in the World tab's box of a 36,000-character document: the document is not re-synced on every key, yet Start and the JSONC text right after typing get every key", async () => {
  await withPlayground("failed-long-world", async (browser) => {
    const { page } = browser;
    await page.locator("[name='persona.backstory']").fill(LONG);
    await page.click("#tab-world");
    await caretAfter(page, "#world-seed", '"Aria');
    await countJsoncWrites(page);
    const typed = "dne of the Western Reach";
    await page.keyboard.type(typed);
    const writes = await page.evaluate(() => (globalThis as unknown as PageGlobals).jsoncWrites());
    // Before: the world was parsed and the whole document re-synced on each key.
    assert.ok(
      writes < typed.length / 3,
      `the whole document was re-synced ${writes} times for ${typed.length} keys`,
    );

    await page.evaluate(() => document.getElementById("start")!.click());
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    await page.click("#tab-state-world");
    await page.getByRole("button", { name: `player.name is "Aria${typed}"; change it` }).waitFor();
    await page.click("#tab-jsonc");
    assert.ok((await page.inputValue("#jsonc")).includes(`"Aria${typed}"`), "the JSONC text has every key");
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a long persona's checks are not shown as current while an edit waits for the pause in typing, and Start right after the fix starts", async () => {
  await withPlayground("failed-long-stale-check", async (browser) => {
    const { page } = browser;
    await page.locator("[name='persona.backstory']").fill(LONG);
    const name = page.locator("[name='persona.name']");
    const message = page.locator("[data-field='persona.name'] .message");
    await name.fill("");
    await page.click("#tab-jsonc"); // leaves the field: its check is shown
    await page.click("#tab-persona");
    assert.equal(await message.textContent(), "Name is required.");
    await page.locator("#editor-status").filter({ hasText: "Name is required." }).waitFor();

    await name.focus();
    await page.keyboard.type("Gorm");
    // Before: the field and the status list still said the name was empty (for the pause in typing).
    assert.notEqual(await message.textContent(), "Name is required.", "the field's check is not stale");
    // (What the status line shows as current: not what is dimmed and hidden from assistive technology.)
    const current = () =>
      page.evaluate(() =>
        [...document.querySelectorAll("#editor-status > :not([aria-hidden=true])")].map((e) => e.textContent)
          .join(" ")
      );
    assert.doesNotMatch(await current(), /Name is required/, "the status list is not stale");
    // After the pause, the checks are back, current.
    await page.locator("#editor-status").filter({ hasText: "Ready to start" }).waitFor();
    assert.equal(await message.textContent(), "");

    // Start right after fixing it, the focus still in the field.
    await name.fill("");
    await page.click("#tab-jsonc");
    await page.click("#tab-persona");
    await name.focus();
    await page.keyboard.type("Gorm");
    await page.evaluate(() => document.getElementById("start")!.click());
    await page.locator("ol.turns li.note").filter({ hasText: "Started Gorm" }).waitFor();
    assert.equal(await message.textContent(), "");
    assert.doesNotMatch(await page.locator("#start-result").textContent() ?? "", /Fix the problems/);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("typing in the Tools tab of a 36,000-character document: the document is not re-synced on every key, yet Start, the JSONC tab and a reload right after typing get every key", async () => {
  await withPlayground("failed-long-tools", async (browser) => {
    const { page } = browser;
    const card = ".tool-card[data-tool='0']";
    const writes = () => page.evaluate(() => (globalThis as unknown as PageGlobals).jsoncWrites());
    // A short persona: written on every key, as before.
    await page.click("#tab-tools");
    await caretAfter(page, `${card} textarea[id$='-description']`, "in gold");
    await countJsoncWrites(page);
    await page.keyboard.type("!?");
    assert.equal(await writes(), 2, "a short persona is written on every key");
    await page.keyboard.press("Backspace");
    await page.keyboard.press("Backspace");

    await page.click("#tab-persona");
    await page.locator("[name='persona.backstory']").fill(LONG);
    await page.click("#tab-tools");
    await caretAfter(page, `${card} textarea[id$='-description']`, "in gold");
    await countJsoncWrites(page);
    const typed = ", and whether it is fresh";
    await page.keyboard.type(typed);
    // Before: each key wrote the whole document and re-synced every view (25 writes for 25 keys).
    assert.ok(
      await writes() < typed.length / 3,
      `the whole document was re-synced ${await writes()} times for ${typed.length} keys`,
    );

    // The parameters box and the canned answer: not re-synced on every key either.
    await caretAfter(page, `${card} textarea[id$='-parameters']`, "e.g. 'ale'");
    const more = ", 'mead'";
    const before = await writes();
    await page.keyboard.type(more);
    assert.ok(
      await writes() - before < more.length / 3,
      `the whole document was re-synced ${await writes() - before} times for ${more.length} keys`,
    );
    await caretAfter(page, `${card} textarea[id$='-canned']`, "");
    const canned = '{"stock": 3}';
    const beforeCanned = await writes();
    await page.keyboard.type(canned);
    assert.ok(
      await writes() - beforeCanned < canned.length / 3,
      `the whole document was re-synced ${await writes() - beforeCanned} times for ${canned.length} keys`,
    );

    // Start right after the last key, the focus still in the card (a click by script: no blur).
    await page.keyboard.type(" ");
    await page.evaluate(() => document.getElementById("start")!.click());
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    const tool = await page.evaluate(async () =>
      // deno-lint-ignore no-explicit-any
      ((await (globalThis as unknown as PageGlobals).playground.running!.npc.state()) as any).tools[0]
    );
    assert.equal(tool.description, `How many of an item the inn has left and its price in gold${typed}.`);
    assert.equal(tool.parameters.properties.item.description, `e.g. 'ale'${more}, 'stew'`);

    // Switching to the JSONC tab right after typing (by script: no blur).
    await caretAfter(page, `${card} textarea[id$='-description']`, typed);
    await page.keyboard.type(" or stale");
    await page.evaluate(() => document.getElementById("tab-jsonc")!.click());
    assert.ok(
      (await page.inputValue("#jsonc")).includes(`${typed} or stale.`),
      "the JSONC text has every key",
    );

    // A reload right after typing keeps every key too.
    await page.click("#tab-tools");
    await caretAfter(page, `${card} textarea[id$='-description']`, " or stale");
    await page.keyboard.type(", by the barrel");
    await caretAfter(page, `${card} textarea[id$='-canned']`, canned);
    await page.keyboard.type("!");
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await page.click("#tab-tools");
    assert.equal(
      await page.inputValue(`${card} textarea[id$='-description']`),
      `How many of an item the inn has left and its price in gold${typed} or stale, by the barrel.`,
    );
    assert.equal(await page.inputValue(`${card} textarea[id$='-canned']`), `${canned}! `);
    assert.deepEqual(browser.errors, []);
  });
});
