/**
 * The transcript bound (issue #7): a session's or NPC's committed history keeps at most 4096 entries and
 * 2 Mi characters of text; past either, the oldest whole turns are dropped automatically (down to three
 * quarters of the bound) and the newest turn is always kept.
 */
import assert from "node:assert/strict";
import { Agent } from "../../src/agent/agent.ts";
import { entryLength, historyLength } from "../../src/agent/entry_text.ts";
import { boundHistory, MAX_HISTORY_CHARS, MAX_HISTORY_ENTRIES } from "../../src/agent/history_bound.ts";
import { ScriptedModel } from "../../src/models/scripted.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import type { ConversationEntry } from "../../src/protocol/transcript.ts";
import { scripted, WireClient } from "../helpers/wire.ts";

const POLICY = { choice: "auto" as const, maxToolRounds: 4, maxToolCalls: 12, enabledTools: null };
const SINK = { event: () => {}, callClientTool: () => Promise.resolve({ output: "", isError: false }) };

function textOf(entry: ConversationEntry): string {
  return "contents" in entry ? entry.contents.map((c) => c.type === "text" ? c.text : "").join("") : "";
}

Deno.test("defaults: 4096 entries and 2 Mi characters", () => {
  assert.equal(MAX_HISTORY_ENTRIES, 4096);
  assert.equal(MAX_HISTORY_CHARS, 2 * 1024 * 1024);
  const agent = new Agent({ model: new ScriptedModel({ steps: [] }) });
  assert.equal(agent.maxEntries, MAX_HISTORY_ENTRIES);
  assert.equal(agent.maxChars, MAX_HISTORY_CHARS);
});

Deno.test("agent: past maxEntries the oldest whole turns go, down to 3/4 of the bound; the newest turn stays", async () => {
  const agent = new Agent({ model: new ScriptedModel({ steps: [], fallback: { text: "Hmph." } }) });
  agent.maxEntries = 10;
  const lengths: number[] = [];
  for (let i = 1; i <= 12; i++) {
    await agent.runTurn(
      { prompt: `p${i}`, schema: null, policy: POLICY, stream: false },
      SINK,
      new AbortController().signal,
    );
    lengths.push(agent.entries.length);
  }
  // 2 entries per turn: 10 fits; the 6th turn makes 12 > 10 → cut to ≤ 7 → 3 turns (6 entries).
  assert.deepEqual(lengths, [2, 4, 6, 8, 10, 6, 8, 10, 6, 8, 10, 6]);
  assert.deepEqual(agent.entries.map(textOf), ["p10", "Hmph.", "p11", "Hmph.", "p12", "Hmph."]);
  assert.equal(agent.droppedEntries, 18);
  // The history length the agent carries over the cut (not re-measured) is exact: the next turn's usage
  // estimate (about 4 characters per token) counts exactly the kept text.
  const kept = agent.entries.reduce((n, e) => n + entryLength(e), 0);
  assert.equal(kept, historyLength(agent.entries));
  assert.equal(kept, "p10Hmph.p11Hmph.p12Hmph.".length);
  const next = await agent.runTurn(
    { prompt: "p13", schema: null, policy: POLICY, stream: false },
    SINK,
    new AbortController().signal,
  );
  assert.equal(next.usage.inputTokens, Math.ceil((kept + "p13".length) / 4));
});

Deno.test("boundHistory: cuts only at prompts, keeps the last turn even when it alone is too big", () => {
  const e = (role: "user" | "response", text: string, id = crypto.randomUUID()): ConversationEntry =>
    role === "user"
      ? { id, role, contents: [{ type: "text", id, text }], options: {} }
      : { id, role, contents: [{ type: "text", id, text }], assets: [] };
  const len = (x: ConversationEntry) => textOf(x).length;
  const total = (xs: ConversationEntry[]) => xs.reduce((n, x) => n + len(x), 0);
  const history = [
    e("response", "orphan"),
    e("user", "a"),
    e("response", "b"),
    e("user", "c".repeat(100)),
    e("response", "d"),
  ];
  assert.equal(
    boundHistory(history, { total: total(history), lengthOf: len, maxEntries: 10, maxChars: 1000 }),
    null,
  );
  const cut = boundHistory(history, { total: total(history), lengthOf: len, maxEntries: 10, maxChars: 50 })!;
  assert.deepEqual(cut.map(textOf), ["c".repeat(100), "d"]);
  const single = [e("user", "x".repeat(100)), e("response", "y")];
  assert.equal(boundHistory(single, { total: 101, lengthOf: len, maxEntries: 1, maxChars: 10 }), null);
});

