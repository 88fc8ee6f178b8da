/**
 * Extensions that misbehave (issue #7): a handler that throws (synchronously, asynchronously, a non-Error
 * value), returns something that is not JSON, or an extension whose shutdown throws (one that never finishes:
 * tests/slow/timing_slow.ts). The bridge must answer each request exactly once, keep serving, and still
 * answer `shutdown`.
 */
import assert from "node:assert/strict";
import { BridgeEngine } from "../../src/composition.ts";
import type { BridgeExtension } from "../../src/engine/extension.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import type { Logger } from "../../src/util/logger.ts";
import { withDeadline } from "../helpers/deadline.ts";

function harness(extension: BridgeExtension) {
  const lines: string[] = [];
  const logs: string[] = [];
  const log = (level: string) => (m: string) => logs.push(`${level}: ${m}`);
  const logger: Logger = {
    debug: log("debug"),
    info: log("info"),
    warning: log("warning"),
    error: log("error"),
  };
  let wake: () => void = () => {};
  const engine = new BridgeEngine({ extensions: [extension], logger }, (l) => {
    lines.push(l);
    wake();
  });
  const messages = () => lines.map((l) => JSON.parse(l) as JsonObject);
  const send = (id: number | null, method: string, params: JsonObject = {}) =>
    engine.receive(JSON.stringify({ jsonrpc: "2.0", ...(id === null ? {} : { id }), method, params }));
  /** Every response to `id`, once there is one (woken by each message; a deadline against hangs). */
  const response = async (id: number) => {
    for (;;) {
      const found = messages().filter((m) => m.id === id);
      if (found.length > 0) return found;
      await withDeadline(
        new Promise<void>((r) => wake = r),
        `the response to ${id}; so far:\n${lines.join("\n")}`,
      );
    }
  };
  return { engine, lines, logs, messages, send, response };
}

const circular: JsonObject = {};
(circular as Record<string, unknown>).self = circular;

const faulty: BridgeExtension = {
  register(registry) {
    registry.register("x/typeError", () => {
      const o = null as unknown as { a: number };
      return o.a;
    });
    registry.register("x/asyncThrow", () => Promise.reject(new Error("the quest log is corrupt")));
    registry.register("x/throwString", () => {
      throw "plain string";
    });
    registry.register("x/throwObject", () => Promise.reject({ weird: true }));
    registry.register("x/undefined", () => undefined as unknown as JsonValue);
    registry.register("x/bigint", () => ({ n: 10n }) as unknown as JsonValue);
    registry.register("x/circular", () => Promise.resolve(circular));
    registry.register("x/function", () => (() => 1) as unknown as JsonValue);
    registry.register("x/stackOverflow", () => {
      const f = (n: number): number => f(n + 1) + 1;
      return f(0);
    });
  },
};

