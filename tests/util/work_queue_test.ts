/**
 * WorkQueue / Operation commit points (public API): after `commit()` an operation is immune to cancellation —
 * not counted by `cancel()`/`cancelAll()`, its signal never aborted, its result reported.
 */
import assert from "node:assert/strict";
import { type Operation, WorkQueue } from "../../src/util/work_queue.ts";
import { BridgeError } from "../../src/protocol/errors.ts";

const isCancelled = (message: string) => (e: unknown) =>
  e instanceof BridgeError && e.dataCode === "cancelled" && e.code === -32009 && e.message === message;

Deno.test("WorkQueue: a running operation cancelled after commit() is not counted, not aborted, and answers", async () => {
  const queue = new WorkQueue();
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  let running!: Operation;
  let committed!: () => void;
  const hasCommitted = new Promise<void>((r) => committed = r);
  const first = queue.schedule(async (op) => {
    running = op;
    const signal = op.signal; // made before the commit and the cancel
    op.commit();
    committed();
    await gate;
    return { aborted: signal.aborted };
  });
  const second = queue.schedule(() => "never runs");
  await hasCommitted;
  assert.equal(running, first.op);
  assert.ok(first.op.started && first.op.committed);

  // Only the waiting operation counts; the committed one is untouched.
  assert.equal(queue.cancelAll(), 1);
  assert.equal(first.op.cancel(), false);
  assert.equal(first.op.cancelled, false);
  assert.equal(first.op.signal.aborted, false);
  assert.doesNotThrow(() => first.op.throwIfCancelled());
  assert.equal(second.op.cancelled, true);

  release();
  assert.deepEqual(await first.promise, { aborted: false });
  await assert.rejects(second.promise, isCancelled("The request was cancelled before it started."));
  assert.equal(first.op.settled, true);
  assert.equal(queue.cancelAll(), 0);
});

Deno.test("WorkQueue: cancelled before commit(): counted, signal aborted, commit() throws, -32009", async () => {
  const queue = new WorkQueue();
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  const { op, promise } = queue.schedule(async (op) => {
    await gate;
    op.commit();
    return "committed too late";
  });
  await Promise.resolve();
  assert.ok(op.started);
  assert.equal(queue.cancelAll(), 1);
  assert.equal(op.cancelled, true);
  assert.equal(op.signal.aborted, true);
  assert.equal(op.cancel(), false, "a second cancel does not count again");
  release();
  await assert.rejects(promise, isCancelled("The request was cancelled."));
  assert.equal(op.committed, false);
});
