/// <reference lib="dom" />
/**
 * An Apply the bridge refuses, in a real headless Chromium: the editor keeps the designer's edits, the bridge's
 * message is by the field (named as the editor has it, not under `state.`), and the NPC runs on as it was, on
 * the model it ran on (the Model tab's script, not the bridge's), calling its tools as before (their renames in
 * the editor and the answers kept for them stay).
 *
 *   deno task test:browser      (needs Chromium: apt-get install -y chromium, or OAM_CHROMIUM=<path>)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { npcReady, withPlayground } from "./browser_fixture.ts";
import { answerCall, sayUntilCall, startScriptNpc } from "./script_npc.ts";

async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().textContent() ?? "").trim();
}

/**
 * Makes the bridge refuse the value `typed` of `options.maxToolRounds` in an Apply, as a bridge stricter than
 * the page's check would: the `npc/restore` that carries it carries 10^20 instead, which the bridge refuses (the
 * page's own check refuses 10^20 typed, so no value typed reaches that refusal). The restore that puts the NPC
 * back, with its own value, goes as it is.
 */
async function refuseRounds(page: Page, typed: number): Promise<void> {
  await page.routeWebSocket(/\/rpc$/, (ws) => {
    const server = ws.connectToServer();
    ws.onMessage((message) => {
      const request = JSON.parse(String(message));
      if (request.method === "npc/restore" && request.params?.state?.options?.maxToolRounds === typed) {
        request.params.state.options.maxToolRounds = 1e20;
        server.send(JSON.stringify(request));
        return;
      }
      server.send(message);
    });
  });
  await page.reload();
  await page.locator("#connection-status[data-state=open]").waitFor();
}

