/// <reference lib="dom" />
/**
 * The NPC playground end to end in a real headless Chromium: a designer edits a persona field, talks, sees
 * the line stream in with the emotion first, answers a tool call by hand, sees the NPC's world change
 * appear, saves the state, reloads the page, restores and talks again; cancels a reply mid-turn, lets a call
 * time out, answers one with an error, barks, picks a player option; and bad input (invalid JSON, an
 * unknown field, a bridge that went away) shows a clear inline message and loses nothing typed.
 * Screenshots of the main states go to tests/browser/screenshots/ (git-ignored).
 *
 *   deno task test:browser      (needs Chromium: apt-get install -y chromium, or OAM_CHROMIUM=<path>)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { file, openPage, screenshot, servePlayground } from "./browser_fixture.ts";

/** A persona with a client tool, a world the NPC may write and memory tools; text replies stream in pieces. */
const PERSONA = `// The innkeeper, for the browser test.
{
  "npc": "mira",
  "persona": {
    "name": "Mira", // her name
    "role": "the innkeeper"
  },
  "options": {
    "replyFormat": "text",
    "memoryTools": "all",
    "worldWritable": ["player.gold"]
  },
  "tools": [
    {
      "name": "check_stock",
      "description": "How many of an item the inn has left.",
      "parameters": { "type": "object", "properties": { "item": { "type": "string" } }, "required": ["item"] }
    }
  ],
  "world": { "player": { "name": "Aria", "gold": 20 } }
}
`;

/** Turn 1: a tool round, then a streamed line; turn 2: a world write and a relationship change. */
const SCRIPT = [
  { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
  { template: "[happy] We have {toolOutput} for you, Aria. What will it be tonight?", chunks: 6 },
  {
    toolCalls: [
      { name: "update_world_state", arguments: { path: "player.gold", value: 16 } },
      { name: "change_relationship", arguments: { delta: 5, reason: "paid up front" } },
    ],
  },
  { text: "[grateful] Thank you kindly, love.", chunks: 3 },
];

async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).last().textContent()) ?? "";
}

/** Waits for the conversation's turn `n` to finish (its NPC part no longer busy). */
async function turnDone(page: Page, n: number): Promise<void> {
  await page.locator(`.turn[data-turn="${n}"] .npc[aria-busy="false"]`).waitFor();
}

/** Records every (emotion, line) the NPC bubble of the next turn shows, as the DOM changes. */
async function watchTurn(page: Page, n: number): Promise<void> {
  await page.evaluate((turn) => {
    const seen: { emotion: string; line: string }[] = [];
    (globalThis as unknown as { seen: typeof seen }).seen = seen;
    const list = document.querySelector("ol.turns")!;
    new MutationObserver(() => {
      const li = document.querySelector(`.turn[data-turn="${turn}"]`);
      if (!li) return;
      const emotion = li.querySelector(".npc .emotion")?.textContent ?? "";
      const line = li.querySelector(".npc .line")?.textContent ?? "";
      const last = seen[seen.length - 1];
      if (!last || last.emotion !== emotion || last.line !== line) seen.push({ emotion, line });
    }).observe(list, { subtree: true, childList: true, characterData: true });
  }, n);
}

async function seen(page: Page): Promise<{ emotion: string; line: string }[]> {
  return await page.evaluate(() =>
    (globalThis as unknown as { seen: { emotion: string; line: string }[] }).seen
  );
}

