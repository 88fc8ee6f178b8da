/**
 * A browser game on its own origin talking to `oam serve`'s `/rpc`, as the README tells a web developer to:
 * the typed client bundled with `deno bundle --platform browser --code-splitting mod.ts`, a page served from
 * another port, `--allow-origin` for that page; the page never loads the in-process engine's chunk. Also what a developer gets wrong: a page whose origin is not allowed, and a
 * reload while a tool call waits (the server frees the connection and the next page works).
 */
import assert from "node:assert/strict";
import { chromium } from "npm:playwright-core@1.65.2";
import type { Bridge, WebSocketTransport } from "../../mod.ts";
import { OpenAIServer } from "../../src/serve/openai_server.ts";
import { SERVE_DEFAULTS } from "../../src/serve/server_config.ts";
import { script } from "../serve/serve_fixture.ts";
import { CHROMIUM_ARGS, chromiumPath, WAIT_MS } from "./browser_fixture.ts";

/** What the page's module puts on `globalThis`. */
interface PageGlobals {
  Bridge: typeof Bridge;
  WebSocketTransport: typeof WebSocketTransport;
}

const ROOT = new URL("../../", import.meta.url).pathname;

const PAGE = `<!doctype html><meta charset="utf-8"><title>game</title>
<script type="module">
import { Bridge, WebSocketTransport } from "./oam-client/mod.js";
globalThis.Bridge = Bridge;
globalThis.WebSocketTransport = WebSocketTransport;
globalThis.ready = true;
</script>`;

/** The game's page and the client's modules, served by a server of its own (another origin than the bridge). */
async function serveGame(): Promise<{ port: number; server: Deno.HttpServer; fetched: string[] }> {
  const dir = await Deno.makeTempDir({ prefix: "oam-web-game-" });
  const bundled = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--platform",
      "browser",
      "--minify",
      "--code-splitting",
      "--outdir",
      dir,
      "mod.ts",
    ],
    cwd: ROOT,
  }).output();
  assert.equal(bundled.code, 0, new TextDecoder().decode(bundled.stderr));
  const modules = new Map<string, Uint8Array<ArrayBuffer>>();
  for await (const entry of Deno.readDir(dir)) {
    modules.set(entry.name, await Deno.readFile(`${dir}/${entry.name}`));
  }
  await Deno.remove(dir, { recursive: true });
  assert.ok([...modules.keys()].some((name) => name.startsWith("composition-")), [...modules.keys()].join());
  const fetched: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const path = new URL(request.url).pathname;
    const module = path.startsWith("/oam-client/")
      ? modules.get(path.slice("/oam-client/".length))
      : undefined;
    if (module) {
      fetched.push(path.slice("/oam-client/".length));
      return new Response(module, { headers: { "content-type": "text/javascript" } });
    }
    if (path === "/") return new Response(PAGE, { headers: { "content-type": "text/html" } });
    return new Response("not found", { status: 404 });
  });
  return { port: server.addr.port, server, fetched };
}

