/**
 * FmLibrary / FmHandle against the C test double: loading, the ABI handshake, requests, events,
 * cancellation, close, and the pump that only polls while a request is in flight.
 */
import assert from "node:assert/strict";
import { type FmEvent, FmLibrary, FmLoadError, FmRemoteError, FmTransportError } from "../../ffi/plugin.ts";
import { OAMFM_STATUS } from "../../ffi/symbols.ts";
import { requireDouble } from "./double.ts";

const PATH = requireDouble();

function openHandle(options: Record<string, unknown> = {}) {
  return FmLibrary.load(PATH).open(options);
}

Deno.test("plugin: load reports the ABI and reuses one library per path", () => {
  const a = FmLibrary.load(PATH);
  const b = FmLibrary.load(PATH);
  assert.deepEqual(a.abi, { major: 1, minor: 1 });
  assert.equal(a.path, b.path);
});

Deno.test("plugin: a missing library or an ABI mismatch is an FmLoadError", () => {
  assert.throws(() => FmLibrary.load("/nonexistent/libnope.so"), (e) => {
    assert.ok(e instanceof FmLoadError);
    assert.match(e.message, /^Could not load the plugin library '\/nonexistent\/libnope\.so': /);
    // Deno's own text repeats its prefix ("Could not open library: Could not open library: …"): said once.
    assert.ok((e.message.match(/Could not open library/g) ?? []).length <= 1, e.message);
    assert.ok(e.cause instanceof Error, "the dlopen failure is kept as the cause");
    return true;
  });
  assert.throws(() => FmLibrary.load(PATH, { expectedAbiMajor: 2 }), (e) => {
    assert.ok(e instanceof FmLoadError);
    assert.match(e.message, /ABI mismatch: .* implements plugin ABI 1\.\d+, this bridge needs 2\.x/);
    return true;
  });
});

Deno.test("plugin: a request resolves with its result; events arrive in order before it", async () => {
  const h = openHandle();
  try {
    const seen: FmEvent[] = [];
    const result = await h.request({
      op: "step",
      "x-double": {
        events: [{ type: "text", text: "A" }, { type: "log", n: 1 }, { type: "text", text: "AB" }],
        delayMs: 1,
        result: { kind: "text", text: "AB" },
      },
    }, { onEvent: (e) => seen.push(e) });
    assert.deepEqual(result, { kind: "text", text: "AB" });
    assert.deepEqual(seen.map((e) => e.type), ["text", "log", "text"]);
    assert.equal(seen[0].id, "r1");
  } finally {
    h.close();
    await h.whenIdle();
  }
});

Deno.test("plugin: an error event rejects with FmRemoteError carrying code and detail", async () => {
  const h = openHandle();
  try {
    const error = {
      code: "context_size_exceeded",
      message: "Too long.",
      detail: { contextSize: 4096, tokenCount: 5000 },
    };
    await assert.rejects(h.request({ op: "step", "x-double": { error } }), (e) => {
      assert.ok(e instanceof FmRemoteError);
      assert.equal(e.code, "context_size_exceeded");
      assert.equal(e.message, "Too long.");
      assert.deepEqual(e.detail, { contextSize: 4096, tokenCount: 5000 });
      return true;
    });
  } finally {
    h.close();
    await h.whenIdle();
  }
});

Deno.test("plugin: the pump polls only while requests are in flight", async () => {
  const h = openHandle();
  try {
    assert.equal(h.pumping, false);
    const p = h.request({ op: "step", "x-double": { delayMs: 20, result: { kind: "text", text: "x" } } });
    assert.equal(h.pumping, true);
    assert.equal(h.inFlight, 1);
    await p;
    await h.whenIdle();
    assert.equal(h.pumping, false);
    assert.equal(h.inFlight, 0);
    const polls = h.stats.polls;
    // Idle means nothing happens: only time passing can show it (the pump has no "not polling" event).
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(h.stats.polls, polls, "no polling while idle");
    // A new request restarts the pump.
    assert.deepEqual(await h.request({ op: "step", "x-double": { result: { kind: "text", text: "y" } } }), {
      kind: "text",
      text: "y",
    });
  } finally {
    h.close();
    await h.whenIdle();
  }
});

Deno.test("plugin: concurrent requests share one pump and each gets its own result", async () => {
  const h = openHandle();
  try {
    const results = await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) =>
          h.request({ op: "step", "x-double": { delayMs: i % 4, result: { kind: "text", text: `n${i}` } } }),
      ),
    );
    assert.deepEqual(
      results.map((r) => (r as { text: string }).text),
      Array.from({ length: 20 }, (_, i) => `n${i}`),
    );
    assert.equal(h.stats.submitted, 20);
  } finally {
    h.close();
    await h.whenIdle();
  }
});

