/// <reference lib="dom" />
/**
 * An Arabic-speaking NPC in the playground: what the NPC and the player say, the player's options, a bark,
 * a memory fact and the line being typed each take their direction from their own text (right to left for
 * Arabic, so "مرحبا!" ends with its "!" on the left), and so do the persona form's fields, while the page
 * around them stays left to right.
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { file, loaded, npcReady, screenshot, withPlayground } from "./browser_fixture.ts";

const PERSONA = {
  npc: "salma",
  persona: { name: "سلمى", role: "صاحبة النزل" },
  options: { memoryTools: "all" },
};

const SCRIPT = [
  { toolCalls: [{ name: "remember_fact", arguments: { fact: "اللاعب يحب الشاي بالنعناع." } }] },
  {
    json: {
      emotion: "happy",
      line: "أهلاً وسهلاً! الشاي جاهز.",
      player_options: ["شكراً!", "كم الثمن؟", "Goodbye."],
      ends_conversation: false,
    },
  },
  { text: "المطر مرة أخرى!" },
];

async function direction(page: Page, selector: string): Promise<string> {
  return await page.locator(selector).first().evaluate((el) => getComputedStyle(el).direction);
}

Deno.test("RTL: Arabic lines, player options, a bark, memory facts and the typed line read right to left", async () => {
  await withPlayground("failed-rtl", async (browser) => {
    const { page } = browser;
    await page.setInputFiles("#load-persona", [
      file("salma.json", PERSONA),
      file("salma.steps.json", SCRIPT),
    ]);
    await loaded(page, "salma.json");
    // The persona form: a field with Arabic in it is right to left, an empty one left to right.
    assert.equal(await direction(page, "[name='persona.name']"), "rtl");
    assert.equal(await direction(page, "[name='persona.personality']"), "ltr");
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started سلمى" }).waitFor();
    await npcReady(page);
    await page.fill("#player-line", "مرحبا! هل عندك شاي؟");
    assert.equal(await direction(page, "#player-line"), "rtl");
    await page.press("#player-line", "Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    assert.equal(
      await page.locator('.turn[data-turn="1"] .npc .line').textContent(),
      "أهلاً وسهلاً! الشاي جاهز.",
    );
    assert.equal(await direction(page, '.turn[data-turn="1"] .npc .line'), "rtl");
    assert.equal(await direction(page, '.turn[data-turn="1"] .player .said'), "rtl");
    const options = page.locator('.turn[data-turn="1"] .player-options button.option');
    assert.deepEqual(
      await options.evaluateAll((els) => els.map((el) => [el.textContent, getComputedStyle(el).direction])),
      [["شكراً!", "rtl"], ["كم الثمن؟", "rtl"], ["Goodbye.", "ltr"]],
    );
    await page.click("#bark");
    await page.locator("li.bark .meta").waitFor();
    assert.equal(await direction(page, "li.bark .line"), "rtl");
    await page.locator("ul.facts li").filter({ hasText: "الشاي" }).waitFor();
    assert.equal(await direction(page, "ul.facts li"), "rtl");
    // The page itself stays left to right.
    assert.equal(await direction(page, "ol.turns"), "ltr");
    await screenshot(page, "20-rtl");
    assert.deepEqual(browser.errors, []);
  });
});