Deno.test("a game page on another origin uses the bundled typed client; a refused origin and a reload mid-turn are handled", async () => {
  const game = await serveGame();
  const logged: string[] = [];
  const note = (level: string) => (message: string) => logged.push(`${level}: ${message}`);
  const bridge = new OpenAIServer({
    host: "127.0.0.1",
    port: 0,
    models: new Map([["system", script()]]),
    allowedOrigins: [`http://127.0.0.1:${game.port}`],
    rpc: {
      engine: {},
      maxConnections: SERVE_DEFAULTS.rpcMaxConnections,
      maxMessageBytes: SERVE_DEFAULTS.rpcMaxMessageBytes,
    },
    logger: { debug: note("debug"), info: note("info"), warning: note("warning"), error: note("error") },
  });
  await bridge.start();
  const rpc = `ws://127.0.0.1:${bridge.port}/rpc`;
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: CHROMIUM_ARGS,
  });
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(WAIT_MS);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`http://127.0.0.1:${game.port}/`);
    await page.waitForFunction("globalThis.ready === true");

    // The whole loop: a client tool answered by the page, streamed text, a world change, an NPC reply.
    const played = await page.evaluate(async (url) => {
      const g = globalThis as unknown as PageGlobals;
      const bridge = await g.Bridge.connect(new g.WebSocketTransport(url));
      const openChest = bridge.tool({
        name: "open_chest",
        description: "Open a chest.",
        parameters: { type: "object", properties: { chest: { type: "string" } }, required: ["chest"] },
      }, ({ chest }: { chest: string }) => ({ chest, gold: 7 }));
      const session = await bridge.createSession({
        tools: [openChest],
        options: { toolChoice: "required" },
        model: {
          type: "scripted",
          steps: [{ toolCalls: [{ name: "open_chest", arguments: { chest: "oak" } }] }, {
            template: "Chest: {toolOutput}",
            chunks: 3,
          }],
        },
      });
      let streamed = "";
      const turn = await session.respond("Open it.", { onText: (delta: string) => streamed += delta });
      const world = await bridge.createWorld({ player: { gold: 20 } });
      const changes: unknown[] = [];
      await world.subscribe("player", (change: unknown) => changes.push(change));
      await world.set("player.gold", 15);
      const reply = {
        emotion: "happy",
        line: "Welcome!",
        player_options: ["A", "B", "C"],
        ends_conversation: false,
      };
      const pour = bridge.tool({
        name: "pour_ale",
        description: "Pour an ale.",
        parameters: { type: "object", properties: {} },
      }, () => ({ poured: true }));
      const npc = await bridge.createNpc({ name: "Mira" }, {
        world,
        tools: [pour],
        model: {
          type: "scripted",
          steps: [{ toolCalls: [{ name: "pour_ale", arguments: {} }] }],
          fallback: { json: reply },
        },
      });
      let spoken = "";
      const talked = await npc.talk("Hello", { onLine: (delta: string) => spoken += delta });
      await bridge.close();
      return {
        text: turn.text,
        streamed,
        changes,
        line: talked.line,
        spoken,
        npcTool: talked.toolCalls.map((c) => c.output),
      };
    }, rpc);
    assert.deepEqual(played, {
      text: 'Chest: {"chest":"oak","gold":7}',
      streamed: 'Chest: {"chest":"oak","gold":7}',
      changes: [{ world: "w1", subscription: "sub1", path: "player.gold", oldValue: 20, newValue: 15 }],
      line: "Welcome!",
      spoken: "Welcome!",
      npcTool: [{ poured: true }],
    });

    // A reload while the page owes the bridge a tool call: the connection and its work are freed.
    await page.evaluate(async (url) => {
      const g = globalThis as unknown as PageGlobals;
      const bridge = await g.Bridge.connect(new g.WebSocketTransport(url));
      let called!: () => void;
      const waiting = new Promise<void>((resolve) => called = resolve);
      const never = bridge.tool(
        { name: "wait", description: "Waits.", parameters: { type: "object" } },
        () => {
          called();
          return new Promise(() => {});
        },
      );
      const session = await bridge.createSession({
        tools: [never],
        options: { toolChoice: "required" },
        model: { type: "scripted", steps: [{ toolCalls: [{ name: "wait", arguments: {} }] }] },
      });
      session.respond("Go.").catch(() => {});
      await waiting;
    }, rpc);
    assert.equal(bridge.rpcConnections, 1);
    await page.reload();
    await page.waitForFunction("globalThis.ready === true");
    while (bridge.rpcConnections > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const pinged = await page.evaluate(async (url) => {
      const g = globalThis as unknown as PageGlobals;
      const bridge = await g.Bridge.connect(new g.WebSocketTransport(url));
      await bridge.ping();
      await bridge.close();
      return "pong";
    }, rpc);
    assert.equal(pinged, "pong");
    assert.deepEqual(errors, []);
    // Sessions, NPCs, worlds and tools over WebSocket: the in-process engine's chunk was never loaded.
    assert.deepEqual(game.fetched.filter((name) => name.startsWith("composition-")), []);
    assert.ok(game.fetched.includes("mod.js"), game.fetched.join());

    // The same page on http://localhost is another origin: the error says which flag admits it.
    const refused = await browser.newPage();
    refused.setDefaultTimeout(WAIT_MS);
    await refused.goto(`http://localhost:${game.port}/`);
    await refused.waitForFunction("globalThis.ready === true");
    const message = await refused.evaluate(async (url) => {
      const g = globalThis as unknown as PageGlobals;
      try {
        await g.Bridge.connect(new g.WebSocketTransport(url));
        return "connected";
      } catch (error) {
        return (error as Error).message;
      }
    }, rpc);
    assert.match(message, new RegExp(`'oam serve --allow-origin http://localhost:${game.port}'`));
    assert.ok(
      logged.some((line) =>
        line.startsWith("warning: GET /rpc → 403") &&
        line.includes(`--allow-origin http://localhost:${game.port}`)
      ),
      logged.join("\n"),
    );
  } finally {
    await browser.close();
    await bridge.stop();
    await game.server.shutdown();
  }
});
