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

/** Polls until an event matching `done` arrives; returns every event seen. */
async function pollUntil(h: Deno.PointerObject, done: (e: Record<string, unknown>) => boolean) {
  const all: Record<string, unknown>[] = [];
  for (let i = 0; i < 200; i++) {
    const batch = read(await sym.oamfm_poll(h, 20)) as Record<string, unknown>[] | null;
    if (!batch) continue;
    all.push(...batch);
    if (batch.some(done)) return all;
  }
  throw new Error(`no matching event in ${JSON.stringify(all)}`);
}

const submit = (h: Deno.PointerObject, req: unknown) => sym.oamfm_submit(h, cString(JSON.stringify(req)));

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
    const events = await pollUntil(h, (e) => e.type === "result");
    const texts = events.filter((e) => e.type === "text").map((e) => e.text as string);
    assert.ok(texts.length >= 1 && texts.length < 2000, `${texts.length} text events`);
    assert.equal(texts.at(-1), "ab".repeat(2000));
    for (let i = 1; i < texts.length; i++) assert.ok(texts[i].startsWith(texts[i - 1]));
    // Without coalescing every snapshot is delivered.
    submit(h, { id: "s2", op: "step", "x-double": { stream: { count: 300 }, coalesce: false } });
    const raw = await pollUntil(h, (e) => e.type === "result");
    assert.equal(raw.filter((e) => e.type === "text").length, 300);
  } finally {
    sym.oamfm_close(h);
  }
});

Deno.test("abi: close wakes a blocked poll, cancels in-flight requests, then the handle is dead", async () => {
  const h = open();
  assert.equal(submit(h, { id: "c1", op: "step", "x-double": { hang: true } }), OAMFM_STATUS.ok);
  const blocked = sym.oamfm_poll(h, -1);
  await new Promise((r) => setTimeout(r, 30));
  sym.oamfm_close(h);
  const events = read(await blocked) as Record<string, unknown>[];
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
