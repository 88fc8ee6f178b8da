/**
 * The synchronous fast path: the maybe-sync runner, Pending, the work queue's enqueue, and that a scripted
 * turn still behaves exactly like one that waits (order of messages, cancellation before it starts,
 * rollback on failure).
 */
import assert from "node:assert/strict";
import { mapMaybe, runMaybeSync } from "../../src/util/maybe_sync.ts";
import { Pending } from "../../src/util/pending.ts";
import { WorkQueue } from "../../src/util/work_queue.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import { WireClient } from "../helpers/wire.ts";

Deno.test("runMaybeSync: plain yields finish synchronously, a promise switches to async", async () => {
  const sync = runMaybeSync((function* () {
    const a = (yield 1) as number;
    const b = (yield 2) as number;
    return a + b;
  })());
  assert.equal(sync, 3);

  const later = runMaybeSync((function* () {
    const a = (yield 1) as number;
    const b = (yield Promise.resolve(2)) as number;
    const c = (yield 3) as number;
    return a + b + c;
  })());
  assert.ok(later instanceof Promise);
  assert.equal(await later, 6);
});

Deno.test("runMaybeSync: errors are thrown synchronously, or reject, and reach the body's catch", async () => {
  assert.throws(() =>
    runMaybeSync((function* () {
      yield 1;
      throw new Error("now");
    })()), /now/);

  const caught = runMaybeSync((function* () {
    try {
      yield Promise.reject(new Error("later"));
      return "not reached";
    } catch (error) {
      const again = (yield Promise.resolve("after")) as string;
      return `${(error as Error).message} ${again}`;
    }
  })());
  assert.equal(await caught, "later after");

  await assert.rejects(
    () =>
      runMaybeSync((function* () {
        yield Promise.resolve(1);
        throw new Error("async throw");
      })()) as Promise<never>,
    /async throw/,
  );
  let cleaned = false;
  await assert.rejects(
    () =>
      runMaybeSync((function* () {
        try {
          yield Promise.reject(new Error("boom"));
        } finally {
          cleaned = true;
        }
      })()) as Promise<never>,
    /boom/,
  );
  assert.ok(cleaned);
  assert.equal(mapMaybe(2, (n) => n + 1), 3);
  assert.equal(await mapMaybe(Promise.resolve(2), (n) => n + 1), 3);
});

Deno.test("Pending: one outcome, delivered at once, to one consumer", async () => {
  const p = new Pending<number>();
  const seen: string[] = [];
  p.settle((v) => seen.push(`value ${v}`), (e) => seen.push(`error ${e}`));
  assert.deepEqual(seen, []);
  p.resolve(1);
  assert.deepEqual(seen, ["value 1"]); // synchronously
  p.resolve(2);
  p.reject("x");
  assert.deepEqual(seen, ["value 1"]);
  assert.ok(p.settled);

  const early = new Pending<number>();
  early.reject("bad");
  await assert.rejects(early.toPromise(), (e) => e === "bad");
  const twice = new Pending<number>();
  twice.settle(() => {}, () => {});
  assert.throws(() => twice.settle(() => {}, () => {}), /one consumer/);
});

Deno.test("WorkQueue.enqueue: synchronous work is answered in the same microtask, in order", async () => {
  const queue = new WorkQueue();
  const order: string[] = [];
  for (const name of ["a", "b", "c"]) {
    const { outcome } = queue.enqueue((op) => {
      op.commit();
      order.push(`run ${name}`);
      return name;
    });
    outcome.settle((v) => order.push(`answer ${v}`), () => order.push("error"));
  }
  assert.deepEqual(order, []); // nothing runs inside the scheduling handler
  assert.equal(queue.pending, 3);
  await Promise.resolve();
  assert.deepEqual(order, ["run a", "answer a", "run b", "answer b", "run c", "answer c"]);
  assert.equal(queue.pending, 0);
  assert.equal(queue.busy, false);
});

Deno.test("WorkQueue: cancelAll counts the running and the waiting operations; the signal is made lazily", async () => {
  const queue = new WorkQueue();
  let release!: () => void;
  const first = queue.schedule(async (op) => {
    await new Promise<void>((r) => release = r);
    assert.ok(op.signal.aborted); // made after the cancel: already aborted
    return "late";
  });
  const second = queue.schedule(() => "never");
  await Promise.resolve();
  assert.equal(queue.pending, 2);
  assert.equal(queue.cancelAll(), 2);
  assert.equal(queue.cancelAll(), 0);
  release();
  await assert.rejects(first.promise, (e) => e instanceof BridgeError && e.dataCode === "cancelled");
  await assert.rejects(
    second.promise,
    (e) => e instanceof BridgeError && e.message === "The request was cancelled before it started.",
  );
  assert.equal(queue.pending, 0);
});

Deno.test("wire: pipelined scripted turns answer in order; a cancel read with them cancels the queued ones", async () => {
  const c = new WireClient();
  c.request("session/create", {
    session: "g",
    model: { type: "scripted", steps: [{ text: "One." }, { text: "Two." }], fallback: { text: "More." } },
  }, 1);
  c.request("session/respond", { session: "g", prompt: "a" }, 2);
  c.request("session/respond", { session: "g", prompt: "b" }, 3);
  c.send({ method: "session/cancel", params: { session: "g" } });
  c.request("session/respond", { session: "g", prompt: "c" }, 4);
  const r4 = await c.response(4);
  assert.deepEqual(c.messages.map((m) => m.id), [1, 2, 3, 4]);
  assert.equal((c.messages[1].error as { code: number }).code, -32009);
  assert.equal((c.messages[2].error as { code: number }).code, -32009);
  // the cancelled turns left no trace and used no script steps
  assert.equal((r4.result as { text: string }).text, "One.");
  const t = await c.call("session/transcript", { session: "g" }) as {
    transcript: { transcript: { entries: unknown[] } };
  };
  assert.equal(t.transcript.transcript.entries.length, 3); // instructions, prompt, answer
});
