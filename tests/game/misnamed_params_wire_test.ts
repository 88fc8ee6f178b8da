/**
 * A game programmer's misnamed parameters over the wire, for the methods whose results have no `warnings`
 * (the world methods, the NPC and session methods that only name one, `schema/validate`, `tools/validate`):
 * when a required parameter is missing, the error names the unknown keys that were given, each with the key it
 * most likely meant, as `npc/talk`'s does. Raw JSON-RPC lines in, every message back asserted.
 */
import assert from "node:assert/strict";
import { WireClient } from "../helpers/wire.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

/** Sends each `[method, params]` as a raw line and returns every message that came back, in id order. */
async function sendAll(c: WireClient, requests: [string, JsonObject][]): Promise<JsonObject[]> {
  const start = c.messages.length;
  requests.forEach(([method, params], i) =>
    c.sendLine(JSON.stringify({ jsonrpc: "2.0", id: i + 1, method, params }))
  );
  for (let i = 1; i <= requests.length; i++) await c.response(i);
  return c.messages.slice(start).sort((a, b) => (a.id as number) - (b.id as number));
}

/** The error response to request `id` with `message` (`-32602`, invalid params). */
function invalidParams(id: number, message: string): JsonObject {
  return { jsonrpc: "2.0", id, error: { code: -32602, message, data: { code: "invalid_params" } } };
}

Deno.test("world methods: a missing parameter's error names the unknown one given instead", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "village", state: { gold: 10 } });
  const back = await sendAll(c, [
    ["world/get", { wrold: "village", path: "gold" }],
    ["world/set", { world: "village", path: "gold", vaule: 12 }],
    ["world/set", { worldId: "village", path: "gold", value: 12 }],
    ["world/merge", { world: "village", ptach: { gold: 12 } }],
    ["world/remove", { world: "village", key: "gold" }],
    ["world/snapshot", { wolrd: "village" }],
    ["world/delete", { id: "village" }],
    ["world/subscribe", { world_id: "village", path: "gold" }],
    ["world/unsubscribe", { subscriptionId: "ws1" }],
    ["world/set", { world: "village", path: "gold" }],
  ]);
  assert.deepEqual(back, [
    invalidParams(
      1,
      "Missing required parameter 'world' (the unknown parameter 'wrold' (did you mean 'world'?) was ignored).",
    ),
    invalidParams(
      2,
      "Missing required parameter 'value' (the unknown parameter 'vaule' (did you mean 'value'?) was ignored; use " +
        "world/remove to delete).",
    ),
    invalidParams(3, "Missing required parameter 'world' (the unknown parameter 'worldId' was ignored)."),
    invalidParams(
      4,
      "Missing required parameter 'patch' (the unknown parameter 'ptach' (did you mean 'patch'?) was ignored).",
    ),
    invalidParams(5, "Missing required parameter 'path' (the unknown parameter 'key' was ignored)."),
    invalidParams(
      6,
      "Missing required parameter 'world' (the unknown parameter 'wolrd' (did you mean 'world'?) was ignored).",
    ),
    invalidParams(7, "Missing required parameter 'world' (the unknown parameter 'id' was ignored)."),
    invalidParams(8, "Missing required parameter 'world' (the unknown parameter 'world_id' was ignored)."),
    invalidParams(
      9,
      "Missing required parameter 'subscription' (the unknown parameter 'subscriptionId' (did you mean " +
        "'subscription'?) was ignored).",
    ),
    // Nothing given instead: the message as it was.
    invalidParams(10, "Missing required parameter 'value' (use world/remove to delete)."),
  ]);
  // None of them changed the world.
  assert.deepEqual(await c.call("world/snapshot", { world: "village" }), {
    world: "village",
    state: { gold: 10 },
    version: 0,
  });
});

