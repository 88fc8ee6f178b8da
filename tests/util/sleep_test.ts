/** The bounded wait and the abortable sleep (src/util/sleep.ts). */
import assert from "node:assert/strict";
import { abortableSleep, settledWithin } from "../../src/util/sleep.ts";
import { BridgeError } from "../../src/protocol/errors.ts";

const never = new Promise<void>(() => {});

Deno.test("settledWithin: true when the work settles first (a rejection too), false at the time limit", async () => {
  assert.equal(await settledWithin(Promise.resolve(1), { ms: 60_000 }), true);
  assert.equal(await settledWithin(Promise.reject(new Error("x")), { ms: 60_000 }), true);
  assert.equal(await settledWithin(never, { ms: 1 }), false);
});

Deno.test("settledWithin: an abort ends the wait at once; an aborted signal does not wait at all", async () => {
  const controller = new AbortController();
  const waiting = settledWithin(never, { signal: controller.signal });
  controller.abort();
  assert.equal(await waiting, false);
  assert.equal(await settledWithin(Promise.resolve(), { signal: controller.signal }), false);
});

Deno.test("abortableSleep: rejects with -32009 when the signal aborts", async () => {
  const controller = new AbortController();
  const sleeping = abortableSleep(60_000, controller.signal);
  controller.abort();
  await assert.rejects(
    sleeping,
    (e) => e instanceof BridgeError && e.dataCode === "cancelled" && e.message === "The turn was cancelled.",
  );
});
