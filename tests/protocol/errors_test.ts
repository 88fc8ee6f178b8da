/**
 * Where thrown values become protocol errors (issue 19): a BridgeError stays itself, an abort is -32009, a
 * stack overflow on deep input is -32602, and anything else is a bug: -32603 internal_error with the thrown
 * value kept as `cause` (never a model failure that would be retried).
 */
import assert from "node:assert/strict";
import {
  BridgeError,
  ERROR_CODES,
  type ErrorName,
  internalError,
  internalErrorReport,
  thrownByHost,
  toBridgeError,
} from "../../src/protocol/errors.ts";

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
  const report = internalErrorReport(internalError(new RangeError("bad index")), { where: "npc/talk" });
  assert.match(
    report!,
    /^Internal error in 'npc\/talk' \(a bug; please report it\): RangeError: bad index\n +at /,
  );
  assert.equal(
    internalErrorReport(BridgeError.of("generation_failed", "The model failed."), { where: "npc/talk" }),
    null,
  );
  const own = BridgeError.internal("The turn ended without a response.");
  assert.match(
    internalErrorReport(own, { where: "session/respond" })!,
    /The turn ended without a response\./,
  );
});

Deno.test("internalErrorReport: the host's code is named for what it threw, or for the method it handles", () => {
  const culprit = "the host's modelFactory";
  const thrown = new Error("typo");
  assert.equal(thrownByHost(thrown, culprit), thrown);
  assert.match(
    internalErrorReport(toBridgeError(thrown), { where: "session/create" })!,
    /^Internal error in 'session\/create' \(a bug in the host's modelFactory; fix it there\): Error: typo\n +at /,
  );
  // Wrapped once more on its way (an internal error made from it) it is still the host's.
  assert.match(
    internalErrorReport(internalError(toBridgeError(thrown)), { where: "x" })!,
    /\(a bug in the host's modelFactory;/,
  );
  // A thrown string cannot be marked: it becomes the internal error it would be answered with anyway.
  const string = toBridgeError(thrownByHost("oops", culprit));
  assert.deepEqual(string.toJson(), toBridgeError("oops").toJson());
  assert.match(
    internalErrorReport(string, { where: "x" })!,
    /^Internal error in 'x' \(a bug in the host's modelFactory; fix it there\): oops$/,
  );
  // No mark: the handler's owner, if the host's, else the project's.
  const plain = internalError(new Error("boom"));
  assert.match(
    internalErrorReport(plain, { where: "quest/go", hostCode: "the host's extension Q" })!,
    /\(a bug in the host's extension Q; fix it there\)/,
  );
  assert.match(internalErrorReport(plain, { where: "npc/talk" })!, /\(a bug; please report it\)/);
  // A non-internal error is no bug, whoever threw it.
  assert.equal(
    internalErrorReport(toBridgeError(thrownByHost(BridgeError.of("refusal", "No."), culprit)), {
      where: "x",
    }),
    null,
  );
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

Deno.test("an error with a custom code outside -32057…-32099, or a protocol code under another name, is answered as internal_error naming the rule", () => {
  // What an extension may answer with: its own codes in the range §8 leaves to extensions, and the table's.
  for (
    const ok of [
      new BridgeError(-32090, "quest_not_found", "No quest."),
      new BridgeError(-32057, "quest_a", "A."),
      new BridgeError(-32099, "quest_b", "B."),
      new BridgeError(-32050, "npc_not_found", "No NPC."),
    ]
  ) {
    assert.equal(toBridgeError(ok), ok);
  }
  for (const [name, code] of Object.entries(ERROR_CODES)) {
    const e = BridgeError.of(name as ErrorName, "x");
    assert.equal(toBridgeError(e), e);
    assert.deepEqual(e.toJson(), {
      code,
      message: "x",
      data: { code: name },
    });
  }
  const refused: Array<[number, string, RegExp]> = [
    [
      -32050,
      "quest_not_found",
      /^BridgeError code -32050 \('quest_not_found'\) is the protocol's 'npc_not_found' \(PROTOCOL\.md §8\)\. An extension's own codes are -32057…-32099\.$/,
    ],
    [
      -32602,
      "quest_bad",
      /^BridgeError code -32602 \('quest_bad'\) is the protocol's 'invalid_params' \(PROTOCOL\.md §8\)\. An extension's own codes are -32057…-32099; for invalid params use BridgeError\.invalidParams\(message\)\.$/,
    ],
    [
      -32090,
      "npc_not_found",
      /^BridgeError data\.code 'npc_not_found' is the protocol's code -32050 \(PROTOCOL\.md §8\); got -32090\. Use BridgeError\.of\("npc_not_found", message\), or a name of your own\.$/,
    ],
    [
      -32000,
      "gate_offline",
      /^BridgeError code -32000 \('gate_offline'\) is outside -32057…-32099, the codes PROTOCOL\.md §8 leaves to extensions\.$/,
    ],
    [
      -32100,
      "quest_c",
      /^BridgeError code -32100 \('quest_c'\) is outside -32057…-32099, the codes PROTOCOL\.md §8 leaves to extensions\.$/,
    ],
    [404, "quest_d", /^BridgeError code 404 \('quest_d'\) is outside -32057…-32099/],
    [-32090.5, "quest_e", /^BridgeError code -32090\.5 \('quest_e'\) is not an integer\.$/],
    [-32090, "", /^BridgeError code -32090 needs a data\.code string such as 'quest_not_found'; got ''\.$/],
  ];
  for (const [code, name, message] of refused) {
    // Made freely (a client may reply to a tool call with any code), refused where the bridge answers.
    const made = new BridgeError(code, name, "x");
    const answered = toBridgeError(made);
    assert.equal(answered.dataCode, "internal_error");
    assert.match(answered.message, message);
    const cause = answered.cause as TypeError;
    assert.ok(cause instanceof TypeError);
    assert.equal(cause.cause, made);
    // The stack is the one of where the error was made (this test), not of the conversion.
    assert.match(cause.stack ?? "", /^TypeError: BridgeError [^\n]*\n +at .*errors_test\.ts/);
  }
});

Deno.test("BridgeError.fromJson rebuilds a received error as it came (any code), and toJson gives it back", () => {
  const wire = {
    code: -32000,
    message: "Gate subsystem offline",
    data: { code: "gate_offline", gate: "north" },
  };
  const e = BridgeError.fromJson(wire);
  assert.deepEqual([e.code, e.dataCode, e.message, e.data], [
    -32000,
    "gate_offline",
    "Gate subsystem offline",
    {
      gate: "north",
    },
  ]);
  assert.deepEqual(e.toJson(), wire);
  const bare = BridgeError.fromJson({ code: 7, message: "Odd." });
  assert.deepEqual([bare.code, bare.dataCode, bare.data], [7, "", {}]);
});
