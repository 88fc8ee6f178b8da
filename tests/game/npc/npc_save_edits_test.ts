/**
 * Saves the game edited or kept for a while: what a hand-edited or outdated `npc/state` restores to, and what
 * the bridge says about it. Nothing in a save may be dropped without a word.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../../src/protocol/json.ts";
import { Rng } from "../../fuzz/rng.ts";
import { NpcClient, tool } from "./npc_helpers.ts";
import { BridgeProcess } from "../../helpers/process.ts";

const GORM = { name: "Gorm", role: "the village blacksmith" };

async function savedGorm(c: NpcClient, extra: JsonObject = {}): Promise<JsonObject> {
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    tools: [tool("check_inventory")],
    memory: { facts: ["Aria likes axes."], relationship: 20 },
    model: "scripted",
    ...extra,
  });
  return (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
}

Deno.test("npc/restore warns about a save's unknown members (a misspelt 'transcript' or 'memory' is not lost silently)", async () => {
  const c = new NpcClient();
  const saved = await savedGorm(c);
  const { memory, transcript, ...rest } = saved;
  const edited = { ...rest, Memory: memory, transcipt: transcript, savedAt: "day 3" };
  const restored = await c.call("npc/restore", { state: edited, npc: "copy", model: "scripted" });
  assert.deepEqual(restored.warnings, [
    "Unknown parameter 'state.Memory' was ignored (did you mean 'memory'?).",
    "Unknown parameter 'state.transcipt' was ignored (did you mean 'transcript'?).",
    "Unknown parameter 'state.savedAt' was ignored.",
  ]);
  // The whole npc/state result, with the game's own member next to it.
  const wrapped = await c.call("npc/restore", {
    state: { npc: "gorm", state: { ...saved, extra: 1 }, slot: 2 },
    npc: "copy2",
    model: "scripted",
  });
  assert.deepEqual(wrapped.warnings, [
    "Unknown parameter 'state.slot' was ignored.",
    "Unknown parameter 'state.state.extra' was ignored.",
  ]);
  // A save as the bridge wrote it restores without a warning.
  const clean = await c.call("npc/restore", { state: saved, npc: "copy3", model: "scripted" });
  assert.deepEqual(clean.warnings, []);
  await c.close();
});

Deno.test("npc/restore of a save whose groundingTool the game removed: the error names the saved option", async () => {
  const c = new NpcClient();
  const saved = await savedGorm(c, { options: { groundingTool: "check_inventory" } });
  const e = await c.error("npc/restore", {
    state: saved,
    npc: "copy",
    tools: [tool("check_stock")],
    model: "scripted",
  });
  assert.deepEqual([e.code, e.message], [
    -32602,
    "'state.options.groundingTool' names 'check_inventory', which is not one of the NPC's tools: check_stock. " +
    "Give the NPC a client tool named 'check_inventory' in 'tools', or name one of those.",
  ]);
  // Options sent with the restore win, and their error names them.
  const sent = await c.error("npc/restore", {
    state: saved,
    npc: "copy",
    tools: [],
    options: { toolChoice: { tool: "check_stock" } },
    model: "scripted",
  });
  assert.equal(sent.message, "'options.toolChoice' names unknown tool 'check_stock'.");
  const fixed = await c.call("npc/restore", {
    state: saved,
    npc: "copy",
    tools: [tool("check_stock")],
    options: { ...(saved.options as JsonObject), groundingTool: "check_stock" },
    model: "scripted",
  });
  assert.deepEqual(fixed.tools, ["check_stock"]);
  await c.close();
});

Deno.test("over stdio: bad saves get the spec's errors naming what is wrong, the NPC and the bridge stay as they were", async () => {
  const p = new BridgeProcess();
  let id = 0;
  const call = async (method: string, params: JsonObject) => {
    await p.request(++id, method, params);
    return await p.response(id);
  };
  await call("world/create", { world: "village", state: { gold: 5 } });
  await call("npc/create", {
    npc: "gorm",
    persona: GORM,
    world: "village",
    memory: { facts: ["Aria likes axes."], relationship: 20 },
    model: { type: "scripted", steps: [{ json: { emotion: "happy", line: "Hm." } }] },
    options: { playerOptionCount: 0, canEndConversation: false },
  });
  await call("npc/talk", { npc: "gorm", line: "Hello" });
  const saved = (await call("npc/state", { npc: "gorm" })).result as JsonObject;
  const state = saved.state as JsonObject;
  const error = async (method: string, params: JsonObject) =>
    (await call(method, params)).error as JsonObject;

  // A save file cut short, pasted into the request line.
  const line = JSON.stringify({ jsonrpc: "2.0", id: "cut", method: "npc/restore", params: { state: saved } });
  await p.send(line.slice(0, 200));
  const cut = await p.waitFor((m) => m.id === null && "error" in m);
  assert.deepEqual([(cut.error as JsonObject).code, ((cut.error as JsonObject).data as JsonObject).code], [
    -32700,
    "parse_error",
  ]);
  assert.match((cut.error as JsonObject).message as string, /^Invalid JSON at byte \d+/);

  // Restoring into an id in use (a save loaded twice).
  assert.deepEqual(await error("npc/restore", { state: saved, model: "scripted" }), {
    code: -32051,
    message:
      "An NPC with id 'gorm' already exists: delete it first (npc/delete) to replace it with the save, " +
      "or pass another 'npc' to restore a copy.",
    data: { code: "npc_exists", npc: "gorm" },
  });
  // Hand edits the bridge cannot use: each error names the field.
  const edited = (change: (s: JsonObject) => void) => {
    const copy = structuredClone(state);
    change(copy);
    return { state: copy, npc: "edited", model: "scripted" };
  };
  const cases: Array<[JsonObject, string]> = [
    [
      edited((s) => (s.memory as JsonObject).relationship = "friendly"),
      "Parameter 'state.memory.relationship' must be a number; got \"friendly\".",
    ],
    [
      edited((s) => (s.memory as JsonObject).facts = "Aria likes axes."),
      `Parameter 'state.memory.facts' must be an array; got "Aria likes axes.".`,
    ],
    [
      edited((s) => ((s.transcript as JsonObject).transcript as JsonObject).entries = [{ role: "bot" }]),
      `'state.transcript' is not a valid transcript: entries[0].role must be "instructions", "user", "response" or "tool"`,
    ],
    [
      edited((s) => s.version = 2),
      "'state.version' is 2: the save was made by a newer bridge, and this one reads saves of version 1. Restore it with the bridge that made it, or a newer one than this.",
    ],
    [edited((s) => delete s.persona), "'state.persona' must be an object with at least a 'name'."],
  ];
  for (const [params, message] of cases) {
    const e = await error("npc/restore", params);
    assert.deepEqual([e.code, e.message, (e.data as JsonObject).code], [-32602, message, "invalid_params"]);
  }
  // A world or session restored into an id in use.
  assert.deepEqual(
    (await error("world/create", { world: "village", state: { gold: 1 } })).data,
    { code: "world_exists", world: "village" },
  );
  await call("session/create", { session: "s", model: "scripted" });
  const transcript = (await call("session/transcript", { session: "s" })).result as JsonObject;
  assert.deepEqual((await error("session/create", { session: "s", history: transcript })).data, {
    code: "session_exists",
    session: "s",
  });

  // Nothing of the NPC changed, and the bridge goes on serving: the save restores as a copy.
  assert.deepEqual(((await call("npc/state", { npc: "gorm" })).result as JsonObject).state, state);
  assert.deepEqual((await call("npc/restore", { state: saved, npc: "copy", model: "scripted" })).result, {
    npc: "copy",
    tools: ["read_world_state"],
    warnings: [],
  });
  await p.closeInput();
  assert.equal(await p.exit(), 0);
});

Deno.test("a save while a turn waits for its tool: settle:false has the completed turns and committed memory, the default waits for the turn", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    tools: [tool("check_inventory")],
    memory: { facts: ["Aria likes axes."], relationship: 20 },
    options: { memoryTools: "all", playerOptionCount: 0, canEndConversation: false },
    model: {
      type: "scripted",
      steps: [
        {
          toolCalls: [
            { name: "check_inventory", arguments: {} },
            { name: "remember_fact", arguments: { fact: "Aria wants a sword." } },
            { name: "change_relationship", arguments: { reason: "polite", delta: 5 } },
          ],
        },
        { json: { emotion: "happy", line: "Two swords." } },
      ],
    },
  });
  const before = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  const talk = c.request("npc/talk", { npc: "gorm", line: "Swords?" });
  const call = await c.toolCall(1);
  const settled = c.request("npc/state", { npc: "gorm" });
  const now = await c.result(c.request("npc/state", { npc: "gorm", settle: false }));
  assert.deepEqual(now.state, before, "the turn in progress and its staged memory are not in it");
  assert.equal(c.messages.some((m) => m.id === settled), false, "the settled save waits for the turn");
  c.reply(call.id as string, { output: { swords: 2 } });
  assert.equal((await c.result(talk)).line, "Two swords.");
  const after = (await c.result(settled)).state as JsonObject;
  assert.deepEqual(after.memory, { facts: ["Aria likes axes.", "Aria wants a sword."], relationship: 25 });
  const roles = (((after.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[]).map((
    e,
  ) => e.role);
  assert.deepEqual(roles, ["instructions", "user", "response", "tool", "tool", "tool", "response"]);
  // The settled save restores with the turn, its tool outputs and the memory.
  const copy = await c.call("npc/restore", { state: after, npc: "copy", model: "scripted" });
  assert.deepEqual(copy.warnings, []);
  assert.deepEqual(
    ((await c.call("npc/state", { npc: "copy" })).state as JsonObject).transcript,
    after.transcript,
  );
  await c.close();
});

/** Every path of a JSON value (its members and items, depth first). */
function paths(value: unknown, at: Array<string | number> = [], out: Array<Array<string | number>> = []) {
  out.push(at);
  if (Array.isArray(value)) value.forEach((item, i) => paths(item, [...at, i], out));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) paths(v, [...at, k], out);
  }
  return out;
}

