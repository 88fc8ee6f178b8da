/**
 * The synchronous fast path of the scripted model: the work queue answers finished work through a Pending
 * (no promise per request), the agent runs a scripted turn to its first real wait without a promise, and
 * such a turn still behaves exactly like one that waits (order of messages, cancellation before it starts,
 * rollback on failure).
 */
import assert from "node:assert/strict";
import { Pending } from "../../src/util/work_queue.ts";
import { WorkQueue } from "../../src/util/work_queue.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import { WireClient } from "../helpers/wire.ts";
import { Agent } from "../../src/agent/agent.ts";
import { ScriptedModel } from "../../src/models/scripted.ts";

Deno.test("Pending: one outcome, delivered at once, to one consumer", async () => {
  const p = new Pending<number>();
  const seen: string[] = [];
  p.consume((ok, v) => seen.push(`${ok ? "value" : "error"} ${v}`));
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
  twice.consume(() => {});
  assert.throws(() => twice.consume(() => {}), /one consumer/);
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
    outcome.consume((ok, v) => order.push(ok ? `answer ${v}` : "error"));
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

Deno.test("agent: a scripted turn runs synchronously; with a delay, tools or a retry it goes async with the same result", async () => {
  const policy = { choice: "auto" as const, maxToolRounds: 4, maxToolCalls: 12, enabledTools: null };
  const sink = { event: () => {}, callClientTool: () => Promise.resolve({ output: "", isError: false }) };
  const signal = new AbortController().signal;
  const now = new Agent({ model: new ScriptedModel({ steps: [{ text: "At once." }] }) });
  const result = now.runTurnNow({ prompt: "hi", schema: null, policy, stream: false }, sink, signal);
  assert.ok(!(result instanceof Promise));
  assert.equal(result.text, "At once.");
  assert.equal(now.entries.length, 2);

  const later = new Agent({ model: new ScriptedModel({ steps: [{ text: "Later.", delayMs: 5 }] }) });
  const pending = later.runTurnNow({ prompt: "hi", schema: null, policy, stream: false }, sink, signal);
  assert.ok(pending instanceof Promise);
  assert.equal(later.entries.length, 0); // nothing committed before the answer
  assert.equal((await pending).text, "Later.");
  assert.equal(later.entries.length, 2);

  // A transient failure, then an answer: the retry waits (async) and the failed attempt leaves no trace.
  const retried = new Agent({
    model: new ScriptedModel({ steps: [{ error: "generation_failed" }, { text: "Second try." }] }),
    settings: { maxAttempts: 2 },
  });
  const again = retried.runTurnNow({ prompt: "hi", schema: null, policy, stream: false }, sink, signal);
  assert.ok(again instanceof Promise);
  assert.equal((await again).text, "Second try.");
  assert.equal(retried.entries.length, 2);

  // A failure that is not retried fails the turn (a scripted failure arrives as a rejected promise) and
  // leaves no trace.
  const failing = new Agent({ model: new ScriptedModel({ steps: [{ error: "guardrail_violation" }] }) });
  await assert.rejects(
    Promise.resolve().then(() =>
      failing.runTurnNow({ prompt: "hi", schema: null, policy, stream: false }, sink, signal)
    ),
    (e) => e instanceof BridgeError && e.dataCode === "guardrail_violation",
  );
  assert.equal(failing.entries.length, 0);
});

Deno.test("transcript ids: made on first export, unique, stable across exports and restores; native models get them too", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "g", model: { type: "scripted", fallback: { text: "Hmph." } } });
  await c.call("session/respond", { session: "g", prompt: "one" });
  await c.call("session/respond", { session: "g", prompt: "two" });
  const agent = c.engine.sessions.get("g")!.agent;
  assert.equal(agent.entries[0].id, ""); // nothing made them yet
  type Entry = { id: string; contents: Array<{ id: string }> };
  const transcript = async (session: string) =>
    (await c.call("session/transcript", { session }) as { transcript: { transcript: { entries: Entry[] } } })
      .transcript;
  const ids = async (session = "g") =>
    (await transcript(session)).transcript.entries.flatMap((e) => [e.id, ...e.contents.map((s) => s.id)]);
  const first = await ids();
  assert.equal(first.length, 1 + 4 * 2); // the instructions entry (no segments), 4 entries with a segment each
  assert.ok(first.every((id) => id !== ""));
  assert.equal(new Set(first).size, first.length);
  const second = await ids();
  assert.deepEqual(second.slice(1), first.slice(1)); // the conversation's ids are stable (instructions are rebuilt)
  assert.notEqual(agent.entries[0].id, "");
  await c.call("session/create", { session: "h", model: "scripted", history: await transcript("g") });
  assert.deepEqual((await ids("h")).slice(1), first.slice(1)); // restored with the same ids

  // A native model's request carries ids for the new prompt's history too.
  const { stepRequestBody } = await import("../../src/models/system_request.ts");
  await c.call("session/respond", { session: "g", prompt: "three" });
  const body = stepRequestBody({
    instructions: null,
    tools: [],
    toolCallingMode: "disallowed",
    history: agent.entries,
    prompt: "four",
    responseSchema: null,
    options: {},
    stream: false,
    signal: new AbortController().signal,
  }) as { history: Entry[] };
  assert.ok(body.history.every((e) => e.id !== "" && e.contents.every((s) => s.id !== "")));
});
