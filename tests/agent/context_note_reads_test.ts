/**
 * Deciding whether a turn carries the context note must not read the history up to the entry that carried it:
 * it once looked that entry up from the start of the history on every turn, so a long session paid for its
 * length on each turn once its note had been delivered late in it. Here the history counts reads of its entries.
 */
import assert from "node:assert/strict";
import { Agent } from "../../src/agent/agent.ts";
import { ScriptedModel } from "../../src/models/scripted.ts";
import type { TurnInput, TurnSink } from "../../src/agent/types.ts";
import type { ConversationEntry } from "../../src/protocol/transcript.ts";

const input: TurnInput = {
  prompt: "Open the gate.",
  schema: null,
  policy: { choice: "auto", maxToolRounds: 4, maxToolCalls: 12, enabledTools: null },
  stream: false,
};
const sink: TurnSink = {
  quiet: true,
  event: () => {},
  callClientTool: () => Promise.reject(new Error("no client tools here")),
};

/** A history array that counts reads of its entries (index reads; pushes and length are free). */
function countingHistory(): { entries: ConversationEntry[]; reads: () => number } {
  let reads = 0;
  const entries = new Proxy<ConversationEntry[]>([], {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { entries, reads: () => reads };
}

Deno.test("a turn after a context note was delivered reads a few entries, not the history before the note", async () => {
  const agent = new Agent({ model: new ScriptedModel({ steps: [], fallback: { text: "Hmph." } }) });
  const history = countingHistory();
  agent.entries = history.entries;
  const signal = new AbortController().signal;
  for (let t = 0; t < 300; t++) await agent.runTurn(input, sink, signal);
  agent.contextNote = "It is night.";
  const carrying = await agent.runTurn(input, sink, signal);
  assert.equal(carrying.text, "Hmph.");
  assert.match(
    agent.entries[600].contents[0].type === "text" ? agent.entries[600].contents[0].text : "",
    /^Context:\nIt is night\./,
  );
  const reads: number[] = [];
  for (let t = 0; t < 5; t++) {
    const before = history.reads();
    await agent.runTurn(input, sink, signal);
    reads.push(history.reads() - before);
  }
  // The note is still carried (no second block), and a turn reads its own entries and a few more.
  assert.equal(
    agent.entries.filter((e) => e.role === "user" && JSON.stringify(e).includes("It is night.")).length,
    1,
  );
  assert.ok(
    Math.max(...reads) < 20,
    `entries read per turn: ${reads.join(" ")} (the note's carrier is entry 600)`,
  );
});

Deno.test("the carried note is found again after the history lost entries at its start, and sent again once its carrier left", async () => {
  const agent = new Agent({ model: new ScriptedModel({ steps: [], fallback: { text: "Hmph." } }) });
  const signal = new AbortController().signal;
  const carriers = () =>
    agent.entries.filter((e) => e.role === "user" && JSON.stringify(e).includes("It is night.")).length;
  for (let t = 0; t < 10; t++) await agent.runTurn(input, sink, signal);
  agent.contextNote = "It is night.";
  await agent.runTurn(input, sink, signal); // carried by the prompt at entry 20
  await agent.runTurn(input, sink, signal);
  agent.entries = agent.entries.slice(8); // the carrier moves to entry 12
  await agent.runTurn(input, sink, signal);
  assert.equal(carriers(), 1, "the note is still carried: no second block");
  agent.entries = agent.entries.slice(14); // the carrier left
  await agent.runTurn(input, sink, signal);
  assert.equal(carriers(), 1, "the note came again with the turn after its carrier left");
  const last = agent.entries.at(-2)!;
  assert.ok(JSON.stringify(last).includes("Context:\\nIt is night."), JSON.stringify(last));
});