Deno.test("session over the wire: 2,100 turns stay within 4096 entries; the transcript starts at a prompt", async () => {
  const c = new WireClient({ maxQueuedOperations: 5000 });
  await c.call("session/create", {
    session: "long",
    model: { type: "scripted", steps: [], fallback: { text: "Aye." } },
  });
  let last: string | number = 0;
  for (let i = 0; i < 2100; i++) {
    last = c.request("session/respond", { session: "long", prompt: `turn ${i}` });
  }
  const r = await c.response(last, 30_000);
  assert.equal((r.result as JsonObject).text, "Aye.");
  const list = (await c.call("session/list")).sessions as JsonObject[];
  // Turn 2,049 makes 4,098 entries > 4096 → cut to 3,072 (1,536 turns); 51 more turns add 102.
  assert.equal(list[0].entries, 3174);
  assert.equal(c.engine.sessions.get("long")!.agent.droppedEntries, 1026);
  const transcript = (await c.call("session/transcript", { session: "long" })).transcript as JsonObject;
  const entries = ((transcript.transcript as JsonObject).entries as JsonObject[]).slice(1); // after instructions
  assert.equal(entries.length, 3174);
  assert.equal(entries[0].role, "user");
  assert.equal((entries[0].contents as JsonObject[])[0].text, "turn 513");
  assert.equal((entries.at(-2)!.contents as JsonObject[])[0].text, "turn 2099");
  await c.close();
});

Deno.test("session and NPC: megabyte prompts are dropped by the character bound, the newest turn stays", async () => {
  const c = new WireClient();
  const big = (n: number) => `${n}:` + "x".repeat(1024 * 1024);
  await c.call("session/create", { session: "s", model: scripted() });
  for (let i = 1; i <= 3; i++) await c.call("session/respond", { session: "s", prompt: big(i) });
  const transcript = (await c.call("session/transcript", { session: "s" })).transcript as JsonObject;
  const entries = (transcript.transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(entries.map((e) => e.role), ["instructions", "user", "response"]);
  assert.ok(((entries[1].contents as JsonObject[])[0].text as string).startsWith("3:"));

  await c.call("npc/create", {
    npc: "n",
    persona: { name: "N" },
    options: { replyFormat: "text", toolChoice: "auto", compactAfterTurns: 0 },
    model: { type: "scripted", steps: [], fallback: { text: "[happy] Aye." } },
  });
  for (let i = 1; i <= 3; i++) await c.call("npc/talk", { npc: "n", line: big(i) });
  const npc = (await c.call("npc/list")).npcs as JsonObject[];
  assert.equal(npc[0].turnCount, 1);
  const state = (await c.call("npc/state", { npc: "n" })).state as JsonObject;
  const saved = ((state.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(saved.map((e) => e.role), ["instructions", "user", "response"]);
  assert.match((saved[1].contents as JsonObject[])[0].text as string, /^Player: 3:/);
  await c.close();
});

/** The cut as boundHistory made it before `historyCut`: every entry from the start, one after another. */
function referenceCut(
  entries: ConversationEntry[],
  bound: { total: number; lengthOf: (e: ConversationEntry) => number; maxEntries: number; maxChars: number },
): ConversationEntry[] | null {
  const { total, lengthOf, maxEntries, maxChars } = bound;
  if (entries.length <= maxEntries && total <= maxChars) return null;
  let lastStart = -1;
  for (let i = entries.length - 1; i > 0; i--) {
    if (entries[i].role === "user") {
      lastStart = i;
      break;
    }
  }
  if (lastStart <= 0) return null;
  let chars = total;
  let cut = 0;
  for (let i = 0; i < lastStart; i++) {
    chars -= lengthOf(entries[i]);
    if (entries[i + 1].role !== "user") continue;
    cut = i + 1;
    if (entries.length - cut <= Math.floor(maxEntries * 0.75) && chars <= Math.floor(maxChars * 0.75)) break;
  }
  return entries.slice(cut);
}

Deno.test("boundHistory: the same cut as reading every entry, over random histories and bounds", () => {
  let seed = 19;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const len = (x: ConversationEntry) => textOf(x).length;
  for (let round = 0; round < 2000; round++) {
    const history: ConversationEntry[] = [];
    const size = random(40);
    for (let i = 0; i < size; i++) {
      const text = "x".repeat(random(30));
      history.push(
        random(3) === 0
          ? { id: "", role: "user", contents: [{ type: "text", id: "", text }], options: {} }
          : { id: "", role: "response", contents: [{ type: "text", id: "", text }], assets: [] },
      );
    }
    const bound = {
      total: historyLength(history),
      lengthOf: len,
      maxEntries: 1 + random(30),
      maxChars: random(400),
    };
    assert.deepEqual(boundHistory(history, bound), referenceCut(history, bound), `round ${round}`);
  }
});

Deno.test("agent: a cut reads neither the text nor the role of the entries it drops", async () => {
  const agent = new Agent({ model: new ScriptedModel({ steps: [], fallback: { text: "Hmph." } }) });
  agent.maxEntries = 100;
  const turn = (prompt: string) =>
    agent.runTurn(
      { prompt, schema: null, policy: POLICY, stream: false },
      SINK,
      new AbortController().signal,
    );
  for (let i = 0; i < 50; i++) await turn(`p${i}`); // 100 entries: at the bound
  // The oldest entries (the ones the next cut drops, bar the last turn start it looks at) fail when read.
  for (const entry of agent.entries.slice(0, 20)) {
    for (const key of ["role", "contents"]) {
      Object.defineProperty(entry, key, {
        get() {
          throw new Error(`read ${key} of a dropped entry`);
        },
      });
    }
  }
  await turn("p50"); // 102 entries > 100 → cut to 75 or fewer
  assert.equal(agent.entries.length, 74);
  assert.equal(agent.droppedEntries, 28);
  assert.equal(textOf(agent.entries[0]), "p14");
  assert.equal(agent.historyChars(), historyLength(agent.entries));
});
