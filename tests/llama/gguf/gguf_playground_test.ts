/**
 * The NPC playground as a designer without a Mac runs it: `oam playground --model gguf:<fixture>` (the real
 * CLI, in its own process) in a real headless Chromium. The first connection waits while the bridge loads the
 * model; the page says so, and a Start pressed at once starts the NPC once the model is in; then a short
 * persona talks on the model. The tiny fixture model's words are not asserted, only that its turns end.
 *
 * Part of the GGUF tier (`OAM_GGUF_TESTS=1`, `deno task test:gguf`); needs Chromium like the browser tier.
 */
import assert from "node:assert/strict";
import { chromium } from "npm:playwright-core@1.65.2";
import { CHROMIUM_ARGS, chromiumPath, file, npcReady, WAIT_MS } from "../../browser/browser_fixture.ts";
import { fixtureModelPath, GGUF_ENABLED, IGNORED_REASON } from "./fixture.ts";

const CLI = new URL("../../../cli.ts", import.meta.url).pathname;

/** A short persona: text replies, no tools, no world (the fixture model was trained on such chat). */
const SHORT = {
  npc: "ada",
  persona: { name: "Ada", role: "a shopkeeper" },
  options: { replyFormat: "text", maxResponseTokens: 48, sampling: "greedy" },
};

/** `oam playground --port 0 --model gguf:<fixture>` in its own process, and the address it printed. */
async function startPlayground(): Promise<{ url: string; stop(): Promise<void> }> {
  const model = `gguf:${await fixtureModelPath()}#threads=1,gpu=false,contextSize=2048`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-lock", CLI, "playground", "--port", "0", "--model", model],
    stdout: "piped",
    stderr: "null",
    stdin: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  let url: string | undefined;
  while (url === undefined) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`oam playground ended before it printed its address:\n${out}`);
    out += value;
    url = out.match(/http:\/\/127\.0\.0\.1:\d+\//)?.[0];
  }
  const drain = (async () => {
    while (!(await reader.read()).done) {
      // (keeps the pipe flowing)
    }
  })();
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await drain.catch(() => {});
    },
  };
}

Deno.test({
  name:
    "gguf playground: the page says the bridge is loading its model, Start pressed at once starts the NPC, a short persona talks",
  ignore: !GGUF_ENABLED,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    if (!GGUF_ENABLED) throw new Error(IGNORED_REASON);
    const served = await startPlayground();
    const profile = await Deno.makeTempDir({ prefix: "oam-chromium-" });
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath(),
      headless: true,
      viewport: { width: 1440, height: 900 },
      args: CHROMIUM_ARGS,
    });
    try {
      const page = context.pages()[0] ?? await context.newPage();
      page.setDefaultTimeout(WAIT_MS * 8); // a turn of the real model on a shared machine
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
      page.on("console", (m) => m.type() === "error" && errors.push(`console error: ${m.text()}`));
      // Every text the top bar's pills show, in order (the model loads before the bridge answers initialize).
      // (A script in a string: this file is type-checked with the main tier's, without the DOM's types.)
      await page.addInitScript(`
        globalThis.shown = [];
        document.addEventListener("DOMContentLoaded", () => {
          for (const id of ["connection-status", "model-status"]) {
            const pill = document.getElementById(id);
            new MutationObserver(() => globalThis.shown.push(id + ": " + pill.textContent))
              .observe(pill, { childList: true, characterData: true, subtree: true });
          }
        });
      `);
      await page.goto(served.url);
      // Start at once, as a designer does: the model is still loading.
      await page.click("#start");
      await page.locator("#connection-status[data-state=open]").waitFor();
      await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
      await npcReady(page);
      const shown = await page.evaluate("globalThis.shown") as string[];
      assert.ok(
        shown.includes("connection-status: Connected; the bridge is loading its model…"),
        `the connection pill never said the model was loading: ${JSON.stringify(shown)}`,
      );
      assert.ok(
        shown.some((text) => /^model-status: Model: llama: .* · loading the model…$/.test(text)),
        `the model pill never said the model was loading: ${JSON.stringify(shown)}`,
      );
      assert.equal(shown.some((text) => text.includes("availability unknown")), false, JSON.stringify(shown));
      assert.match(await page.locator("#model-status").textContent() ?? "", / · available$/);

      // A short persona, loaded from a file and started again; two turns on the model.
      await page.setInputFiles("#load-persona", [file("ada.jsonc", SHORT)]);
      await page.locator("#start-result").filter({ hasText: "Loaded ada.jsonc" }).waitFor();
      await page.click("#start");
      await page.locator("ol.turns li.note").filter({ hasText: "Started Ada" }).waitFor();
      await npcReady(page);
      for (const [n, line] of [[1, "Hello"], [2, "What is the capital of France?"]] as const) {
        await page.fill("#player-line", line);
        await page.press("#player-line", "Enter");
        await page.locator(`.turn[data-turn="${n}"] .npc[aria-busy="false"]`).waitFor();
        assert.equal(await page.locator(`.turn[data-turn="${n}"] .badge.error`).count(), 0);
        assert.notEqual((await page.locator(`.turn[data-turn="${n}"] .npc .line`).textContent())?.trim(), "");
      }
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
      await served.stop();
    }
  },
});