Deno.test("a refused Apply keeps the edits, shows the bridge's message by the field, and leaves the NPC on its model", async () => {
  await withPlayground("failed-apply-refused", async ({ page, errors }) => {
    await refuseRounds(page, 7);
    await startScriptNpc(page);
    await sayUntilCall(page, "An ale?");
    await answerCall(page, '{"stock": 3}');
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    await page.click("#tab-persona");
    const role = page.locator('input[id^="f-persona-role"]');
    await role.fill("the cook");
    await page.click("#tab-options");
    // A value the page's check lets through, and the bridge (made stricter above) refuses.
    const rounds = page.locator('input[id^="f-options-maxToolRounds"]');
    await rounds.fill("7");
    await rounds.blur();
    await page.click("#apply");
    await page.locator("#start-result p.error").waitFor();
    await npcReady(page);
    const refused = "Parameter 'options.maxToolRounds' must be an integer; got 100000000000000000000.";
    // Before: the message named 'state.options.maxToolRounds', a key the designer never wrote.
    assert.equal(await text(page, '[id^="f-options-maxToolRounds"][id$="-message"]'), `Bridge: ${refused}`);
    assert.match(
      await text(page, "#start-result p.error"),
      new RegExp(`^${refused.replace(/[.()]/g, "\\$&")}`),
    );
    assert.equal(await rounds.inputValue(), "7");
    await page.click("#tab-persona");
    assert.equal(await role.inputValue(), "the cook");
    assert.match(await text(page, "#editor-status"), /^Mira is running, not as the editor has it now/);
    assert.match(
      (await page.locator("ol.turns li.note").last().textContent()) ?? "",
      /^The bridge refused the apply \(see under Start\): Mira runs on as before, .* Its script starts again/,
    );
    // The NPC runs on as it was: on the Model tab's script (its first turn calls check_stock again).
    // Before: it was put back on the bridge's model, and answered "(the bridge's model)".
    assert.match(await text(page, ".conversation-head .npc-model"), /the Model tab's script/);
    await sayUntilCall(page, "Another?");
    await answerCall(page, '{"stock": 2}');
    await page.locator('.turn[data-turn="2"] .npc[aria-busy="false"]').waitFor();
    assert.doesNotMatch(await text(page, '.turn[data-turn="2"] .npc'), /the bridge's model/);
    const state = await page.evaluate(async () => {
      const app = (globalThis as unknown as {
        playground: { running: { npc: { state(): Promise<Record<string, Record<string, unknown>>> } } };
      }).playground;
      const s = await app.running.npc.state();
      return { role: s.persona.role, rounds: s.options.maxToolRounds };
    });
    assert.deepEqual(state, { role: "the innkeeper of the Rusty Tankard", rounds: 2 });
    assert.deepEqual(errors, []);
  });
});

/** The answers the tab keeps, typed to calls but not sent (its session storage). */
async function keptAnswers(page: Page): Promise<unknown> {
  return await page.evaluate(() =>
    JSON.parse(sessionStorage.getItem("oam-playground/kept-answers/v1") ?? "{}")
  );
}

/**
 * Applies an edit the bridge refuses of its own accord: a client tool named as a built-in one the NPC has
 * (Mira has remember_fact), which the page only warns about.
 */
async function applyRefused(page: Page): Promise<void> {
  await page.click("#apply");
  await page.locator("#start-result p.error").filter({ hasText: "must not be 'remember_fact'" }).waitFor();
  await npcReady(page);
}

Deno.test("a refused Apply of a renamed tool keeps its answer settings for the calls the NPC still makes by the old name", async () => {
  await withPlayground("failed-apply-refused-rename", async ({ page, errors }) => {
    await page.click("#tab-tools");
    const card = page.locator('.tool-card[data-tool="0"]');
    await card.getByLabel("automatically with:").check();
    await card.locator("textarea[id$=-canned]").fill('{"stock": 3}');
    await startScriptNpc(page);
    await page.click("#tab-tools");
    const name = card.locator("input[id$=-name]");
    await name.fill("remember_fact");
    await name.press("Tab");
    await applyRefused(page);
    assert.match(
      await text(page, "#start-result p.error"),
      /^'tools\[0\]\.name' must not be 'remember_fact'/,
    );
    // Mira runs on with check_stock: its call is answered as the card (now named remember_fact) says.
    // Before: the refused Apply forgot the rename, and the call waited for an answer by hand.
    await page.fill("#player-line", "An ale?");
    await page.press("#player-line", "Enter");
    const call = page.locator('.tool-call[data-tool="check_stock"]');
    await call.waitFor();
    assert.equal(await call.getAttribute("data-how"), "answered automatically");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    assert.deepEqual(errors, []);
  });
});

Deno.test("a refused Apply keeps the answer typed for a tool the edit removed: the NPC still has the tool", async () => {
  await withPlayground("failed-apply-refused-kept-answer", async ({ page, errors }) => {
    await startScriptNpc(page);
    const box = await sayUntilCall(page, "An ale?");
    await box.fill('{"stock": 2}');
    await page.click("#cancel");
    await page.locator('.turn[data-turn="1"] .badge.cancelled').waitFor();
    // The edit, in the JSONC text: check_stock goes, a tool named as a built-in one comes.
    await page.click("#tab-jsonc");
    const jsonc = page.locator("#jsonc");
    await jsonc.fill((await jsonc.inputValue()).replace('"name": "check_stock"', '"name": "remember_fact"'));
    await applyRefused(page);
    // Before: {} (the answer went with the refused edit's tools).
    assert.deepEqual(await keptAnswers(page), { mira: { check_stock: '{"stock": 2}' } });
    const next = await sayUntilCall(page, "An ale, then?");
    assert.equal(await next.inputValue(), '{"stock": 2}');
    assert.deepEqual(errors, []);
  });
});

Deno.test("an integer past 2^53-1 typed in a field is refused by the page's check, named as the bridge names it", async () => {
  await withPlayground("failed-unsafe-integer", async ({ page, errors }) => {
    await startScriptNpc(page);
    await page.click("#tab-options");
    const rounds = page.locator('input[id^="f-options-maxToolRounds"]');
    await rounds.fill("100000000000000000000");
    await rounds.blur();
    const message =
      "'options.maxToolRounds' must be a whole number from 0 to 9007199254740991 (2^53-1, the " +
      "largest integer JSON keeps exact); got 100000000000000000000.";
    // Before: no problem here, and Apply went to the bridge, which refused it.
    assert.equal(await text(page, '[id^="f-options-maxToolRounds"][id$="-message"]'), message);
    assert.equal(await text(page, "#editor-status li.error"), `Max tool rounds: ${message}`);
    await page.click("#apply");
    await page.locator("#start-result p.error").filter({ hasText: "Fix the problems listed above first." })
      .waitFor();
    assert.deepEqual(errors, []);
  });
});
