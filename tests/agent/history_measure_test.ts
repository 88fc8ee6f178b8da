/**
 * A turn must not measure the whole conversation again: usage estimates (for backends that report none) and
 * the NPC's room check once read every entry's text on every turn, so each turn cost as much as the history
 * so far and a long conversation slowed down quadratically. Here every history entry counts how often its
 * text is read; after the first turns, a turn reads no more of the earlier entries than the turns before it.
 */
import assert from "node:assert/strict";
import { WireClient } from "../helpers/wire.ts";
import type { LanguageModel, StepRequest, StepResult } from "../../src/models/language_model.ts";

/** A system model reporting no usage; it makes every history entry count reads of its `contents`. */
class CountingModel implements LanguageModel {
  readonly kind = "system";
  readonly trimsHistory = true;
  readonly contextSize = 1_000_000;
  reads = 0;
  #counted = new WeakSet<object>();
  #step = 0;
  constructor(readonly answer: (step: number, request: StepRequest) => StepResult) {}
  availability() {
    return Promise.resolve({ available: true, contextSize: 1_000_000, supportedLanguages: ["en"] });
  }
  step(request: StepRequest): Promise<StepResult> {
    for (const entry of request.history) this.#count(entry);
    return Promise.resolve(this.answer(this.#step++, request));
  }
  #count(entry: object): void {
    if (this.#counted.has(entry) || !("contents" in entry)) return;
    this.#counted.add(entry);
    let value = (entry as { contents: unknown }).contents;
    const read = () => {
      this.reads++;
      return value;
    };
    Object.defineProperty(entry, "contents", {
      get: read,
      set(next) {
        value = next;
      },
      enumerable: true,
      configurable: true,
    });
  }
}

/** Reads of history texts per turn, for `turns` turns played by `play`. */
async function readsPerTurn(
  model: CountingModel,
  turns: number,
  play: () => Promise<unknown>,
): Promise<number[]> {
  const reads: number[] = [];
  for (let t = 0; t < turns; t++) {
    const before = model.reads;
    await play();
    reads.push(model.reads - before);
  }
  return reads;
}

Deno.test("session turns with a tool round and no reported usage: reads of earlier entries do not grow with the history", async () => {
  // Each turn: a call of an unknown tool (answered with an error output), then text.
  const model = new CountingModel((step) =>
    step % 2 === 0
      ? { kind: "toolCalls", calls: [{ name: "look_around", arguments: {} }], usage: null }
      : { kind: "text", text: "Nothing here.", usage: null }
  );
  const c = new WireClient({ systemModel: () => model });
  await c.call("session/create", { session: "s" });
  const reads = await readsPerTurn(
    model,
    30,
    () => c.call("session/respond", { session: "s", prompt: "Look." }),
  );
  // Before the fix the tool round's usage estimate read every entry again: 2 more reads every turn.
  assert.ok(reads[29] <= reads[4], `reads per turn grew with the history: ${reads.join(" ")}`);
  const usage = (await c.call("session/respond", { session: "s", prompt: "Look." })).usage as {
    inputTokens: number;
  };
  assert.ok(usage.inputTokens > 30 * 4, "the estimate still counts the whole history");
  await c.close();
});

Deno.test("NPC talks with compaction enabled: the room check does not read the whole conversation every turn", async () => {
  const reply = { emotion: "neutral", line: "Hm.", player_options: ["Bye."], ends_conversation: false };
  const model = new CountingModel(() => ({
    kind: "structured",
    value: reply,
    text: JSON.stringify(reply),
    usage: null,
  }));
  const c = new WireClient({ systemModel: () => model });
  await c.call("npc/create", {
    npc: "gorm",
    persona: { name: "Gorm" },
    options: { compactAfterTurns: 1000, playerOptionCount: 1 },
  });
  const reads = await readsPerTurn(model, 30, () => c.call("npc/talk", { npc: "gorm", line: "Hello." }));
  assert.ok(reads[29] <= reads[4], `reads per turn grew with the history: ${reads.join(" ")}`);
  await c.close();
});
