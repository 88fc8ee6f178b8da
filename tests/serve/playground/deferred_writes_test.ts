/**
 * A long persona's edits wait for a pause in typing, and none is lost: a read of the document writes them
 * first, in the order they were made; a short persona's are written at once.
 */
import assert from "node:assert/strict";
import { DeferredWrites } from "../../../src/serve/playground/page/deferred_writes.ts";

Deno.test("an edit that is not deferred (a short document) is written at once, after the edits waiting before it", () => {
  const written: string[] = [];
  const told: boolean[] = [];
  const writes = new DeferredWrites((pending) => told.push(pending));
  writes.edit("world", () => written.push("world"), true);
  assert.equal(writes.pending, true);
  writes.edit("form", () => written.push("form"), false);
  assert.deepEqual(written, ["world", "form"]);
  assert.equal(writes.pending, false);
  assert.deepEqual(told, [true, false]);
});

Deno.test("a deferred edit under a key already waiting replaces it, keeping its place; flush writes each once, in order", () => {
  const written: string[] = [];
  const writes = new DeferredWrites();
  writes.edit("jsonc", () => written.push("jsonc 1"), true);
  writes.edit("world", () => written.push("world"), true);
  writes.edit("jsonc", () => written.push("jsonc 2"), true);
  writes.flush();
  assert.deepEqual(written, ["jsonc 2", "world"]);
  writes.flush();
  assert.deepEqual(written, ["jsonc 2", "world"], "nothing twice");
});

Deno.test("a write that reads the document (and so flushes) does not write the edits waiting twice", () => {
  const written: string[] = [];
  const told: string[] = [];
  const writes = new DeferredWrites((pending) => told.push(`${pending} after ${written.join(", ")}`));
  writes.edit("form", () => {
    writes.flush(); // the document getter, read while writing
    written.push("form");
  }, true);
  writes.edit("world", () => written.push("world"), true);
  writes.flush();
  assert.deepEqual(written, ["form", "world"]);
  assert.deepEqual(told, ["true after ", "false after form, world"], "told once all are written");
});

Deno.test("a deferred edit is written after the pause in typing, and the page is told when none waits any more", async () => {
  const written: string[] = [];
  const done = Promise.withResolvers<void>();
  const writes = new DeferredWrites((pending) => pending || done.resolve(), 0);
  writes.edit("jsonc", () => written.push("jsonc"), true);
  assert.deepEqual(written, []);
  await done.promise;
  assert.deepEqual(written, ["jsonc"]);
});