Deno.test("a save edited at random: the spec's error naming the save, or an NPC whose own save restores to the same", async () => {
  const c = new NpcClient();
  const answer = { emotion: "happy", line: "Hm.", player_options: ["a", "b", "c"], ends_conversation: false };
  await c.call("world/create", { world: "village", state: { shop: { swords: 3 } } });
  await c.call("npc/create", {
    npc: "gorm",
    persona: { ...GORM, goals: ["sell"], secrets: ["He deserted."] },
    tools: [tool("check_inventory")],
    world: "village",
    memory: { facts: ["Aria likes axes."], relationship: 20, summary: "They met." },
    options: { memoryTools: "all", worldWritable: ["shop"] },
    model: {
      type: "scripted",
      steps: [
        { toolCalls: [{ name: "check_inventory", arguments: { item: "sword" } }] },
        { json: answer },
      ],
    },
  });
  const talk = c.request("npc/talk", { npc: "gorm", line: "Swords?" });
  c.reply((await c.toolCall(1)).id as string, { output: { swords: 3 } });
  await c.result(talk);
  const saved = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  const rng = new Rng(11);
  const odd: JsonValue[] = [null, 0, -1, 1.5, 1e300, "", "x", "🗡️", true, [], {}, [1], { x: 1 }];
  const model = { type: "scripted", steps: [{ json: answer }] };
  for (let i = 0; i < 400; i++) {
    const edited = structuredClone(saved);
    for (let n = rng.range(1, 2); n > 0; n--) {
      const all = paths(edited).filter((p) => p.length > 0);
      const at = rng.pick(all);
      let parent = edited as unknown as Record<string | number, JsonValue>;
      for (const k of at.slice(0, -1)) parent = parent[k] as unknown as Record<string | number, JsonValue>;
      const last = at[at.length - 1];
      const change = rng.pick(["delete", "replace", "repeat"]);
      if (change === "delete") {
        if (Array.isArray(parent)) parent.splice(last as number, 1);
        else delete parent[last];
      } else if (change === "replace") parent[last] = structuredClone(rng.pick(odd));
      else if (Array.isArray(parent)) parent.push(structuredClone(parent[last as number]));
    }
    const id = `n${i}`;
    const response = await c.response(c.request("npc/restore", { state: edited, npc: id, model }));
    const what = `edit #${i}: ${JSON.stringify(edited).slice(0, 200)}`;
    if ("error" in response) {
      const e = response.error as JsonObject;
      assert.ok(e.code === -32602 || e.code === -32007, `${what}\n${JSON.stringify(e)}`);
      // The message names the field of the save.
      assert.match(e.message as string, /'state[.[]/, what);
      continue;
    }
    const state = (await c.call("npc/state", { npc: id })).state as JsonObject;
    const again = await c.call("npc/restore", { state, npc: `${id}b`, model });
    // The bridge's own save holds nothing it does not know.
    assert.deepEqual((again.warnings as string[]).filter((w) => w.startsWith("Unknown parameter")), [], what);
    const restated = (await c.call("npc/state", { npc: `${id}b` })).state as JsonObject;
    assert.deepEqual({ ...restated, npc: id }, state, what);
    const turn = await c.response(c.request("npc/talk", { npc: `${id}b`, line: "Again?" }));
    assert.notEqual((turn.error as JsonObject | undefined)?.code, -32603, what);
    await c.call("npc/delete", { npc: id });
    await c.call("npc/delete", { npc: `${id}b` });
  }
  assert.deepEqual(await c.call("ping"), {});
  await c.close();
});