Deno.test("npc, session and validation methods without warnings: the unknown key given is named too", async () => {
  const c = new WireClient();
  const back = await sendAll(c, [
    ["npc/state", { id: "gorm" }],
    ["npc/reset", { npcId: "gorm", clearMemory: true }],
    ["npc/cancel", { nps: "gorm" }],
    ["npc/delete", { name: "gorm" }],
    ["npc/restore", { sate: {} }],
    ["session/cancel", { id: "guard" }],
    ["session/reset", { sesion: "guard" }],
    ["session/delete", { sessionId: "guard" }],
    ["session/transcript", { id: "guard" }],
    ["session/setInstructions", { sesion: "guard", instructions: "Be terse." }],
    ["session/setContextNote", { session_id: "guard", note: "Night." }],
    ["session/setTools", { id: "guard", tools: [] }],
    ["session/compact", { sesion: "guard" }],
    ["schema/validate", { schma: { type: "object" } }],
    ["tools/validate", { tool: [] }],
  ]);
  const ignored = (key: string, meant?: string) =>
    `(the unknown parameter '${key}'${
      meant === undefined ? "" : ` (did you mean '${meant}'?)`
    } was ignored).`;
  assert.deepEqual(back, [
    invalidParams(1, `Missing required parameter 'npc' ${ignored("id")}`),
    invalidParams(2, `Missing required parameter 'npc' ${ignored("npcId")}`),
    invalidParams(3, `Missing required parameter 'npc' ${ignored("nps", "npc")}`),
    invalidParams(4, `Missing required parameter 'npc' ${ignored("name")}`),
    invalidParams(5, `Missing required parameter 'state' ${ignored("sate", "state")}`),
    invalidParams(6, `Missing required parameter 'session' ${ignored("id")}`),
    invalidParams(7, `Missing required parameter 'session' ${ignored("sesion", "session")}`),
    invalidParams(8, `Missing required parameter 'session' ${ignored("sessionId", "session")}`),
    invalidParams(9, `Missing required parameter 'session' ${ignored("id")}`),
    invalidParams(10, `Missing required parameter 'session' ${ignored("sesion", "session")}`),
    invalidParams(11, `Missing required parameter 'session' ${ignored("session_id")}`),
    invalidParams(12, `Missing required parameter 'session' ${ignored("id")}`),
    invalidParams(13, `Missing required parameter 'session' ${ignored("sesion", "session")}`),
    invalidParams(14, `Missing required parameter 'schema' ${ignored("schma", "schema")}`),
    invalidParams(15, `Missing required parameter 'tools' ${ignored("tool", "tools")}`),
  ]);
});

Deno.test("a session's instructions or note sent under another name: the error names it", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "guard", model: { type: "scripted", steps: [] } });
  const back = await sendAll(c, [
    ["session/setInstructions", { session: "guard", instruction: "Be terse." }],
    ["session/setContextNote", { session: "guard", contextNote: "Night." }],
    ["session/setContextNote", { session: "guard" }],
  ]);
  assert.deepEqual(back, [
    invalidParams(
      1,
      "Missing required parameter 'instructions' (the unknown parameter 'instruction' (did you mean " +
        "'instructions'?) was ignored).",
    ),
    invalidParams(2, "Missing required parameter 'note' (the unknown parameter 'contextNote' was ignored)."),
    invalidParams(3, "Missing required parameter 'note'."),
  ]);
});

Deno.test("a write at the root because the path went under another name: the refusal names that key", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "village", state: { gold: 10 } });
  const back = await sendAll(c, [
    ["world/set", { world: "village", key: "gold", value: 12 }],
    ["world/merge", { world: "village", pth: "gold", patch: 12 }],
    ["world/set", { world: "village", value: 12 }],
  ]);
  const root =
    "The world state root must be a JSON object: write a value at a path such as 'player.gold', or an " +
    "object to replace the whole state.";
  const worldError = (id: number, message: string) => ({
    jsonrpc: "2.0",
    id,
    error: { code: -32054, message, data: { code: "world_error", world: "village", path: "" } },
  });
  assert.deepEqual(back, [
    worldError(1, `${root} Unknown parameter 'key' was ignored.`),
    worldError(2, `${root} Unknown parameter 'pth' was ignored (did you mean 'path'?).`),
    worldError(3, root),
  ]);
  assert.deepEqual(await c.call("world/snapshot", { world: "village" }), {
    world: "village",
    state: { gold: 10 },
    version: 0,
  });
});

Deno.test("npc/create, content/generate and a model spec: the required key under another name is named", async () => {
  const c = new WireClient();
  const back = await sendAll(c, [
    ["npc/create", { npc: "gorm", personna: { name: "Gorm" } }],
    ["content/generate", { prompt: "A sword.", shema: { type: "object" } }],
    ["session/create", { session: "guard", model: { type: "openai", baseUrl: "http://h/v1", model: "m" } }],
    ["session/create", { session: "guard", model: { type: "llama", file: "qwen.gguf" } }],
  ]);
  assert.deepEqual(back, [
    invalidParams(
      1,
      "Missing required parameter 'persona' (the unknown parameter 'personna' (did you mean 'persona'?) was ignored).",
    ),
    invalidParams(
      2,
      "Missing required parameter 'schema' (the unknown parameter 'shema' (did you mean 'schema'?) was ignored).",
    ),
    invalidParams(
      3,
      "Missing required parameter 'model.baseURL' (the unknown parameter 'model.baseUrl' (did you mean 'baseURL'?) " +
        "was ignored).",
    ),
    invalidParams(
      4,
      "Missing required parameter 'model.path' (the unknown parameter 'model.file' was ignored).",
    ),
  ]);
  assert.deepEqual(await c.call("npc/list", {}), { npcs: [] });
  assert.deepEqual((await c.call("session/list", {})).sessions, []);
});
