/// <reference lib="dom" />
/**
 * The set-up lines the browser tests share: start the NPC on the page's own sample script (its first turn
 * calls check_stock, answered by hand), say a line that waits for that call, and answer it.
 * @module
 */
import type { Locator, Page } from "npm:playwright-core@1.65.2";
import { npcReady } from "./browser_fixture.ts";

/**
 * Picks the page's own script in the Model tab (the sample persona's: turn 1 calls check_stock), presses
 * Start and waits until the NPC runs ({@link npcReady}).
 *
 * @example
 * ```ts
 * await startScriptNpc(page);
 * await sayUntilCall(page, "An ale?");
 * await answerCall(page, '{"stock": 3}');
 * ```
 */
export async function startScriptNpc(page: Page): Promise<void> {
  await page.click("#tab-model");
  await page.check("#model-script");
  await page.click("#start");
  await npcReady(page);
}

/** Says `line` (typed, then Enter) and waits until a call waits for its answer; returns its answer box. */
export async function sayUntilCall(page: Page, line: string): Promise<Locator> {
  await page.fill("#player-line", line);
  await page.press("#player-line", "Enter");
  const box = page.locator(".tool-call.pending .tool-answer textarea");
  await box.waitFor();
  return box;
}

/** Answers the call waiting for its answer with `text` (typed in its box, then Enter, as a designer sends it). */
export async function answerCall(page: Page, text: string): Promise<void> {
  const box = page.locator(".tool-call.pending .tool-answer textarea");
  await box.fill(text);
  await box.press("Enter");
}
