/**
 * The request flood shared by tests/limits/flood_test.ts and tests/slow/intake_slow.ts: mostly decisions and
 * content generations (which used the engine's signal directly), NPC barks and pings, each on a model that
 * would answer after a minute.
 */
import type { BridgeEngine } from "../../src/composition.ts";

const SLOW = { json: { reasoning: "r", choice: "a", confidence: 5, a: "x" }, delayMs: 60_000 };
const MODEL = { type: "scripted", steps: [SLOW] };
const SCHEMA = { type: "object", properties: { a: { type: "string" } } };

/** Valid params per method. */
export const PARAMS: Record<string, unknown> = {
  "decision/decide": { situation: "x", options: ["a", "b"], model: MODEL },
  "content/generate": { prompt: "x", schema: SCHEMA, model: MODEL },
  "npc/bark": { npc: "n" },
  "ping": {},
};

/** One in six requests is a ping (answered at once); the others stay in flight. */
const METHODS = [
  "decision/decide",
  "content/generate",
  "decision/decide",
  "content/generate",
  "npc/bark",
  "ping",
];

/** Creates the NPC the barks need and returns `n` request lines (ids 0…n-1). */
export async function flood(engine: BridgeEngine, n: number): Promise<{ lines: string[] }> {
  await engine.call("npc/create", {
    npc: "n",
    persona: { name: "N" },
    model: { type: "scripted", steps: [], fallback: { text: "hi", delayMs: 60_000 } },
  });
  const lines = Array.from({ length: n }, (_, i) => {
    const method = METHODS[i % METHODS.length];
    return JSON.stringify({ jsonrpc: "2.0", id: i, method, params: PARAMS[method] });
  });
  return { lines };
}