Deno.test("a handler that throws anything but a BridgeError is a bug: -32603 internal_error once, its stack logged, the bridge keeps serving", async () => {
  const h = harness(faulty);
  h.send(1, "x/typeError");
  h.send(2, "x/asyncThrow");
  h.send(3, "x/throwString");
  h.send(4, "x/throwObject");
  h.send(5, "x/stackOverflow");
  h.send(null, "x/typeError"); // a notification: nothing is sent
  h.send(6, "ping");
  const err = async (id: number) => {
    const r = await h.response(id);
    assert.equal(r.length, 1);
    return r[0].error as JsonObject;
  };
  // Deliberate move (issue 19): these were -32012 generation_failed, a model failure the agent retried.
  const e1 = await err(1);
  assert.equal(e1.code, -32603);
  assert.deepEqual(e1.data, { code: "internal_error" });
  assert.match(e1.message as string, /^Cannot read properties of null \(reading 'a'\)/);
  assert.deepEqual(await err(2), {
    code: -32603,
    message: "the quest log is corrupt",
    data: { code: "internal_error" },
  });
  assert.deepEqual(await err(3), {
    code: -32603,
    message: "plain string",
    data: { code: "internal_error" },
  });
  assert.deepEqual(await err(4), {
    code: -32603,
    message: "[object Object]",
    data: { code: "internal_error" },
  });
  assert.deepEqual(await err(5), {
    code: -32602,
    message: "The input nests too deeply.",
    data: { code: "invalid_params" },
  });
  assert.deepEqual((await h.response(6))[0], { jsonrpc: "2.0", id: 6, result: {} });
  assert.equal(h.lines.length, 6);
  const internal = h.logs.filter((l) => l.startsWith("error: Internal error in 'x/"));
  assert.equal(internal.length, 5); // each one, the notification included; not the stack overflow (bad input)
  assert.match(
    internal[0],
    /^error: Internal error in 'x\/typeError' \(a bug in the host's extension that registered this method; fix it there\): TypeError: /,
  );
  assert.match(internal[0], /\n +at .*extension_faults_test\.ts/); // the stack, on stderr only
  assert.ok(!h.lines.some((l) => l.includes("extension_faults_test.ts")), "no stack on the wire");
  await h.engine.shutdown();
});

Deno.test("a result that is not JSON is answered with -32603 internal_error instead of being lost", async () => {
  const h = harness(faulty);
  h.send(1, "x/undefined");
  h.send(2, "x/bigint");
  h.send(3, "x/circular");
  h.send(4, "x/function");
  h.send(5, "ping");
  const messages: Record<number, string | RegExp> = {
    1: "The result of 'x/undefined' is not JSON: undefined.",
    2: "The result of 'x/bigint' is not JSON: Do not know how to serialize a BigInt.",
    3: /^The result of 'x\/circular' is not JSON: Converting circular structure to JSON/,
    4: "The result of 'x/function' is not JSON: function.",
  };
  for (const id of [1, 2, 3, 4]) {
    const r = await h.response(id);
    assert.equal(r.length, 1, `${id}: ${h.lines.join("\n")}`);
    const e = r[0].error as JsonObject;
    assert.deepEqual([e.code, e.data], [-32603, { code: "internal_error" }]);
    if (typeof messages[id] === "string") assert.equal(e.message, messages[id]);
    else assert.match(e.message as string, messages[id] as RegExp);
  }
  assert.deepEqual((await h.response(5))[0], { jsonrpc: "2.0", id: 5, result: {} });
  // The log line says whose bug it is: the host's extension registered these methods.
  assert.ok(
    h.logs.includes(
      "error: The result of 'x/bigint' is not JSON: Do not know how to serialize a BigInt. (a bug in the host's extension that registered this method; fix it there)",
    ),
    h.logs.join("\n"),
  );
  await h.engine.shutdown();
});

Deno.test("an extension whose shutdown throws: shutdown still answers, the failure is logged", async () => {
  // (An extension whose shutdown never finishes is answered after the 2 s grace: tests/slow/timing_slow.ts.)
  const throwing: BridgeExtension = {
    register() {},
    shutdown() {
      throw new Error("save failed");
    },
  };
  const h = harness(throwing);
  h.send(1, "shutdown");
  assert.deepEqual(await h.response(1), [{ jsonrpc: "2.0", id: 1, result: {} }]);
  // Whose bug: the host's extension (an object literal here, so no class name to give).
  assert.deepEqual(h.logs, [
    "error: The host's extension failed to shut down (a bug in it; fix it there): Error: save failed",
  ]);
  h.send(2, "ping");
  assert.deepEqual(h.messages()[1], {
    jsonrpc: "2.0",
    id: 2,
    error: { code: -32023, message: "The bridge has shut down.", data: { code: "shut_down" } },
  });
});

Deno.test("an extension class whose shutdown rejects is named in the log line", async () => {
  class QuestLog implements BridgeExtension {
    register() {}
    shutdown() {
      return Promise.reject(new Error("disk full"));
    }
  }
  const h = harness(new QuestLog());
  h.send(1, "shutdown");
  assert.deepEqual(await h.response(1), [{ jsonrpc: "2.0", id: 1, result: {} }]);
  assert.deepEqual(h.logs, [
    "error: The host's extension QuestLog failed to shut down (a bug in it; fix it there): Error: disk full",
  ]);
});