Deno.test("the designer's loop: edit, talk (streamed, emotion first), answer a tool by hand, see the world change, save, reload, restore, talk again", async () => {
  const served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await screenshot(page, "01-first-visit");
    // Load the persona file and its script (one multi-file pick, as a designer does).
    await page.setInputFiles("#load-persona", [file("mira.jsonc", PERSONA), file("mira.steps.json", SCRIPT)]);
    await page.locator("#start-result").filter({
      hasText: "Loaded mira.jsonc and the script mira.steps.json (new NPCs run on it).",
    }).waitFor();
    assert.equal(await page.locator("#model-script").isChecked(), true);

    // Edit a persona field in the form: the JSONC text follows, its comments intact.
    await page.fill("[name='persona.name']", "Mirabel");
    await page.click("#tab-jsonc");
    const jsonc = await page.inputValue("#jsonc");
    assert.match(jsonc, /"name": "Mirabel", \/\/ her name\n/);
    assert.match(jsonc, /^\/\/ The innkeeper, for the browser test\.\n/);
    await page.click("#tab-persona");

    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mirabel" }).waitFor();

    // Talk: the tool call waits for the designer.
    await watchTurn(page, 1);
    await page.fill("#player-line", "An ale, please.");
    await page.press("#player-line", "Enter");
    const call = page.locator('.tool-call.pending[data-tool="check_stock"]');
    await call.waitFor();
    assert.equal(await text(page, '.tool-call[data-tool="check_stock"] .args'), '{"item":"ale"}');
    assert.equal(await page.inputValue("#player-line"), "", "the sent line left the input");
    await screenshot(page, "02-tool-call-by-hand");
    await call.locator("textarea").fill('{"ale": 3}');
    await call.getByRole("button", { name: "Send answer" }).click();
    await turnDone(page, 1);
    const line = 'We have {"ale":3} for you, Aria. What will it be tonight?';
    assert.equal(await text(page, '.turn[data-turn="1"] .npc .line'), line);
    assert.equal(await text(page, '.turn[data-turn="1"] .npc .emotion'), "happy");
    assert.equal(await text(page, ".portrait"), "happy");
    // Streamed: the emotion showed while the line was still partial, and the line grew in several pieces.
    const frames = await seen(page);
    assert.ok(
      frames.some((f) => f.emotion === "happy" && f.line.length < line.length),
      `the emotion came before the whole line: ${JSON.stringify(frames)}`,
    );
    const partial = new Set(frames.map((f) => f.line).filter((l) => l !== "" && l !== line));
    assert.ok(partial.size >= 2, `the line arrived in pieces: ${JSON.stringify(frames)}`);
    assert.equal(await text(page, '.turn[data-turn="1"] .tool-call .tool-result'), '→ {"ale":3}');
    assert.match(
      await text(page, '.turn[data-turn="1"] .tool-status'),
      /^answered by hand · done in \d+ ms$/,
    );
    assert.match(
      await text(page, '.turn[data-turn="1"] .meta'),
      /emotion after \d+ ms · first words \d+ ms · done in \d+ ms · tokens: \d+ in/,
    );

    // Turn 2: the NPC writes the world; the tree shows it live, flagged as the NPC's change.
    await page.click("#tab-state-world");
    await page.fill("#player-line", "Here is the gold.");
    await page.click("#send");
    await turnDone(page, 2);
    assert.equal(await text(page, '[data-path="player.gold"] button.value'), "16");
    assert.match(await text(page, ".world-log li"), /^player\.gold: 20 → 16 · the NPC, during a turn$/);
    await screenshot(page, "03-world-changed");
    await page.click("#tab-state-memory");
    assert.match(await text(page, ".relationship-value"), /^5 \(neutral\)/);
    assert.match(
      await page.locator(".relationship-history").textContent() ?? "",
      /turn 2: 5 \(\+5\) — \+5 paid up front/,
    );
    await page.click("#tab-state-turns");
    assert.equal(await page.locator(".turns-table tbody tr").count(), 2);

    // Save the state.
    await page.click("#tab-state-save");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-state")]);
    assert.equal(download.suggestedFilename(), "mira.state.json");
    const savedText = await Deno.readTextFile(await download.path());
    const saved = JSON.parse(savedText);
    assert.equal(saved.npc, "mira");
    assert.equal(saved.state.persona.name, "Mirabel");
    assert.equal(saved.state.memory.relationship, 5);
    assert.deepEqual(saved.world, { world: "mira-world", state: { player: { name: "Aria", gold: 16 } } });

    // Reload: what was typed is still there; the NPC is restored from the file.
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.equal(await page.inputValue("[name='persona.name']"), "Mirabel");
    await page.click("#tab-state-save");
    await page.setInputFiles("#restore-state", file("mira.state.json", savedText));
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Mirabel from mira.state.json." })
      .waitFor();
    const history = await page.locator("li.restored ol.history li").evaluateAll((items) =>
      items.map((li) => [...li.childNodes].map((n) => n.textContent?.trim()).filter((t) => t).join(" | "))
    );
    assert.deepEqual(history, [
      "Player | An ale, please.",
      'tool | check_stock({"item":"ale"})',
      `Mirabel | happy | ${line}`,
      "Player | Here is the gold.",
      'tool | update_world_state({"path":"player.gold","value":16})',
      'tool | change_relationship({"delta":5,"reason":"paid up front"})',
      "Mirabel | grateful | Thank you kindly, love.",
    ]);
    assert.equal(await text(page, ".portrait"), "grateful");
    await page.click("#tab-state-world");
    assert.equal(await text(page, '[data-path="player.gold"] button.value'), "16");

    // Talk again, the tool answered automatically this time (the script starts over with a fresh model).
    await page.click("#tab-tools");
    await page.locator(".tool-card").getByLabel("automatically with:").check();
    await page.locator(".tool-card textarea.code").last().fill("2 ales");
    await page.fill("#player-line", "Another one?");
    await page.press("#player-line", "Enter");
    await turnDone(page, 1);
    assert.equal(
      await text(page, '.turn[data-turn="1"] .npc .line'),
      "We have 2 ales for you, Aria. What will it be tonight?",
    );
    assert.match(
      await text(page, '.turn[data-turn="1"] .tool-status'),
      /^answered automatically · done in \d+ ms$/,
    );
    assert.equal(await text(page, '.turn[data-turn="1"] .tool-result'), "→ 2 ales");
    await screenshot(page, "04-restored-and-talking");
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-designers-loop").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});
