/// <reference lib="dom" />
/**
 * What the playground shows in a real headless Chromium when the bridge's model cannot answer: the top bar stays
 * one row on a laptop however long the model's unavailability reads (the pill is cut short, its whole text in
 * its tooltip), a turn or a bark that fails for it says where to look and how to go on without it, and the list
 * above Start warns before Start while it is chosen and known not to answer.
 *
 *   deno test --allow-all tests/browser/playground_failure_browser.ts   (needs Chromium, see playground_browser.ts)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { npcReady, openPage, screenshot, servePlayground } from "./browser_fixture.ts";
import { UnavailableModel } from "../../src/models/unavailable.ts";
import { OpenAIServer } from "../../src/serve/openai_server.ts";
import { playgroundPages } from "../../src/serve/playground/site.ts";
import { SERVE_DEFAULTS } from "../../src/serve/server_config.ts";

/** The top bar's visible parts: their text, their top and bottom, and whether their text is cut short. */
function topBarParts(page: Page): Promise<{ name: string; top: number; bottom: number; clipped: boolean }[]> {
  return page.evaluate(() =>
    [...document.querySelector(".topbar")!.children]
      .filter((el) => (el as HTMLElement).offsetParent !== null && (el.textContent ?? "").trim() !== "")
      .map((el) => {
        const box = el.getBoundingClientRect();
        const html = el as HTMLElement;
        return {
          name: (el.textContent ?? "").trim(),
          top: Math.round(box.top),
          bottom: Math.round(box.bottom),
          clipped: html.scrollWidth > html.clientWidth,
        };
      })
  );
}

Deno.test("layout: a model whose label or unavailability is long keeps the top bar one row on a laptop, the pill cut short with its whole text in the tooltip", async () => {
  // As `oam playground --model openai:…` labels a model on a long address (its reason, when unreachable, is
  // longer still: "Cannot reach the model server at …: Fetch failed: …").
  const label = `openai: http://127.0.0.1:8080/v1#${"qwen2.5-7b-instruct-q4_k_m-".repeat(5)}`;
  const served = await servePlayground(0, { name: "openai", label });
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    for (const width of [1440, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.locator("#model-status").filter({ hasText: "available" }).waitFor();
      const parts = await topBarParts(page);
      assert.equal(parts.length, 4, JSON.stringify(parts));
      // One row: every part overlaps every other vertically. Before: the model pill took the first row with
      // the title, and "Connected to the bridge" and the log button went to a second one.
      const oneRow = Math.max(...parts.map((p) => p.top)) < Math.min(...parts.map((p) => p.bottom));
      assert.ok(oneRow, `one row at ${width} px: ${JSON.stringify(parts)}`);
      const model = parts.find((p) => p.name.startsWith("Model:"))!;
      assert.equal(model.clipped, true);
      assert.equal(await page.getAttribute("#model-status", "title"), model.name);
    }
    await screenshot(page, "long-model-top-bar");
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-long-model-top-bar").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("a turn on the bridge's model fails as unavailable: the turn says where to look and that the page's script runs anyway", async () => {
  // As `oam playground --model openai:http://127.0.0.1:9/v1#qwen` with no server there: every turn fails with
  // model_unavailable ("Cannot reach the model server at …").
  const message = "Cannot reach the model server at http://127.0.0.1:9/v1/chat/completions: Fetch failed.";
  const served = await servePlayground(0, { name: "openai", label: "openai: http://127.0.0.1:9/v1#qwen" }, {
    steps: [],
    fallback: { error: "model_unavailable", message },
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
    // Before: the error alone; the way round it (the page's script) was only in the first note of the page.
    assert.deepEqual(await turn.locator(".meta > *").allTextContents(), [
      `model_unavailable: ${message}`,
      "The bridge's model cannot answer (the Model pill at the top says why): start it, or run this NPC on " +
      "the page's script (Model tab → The page's script, then Start NPC).",
    ]);
    // A bark fails the same way, and says the same. Before: the error alone.
    await page.click("#bark");
    const bark = page.locator(".bark.failed");
    await bark.locator(".error").waitFor();
    assert.deepEqual(await bark.locator("p.error, p.hint").allTextContents(), [
      `model_unavailable: ${message}`,
      "The bridge's model cannot answer (the Model pill at the top says why): start it, or run this NPC on " +
      "the page's script (Model tab → The page's script, then Start NPC).",
    ]);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-model-unavailable-turn").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("the bridge's model chosen while it is unavailable: the list above Start warns before Start, with the way round it", async () => {
  // As `oam playground` on a machine that cannot run the on-device model (its message is the reason's own).
  const model = () => new UnavailableModel("device_not_eligible");
  const server = new OpenAIServer({
    host: "127.0.0.1",
    port: 0,
    models: new Map([["system", model()]]),
    rpc: {
      engine: { systemModel: model },
      maxConnections: SERVE_DEFAULTS.rpcMaxConnections,
      maxMessageBytes: SERVE_DEFAULTS.rpcMaxMessageBytes,
    },
    pages: playgroundPages({ name: "system", label: "the on-device model (system)" }),
  });
  await server.start();
  const browser = await openPage(`http://127.0.0.1:${server.port}/`);
  const { page } = browser;
  try {
    await page.click("#tab-model");
    await page.check("#model-script");
    const status = page.locator("#editor-status");
    await status.locator(".summary").filter({ hasText: "Ready to start." }).waitFor();
    await page.check("#model-bridge");
    // Before: "Ready to start.", and every turn of the NPC then failed with model_unavailable.
    const item = status.locator("li.warning").filter({ hasText: "cannot answer" });
    await item.waitFor();
    assert.equal(
      await item.textContent(),
      "Model: New NPCs run on the bridge's model, which cannot answer (the on-device model (system), " +
        "unavailable: this device cannot run Apple Intelligence): choose “The page's script” to run them on " +
        "the script, or start the playground with --model or --script.",
    );
    await page.click("#tab-persona");
    await item.locator("button.link").click();
    assert.equal(await page.evaluate(() => document.activeElement?.id ?? ""), "model-script");
    await page.check("#model-script");
    await status.locator(".summary").filter({ hasText: "Ready to start." }).waitFor();
    assert.equal(await status.locator("li").count(), 0);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-unavailable-model-warning").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await server.stop();
  }
});
