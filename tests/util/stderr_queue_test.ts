import assert from "node:assert/strict";
import { StderrQueue } from "../../src/util/stderr_queue.ts";

/** A stream whose writes wait until `release()`, taking at most `max` bytes each. */
function heldStream(max = Infinity) {
  const written: string[] = [];
  let open = Promise.withResolvers<void>();
  let closed = false;
  return {
    written,
    release: () => open.resolve(),
    hold: () => open = Promise.withResolvers<void>(),
    close: () => closed = true,
    async write(bytes: Uint8Array): Promise<number> {
      await open.promise;
      if (closed) throw new Deno.errors.BrokenPipe("closed");
      const n = Math.min(max, bytes.length);
      written.push(new TextDecoder().decode(bytes.subarray(0, n)));
      return n;
    },
  };
}

Deno.test("stderr queue: lines pushed while a write waits come out after it, in order, whole", async () => {
  const out = heldStream(3);
  const q = new StderrQueue(out, 1000);
  q.push("one\n");
  q.push("two\n");
  q.push("three\n");
  assert.equal(q.pendingBytes, 14);
  out.release();
  await q.flush(10_000);
  assert.equal(out.written.join(""), "one\ntwo\nthree\n");
  assert.equal(q.pendingBytes, 0);
});

Deno.test("stderr queue: past its limit lines are dropped, then counted in one notice", async () => {
  const out = heldStream();
  const q = new StderrQueue(out, 10);
  q.push("12345\n");
  q.push("abcdefgh\n"); // would pass 10 bytes: dropped
  q.push("xy\n");
  q.push("more\n"); // dropped
  out.release();
  await q.flush(10_000);
  assert.equal(
    out.written.join(""),
    "12345\nxy\n[open-apple-models] warning: 2 log lines were dropped: stderr was not being read.\n",
  );
});

Deno.test("stderr queue: flush gives up after its timeout on a stream nobody reads", async () => {
  const out = heldStream();
  const q = new StderrQueue(out, 1000);
  q.push("stuck\n");
  await q.flush(20);
  assert.equal(out.written.length, 0);
  assert.equal(q.pendingBytes, 6);
  out.release();
  await q.flush(10_000);
  assert.deepEqual(out.written, ["stuck\n"]);
});

Deno.test("stderr queue: a closed stream drops what waits and everything after, without throwing", async () => {
  const out = heldStream();
  const q = new StderrQueue(out, 1000);
  q.push("lost\n");
  out.close();
  out.release();
  await q.flush(10_000);
  q.push("after\n");
  await q.flush(10_000);
  assert.deepEqual(out.written, []);
  assert.equal(q.pendingBytes, 0);
});
