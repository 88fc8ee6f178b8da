/**
 * The raw ABI of the C test double through the symbol table (what the Swift plugin must also do).
 */
import assert from "node:assert/strict";
import { cString, FM_SYMBOLS, OAMFM_STATUS } from "../../ffi/symbols.ts";
import { requireDouble } from "./double.ts";

const lib = Deno.dlopen(requireDouble(), FM_SYMBOLS);
const sym = lib.symbols;

function open(options: unknown = {}): Deno.PointerObject {
  const h = sym.oamfm_open(cString(JSON.stringify(options)));
  assert.ok(h !== null, "open returned NULL");
  return h;
}

function read(p: Deno.PointerValue): unknown[] | null {
  if (p === null) return null;
  try {
    return JSON.parse(Deno.UnsafePointerView.getCString(p));
  } finally {
    sym.oamfm_free(p);
  }
}

/**
 * Polls until an event matching `done` arrives; returns every event seen. Bounded by time, not by a count of
 * polls: a consumer that keeps up with a fast producer gets one event per poll, so a stream of 2,000
 * snapshots can take as many polls.
 */
async function pollUntil(h: Deno.PointerObject, done: (e: Record<string, unknown>) => boolean) {
  const all: Record<string, unknown>[] = [];
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const batch = read(await sym.oamfm_poll(h, 20)) as Record<string, unknown>[] | null;
    if (!batch) continue;
    all.push(...batch);
    if (batch.some(done)) return all;
  }
  throw new Error(`no matching event in ${JSON.stringify(all)}`);
}

const submit = (h: Deno.PointerObject, req: unknown) => sym.oamfm_submit(h, cString(JSON.stringify(req)));

/**
 * Waits until request `id` has ended, i.e. all its events are queued: the plugin accepts the id again only
 * then (the new request hangs until it is cancelled or the handle closes). The plugin has no event for it.
 */
