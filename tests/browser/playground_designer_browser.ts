/// <reference lib="dom" />
/**
 * The playground in a real headless Chromium as a designer meets it: when the bridge goes away and comes back
 * nothing of the NPC that went stays on the page as if it ran and the conversation offers the way back; a
 * failed turn says it failed; a mistyped world value is caught before it changes the value's kind.
 *
 *   deno test --allow-all tests/browser/playground_designer_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { npcReady, openPage, screenshot, servePlayground, withPlayground } from "./browser_fixture.ts";

/** Waits until the page has kept a last state seen (it reads the NPC's state after Start without waiting). */
async function lastStateKept(page: Page): Promise<void> {
  await page.waitForFunction(() =>
    JSON.parse(localStorage.getItem("oam-playground/v1") ?? "{}").lastState != null
  );
}

Deno.test("reconnect: 'Started Mira' goes from under Start, and the conversation's note offers Restore it, which brings her back", async () => {
  let served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await page.click("#start");
    await page.locator("#start-result .note").filter({ hasText: "Started Mira (mira)." }).waitFor();
    await npcReady(page);
    await lastStateKept(page);
    await served.stop();
    await page.locator("#banner").filter({ hasText: "The bridge went away." }).waitFor();
    served = await servePlayground(served.port);
    await page.locator("#reconnect").click({ timeout: 1000 }).catch(() => {});
    await page.locator("#connection-status[data-state=open]").waitFor();
    const note = page.locator("ol.turns li.note").filter({ hasText: "Connected again." });
    await note.waitFor();
    // Before: "Started Mira (mira)." stayed in green under "Ready to start.", though she no longer ran.
    assert.equal(await page.locator("#start-result").textContent(), "");
    // Before: "…or restore the last state seen (State → Save).", with no button in the conversation.
    assert.match(
      (await note.textContent()) ?? "",
      /^Connected again\. The NPC \(Mira, .+\) lived in the old connection: start it again, or restore it\. Restore it$/,
    );
    await note.getByRole("button", { name: "Restore it" }).click();
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Mira from the last state seen." })
      .waitFor();
    await npcReady(page);
    assert.equal(await note.count(), 0, "the offer goes with the restore");
    assert.deepEqual(browser.errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(e)), []);
  } catch (error) {
    await screenshot(page, "failed-reconnect").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("a failed turn: no pending '…' emotion pill stays by the name, the badge says it failed", async () => {
  const served = await servePlayground(0, { name: "scripted", label: "scripted (test)" }, {
    steps: [{ error: "rate_limited", message: "Too many requests." }],
    fallback: { error: "rate_limited", message: "Too many requests." },
  });
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await page.click("#start");
    await npcReady(page);
    await page.fill("#player-line", "Hello?");
    await page.press("#player-line", "Enter");
    const turn = page.locator('.turn[data-turn="1"]');
    await turn.locator(".badge.error").waitFor();
    // Before: a pending "…" pill stayed by the name, as if the emotion were still to come.
    assert.equal(await turn.locator(".emotion").count(), 0);
    assert.deepEqual(await turn.locator(".npc-head > *").allTextContents(), ["Mira", "failed"]);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-failed-turn").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("a world value mistyped: a number that would become text asks first, and the change log shows text in quotes", async () => {
  await withPlayground("failed-world-typo", async (browser) => {
    const { page } = browser;
    await page.click("#start");
    await npcReady(page);
    await page.click("#tab-state-world");
    await page.getByRole("button", { name: /^player\.gold is 20; change it/ }).click();
    const value = page.getByRole("textbox", { name: "New value of player.gold" });
    await value.fill("2o");
    await value.press("Enter");
    // Before: the gold silently became the text "2o".
    const message = page.locator("#state-body .world-edit .message");
    await message.waitFor();
    assert.equal(
      await message.textContent(),
      'player.gold is a number; 2o is not one and would be saved as the text "2o". Save again to keep it as text, or write a number.',
    );
    assert.equal(await value.inputValue(), "2o", "the typed value stays to be fixed");
    await value.fill("16");
    await value.press("Enter");
    await page.locator("#state-body .world-log li").filter({ hasText: "player.gold: 20 → 16" }).waitFor();
    // Text saved on purpose (the second Save): the log shows it in quotes, as the tree does.
    await page.getByRole("button", { name: /^player\.gold is 16; change it/ }).click();
    await value.fill("sixteen");
    await value.press("Enter");
    await message.waitFor();
    await value.press("Enter");
    await page.locator("#state-body .world-log li").filter({ hasText: 'player.gold: 16 → "sixteen"' })
      .waitFor();
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a narrow window (700 px, one column): the way to Start is named by its panel, not as 'left' of the conversation", async () => {
  await withPlayground("failed-narrow-start-hint", async (browser) => {
    const { page } = browser;
    await page.setViewportSize({ width: 700, height: 900 });
    const start = await page.locator("#start").boundingBox();
    const conversation = await page.locator("#conversation-body").boundingBox();
    assert.ok(
      start && conversation && start.y + start.height <= conversation.y,
      "Start is above the conversation",
    );
    // Before: "Start the NPC (Start NPC, left), …" and "Start the NPC first (Start NPC, left).", with Start above.
    assert.match(
      (await page.locator("ol.turns li.note").first().textContent()) ?? "",
      /^Start the NPC \(Start NPC, in the NPC panel\), then talk to it here\./,
    );
    await page.fill("#player-line", "Hello?");
    await page.press("#player-line", "Enter");
    assert.equal(
      await page.locator("#conversation-message").textContent(),
      "Start the NPC first (Start NPC, in the NPC panel). Your line is kept.",
    );
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a tool whose parameters the bridge refuses: the list above Start says so before Start, and the fix clears it", async () => {
  await withPlayground("failed-bridge-tool-check", async (browser) => {
    const { page } = browser;
    await page.click("#tab-jsonc");
    const persona = (type: string) =>
      `{\n  "persona": {"name": "Bram", "role": "a ferryman"},\n  "tools": [{"name": "take_fare", ` +
      `"description": "Takes the fare.", "parameters": {"type": "object", "properties": {"amount": {"type": "${type}"}}}}]\n}\n`;
    await page.fill("#jsonc", persona("numbr"));
    const status = page.locator("#editor-status");
    // Before: "Ready to start." (the bridge's refusal showed only in the Tools tab), and Start then failed.
    const item = status.locator("li.error").filter({ hasText: "unsupported type 'numbr'" });
    await item.waitFor();
    assert.equal(
      await item.textContent(),
      "Tool 1: tools[0].parameters: unsupported type 'numbr' (did you mean 'number'?) (at #/properties/amount)",
    );
    assert.equal(await status.locator(".summary").textContent(), "1 problem to fix before starting:");
    await page.click("#start");
    await page.locator("#start-result p.error").filter({ hasText: "Fix the problems listed above first" })
      .waitFor();
    await page.fill("#jsonc", persona("number"));
    await status.locator(".summary").filter({ hasText: "Ready to start." }).waitFor();
    assert.equal(await status.locator("li").count(), 0);
    await page.click("#start");
    await page.locator("#start-result .note").filter({ hasText: "Started Bram" }).waitFor();
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a tool's schema that is not valid JSON: the list above Start names it and Start waits, as for the world", async () => {
  await withPlayground("failed-tool-schema-json", async (browser) => {
    const { page } = browser;
    await page.click("#tab-tools");
    const schema = page.locator(".tool-card textarea.code").first();
    await schema.fill('{"type": "object", "properties": {');
    const status = page.locator("#editor-status");
    // Before: "Ready to start." — and Start started the NPC with the schema from before the box's text.
    const item = status.locator("li.error").filter({ hasText: "The schema is not valid JSON" });
    await item.waitFor();
    assert.match(
      await item.textContent() ?? "",
      /^Tool 1 \(check_stock\): The schema is not valid JSON: .* on line 1, column \d+\. Nothing was changed\.$/,
    );
    await page.click("#start");
    await page.locator("#start-result p.error").filter({ hasText: "Fix the problems listed above first" })
      .waitFor();
    // The item's link goes to the box with the text.
    await page.click("#tab-persona");
    await item.locator("button.link").click();
    assert.equal(
      await page.evaluate(() => document.activeElement?.id ?? ""),
      await schema.getAttribute("id"),
    );
    await schema.fill('{"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}');
    await status.locator(".summary").filter({ hasText: "Ready to start." }).waitFor();
    assert.deepEqual(browser.errors, []);
  });
});
