/// <reference lib="dom" />
/**
 * After a restore, in a real headless Chromium: the status line above the editor says whether the restored NPC
 * runs as the editor has it, as it does after a Start or an Apply; "Put the restored persona, options and tools
 * into the editor" is offered only when they differ, and puts them there as a designer writes them (no default
 * spelled out).
 *
 *   deno task test:browser      (needs Chromium: apt-get install -y chromium, or OAM_CHROMIUM=<path>)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { parseJsonc } from "../../src/serve/playground/page/document.ts";
import { file, npcReady, withPlayground } from "./browser_fixture.ts";

async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().textContent() ?? "").trim();
}

/** Starts the sample NPC, says one line, and returns its state file's text (State → Save → Download state). */
async function savedState(page: Page): Promise<string> {
  await page.click("#start");
  await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
  await npcReady(page);
  await page.fill("#player-line", "Hello");
  await page.press("#player-line", "Enter");
  await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
  await page.click("#tab-state-save");
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-state")]);
  return await Deno.readTextFile((await download.path())!);
}

async function restore(page: Page, state: string): Promise<void> {
  await page.setInputFiles("#restore-state", [file("mira.state.json", state)]);
  await page.locator("#start-result").filter({ hasText: "Restored Mira" }).waitFor();
  await npcReady(page);
}

Deno.test("a restored NPC the editor differs from: the status line says so, and the offer puts its settings in as written", async () => {
  await withPlayground("failed-restore-offer-differs", async ({ page, errors }) => {
    const state = await savedState(page);
    await page.click("#tab-jsonc");
    await page.fill("#jsonc", '{"npc": "gorm", "persona": {"name": "Gorm", "role": "the smith"}}');
    await restore(page, state);
    // Before: "Mira is running; ready to apply or restart." while the editor showed Gorm.
    assert.match(await text(page, "#editor-status"), /^Mira is running, not as the editor has it now/);
    await page.click("#adopt-state");
    assert.match(await text(page, "#editor-status"), /^Mira is running; ready/);
    const adopted = parseJsonc(await page.inputValue("#jsonc")).value as Record<string, unknown>;
    // Before: every option and persona field, defaults included (maxToolRounds 2, backstory "", …).
    assert.deepEqual(adopted.options, {
      worldWritable: ["player.gold"],
      memoryTools: ["rememberFact", "changeRelationship"],
    });
    assert.deepEqual(Object.keys(adopted.persona as object), [
      "name",
      "role",
      "personality",
      "speakingStyle",
      "goals",
      "secrets",
      "defaultEmotion",
    ]);
    assert.deepEqual(errors, []);
  });
});

Deno.test("a restored NPC the editor already has: no offer to put it into the editor, and the status line agrees", async () => {
  await withPlayground("failed-restore-offer-same", async ({ page, errors }) => {
    const state = await savedState(page);
    await restore(page, state);
    assert.match(await text(page, "#editor-status"), /^Mira is running; ready/);
    // Before: "The editor still shows your persona text." and the offer, though it is the same.
    assert.equal(await page.locator("#adopt-state").count(), 0);
    assert.equal(
      await text(page, "#start-result p.note"),
      "Restored Mira. The editor has the same persona, options and tools.",
    );
    // An edit after it: the status line says the NPC no longer runs as the editor has it.
    await page.click("#tab-persona");
    await page.locator('input[id^="f-persona-role"]').fill("the cook");
    await page.locator("#editor-status").filter({ hasText: /not as the editor has it now/ }).waitFor();
    assert.deepEqual(errors, []);
  });
});