async function untilEnded(h: Deno.PointerObject, id: string): Promise<void> {
  for (let i = 0; submit(h, { id, op: "step", "x-double": { hang: true } }) !== 0; i++) {
    assert.ok(i < 5000, `${id} never finished`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

Deno.test("abi: version 1.1 and open refuses another major or invalid options", () => {
  assert.equal(sym.oamfm_abi_version(), 0x10001);
  assert.equal(sym.oamfm_open(cString("not json")), null);
  assert.equal(sym.oamfm_open(cString('{"abi":{"major":2,"minor":0}}')), null);
  assert.equal(sym.oamfm_open(cString("[]")), null);
  const h = open({ abi: { major: 1, minor: 0 } });
  sym.oamfm_close(h);
});

Deno.test("abi: malformed requests are refused with OAMFM_E_REQUEST", () => {
  const h = open();
  try {
    for (
      const bad of [
        "",
        "{}",
        "[]",
        '{"id":"a"}',
        '{"op":"step"}',
        '{"id":"","op":"step"}',
        '{"id":"has space","op":"step"}',
        `{"id":"${"x".repeat(65)}","op":"step"}`,
        '{"id":"a","op":"step"',
        '{"id":"a","op":"step"} trailing',
        '{"id":1,"op":"step"}',
        "[".repeat(1000),
      ]
    ) {
      assert.equal(sym.oamfm_submit(h, cString(bad)), OAMFM_STATUS.request, bad.slice(0, 40));
    }
  } finally {
    sym.oamfm_close(h);
  }
});

Deno.test("abi: one terminal event per request, id injected, availability from open options", async () => {
  const availability = {
    available: false,
    reason: "model_not_ready",
    contextSize: 4096,
    supportedLanguages: [],
  };
  const h = open({ "x-double": { availability } });
  try {
    assert.equal(submit(h, { id: "a1", op: "availability" }), OAMFM_STATUS.ok);
    const events = await pollUntil(h, (e) => e.type === "result");
    assert.deepEqual(events, [{ id: "a1", type: "result", result: availability }]);
  } finally {
    sym.oamfm_close(h);
  }
});

Deno.test("abi: echo returns the verbatim request; an unknown op fails with 'unsupported'", async () => {
  const h = open();
  try {
    const req = { id: "e1", op: "step", prompt: 'héllo "quoted"\n', "x-double": { echo: true } };
    assert.equal(submit(h, req), OAMFM_STATUS.ok);
    const events = await pollUntil(h, (e) => e.type === "result");
    assert.deepEqual(events[0], { id: "e1", type: "echo", request: req });
    assert.equal(events.filter((e) => e.type === "result").length, 1);
    assert.equal(submit(h, { id: "u1", op: "frobnicate" }), OAMFM_STATUS.ok);
    const [err] = await pollUntil(h, (e) => e.type === "error");
    assert.equal((err.error as Record<string, unknown>).code, "unsupported");
  } finally {
    sym.oamfm_close(h);
  }
});

Deno.test("abi: duplicate in-flight id is refused; cancel mid-stream ends with one 'cancelled'", async () => {
  const h = open();
  try {
    const hang = { id: "h1", op: "step", "x-double": { events: [{ type: "text", text: "a" }], hang: true } };
    assert.equal(submit(h, hang), OAMFM_STATUS.ok);
    assert.equal(submit(h, hang), OAMFM_STATUS.duplicate);
    await pollUntil(h, (e) => e.type === "text");
    assert.equal(sym.oamfm_cancel(h, cString("h1")), OAMFM_STATUS.ok);
    assert.equal(sym.oamfm_cancel(h, cString("h1")), OAMFM_STATUS.notFound);
    assert.equal(sym.oamfm_cancel(h, cString("nope")), OAMFM_STATUS.notFound);
    const events = await pollUntil(h, (e) => e.type === "error");
    assert.deepEqual(events, [
      { id: "h1", type: "error", error: { code: "cancelled", message: "The request was cancelled." } },
    ]);
    // The id is free again once the request ended.
    assert.equal(submit(h, { id: "h1", op: "step" }), OAMFM_STATUS.ok);
    await pollUntil(h, (e) => e.type === "result");
    assert.equal(read(await sym.oamfm_poll(h, 0)), null, "nothing after the terminal event");
  } finally {
    sym.oamfm_close(h);
  }
});

Deno.test("abi: queued snapshots of one request are coalesced, the last one wins", async () => {
  const h = open();
  try {
    submit(h, {
      id: "s1",
      op: "step",
      "x-double": { stream: { count: 2000, chunk: "ab" }, result: { kind: "text" } },
    });
    // Nothing is polled until s1 has ended (resubmitting its id succeeds only then), so all 2,000 snapshots
    // were queued before anyone read them: they are one event, the last snapshot.
    await untilEnded(h, "s1");
    const events = await pollUntil(h, (e) => e.type === "result");
    assert.deepEqual(events, [
      { id: "s1", type: "text", text: "ab".repeat(2000) },
      { id: "s1", type: "result", result: { kind: "text" } },
    ]);
    sym.oamfm_cancel(h, cString("s1"));
    // Without coalescing every snapshot is delivered.
    submit(h, { id: "s2", op: "step", "x-double": { stream: { count: 300 }, coalesce: false } });
    const raw = await pollUntil(h, (e) => e.type === "result");
    assert.equal(raw.filter((e) => e.type === "text").length, 300);
  } finally {
    sym.oamfm_close(h);
  }
});

Deno.test("abi: close wakes a blocked poll, cancels in-flight requests, then the handle is dead", async () => {
  // The ABI reports no moment when the poll is waiting in its thread: one that starts only after the close
  // returns null (the handle is gone), which proves nothing, so that run is tried again with a longer wait.
  let h: Deno.PointerObject | null = null;
  let events: Record<string, unknown>[] | null = null;
  for (const waitMs of [30, 100, 300, 1000, 3000]) {
    h = open();
    assert.equal(submit(h, { id: "c1", op: "step", "x-double": { hang: true } }), OAMFM_STATUS.ok);
    const blocked = sym.oamfm_poll(h, -1);
    await new Promise((r) => setTimeout(r, waitMs));
    sym.oamfm_close(h);
    events = read(await blocked) as Record<string, unknown>[] | null;
    if (events !== null) break;
  }
  assert.ok(h !== null);
  assert.deepEqual(events, [
    { id: "c1", type: "error", error: { code: "cancelled", message: "The plugin was closed." } },
    { type: "closed" },
  ]);
  assert.equal(await sym.oamfm_poll(h, 100), null, "poll after close returns NULL at once");
  assert.equal(submit(h, { id: "c2", op: "step" }), OAMFM_STATUS.closed);
  assert.equal(sym.oamfm_cancel(h, cString("c1")), OAMFM_STATUS.closed);
  sym.oamfm_close(h); // idempotent
  sym.oamfm_free(null);
});

Deno.test("abi: a garbage handle is safe", async () => {
  const bogus = Deno.UnsafePointer.create(0xdead0n);
  assert.ok(bogus !== null);
  assert.equal(submit(bogus, { id: "x", op: "step" }), OAMFM_STATUS.closed);
  assert.equal(await sym.oamfm_poll(bogus, 0), null);
  sym.oamfm_close(bogus);
});

Deno.test("abi: scripted delays keep event order", async () => {
  const h = open();
  try {
    const events = [1, 2, 3, 4].map((n) => ({ type: "log", n }));
    submit(h, {
      id: "d1",
      op: "step",
      "x-double": { events, delayMs: 2, result: { kind: "text", text: "ok" } },
    });
    const seen = await pollUntil(h, (e) => e.type === "result");
    assert.deepEqual(seen.map((e) => e.n ?? e.type), [1, 2, 3, 4, "result"]);
  } finally {
    sym.oamfm_close(h);
  }
});

Deno.test("abi: a poll batch holds at most 64 events, the closed marker included", async () => {
  const h = open();
  try {
    const events = Array.from({ length: 70 }, (_, n) => ({ type: "log", n }));
    assert.equal(submit(h, { id: "q1", op: "step", "x-double": { events, result: { kind: "text" } } }), 0);
    // Resubmitting the id succeeds once q1 has ended, i.e. once all its 71 events are queued.
    await untilEnded(h, "q1");
    const first = read(await sym.oamfm_poll(h, 0))!;
    const second = read(await sym.oamfm_poll(h, 0))!;
    assert.deepEqual([first.length, second.length], [64, 7]);
  } finally {
    sym.oamfm_close(h);
  }
  // At close, a waiting poll gets the oldest 63 remaining events and the closed marker. The ABI reports no
  // moment when the poll is waiting in its thread: a poll that only starts after the close finds the handle
  // gone and returns null, as the ABI says. That run proves nothing, so it is tried again with a longer wait
  // (on a loaded machine the thread can start late).
  let last: Record<string, unknown>[] | null = null;
  for (const waitMs of [30, 100, 300, 1000, 3000]) {
    const c = open();
    for (let i = 0; i < 70; i++) submit(c, { id: `c${i}`, op: "step", "x-double": { hang: true } });
    const blocked = sym.oamfm_poll(c, -1);
    await new Promise((r) => setTimeout(r, waitMs));
    sym.oamfm_close(c);
    last = read(await blocked) as Record<string, unknown>[] | null;
    assert.equal(await sym.oamfm_poll(c, 0), null, "a closed handle polls null");
    if (last !== null) break;
  }
  assert.ok(last !== null, "the poll never started before the close, even after 3 s");
  assert.equal(last.length, 64);
  assert.deepEqual(last.at(-1), { type: "closed" });
  assert.ok(last.slice(0, 63).every((e) => e.type === "error"));
});

Deno.test("abi: invalid UTF-8 is refused (open, submit, cancel); valid multi-byte text is kept", async () => {
  const bytes = (prefix: string, raw: number[], suffix: string) =>
    new Uint8Array([...new TextEncoder().encode(prefix), ...raw, ...new TextEncoder().encode(suffix), 0]);
  assert.equal(sym.oamfm_open(bytes('{"client":"', [0xff], '"}')), null);
  const h = open();
  try {
    for (
      const raw of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]]
    ) {
      const status = sym.oamfm_submit(h, bytes('{"id":"u","op":"step","prompt":"', raw, '"}'));
      assert.equal(status, OAMFM_STATUS.request, `bytes ${raw}`);
    }
    assert.equal(sym.oamfm_cancel(h, bytes("u", [0xff], "")), OAMFM_STATUS.argument);
    const req = { id: "v", op: "step", prompt: "gâteau €5 🐉", "x-double": { echo: true } };
    assert.equal(submit(h, req), OAMFM_STATUS.ok);
    const [echo] = await pollUntil(h, (e) => e.type === "echo");
    assert.deepEqual(echo.request, req);
  } finally {
    sym.oamfm_close(h);
  }
});

/** One native step or prewarm through the raw ABI; returns its result's `native` report. */
/** Like `native`, for a request that must report. */
async function nativeReport(
  h: Deno.PointerObject,
  id: string,
  fields: Record<string, unknown>,
  result?: unknown,
) {
  const report = await native(h, id, fields, result);
  assert.ok(report !== undefined, `${id} has no native report`);
  return report;
}

async function native(
  h: Deno.PointerObject,
  id: string,
  fields: Record<string, unknown>,
  result: unknown = { kind: "text", text: "ok" },
) {
  const body = { id, op: "step", instructions: "I.", tools: [], history: [], prompt: "p", ...fields };
  assert.equal(submit(h, { ...body, "x-double": { result } }), OAMFM_STATUS.ok);
  const events = await pollUntil(h, (e) => e.id === id && (e.type === "result" || e.type === "error"));
  const terminal = events.find((e) => e.id === id && e.type === "result");
  return (terminal?.result as { native?: Record<string, unknown> } | undefined)?.native as
    | Record<string, unknown>
    | undefined;
}

Deno.test("abi: native sessions continue only with the same instructions, tools and history length", async () => {
  const h = open();
  const two = [{ role: "user" }, { role: "response" }];
  const four = [...two, ...two];
  try {
    assert.deepEqual(await nativeReport(h, "a", { native: { key: "k", continue: true } }), {
      key: "k",
      rebuilt: true,
      reason: "missing",
      evaluatedEntries: 2,
      kept: true,
    });
    const next = await native(h, "b", { history: two, native: { key: "k", continue: true } });
    assert.deepEqual(next, {
      key: "k",
      rebuilt: false,
      reason: "continued",
      evaluatedEntries: 1,
      kept: true,
    });
    // Other instructions, other tools or another history length: rebuilt from the whole request.
    const changed = await native(h, "c", {
      instructions: "J.",
      history: four,
      native: { key: "k", continue: true },
    });
    assert.deepEqual(changed, {
      key: "k",
      rebuilt: true,
      reason: "changed",
      evaluatedEntries: 6,
      kept: true,
    });
    const tools = [{ name: "t", description: "", parameters: {} }];
    const withTools = await native(h, "d", { instructions: "J.", tools, history: [...four, ...two] });
    assert.equal(withTools, undefined, "no native member, no report");
    const wrongLength = await native(h, "e", {
      instructions: "J.",
      history: two,
      native: { key: "k", continue: true },
    });
    assert.equal(wrongLength?.reason, "changed");
    // continue:false always builds anew (and replaces what the key held).
    assert.equal(
      (await nativeReport(h, "f", { instructions: "J.", history: four, native: { key: "k" } })).reason,
      "new",
    );
    assert.equal(
      (await nativeReport(h, "g", {
        instructions: "J.",
        history: [...four, ...two],
        native: { key: "k", continue: true },
      }))
        .reason,
      "continued",
    );
  } finally {
    sym.oamfm_close(h);
  }
});

Deno.test("abi: tool calls, errors and empty prompts are not kept; capacity evicts the least recently used", async () => {
  const h = open({ nativeSessions: 2 });
  const two = [{ role: "user" }, { role: "response" }];
  const calls = { kind: "toolCalls", calls: [{ name: "t", arguments: {} }] };
  try {
    assert.equal((await nativeReport(h, "a", { native: { key: "t" } }, calls)).kept, false);
    assert.equal(
      (await nativeReport(h, "b", { history: two, native: { key: "t", continue: true } })).reason,
      "missing",
    );
    assert.equal((await nativeReport(h, "c", { prompt: "", native: { key: "e" } })).kept, false);
    assert.equal(
      (await nativeReport(h, "d", { history: two, native: { key: "e", continue: true } })).reason,
      "missing",
    );
    assert.equal(
      submit(h, { id: "x", op: "step", prompt: "p", native: { key: "x" }, "x-double": { error: {} } }),
      0,
    );
    await pollUntil(h, (e) => e.id === "x");
    assert.equal(
      (await nativeReport(h, "y", { history: two, native: { key: "x", continue: true } })).reason,
      "missing",
    );
    // Capacity 2: k1, k2 kept, k3 evicts k1 (least recently used).
    for (const key of ["k1", "k2", "k3"]) {
      assert.equal((await nativeReport(h, key, { native: { key } })).kept, true);
    }
    assert.equal(
      (await nativeReport(h, "r1", { history: two, native: { key: "k1", continue: true } })).reason,
      "missing",
    );
    assert.equal(
      (await nativeReport(h, "r3", { history: two, native: { key: "k3", continue: true } })).reason,
      "continued",
    );
  } finally {
    sym.oamfm_close(h);
  }
});

Deno.test("abi: prewarm with a native key keeps a session for the next step with that history", async () => {
  const h = open();
  const two = [{ role: "user" }, { role: "response" }];
  try {
    assert.equal(
      submit(h, {
        id: "w",
        op: "prewarm",
        instructions: "I.",
        tools: [],
        history: two,
        native: { key: "w" },
      }),
      OAMFM_STATUS.ok,
    );
    const [warm] = await pollUntil(h, (e) => e.id === "w");
    assert.deepEqual(warm.result, {
      native: { key: "w", rebuilt: true, reason: "new", evaluatedEntries: 3, kept: true },
    });
    const step = await native(h, "s", { history: two, native: { key: "w", continue: true } });
    assert.deepEqual(step, {
      key: "w",
      rebuilt: false,
      reason: "continued",
      evaluatedEntries: 1,
      kept: true,
    });
    // Without a key, prewarm answers {} and keeps nothing.
    assert.equal(submit(h, { id: "w2", op: "prewarm", instructions: "I." }), OAMFM_STATUS.ok);
    const [plain] = await pollUntil(h, (e) => e.id === "w2");
    assert.deepEqual(plain.result, {});
  } finally {
    sym.oamfm_close(h);
  }
});
