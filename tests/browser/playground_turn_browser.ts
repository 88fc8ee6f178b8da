/// <reference lib="dom" />
/**
 * A conversation turn in a real headless Chromium, where it leaves no trace: a turn that fails or is cancelled
 * after its emotion streamed in gives the conversation's header back the emotion it had before; and a call's
 * answer box says what it accepts (JSON or text, JSON only, or text only), as the choice beside it says.
 *
 *   deno test --allow-all tests/browser/playground_turn_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { npcReady, openPage, screenshot, servePlayground } from "./browser_fixture.ts";
import type { Script } from "../../src/models/scripted.ts";

const SCRIPTED = { name: "scripted", label: "scripted (test)" };

/** Serves the playground with the bridge's model playing `script`, opens it and runs `test`. */
async function withScript(
  failure: string,
  script: Script,
  test: (page: Page) => Promise<void>,
): Promise<void> {
  const served = await servePlayground(0, SCRIPTED, script);
  const browser = await openPage(served.url);
  try {
    await test(browser.page);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(browser.page, failure).catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
}

function reply(emotion: string, line: string) {
  return { json: { emotion, line, player_options: ["A", "B", "C"], ends_conversation: false } };
}

/** Says `line` with Enter and waits for its turn (`n`) to end. */
async function say(page: Page, n: number, line: string): Promise<void> {
  await page.fill("#player-line", line);
  await page.press("#player-line", "Enter");
  await page.locator(`.turn[data-turn="${n}"] .npc[aria-busy="false"]`).waitFor();
}

/** The emotion in the conversation's header. */
async function headerEmotion(page: Page): Promise<string> {
  return await page.locator(".conversation-head .portrait").textContent() ?? "";
}

Deno.test("a turn that fails or is cancelled after its emotion streamed in: the header's emotion is the one from before the turn", async () => {
  // Turn 1 succeeds (happy); turn 2 waits until cancelled; turn 3 fails. Before the failing turns answer, the
  // page is sent the emotion a real model streams first ("angry"), as from a model that then failed.
  const script: Script = {
    steps: [reply("happy", "Welcome!"), { ...reply("sad", "Too late."), delayMs: 600_000 }],
    fallback: { error: "rate_limited", message: "Too many requests." },
  };
  await withScript("failed-turn-emotion", script, async (page) => {
    let talks = 0;
    await page.routeWebSocket(/\/rpc$/, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((message) => {
        const request = JSON.parse(String(message));
        if (request.method === "npc/talk" && ++talks > 1) {
          const event = { type: "emotion", emotion: "angry" };
          const params = { npc: request.params.npc, requestId: request.id, event };
          ws.send(JSON.stringify({ jsonrpc: "2.0", method: "npc/event", params }));
        }
        server.send(message);
      });
    });
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await page.click("#start");
    await npcReady(page);
    await say(page, 1, "Hello!");
    assert.equal(await headerEmotion(page), "happy");

    await page.fill("#player-line", "Wait for me.");
    await page.press("#player-line", "Enter");
    await page.locator(".conversation-head .portrait[data-emotion=angry]").waitFor();
    await page.press("#player-line", "Escape");
    await page.locator('.turn[data-turn="2"] .badge.cancelled').waitFor();
    // Before: the header kept "angry", though the cancelled turn left no trace.
    assert.equal(await headerEmotion(page), "happy");

    await say(page, 3, "Are you there?");
    await page.locator('.turn[data-turn="3"] .badge.error').waitFor();
    assert.equal(await headerEmotion(page), "happy");
    assert.equal(
      await page.locator(".conversation-head .portrait").getAttribute("data-emotion"),
      "happy",
    );
  });
});

Deno.test("the first turn fails after its emotion streamed in: the header shows no emotion again", async () => {
  const script: Script = { steps: [], fallback: { error: "rate_limited", message: "Too many requests." } };
  await withScript("failed-first-turn-emotion", script, async (page) => {
    await page.routeWebSocket(/\/rpc$/, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((message) => {
        const request = JSON.parse(String(message));
        if (request.method === "npc/talk") {
          const event = { type: "emotion", emotion: "angry" };
          const params = { npc: request.params.npc, requestId: request.id, event };
          ws.send(JSON.stringify({ jsonrpc: "2.0", method: "npc/event", params }));
        }
        server.send(message);
      });
    });
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await page.click("#start");
    await npcReady(page);
    await say(page, 1, "Hello!");
    await page.locator('.turn[data-turn="1"] .badge.error').waitFor();
    assert.equal(await headerEmotion(page), "–");
    assert.equal(
      await page.locator(".conversation-head .portrait").getAttribute("data-emotion"),
      "none",
    );
  });
});

Deno.test("a call's answer box says what it accepts (JSON or text, JSON only, text only, as chosen beside it) under what the tool gives back", async () => {
  const script: Script = {
    steps: [{ toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] }, reply("happy", "Here.")],
  };
  // The sample persona's check_stock: its description.
  const gives = "How many of an item the inn has left and its price in gold.";
  await withScript("failed-answer-label", script, async (page) => {
    await page.click("#start");
    await npcReady(page);
    await page.fill("#player-line", "An ale?");
    await page.press("#player-line", "Enter");
    const call = page.locator(".tool-call.pending");
    await call.waitFor();
    const box = call.locator(".tool-answer textarea");
    const label = call.locator(".tool-answer label");
    const as = call.locator(".tool-answer select");
    assert.equal(await label.textContent(), "Answer check_stock (JSON or text)");
    // What the tool gives back (its description) is shown above the box; the empty box says what it accepts.
    assert.equal(await call.locator(".tool-answer .tool-about").textContent(), gives);
    assert.equal(await box.getAttribute("placeholder"), "JSON or plain text");
    await as.selectOption("json");
    // Before: still "(JSON or text)", though a text answer is now refused.
    assert.equal(await label.textContent(), "Answer check_stock (JSON)");
    assert.equal(await box.getAttribute("placeholder"), "JSON only");
    await as.selectOption("text");
    assert.equal(await label.textContent(), "Answer check_stock (text)");
    assert.equal(await box.getAttribute("placeholder"), "plain text");
    await as.selectOption("auto");
    assert.equal(await label.textContent(), "Answer check_stock (JSON or text)");
    assert.equal(await box.getAttribute("placeholder"), "JSON or plain text");
    await box.fill("3");
    await box.press("Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
  });
});

Deno.test("keyboard: Escape in a call's answer box cancels the reply, as in the player's line, and the box says so", async () => {
  const script: Script = {
    steps: [{ toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] }, reply("happy", "Here.")],
  };
  await withScript("failed-answer-escape", script, async (page) => {
    await page.click("#start");
    await npcReady(page);
    await page.focus("#player-line");
    await page.keyboard.type("An ale?");
    await page.keyboard.press("Enter");
    const box = page.locator(".tool-call.pending .tool-answer textarea");
    await box.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.closest(".tool-answer") !== null), true);
    const id = await box.getAttribute("id");
    assert.equal(
      await page.textContent(`#${id}-keys`),
      "Enter sends it, Shift+Enter starts a new line, Escape cancels the reply.",
    );
    // Before: Escape did nothing there; the way to cancel was six Tabs away (Cancel reply).
    await page.keyboard.press("Escape");
    await page.locator('.turn[data-turn="1"] .badge.cancelled').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), "player-line");
  });
});
