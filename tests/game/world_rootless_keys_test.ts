/**
 * A world request with no `path` reads, writes or watches the whole world. When it was given an unknown key
 * instead (`key`, `pth`), the path was most likely sent under that name: nothing fails, so no error can say so.
 * `world/subscribe` says it in its result's `warnings` (which that result already carries for a path that does
 * not exist); `world/get`, `world/set` and `world/merge`, whose results have no `warnings`, log it as a warning
 * on the bridge's log. Raw JSON-RPC lines in, every message back asserted.
 */
import assert from "node:assert/strict";
import { WireClient } from "../helpers/wire.ts";
import type { Logger } from "../../src/util/logger.ts";

function recording(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const ignore = () => {};
  return {
    warnings,
    logger: { debug: ignore, info: ignore, error: ignore, warning: (m) => warnings.push(m) },
  };
}

Deno.test("world/get, world/set and world/merge with an unknown key and no path log that the whole world was used", async () => {
  const log = recording();
  const c = new WireClient({ logger: log.logger });
  await c.call("world/create", { world: "village", state: { gold: 10 } });
  c.sendLine(
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "world/get", params: { world: "village", key: "gold" } }),
  );
  c.sendLine(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "world/merge",
      params: { world: "village", pth: "quests", patch: { wolves: 1 } },
    }),
  );
  c.sendLine(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 3,
      method: "world/set",
      params: { world: "village", key: "gold", value: { n: 5 } },
    }),
  );
  const back = [await c.response(1), await c.response(2), await c.response(3)];
  assert.deepEqual(back, [
    {
      jsonrpc: "2.0",
      id: 1,
      result: { world: "village", path: "", value: { gold: 10 }, exists: true, version: 0 },
    },
    { jsonrpc: "2.0", id: 2, result: { world: "village", path: "", version: 1 } },
    { jsonrpc: "2.0", id: 3, result: { world: "village", path: "", version: 2 } },
  ]);
  assert.deepEqual(log.warnings, [
    "world/get on world 'village' had no 'path', so it read the whole world. Unknown parameter 'key' was ignored.",
    "world/merge on world 'village' had no 'path', so it merged into the whole world. Unknown parameter 'pth' was " +
    "ignored (did you mean 'path'?).",
    "world/set on world 'village' had no 'path', so it replaced the whole world. Unknown parameter 'key' was ignored.",
  ]);
  await c.close();
});

Deno.test("world/subscribe with an unknown key and no path warns in its result that it watches the whole world", async () => {
  const log = recording();
  const c = new WireClient({ logger: log.logger });
  await c.call("world/create", { world: "village", state: { gold: 10 } });
  c.sendLine(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "world/subscribe",
      params: { world: "village", pth: "gold" },
    }),
  );
  assert.deepEqual(await c.response(1), {
    jsonrpc: "2.0",
    id: 1,
    result: {
      subscription: "sub1",
      world: "village",
      path: "",
      warnings: [
        "world/subscribe on world 'village' had no 'path', so it watches the whole world. Unknown parameter 'pth' " +
        "was ignored (did you mean 'path'?).",
      ],
    },
  });
  assert.deepEqual(log.warnings, []);
  await c.close();
});

Deno.test("world requests with a path, or with no unknown key, log nothing", async () => {
  const log = recording();
  const c = new WireClient({ logger: log.logger });
  await c.call("world/create", { world: "village", state: { gold: 10 } });
  await c.call("world/get", { world: "village" });
  await c.call("world/set", { world: "village", path: "gold", value: 11, key: "x" });
  await c.call("world/merge", { world: "village", patch: { wolves: 2 } });
  const sub = await c.call("world/subscribe", { world: "village" });
  assert.equal("warnings" in (sub as Record<string, unknown>), false);
  assert.deepEqual(log.warnings, []);
  await c.close();
});
