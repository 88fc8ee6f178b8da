/// <reference lib="dom" />
/**
 * The world in a real headless Chromium while the NPC's turn runs: a value the designer edits while a
 * call waits for its answer is logged as the designer's change, the NPC's own writes as the NPC's; an edit
 * form left open while the NPC changes its value says so, keeps the draft, and offers the new value; Apply
 * after the World tab's initial world changed says the live world is kept; and text in the World tab that is
 * not a world is listed above Start, which waits for it.
 *
 *   deno test --allow-all tests/browser/playground_world_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { withPlayground } from "./browser_fixture.ts";
import { answerCall, sayUntilCall, startScriptNpc } from "./script_npc.ts";

Deno.test("world edits while a call waits for its answer: the change log says the designer made them, and the NPC's write as the NPC's", async () => {
  await withPlayground("failed-world-during-turn", async (browser) => {
    const { page } = browser;
    // The page's sample script: turn 1 calls check_stock (answered by hand), turn 2 writes player.gold.
    await startScriptNpc(page);
    await page.click("#tab-state-world");
    await sayUntilCall(page, "An ale?");

    await page.getByRole("button", { name: /^player\.gold is 20; change it/ }).click();
    const value = page.getByRole("textbox", { name: "New value of player.gold" });
    await value.fill("30");
    await value.press("Enter");
    const log = page.locator("#state-body .world-log li");
    await log.filter({ hasText: "player.gold: 20 → 30" }).waitFor();
    await page.getByRole("button", { name: "Add a value in player" }).click();
    await page.getByRole("textbox", { name: "Key to add in player" }).fill("items");
    await page.getByRole("textbox", { name: "Value to add in player" }).fill('["sword"]');
    await page.getByRole("textbox", { name: "Value to add in player" }).press("Enter");
    await log.filter({ hasText: "player.items" }).waitFor();
    // Before: both read "· the NPC, during a turn", as if the NPC had changed the gold while it waited.
    assert.deepEqual(await log.allTextContents(), [
      'player.items: (new) → ["sword"] · you',
      "player.gold: 20 → 30 · you",
    ]);

    await answerCall(page, "3");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    await page.fill("#player-line", "One ale, please.");
    await page.press("#player-line", "Enter");
    await log.filter({ hasText: "player.gold: 30 → 16" }).waitFor();
    assert.equal(await log.first().textContent(), "player.gold: 30 → 16 · the NPC, during a turn");
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("an edit form left open while the NPC changes its value says so, keeps the draft, and offers the new value", async () => {
  await withPlayground("failed-world-changed-underneath", async (browser) => {
    const { page } = browser;
    // The page's sample script: turn 1 calls check_stock (answered by hand), turn 2 sets player.gold to 16.
    await startScriptNpc(page);
    await page.click("#tab-state-world");
    await page.getByRole("button", { name: /^player\.gold is 20; change it/ }).click();
    const value = page.getByRole("textbox", { name: "New value of player.gold" });
    await value.fill("25");

    await page.fill("#player-line", "An ale?");
    await page.press("#player-line", "Enter");
    await answerCall(page, "3");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    await page.fill("#player-line", "One ale, please.");
    await page.press("#player-line", "Enter");
    await page.locator("#state-body .world-log li").filter({ hasText: "player.gold: 20 → 16" }).waitFor();

    // Before: the form still read 25 and said nothing; Save wrote 25 over the NPC's 16 unknowingly.
    const form = page.locator("#state-body form.world-edit");
    assert.equal(await value.inputValue(), "25", "the draft is kept");
    assert.equal(
      await form.locator(".changed-underneath").textContent(),
      "player.gold changed meanwhile (the NPC, during a turn): it is 16 now, not 20. Save writes your 25 over it. Use 16",
    );
    await form.getByRole("button", { name: "Use 16" }).click();
    assert.equal(await value.inputValue(), "16");
    assert.equal(await focusedLabel(page), "New value of player.gold");
    assert.equal(
      await form.locator(".changed-underneath").count(),
      0,
      "the note goes with the new value taken",
    );

    // Removed meanwhile (a tool, the bridge): the form stays with the draft, and says so.
    await value.fill("12");
    await page.evaluate(() =>
      (globalThis as unknown as {
        playground: { running: { world: { remove(p: string): Promise<unknown> } } };
      })
        .playground.running.world.remove("player.gold")
    );
    await page.locator("#state-body .world-log li").filter({ hasText: "player.gold: 16 → (removed)" })
      .waitFor();
    assert.equal(await value.inputValue(), "12");
    assert.equal(
      await form.locator(".changed-underneath").textContent(),
      "player.gold was removed meanwhile (the bridge). Save writes your 12 back.",
    );
    await value.press("Enter");
    await page.locator("#state-body .world-log li").filter({ hasText: "player.gold: (new) → 12 · you" })
      .waitFor();
    // The form closes once the save has gone through, which can come a moment after the log shows the change.
    await form.waitFor({ state: "detached" });
    assert.deepEqual(browser.errors, []);
  });
});

/** The aria-label of the focused control. */
function focusedLabel(page: Page): Promise<string> {
  return page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? "");
}

