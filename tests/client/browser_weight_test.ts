/**
 * What a browser game that only connects over WebSocket carries: the modules mod.ts reaches through static
 * imports (what a bundler must put in the page's first script). The engine (its core, the method sets, the
 * model backends, the bundled ajv) is reached only through the dynamic import of `Bridge.open()`'s default
 * engine, so a bundle with code splitting loads it only when a page runs the bridge in process.
 */
import assert from "node:assert/strict";

interface Dependency {
  code?: { specifier: string };
  isDynamic?: boolean;
}
interface GraphModule {
  specifier: string;
  dependencies?: Dependency[];
}

const ROOT = new URL("../../", import.meta.url);

/** The modules `entry` reaches through static, non-type imports (module specifiers, relative to the root). */
async function staticallyReached(entry: string): Promise<Set<string>> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT.pathname,
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  const graph = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    roots: string[];
    modules: GraphModule[];
  };
  const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
  const reached = new Set<string>();
  const queue = [...graph.roots];
  while (queue.length > 0) {
    const specifier = queue.shift()!;
    if (reached.has(specifier)) continue;
    reached.add(specifier);
    for (const dependency of bySpecifier.get(specifier)?.dependencies ?? []) {
      if (dependency.code && !dependency.isDynamic) queue.push(dependency.code.specifier);
    }
  }
  return new Set([...reached].map((s) => s.startsWith(ROOT.href) ? s.slice(ROOT.href.length) : s));
}

Deno.test("mod.ts reaches no engine module through static imports: a WebSocket-only page does not load the engine", async () => {
  const reached = await staticallyReached("mod.ts");
  const engine = [...reached].filter((path) =>
    path === "src/composition.ts" || /^src\/(engine|methods|agent|models\/(?!\w+_config\.ts))/.test(path) ||
    path.startsWith("src/schema/") || path.startsWith("src/game/npc/npc")
  ).sort();
  assert.deepEqual(engine, []);
  assert.ok(reached.has("src/client/websocket_transport.ts"));
});

Deno.test("Bridge.open() still loads the default engine (the dynamic import resolves)", async () => {
  const { Bridge } = await import("../../mod.ts");
  await using bridge = await Bridge.open();
  await bridge.ping();
  assert.ok(bridge.server.capabilities.methods.includes("npc/create"));
});

Deno.test("an InProcessTransport closed while its default engine loads stays closed", async () => {
  const { InProcessTransport } = await import("../../mod.ts");
  const transport = new InProcessTransport();
  let closes = 0;
  transport.onclose = () => closes++;
  const started = transport.start();
  await transport.close();
  await started;
  await assert.rejects(transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }), /closed/);
  await assert.rejects(transport.start(), /already started/);
  assert.equal(closes, 1);
});
