/**
 * Fixtures of the browser tests: the playground served by `oam serve`'s server on a free loopback port, and
 * a real headless Chromium (Debian's `chromium`, or `OAM_CHROMIUM`) driven by playwright-core. A missing
 * Chromium fails the test with the command that installs it: this tier never skips.
 */
import { Buffer } from "node:buffer";
import { type BrowserContext, chromium, type Page } from "npm:playwright-core@1.65.2";
import { type Script, ScriptedModel } from "../../src/models/scripted.ts";
import { OpenAIServer } from "../../src/serve/openai_server.ts";
import { type PlaygroundModel, playgroundPages } from "../../src/serve/playground/site.ts";
import { SERVE_DEFAULTS } from "../../src/serve/server_config.ts";

/** Where screenshots go (git-ignored). */
export const SCREENSHOTS = new URL("./screenshots/", import.meta.url);

/** How long a wait in the page may take before the test fails (a guard against hangs, not a speed bound). */
export const WAIT_MS = 15_000;

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/** Chromium's flags for these tests: headless, no sandbox (root in CI), no GPU, no background traffic. */
export const CHROMIUM_ARGS: string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
];

/** The Chromium executable: `OAM_CHROMIUM`, else the first of the usual Linux paths that exists. */
export function chromiumPath(): string {
  const fromEnv = Deno.env.get("OAM_CHROMIUM");
  const candidates = fromEnv ? [fromEnv] : CANDIDATES;
  for (const path of candidates) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // next
    }
  }
  throw new Error(
    `No Chromium found (looked at ${
      candidates.join(", ")
    }). Install it ('apt-get install -y chromium') or set ` +
      "OAM_CHROMIUM to a Chromium or Chrome executable. The browser tests cannot run without one.",
  );
}

/** A served playground. */
export interface Served {
  server: OpenAIServer;
  /** `http://127.0.0.1:<port>/` */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Serves the playground on `port` (0: a free one); the bridge's own model plays `script` (by default a
 * one-step script), and the page is told it is `info` (as `oam playground --script` tells it).
 */
export async function servePlayground(
  port = 0,
  info: PlaygroundModel = { name: "scripted", label: "scripted (test)" },
  script?: Script,
): Promise<Served> {
  const reply = {
    emotion: "neutral",
    line: "(the bridge's model)",
    player_options: ["One", "Two", "Three"],
    ends_conversation: false,
  };
  const model = () => new ScriptedModel(script ?? { steps: [], fallback: { json: reply } });
  const server = new OpenAIServer({
    host: "127.0.0.1",
    port,
    models: new Map([["system", model()]]),
    rpc: {
      engine: { systemModel: model },
      maxConnections: SERVE_DEFAULTS.rpcMaxConnections,
      maxMessageBytes: SERVE_DEFAULTS.rpcMaxMessageBytes,
    },
    pages: playgroundPages(info),
  });
  await server.start();
  const bound = server.port!;
  return { server, url: `http://127.0.0.1:${bound}/`, port: bound, stop: () => server.stop() };
}

/** A headless Chromium with a fresh profile; `close()` removes the profile. */
export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Errors the page threw or logged (a test asserts there are none). */
  errors: string[];
  close(): Promise<void>;
}

/** Opens Chromium on `url` (1440×900, a laptop screen) and waits until the page is connected to the bridge. */
export async function openPage(url: string): Promise<Browser> {
  const profile = await Deno.makeTempDir({ prefix: "oam-chromium-" });
  const downloads = await Deno.makeTempDir({ prefix: "oam-downloads-" });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    viewport: { width: 1440, height: 900 },
    acceptDownloads: true,
    downloadsPath: downloads,
    args: CHROMIUM_ARGS,
  });
  const page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console error: ${message.text()}`);
  });
  await page.goto(url);
  await page.locator("#connection-status[data-state=open]").waitFor();
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
      await Deno.remove(downloads, { recursive: true }).catch(() => {});
    },
  };
}

/** Saves a screenshot of the page as `<name>.png` under {@link SCREENSHOTS}. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname });
}

/** The README's picture of the playground. */
export const README_SCREENSHOT = new URL("../../docs/playground.png", import.meta.url);

/**
 * Writes the page as the README's picture of the playground ({@link README_SCREENSHOT}) when
 * `OAM_README_SCREENSHOT=1` (`deno task screenshot:playground`); else does nothing, so the browser tier leaves
 * the repository's files alone.
 */
export async function readmeScreenshot(page: Page): Promise<void> {
  if (Deno.env.get("OAM_README_SCREENSHOT") !== "1") return;
  await page.screenshot({ path: README_SCREENSHOT.pathname });
}

/**
 * Serves the playground, opens it and runs `test` on it; when `test` fails, the page's screenshot is saved as
 * `<failure>.png` and the failure thrown again. The browser and the server are closed either way.
 */
export async function withPlayground(
  failure: string,
  test: (browser: Browser, served: Served) => Promise<void>,
): Promise<void> {
  const served = await servePlayground();
  const browser = await openPage(served.url);
  try {
    await test(browser, served);
  } catch (error) {
    await screenshot(browser.page, failure).catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
}

/**
 * Waits until the page has read a loaded file (`name`): it reads files asynchronously, so a Start pressed
 * before would start the persona the editor held before (the sample persona is Mira too, so "Started Mira"
 * does not tell the two apart).
 */
export async function loaded(page: Page, name: string): Promise<void> {
  await page.locator("#start-result").filter({ hasText: `Loaded ${name}` }).waitFor();
}

/**
 * Waits until the Start, Apply or restore pressed before has finished. The page shows its result (the
 * conversation's "Started Mira" note, the bridge's warnings under Start) before it reads the new NPC's state,
 * and until that is done it keeps a line or a bark with "Starting the NPC: wait a moment" and refuses another
 * start; Start is enabled again when it is done. Under load a line sent right after the note was kept and the
 * test waited for a turn that never came.
 */
export async function npcReady(page: Page): Promise<void> {
  await page.locator("#start:enabled").waitFor();
}

/** A file for an `<input type=file>`. */
export function file(name: string, value: unknown): { name: string; mimeType: string; buffer: Buffer } {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return { name, mimeType: "application/json", buffer: Buffer.from(text) };
}
