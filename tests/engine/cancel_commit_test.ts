/**
 * Commit points on the wire (§11 rules of thumb): queued work that is cancelled and still finishes
 * successfully without having called `commit()` is answered `-32009 cancelled`, never with its result; work
 * that committed first keeps its result and does not count as cancelled.
 */
import assert from "node:assert/strict";
import { WireClient } from "../helpers/wire.ts";
import type { BridgeExtension, MethodRegistry } from "../../src/engine/extension.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { WorkQueue } from "../../src/util/work_queue.ts";
import type { LanguageModel } from "../../src/models/language_model.ts";

/** `job/run {commit}` queues work that ignores its signal; `job/cancel` cancels the queue, then lets it finish. */
class Jobs implements BridgeExtension {
  readonly queue = new WorkQueue();
  #release: Array<() => void> = [];
  #started: Array<() => void> = [];

  /** Resolves when the next job has started running. */
  started(): Promise<void> {
    return new Promise((resolve) => this.#started.push(resolve));
  }

  register(registry: MethodRegistry): void {
    registry.register("job/run", (request) => {
      const commit = request.params.optionalBool("commit") ?? false;
      return this.queue.enqueue(async (op) => {
        if (commit) op.commit();
        const gate = new Promise<void>((resolve) => this.#release.push(resolve));
        for (const s of this.#started.splice(0)) s();
        await gate; // the signal is ignored: the work finishes whatever happens
        return { done: true, committed: op.committed };
      }).outcome;
    });
    registry.register("job/cancel", () => {
      const cancelled = this.queue.cancelAll();
      // The work completes right after the cancel (before this response is even written).
      for (const release of this.#release.splice(0)) release();
      return { cancelled };
    });
  }
}

const CANCELLED = { code: -32009, message: "The request was cancelled.", data: { code: "cancelled" } };

Deno.test("wire: work that finishes just after its cancel, without commit, is answered -32009", async () => {
  const jobs = new Jobs();
  const c = new WireClient({ extensions: [jobs] });
  const started = jobs.started();
  c.request("job/run", {}, 1);
  await started;
  c.request("job/cancel", {}, 2);
  await c.response(1);
  assert.deepEqual(c.messages, [
    { jsonrpc: "2.0", id: 2, result: { cancelled: 1 } },
    { jsonrpc: "2.0", id: 1, error: CANCELLED },
  ]);
  await c.close();
});

Deno.test("wire: work that committed before the cancel keeps its result and is not counted", async () => {
  const jobs = new Jobs();
  const c = new WireClient({ extensions: [jobs] });
  const started = jobs.started();
  c.request("job/run", { commit: true }, 1);
  c.request("job/run", {}, 2); // waits behind it: cancelled before it starts
  await started;
  c.request("job/cancel", {}, 3);
  await c.response(1);
  await c.response(2);
  assert.deepEqual(c.messages, [
    { jsonrpc: "2.0", id: 3, result: { cancelled: 1 } },
    { jsonrpc: "2.0", id: 1, result: { done: true, committed: true } },
    {
      jsonrpc: "2.0",
      id: 2,
      error: { ...CANCELLED, message: "The request was cancelled before it started." },
    },
  ]);
  await c.close();
});

Deno.test("wire: a turn whose model ignores cancellation and answers anyway is still -32009", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  let stepped!: () => void;
  const hasStepped = new Promise<void>((r) => stepped = r);
  const stubborn: LanguageModel = {
    kind: "stubborn",
    contextSize: 8192,
    trimsHistory: false,
    availability: () => Promise.resolve({ available: true, contextSize: 8192, supportedLanguages: ["en"] }),
    step: async () => {
      stepped();
      await gate; // never looks at the signal
      return { kind: "text", text: "done anyway", usage: null };
    },
  };
  const c = new WireClient({ systemModel: () => stubborn });
  await c.call("session/create", { session: "s" });
  c.request("session/respond", { session: "s", prompt: "x" }, 1);
  await hasStepped;
  c.request("session/cancel", { session: "s" }, 2);
  release();
  const r = await c.response(1);
  assert.deepEqual(r, { jsonrpc: "2.0", id: 1, error: { ...CANCELLED, message: "The turn was cancelled." } });
  assert.deepEqual((await c.response(2)).result, { session: "s", cancelled: 1 });
  const transcript = await c.call("session/transcript", { session: "s" });
  const entries = ((transcript.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(entries.map((e) => e.role), ["instructions"], "the cancelled turn left no trace");
  await c.close();
});
