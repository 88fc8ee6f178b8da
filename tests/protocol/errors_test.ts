/**
 * Where thrown values become protocol errors (issue 19): a BridgeError stays itself, an abort is -32009, a
 * stack overflow on deep input is -32602, and anything else is a bug: -32603 internal_error with the thrown
 * value kept as `cause` (never a model failure that would be retried).
 */
import assert from "node:assert/strict";
import { BridgeError, internalError, internalErrorReport, toBridgeError } from "../../src/protocol/errors.ts";

Deno.test("toBridgeError: BridgeError as is, abort → cancelled, deep recursion → invalid_params, the rest → internal_error", () => {
  const own = BridgeError.of("refusal", "No.");
  assert.equal(toBridgeError(own), own);
  assert.equal(toBridgeError(new DOMException("stop", "AbortError")).dataCode, "cancelled");
  let overflow: unknown;
  try {
    const f = (n: number): number => f(n + 1) + 1;
    f(0);
  } catch (error) {
    overflow = error;
  }
  const deep = toBridgeError(overflow);
  assert.deepEqual(deep.toJson(), {
    code: -32602,
    message: "The input nests too deeply.",
    data: { code: "invalid_params" },
  });
  assert.equal(deep.cause, overflow);
  const bug = new TypeError("x is not a function");
  const mapped = toBridgeError(bug);
  assert.deepEqual(mapped.toJson(), {
    code: -32603,
    message: "x is not a function",
    data: { code: "internal_error" },
  });
  assert.equal(mapped.cause, bug);
  assert.equal(toBridgeError("plain").message, "plain");
  assert.equal(toBridgeError(new Error("")).message, "An internal error occurred.");
  assert.equal(toBridgeError(new DOMException("late", "TimeoutError")).dataCode, "internal_error");
});

Deno.test("internalErrorReport: the stack of the cause for internal errors, nothing for the others", () => {
  const report = internalErrorReport(internalError(new RangeError("bad index")), "npc/talk");
  assert.match(
    report!,
    /^Internal error in 'npc\/talk' \(a bug; please report it\): RangeError: bad index\n +at /,
  );
  assert.equal(
    internalErrorReport(BridgeError.of("generation_failed", "The model failed."), "npc/talk"),
    null,
  );
  const own = BridgeError.internal("The turn ended without a response.");
  assert.match(internalErrorReport(own, "session/respond")!, /The turn ended without a response\./);
});

Deno.test("withCause keeps the wrapped failure off the wire", () => {
  const cause = new Error("ECONNREFUSED");
  const e = BridgeError.of("model_unavailable", "Cannot reach the model server.").withCause(cause);
  assert.equal(e.cause, cause);
  assert.deepEqual(e.toJson(), {
    code: -32001,
    message: "Cannot reach the model server.",
    data: { code: "model_unavailable" },
  });
});
