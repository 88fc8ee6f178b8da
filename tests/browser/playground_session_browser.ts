/// <reference lib="dom" />
/**
 * A designer's session in a real headless Chromium, across edits, saves and reloads: the editor says when
 * the running NPC is not as the editor has it (a tool added or changed, the script edited) until Apply or
 * Start gives it the changes, and Apply says a scripted NPC's script starts again from its first step; after a
 * reload, the restore buttons go as they are used and hand the focus on.
 *
 *   deno test --allow-all tests/browser/playground_session_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { file, npcReady, withPlayground } from "./browser_fixture.ts";
import { answerCall, sayUntilCall, startScriptNpc } from "./script_npc.ts";

/** The editor's status summary (the line above Start's result). */
async function summary(page: Page): Promise<string> {
  return await page.locator("#editor-status .summary").textContent() ?? "";
}

Deno.test("tools edited while an NPC runs: the status says it runs without them until Apply, and Apply says the script starts again", async () => {
  await withPlayground("failed-session-stale", async (browser) => {
    const { page } = browser;
    await page.click("#start");
    await npcReady(page);
    assert.equal(await summary(page), "Mira is running; ready to apply or restart.");

    await page.click("#tab-tools");
    const description = page.locator(".tool-card").first().getByLabel("Description");
    const before = await description.inputValue();
    await description.fill("How many of an item the inn has left.");
    // Before: "Mira is running; ready to apply or restart.", as if she had the new description; a designer who
    // talked on got the old tool (an added one: "There is no tool named 'open_door'").
    assert.equal(
      await summary(page),
      "Mira is running, not as the editor has it now; ready to apply or restart.",
    );
    await description.fill(before);
    assert.equal(await summary(page), "Mira is running; ready to apply or restart.");

    await page.getByRole("button", { name: "Add a tool" }).click();
    const card = page.locator(".tool-card").nth(1);
    await card.getByLabel("Name").fill("open_door");
    await card.getByLabel("Description").fill("Opens a door of the inn. Returns whether it opened.");
    assert.equal(
      await summary(page),
      "Mira is running, not as the editor has it now; ready to apply or restart.",
    );
    await page.click("#apply");
    await npcReady(page);
    assert.equal(await summary(page), "Mira is running; ready to apply or restart.");
    // Before: "…; the conversation goes on." and the script's first step played again at the next turn.
    await page.locator("ol.turns li.note").filter({
      hasText: "Applied the editor's persona, options and tools to Mira; the conversation goes on. " +
        "The script starts again from its first step (the NPC gets a new model).",
    }).waitFor();
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a saved state restored after a reload: the old 'Restore the last state seen' goes while the restored NPC runs, and the editor follows it once adopted", async () => {
  await withPlayground("failed-session-restore", async (browser) => {
    const { page } = browser;
    await page.click("#start");
    await npcReady(page);
    await page.fill("#player-line", "Hello there.");
    await page.press("#player-line", "Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    await page.click("#tab-state-save");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-state")]);
    const saved = await Deno.readTextFile(await download.path());
    await page.waitForFunction(() =>
      JSON.parse(localStorage.getItem("oam-playground/v1") ?? "{}").lastState != null
    );

    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    // The editor no longer has what the save has.
    await page.click("#tab-persona");
    await page.getByLabel("Role", { exact: true }).fill("the cook");
    await page.click("#tab-state-save");
    const last = page.locator("#restore-last");
    await last.waitFor();
    await page.setInputFiles("#restore-state", file("mira.state.json", saved));
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Mira from mira.state.json." })
      .waitFor();
    await npcReady(page);
    // Before: "Restore the last state seen (Mira, <the time of the last visit>)" stayed beside the NPC now
    // running, though the page's last state seen was the restored NPC's by then.
    assert.equal(await last.isHidden(), true);
    // The restored NPC runs on the saved persona, options and tools, which the editor does not have: the
    // status says so, until the designer puts them into the editor.
    assert.equal(
      await summary(page),
      "Mira is running, not as the editor has it now; ready to apply or restart.",
    );
    await page.getByRole("button", { name: "Put the restored persona, options and tools into the editor" })
      .click();
    assert.equal(await summary(page), "Mira is running; ready to apply or restart.");
    await page.click("#tab-persona");
    await page.getByLabel("Role", { exact: true }).fill("the innkeeper, retired");
    assert.equal(
      await summary(page),
      "Mira is running, not as the editor has it now; ready to apply or restart.",
    );
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("keyboard: 'Restore the last state seen' pressed after a reload hands the focus to Download state as it goes", async () => {
  await withPlayground("failed-session-restore-last-focus", async (browser) => {
    const { page } = browser;
    await page.click("#start");
    await npcReady(page);
    await page.waitForFunction(() =>
      JSON.parse(localStorage.getItem("oam-playground/v1") ?? "{}").lastState != null
    );
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await page.click("#tab-state-save");
    await page.focus("#restore-last");
    await page.keyboard.press("Enter");
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Mira from the last state seen." })
      .waitFor();
    await npcReady(page);
    assert.equal(await page.locator("#restore-last").isHidden(), true);
    assert.equal(await page.evaluate(() => document.activeElement?.id), "download-state");
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("keyboard: 'Restore it' in the conversation after a reload hands the focus to the player's line as the conversation starts again", async () => {
  await withPlayground("failed-session-restore-it-focus", async (browser) => {
    const { page } = browser;
    await page.click("#start");
    await npcReady(page);
    await page.waitForFunction(() =>
      JSON.parse(localStorage.getItem("oam-playground/v1") ?? "{}").lastState != null
    );
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await page.locator("ol.turns li.offer").getByRole("button", { name: "Restore it" }).focus();
    await page.keyboard.press("Enter");
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Mira from the last state seen." })
      .waitFor();
    await npcReady(page);
    // Before: the button went with the old conversation and the focus fell to the page's body.
    assert.equal(await page.evaluate(() => document.activeElement?.id), "player-line");
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("Download state while a call waits for its answer: the Save tab says it saves once the reply ends, and two clicks save once", async () => {
  await withPlayground("failed-session-save-mid-turn", async (browser) => {
    const { page } = browser;
    // The page's sample script: the first turn calls check_stock, answered by hand.
    await startScriptNpc(page);
    await sayUntilCall(page, "An ale?");
    await page.click("#tab-state-save");
    const downloads: string[] = [];
    page.on("download", (download) => downloads.push(download.suggestedFilename()));
    await page.click("#download-state");
    // Before: nothing at all until the reply ended (the save waits for the turn), so the designer clicked again
    // and got a file per click.
    const status = page.locator("#state-body .status");
    await status.filter({ hasText: "Waiting for the running reply to end" }).waitFor();
    assert.equal(
      await status.textContent(),
      "Waiting for the running reply to end (answer or cancel it), then saving…",
    );
    await page.click("#download-state");
    await answerCall(page, "3");
    await status.filter({ hasText: "Saved mira.state.json" }).waitFor();
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    // One more save after the turn: its file comes after any other the clicks during the turn made (the saves
    // are queued per NPC), so the two clicks during the turn made one.
    await Promise.all([page.waitForEvent("download"), page.click("#download-state")]);
    assert.deepEqual(downloads, ["mira.state.json", "mira.state.json"]);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("Save memory while a call waits for its answer: the form says it saves once the reply ends, and its Save waits", async () => {
  await withPlayground("failed-session-memory-mid-turn", async (browser) => {
    const { page } = browser;
    await startScriptNpc(page);
    await sayUntilCall(page, "An ale?");
    await page.click("#tab-state-memory");
    await page.getByRole("button", { name: "Edit memory" }).click();
    await page.fill("#memory-relationship", "40");
    await page.getByRole("button", { name: "Save memory" }).click();
    // Before: nothing changed until the reply ended (npc/update waits for the turn), as if Save did nothing.
    const message = page.locator("#state-body .memory-edit .message");
    await message.filter({ hasText: "Waiting" }).waitFor();
    assert.equal(
      await message.textContent(),
      "Waiting for the running reply to end (answer or cancel it), then saving…",
    );
    const save = page.getByRole("button", { name: "Save memory" });
    assert.equal(await save.getAttribute("aria-disabled"), "true");
    await answerCall(page, "3");
    await page.locator("#state-body .relationship-value").filter({ hasText: "40" }).waitFor();
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("the last visit's label shows only the time on the same day, and the date on a later day", async () => {
  await withPlayground("failed-session-last-visit-date", async (browser) => {
    const { page } = browser;
    // The page's clock: the visit on 1 March, the reloads on the same day and then on the next one.
    await page.clock.setFixedTime(new Date("2026-03-01T09:49:51Z"));
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await page.click("#start");
    await npcReady(page);
    await page.fill("#player-line", "Hello there.");
    await page.press("#player-line", "Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    await page.waitForFunction(() =>
      JSON.parse(localStorage.getItem("oam-playground/v1") ?? "{}").lastState != null
    );
    const offer = page.locator("ol.turns li.note").filter({ hasText: "The NPC of your last visit" });
    const label = async () => /\(Mira, ([^)]*)\) went with/.exec(await offer.textContent() ?? "")?.[1] ?? "";

    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    const sameDay = await label();
    assert.match(sameDay, /\d:\d\d:\d\d/);
    assert.doesNotMatch(sameDay, /2026/, "the same day: the time alone");

    await page.clock.setFixedTime(new Date("2026-03-02T10:00:00Z"));
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    // Before: "Mira, 9:49:51 AM" the next day too, which reads as a time of today.
    const nextDay = await label();
    assert.match(nextDay, /2026/, `the date is shown: ${nextDay}`);
    assert.match(nextDay, /\d:\d\d:\d\d/);
    await page.click("#tab-state-save");
    assert.equal(
      await page.locator("#restore-last").textContent(),
      `Restore the last state seen (Mira, ${nextDay})`,
    );
    assert.deepEqual(browser.errors, []);
  });
});