Deno.test("a world change while an input method composes in a world edit form: the field stays until the composition ends, then the tree shows the change", async () => {
  await withPlayground("failed-world-ime", async (browser) => {
    const { page } = browser;
    await startScriptNpc(page);
    await page.click("#tab-state-world");
    await page.getByRole("button", { name: /^player\.name is "Aria"; change it/ }).click();
    const value = page.getByRole("textbox", { name: "New value of player.name" });
    await value.fill('"Ari');
    const field = await value.elementHandle();
    assert.ok(field);
    // An input method starts composing in the field (e.g. kana being turned into kanji).
    await field.evaluate((input) =>
      input.dispatchEvent(new CompositionEvent("compositionstart", { bubbles: true, data: "" }))
    );
    await setWorld(page, "inn.open", false);
    await page.locator("#state-body .world-log li").filter({ hasText: "inn.open: true → false" }).waitFor();
    // Before: the form was built again: the field composed in was replaced, which ends the composition.
    assert.equal(await field.evaluate((input) => input.isConnected), true, "the field composed in stays");
    assert.equal(
      await page.getByRole("button", { name: /^inn\.open is true; change it/ }).count(),
      1,
      "the tree waits for the composition to end",
    );
    await field.evaluate((input: HTMLInputElement) => {
      input.value = '"Ariあ"';
      input.dispatchEvent(new CompositionEvent("compositionend", { bubbles: true, data: "あ" }));
      input.dispatchEvent(new InputEvent("input", { bubbles: true, data: "あ", inputType: "insertText" }));
    });
    // Once it ended, the tree shows the change, and the form keeps what was composed, with the focus.
    await page.getByRole("button", { name: /^inn\.open is false; change it/ }).waitFor();
    // The changed value flashes then, as any change does (not in the tree that went).
    assert.equal(
      await page.locator('#state-body [data-path="inn.open"]').evaluate((row) =>
        row.classList.contains("changed")
      ),
      true,
    );
    assert.equal(await value.inputValue(), '"Ariあ"');
    assert.equal(await value.evaluate((input) => document.activeElement === input), true);
    assert.deepEqual(browser.errors, []);
  });
});

/** `world/set` of `path` from the page's running NPC's world (as the NPC or a game would write it). */
async function setWorld(page: Page, path: string, value: unknown): Promise<void> {
  await page.evaluate(
    ([p, v]) =>
      (globalThis as unknown as {
        playground: { running: { world: { set(p: string, v: unknown): Promise<unknown> } } };
      }).playground.running.world.set(p as string, v),
    [path, value] as const,
  );
}

Deno.test("Apply after the World tab's initial world changed says the live world is kept, and where it is edited", async () => {
  await withPlayground("failed-world-apply", async (browser) => {
    const { page } = browser;
    await page.click("#start");
    await page.locator("#start-result .note").filter({ hasText: "Started Mira" }).waitFor();
    await page.locator("#start:enabled").waitFor();
    // Apply with the initial world as it started: nothing said about the world.
    await page.click("#apply");
    await page.locator("#start-result .note").filter({ hasText: "Applied to Mira." }).waitFor();
    assert.equal(await page.locator("#start-result li.warning").count(), 0);
    await page.click("#tab-world");
    await page.fill("#world-seed", '{"player": {"name": "Aria", "gold": 99}}');
    await page.locator("#start:enabled").waitFor();
    await page.click("#apply");
    await page.locator("#start-result .note").filter({ hasText: "Applied to Mira." }).waitFor();
    // Before: "Applied to Mira." alone, and the State panel's world still had 20 gold.
    assert.deepEqual(await page.locator("#start-result li.warning").allTextContents(), [
      "The World tab's initial world changed since Mira started: Apply keeps the live world (edit it in State " +
      "→ World); Start NPC starts a new world from the initial one.",
    ]);
    await page.click("#tab-state-world");
    assert.ok(await page.getByRole("button", { name: /^player\.gold is 20; change it/ }).isVisible());
    // The initial world as it started again: nothing said.
    await page.fill("#world-seed", '{"player": {"name": "Aria", "gold": 20}, "inn": {"open": true}}');
    await page.click("#apply");
    await page.locator("#start-result .note").filter({ hasText: "Applied to Mira." }).waitFor();
    await page.locator("#start:enabled").waitFor();
    assert.equal(await page.locator("#start-result li.warning").count(), 0);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("the World tab holding text that is not a world: the status list says so and Start is refused until it is fixed", async () => {
  await withPlayground("failed-world-draft-start", async (browser) => {
    const { page } = browser;
    await page.click("#tab-world");
    await page.fill("#world-seed", '{"player": {"name": "Aria", "gold": 99}');
    await page.locator("#world-seed-message").filter({ hasText: "Nothing was changed." }).waitFor();
    // Before: "Ready to start.", and Start started the NPC on the world from before the edit (20 gold).
    await page.locator("#editor-status .summary").filter({ hasText: "1 problem to fix before starting" })
      .waitFor();
    assert.match(
      await page.locator("#editor-status li.error").innerText(),
      /^World: The world is not valid JSON: .* Nothing was changed\.$/,
    );
    await page.click("#start");
    await page.locator("#start-result p.error").filter({ hasText: "Fix the problems listed above first" })
      .waitFor();
    // The link goes to the box.
    await page.locator("#editor-status li.error").getByRole("button", { name: "World" }).click();
    assert.equal(await page.evaluate(() => document.activeElement?.id), "world-seed");
    await page.fill("#world-seed", '{"player": {"name": "Aria", "gold": 99}}');
    await page.locator("#editor-status .summary").filter({ hasText: "Ready to start." }).waitFor();
    await page.click("#start");
    await page.locator("#start-result .note").filter({ hasText: "Started Mira" }).waitFor();
    await page.click("#tab-state-world");
    await page.getByRole("button", { name: /^player\.gold is 99; change it/ }).waitFor();
    assert.deepEqual(browser.errors, []);
  });
});
