/// <reference lib="dom" />
/**
 * The round trip between the playground and a game engine, in a real headless Chromium and a real
 * `cli.ts stdio` driven by the Python client: the designer plays the sample persona, exports it for the engine
 * and downloads its state; bindings/README.md's script ("A persona from the NPC playground") runs beside the
 * two files as written (a new game from the export, the save loaded, a turn, a save of the game's), and the
 * page's Restore brings the game's save back with its conversation, memory and world.
 *
 *   deno test --allow-all tests/browser/playground_engine_browser.ts   (needs Chromium and python3)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { assertSucceeded, bridgeEnv, onPath, REPO_ROOT, run } from "../bindings/toolchain.ts";
import { file, npcReady, withPlayground } from "./browser_fixture.ts";
import { answerCall, sayUntilCall, startScriptNpc } from "./script_npc.ts";

const hasPython = onPath("python3");

/** The python block of bindings/README.md's section `heading`. */
async function readmeScript(heading: string): Promise<string> {
  const readme = await Deno.readTextFile(`${REPO_ROOT}/bindings/README.md`);
  const section = readme.split(new RegExp(`^### ${heading}$`, "m"))[1];
  assert.ok(section !== undefined, `bindings/README.md has no '### ${heading}' section`);
  const block = /```python\n([\s\S]*?)\n```/.exec(section);
  assert.ok(block, "the section has no python block");
  return block[1];
}

/** Clicks `selector` and writes the file it downloaded into `dir`; returns its name. */
async function downloadInto(page: Page, selector: string, dir: string): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent("download"), page.click(selector)]);
  const name = download.suggestedFilename();
  await Deno.copyFile(await download.path(), `${dir}/${name}`);
  return name;
}

Deno.test({
  name: hasPython
    ? "playground → engine → playground: bindings/README.md's script runs on Export for the engine's file and Download state's as they are, and the page restores the game's save with its conversation, memory and world"
    : "playground → engine → playground: SKIPPED (python3 missing)",
  ignore: !hasPython,
  sanitizeResources: false,
  async fn() {
    const script = await readmeScript("A persona from the NPC playground");
    const dir = await Deno.makeTempDir({ prefix: "oam-engine-round-trip-" });
    try {
      await withPlayground("failed-engine-round-trip", async ({ page, errors }) => {
        // The designer: two turns on the page's script, check_stock answered by hand.
        await startScriptNpc(page);
        await sayUntilCall(page, "An ale, please.");
        await answerCall(page, '{"left": 12, "price": 4}');
        await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
        await page.fill("#player-line", "Here is the gold.");
        await page.press("#player-line", "Enter");
        await page.locator('.turn[data-turn="2"] .npc[aria-busy="false"]').waitFor();
        assert.equal(await downloadInto(page, "#export-persona", dir), "mira.npc-create.json");
        await page.click("#tab-state-save");
        assert.equal(await downloadInto(page, "#download-state", dir), "mira.state.json");

        // The engine programmer: the README's script beside the two files, unedited.
        await Deno.writeTextFile(`${dir}/from_playground.py`, script);
        await Deno.copyFile(
          `${REPO_ROOT}/bindings/python/open_apple_models.py`,
          `${dir}/open_apple_models.py`,
        );
        const result = await run("python3", ["-B", "from_playground.py"], {
          cwd: dir,
          env: bridgeEnv(),
          timeoutMs: 60_000,
        });
        assertSucceeded(result, "python3 from_playground.py");
        assert.deepEqual(result.stdout.trim().split("\n"), [
          "new game: [happy] Ale's on tap, four gold a mug. Want one?",
          "loaded game: relationship 5, facts ['Aria drinks ale.']",
          "loaded game: [happy] Ale's on tap, four gold a mug. Want one?",
        ]);

        // Back in the page: the game's save, restored from the file.
        const saved = await Deno.readTextFile(`${dir}/mira.game.state.json`);
        await page.setInputFiles("#restore-state", file("mira.game.state.json", saved));
        await page.locator("ol.turns li.note").filter({ hasText: "Restored Mira from mira.game.state.json." })
          .waitFor();
        await npcReady(page);
        const history = await page.locator("li.restored ol.history li").evaluateAll((items) =>
          items.map((li) => [...li.childNodes].map((n) => n.textContent?.trim()).filter((t) => t).join(" | "))
        );
        assert.deepEqual(history.filter((line) => line.startsWith("Player")), [
          "Player | An ale, please.",
          "Player | Here is the gold.",
          "Player | Any news?",
        ]);
        await page.click("#tab-state-memory");
        assert.match(await page.locator(".relationship-value").textContent() ?? "", /^5 \(neutral\)/);
        await page.click("#tab-state-world");
        assert.equal(await page.locator('[data-path="player.gold"] button.value').textContent(), "3");
        assert.deepEqual(errors, []);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
