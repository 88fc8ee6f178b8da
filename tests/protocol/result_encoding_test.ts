/**
 * The fast encoder of `session/respond` results writes exactly what `JSON.stringify` writes, for every shape
 * a turn produces; shapes it does not know fall back to `JSON.stringify`.
 */
import assert from "node:assert/strict";
import { encodeTurnResult } from "../../src/agent/result_json.ts";
import { encodeMessage } from "../../src/protocol/codec.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { WireClient } from "../helpers/wire.ts";

const TEXTS = [
  "Hmph. Move along.",
  "",
  'He said "halt" \\ and left.\nNew line\ttab',
  "Line\u2028separator and\u2029paragraph",
  "Ünïcödé – 龍 – 🐉 – \u0000 \u001f",
];

Deno.test("encodeTurnResult equals JSON.stringify for every turn shape, over the wire and in process", async () => {
  const c = new WireClient();
  const look = {
    type: "function",
    function: { name: "look", description: "Look.", parameters: { type: "object", properties: {} } },
  };
  await c.call("session/create", {
    session: "g",
    tools: [look],
    model: {
      type: "scripted",
      steps: [
        ...TEXTS.map((text) => ({ text })),
        { toolCalls: [{ name: "look", arguments: { at: 'gate "north"' } }] },
        { text: "I see it." },
        { json: { answer: "yes", n: 1.5 } },
        { text: "after schema" },
      ],
    },
  });
  const results: JsonValue[] = [];
  const respond = async (params: JsonObject, id: string | number) => {
    c.request("session/respond", { session: "g", ...params }, id);
    return await c.response(id);
  };
  for (let i = 0; i < TEXTS.length; i++) {
    const r = await respond({ prompt: `p${i}` }, i % 2 === 0 ? i : `id "${i}" ✓`);
    results.push(r.result as JsonValue);
  }
  // a turn with a client tool call (non-empty toolCalls, two steps, enabledTools)
  c.request("session/respond", { session: "g", prompt: "look", toolChoice: "explicit" }, "tools");
  const toolCall = await c.toolCall(1);
  c.reply(toolCall.id as string, { output: "the gate" });
  results.push((await c.response("tools")).result as JsonValue);
  // a schema turn (structured: general path) and a turn with warnings (general path)
  const schema = { type: "object", properties: { answer: { type: "string" }, n: { type: "number" } } };
  results.push((await respond({ prompt: "json", schema }, "schema")).result as JsonValue);
  results.push((await respond({ prompt: "w", bogus: 1 }, "warn")).result as JsonValue);

  const known = results.filter((r) => encodeTurnResult(r) !== null);
  assert.equal(known.length, TEXTS.length + 1); // the plain and tool turns; schema and warnings fall back
  for (const r of results) {
    const fast = encodeTurnResult(r);
    if (fast !== null) assert.equal(fast, JSON.stringify(r));
  }
  assert.ok((results.at(-3) as { toolCalls: unknown[] }).toolCalls.length === 1);
  // Every response line is byte-for-byte what the general encoder writes for the same message.
  for (const line of c.lines) {
    const message = JSON.parse(line);
    if (!("result" in message) || message.id === undefined) continue;
    assert.equal(line, encodeMessage(message));
  }
  assert.ok(c.lines.some((l) => l.includes("\\u2028")));
});

Deno.test("encodeTurnResult: unknown shapes fall back (null)", () => {
  const usage = { inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, totalTokens: 2 };
  const step = {
    index: 0,
    completedToolRounds: 0,
    toolCallingMode: "disallowed",
    enabledTools: [],
    trimmedEntries: 0,
  };
  const ok = { session: "g", text: "t", toolCalls: [], usage, steps: [step] };
  assert.equal(encodeTurnResult(ok), JSON.stringify(ok));
  for (
    const bad of [
      null,
      [],
      "text",
      { ...ok, extra: 1 },
      { text: "t", session: "g", toolCalls: [], usage, steps: [] }, // key order differs
      { ...ok, usage: { ...usage, inputTokens: Number.NaN } },
      { ...ok, steps: [{ ...step, index: Infinity }] },
      { ...ok, steps: [null] },
      { ...ok, text: 1 },
      { session: "g", text: "t", toolCalls: [], usage },
    ]
  ) assert.equal(encodeTurnResult(bad as JsonValue), null, JSON.stringify(bad));
});