Deno.test("plugin: aborting mid-stream rejects with cancelled and delivers no later events", async () => {
  const h = openHandle();
  try {
    const controller = new AbortController();
    const seen: string[] = [];
    const p = h.request({
      op: "step",
      // Two snapshots queued back to back, each its own event: a coalescing plugin may merge snapshots that
      // wait in its queue ("a" and "ab" became one "ab" whenever the poll came late), and then the
      // listener never saw "a".
      "x-double": {
        events: [{ type: "text", text: "a" }, { type: "text", text: "ab" }],
        coalesce: false,
        hang: true,
      },
    }, {
      signal: controller.signal,
      onEvent: (e) => {
        seen.push(e.text as string);
        controller.abort();
      },
    });
    await assert.rejects(p, (e) => e instanceof FmRemoteError && e.code === "cancelled");
    assert.deepEqual(seen, ["a"]);
    assert.equal(h.inFlight, 0);
  } finally {
    h.close();
    await h.whenIdle();
  }
});

Deno.test("plugin: an already aborted signal never submits", async () => {
  const h = openHandle();
  try {
    await assert.rejects(
      h.request({ op: "step" }, { signal: AbortSignal.abort() }),
      (e) => e instanceof FmRemoteError && e.code === "cancelled",
    );
    assert.equal(h.stats.submitted, 0);
  } finally {
    h.close();
  }
});

Deno.test("plugin: a throwing listener fails its own request after the plugin confirms", async () => {
  const h = openHandle();
  try {
    const boom = new Error("listener exploded");
    await assert.rejects(
      h.request({ op: "step", "x-double": { events: [{ type: "text", text: "a" }], hang: true } }, {
        onEvent: () => {
          throw boom;
        },
      }),
      (e) => e === boom,
    );
    // The handle keeps working.
    assert.deepEqual(await h.request({ op: "step", "x-double": { result: { kind: "text", text: "ok" } } }), {
      kind: "text",
      text: "ok",
    });
  } finally {
    h.close();
    await h.whenIdle();
  }
});

Deno.test("plugin: close rejects in-flight requests, wakes the pump; later requests fail fast", async () => {
  // Polls that would wait a minute: only close waking the plugin's blocked poll lets the pump end.
  const h = FmLibrary.load(PATH).open({}, { pollTimeoutMs: 60_000 });
  const first = Promise.withResolvers<void>();
  const p = h.request({ op: "step", "x-double": { events: [{ type: "text", text: "a" }], hang: true } }, {
    onEvent: () => first.resolve(),
  });
  // The first event came from a returned poll; the pump then issues the next one, which blocks in the plugin.
  await first.promise;
  await new Promise((r) => setTimeout(r, 10));
  const polls = h.stats.polls;
  h.close();
  await assert.rejects(p, (e) => e instanceof FmRemoteError && e.code === "cancelled");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = await Promise.race([
    h.whenIdle().then(() => "idle"),
    new Promise((r) => timer = setTimeout(() => r("still polling after 15 s"), 15_000)),
  ]);
  clearTimeout(timer);
  assert.equal(idle, "idle");
  assert.equal(h.stats.polls, polls + 1, "the blocked poll returned once, woken by close");
  assert.equal(h.pumping, false);
  assert.equal(h.closed, true);
  await assert.rejects(
    h.request({ op: "step" }),
    (e) => e instanceof FmTransportError && e.status === OAMFM_STATUS.closed,
  );
  h.close(); // idempotent
});

Deno.test("plugin: open options reach the plugin (availability script)", async () => {
  const availability = { available: true, contextSize: 8192, supportedLanguages: ["en"] };
  const h = openHandle({ "x-double": { availability } });
  try {
    assert.deepEqual(await h.request({ op: "availability" }), availability);
  } finally {
    h.close();
    await h.whenIdle();
  }
});

Deno.test("plugin: open-time step scripts are played in order, then the default", async () => {
  const steps = [{ result: { kind: "text", text: "one" } }, { error: { code: "refusal", message: "No." } }];
  const h = openHandle({ "x-double": { steps } });
  try {
    assert.deepEqual(await h.request({ op: "step" }), { kind: "text", text: "one" });
    await assert.rejects(
      h.request({ op: "step" }),
      (e) => e instanceof FmRemoteError && e.code === "refusal",
    );
    assert.deepEqual(await h.request({ op: "step" }), {
      kind: "text",
      text: "Hello from the test double.",
      usage: null,
    });
  } finally {
    h.close();
    await h.whenIdle();
  }
});
