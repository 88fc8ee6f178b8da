/// <reference lib="dom" />
/**
 * An Apply the bridge refuses (a value only the bridge catches), in a real headless Chromium: the editor keeps
 * the designer's edits, the bridge's message is by the field (named as the editor has it, not under
 * `state.`), and the NPC runs on as it was, on the model it ran on (the Model tab's script, not the bridge's).
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

Deno.test("a refused Apply keeps the edits, shows the bridge's message by the field, and leaves the NPC on its model", async () => {
  await withPlayground("failed-apply-refused", async ({ page, errors }) => {
    await startScriptNpc(page);
    await sayUntilCall(page, "An ale?");
    await answerCall(page, '{"stock": 3}');
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    await page.click("#tab-persona");
    const role = page.locator('input[id^="f-persona-role"]');
    await role.fill("the cook");
    await page.click("#tab-options");
    // An integer too large to be one: the page's check lets it through, the bridge refuses it.
    const rounds = page.locator('input[id^="f-options-maxToolRounds"]');
    await rounds.fill("100000000000000000000");
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
    assert.equal(await rounds.inputValue(), "100000000000000000000");
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
