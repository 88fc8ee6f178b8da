/**
 * createSystemModel() as a LanguageModel, backed by the C test double (scripted per request via `x-double`).
 */
import assert from "node:assert/strict";
import { BridgeError, ERROR_CODES } from "../../src/protocol/errors.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import type { LanguageModel, StepRequest } from "../../src/models/language_model.ts";
import type { ConversationEntry } from "../../src/protocol/transcript.ts";
import { closeSystemModels, createSystemModel, systemModelsIdle } from "../../src/models/system.ts";
import { requireDouble } from "../ffi/double.ts";
import { withDeadline } from "../helpers/deadline.ts";

const PATH = requireDouble();
const AVAILABLE = {
  available: true,
  contextSize: 8192,
  variant: "AFM 3 Core Advanced",
  supportedLanguages: ["en", "de", "da", "en-AU"],
  features: { tokenCount: true },
};

/** A model whose requests get `x-double` scripts: `availability` (default AVAILABLE) and per-op queues. */
type Script = Record<string, unknown>;

function scripted(scripts: { availability?: Script; step?: Script[]; countTokens?: Script[] } = {}) {
  const sent: JsonObject[] = [];
  let wake = () => {};
  /** Resolves once a request with `op` has gone to the plugin (it is decorated right before it is submitted). */
  const submitted = async (op: string) => {
    while (!sent.some((body) => body.op === op)) {
      await withDeadline(new Promise<void>((r) => wake = r), `a '${op}' request to the plugin`);
    }
  };
  const queues: Record<string, Script[]> = {
    step: [...(scripts.step ?? [])],
    countTokens: [...(scripts.countTokens ?? [])],
  };
  const model = createSystemModel({
    libraryPath: PATH,
    decorateRequest: (body) => {
      sent.push(structuredClone(body));
      if (body.op === "availability") {
        body["x-double"] = { result: (scripts.availability ?? AVAILABLE) as JsonValue };
      } else {
        const next = queues[body.op as string]?.shift();
        if (next) body["x-double"] = next as JsonValue;
      }
      queueMicrotask(wake);
    },
  });
  return { model, sent, submitted };
}

function request(overrides: Partial<StepRequest> = {}): StepRequest {
  return {
    instructions: "You are a castle guard.",
    tools: [],
    toolCallingMode: "disallowed",
    history: [],
    prompt: "Open the gate.",
    responseSchema: null,
    options: {},
    stream: true,
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function cleanup(): Promise<void> {
  closeSystemModels();
  await systemModelsIdle();
}

function isBridge(code: keyof typeof ERROR_CODES, check?: (e: BridgeError) => void) {
  return (e: unknown) => {
    assert.ok(e instanceof BridgeError, `expected BridgeError, got ${e}`);
    assert.equal(e.dataCode, code);
    assert.equal(e.code, ERROR_CODES[code]);
    check?.(e);
    return true;
  };
}

Deno.test("system model: shape; nothing is loaded at construction", async () => {
  const model = createSystemModel({
    env: () => {
      throw new Error("env must not be read eagerly");
    },
    libraryPath: "/nonexistent/never-loaded.so",
  });
  assert.equal(model.kind, "system");
  assert.equal(model.trimsHistory, true);
  assert.equal(model.contextSize, 4096);
  assert.equal(typeof model.countTokens, "function");
  await cleanup();
});

Deno.test("system model: plain step returns text; the request JSON follows the ABI", async () => {
  const history: ConversationEntry[] = [
    { id: "p1", role: "user", contents: [{ type: "text", id: "s1", text: "Hi" }], options: {} },
    { id: "r1", role: "response", contents: [{ type: "text", id: "s2", text: "Halt!" }], assets: [] },
    {
      id: "tc",
      role: "response",
      toolCalls: [{ id: "call_1", name: "open_gate", arguments: '{"gate":"north"}' }],
      contents: [],
      assets: [],
    },
    {
      id: "call_1",
      role: "tool",
      toolCallID: "call_1",
      toolName: "open_gate",
      contents: [{ type: "text", id: "s3", text: "jammed" }],
    },
  ];
  const parameters = {
    type: "object",
    title: "OpenGate",
    properties: { gate: { type: "string" } },
    required: ["gate"],
    additionalProperties: false,
    "x-order": ["gate"],
  };
  const { model } = scripted({ step: [{ echoAsText: true }] });
  try {
    const result = await model.step(request({
      tools: [{
        name: "open_gate",
        description: "Opens a gate.",
        parameters,
        jsonSchema: { type: "object" },
      }],
      toolCallingMode: "allowed",
      history,
      prompt: "",
      options: { temperature: 0.5, maximumResponseTokens: 64, sampling: { mode: "topK", k: 40, seed: 7 } },
      stream: false,
    }));
    assert.equal(result.kind, "text");
    assert.equal(result.usage, null);
    const sent = JSON.parse((result as { text: string }).text);
    assert.match(sent.id, /^r\d+$/);
    assert.deepEqual(sent, {
      id: sent.id,
      op: "step",
      instructions: "You are a castle guard.",
      tools: [{ name: "open_gate", description: "Opens a gate.", parameters }],
      toolCallingMode: "allowed",
      history,
      prompt: "",
      responseSchema: null,
      options: { temperature: 0.5, maximumResponseTokens: 64, sampling: { mode: "topK", k: 40, seed: 7 } },
      stream: false,
      captureWindowMs: 25,
      native: { key: sent.native.key, continue: false },
      "x-double": { echoAsText: true },
    });
    assert.match(sent.native.key, /^n\d+$/);
  } finally {
    await cleanup();
  }
});

Deno.test("system model: sampling modes, schema and captureWindowMs in the request", async () => {
  const generationSchema = {
    title: "Reply",
    type: "object",
    properties: { choice: { type: "string" } },
    required: ["choice"],
    additionalProperties: false,
    "x-order": ["choice"],
  };
  const sent: JsonObject[] = [];
  const model = createSystemModel({
    libraryPath: PATH,
    captureWindowMs: 40,
    decorateRequest: (body) => {
      if (body.op === "availability") body["x-double"] = { result: AVAILABLE };
      else sent.push(structuredClone(body));
    },
  });
  try {
    await model.step(request({ options: { sampling: { mode: "greedy" } } }));
    await model.step(request({
      options: { sampling: { mode: "topP", p: 0.9 } },
      responseSchema: { name: "Reply", generationSchema, jsonSchema: { type: "object" } },
    }));
    assert.deepEqual(sent[0].options, { sampling: { mode: "greedy" } });
    assert.equal(sent[0].captureWindowMs, 40);
    assert.deepEqual(sent[1].options, { sampling: { mode: "topP", p: 0.9 } });
    assert.deepEqual(sent[1].responseSchema, generationSchema);
  } finally {
    await cleanup();
  }
});

Deno.test("system model: streaming snapshots reach onText in order", async () => {
  const snapshots = ["The", "The north", "The north gate", "The north gate is shut."];
  const { model } = scripted({
    step: [{
      events: snapshots.map((text) => ({ type: "text", text })),
      delayMs: 2,
      result: {
        kind: "text",
        text: "The north gate is shut.",
        usage: { inputTokens: 10, cachedInputTokens: 2, outputTokens: 5 },
      },
    }],
  });
  try {
    const seen: string[] = [];
    const result = await model.step(request({ onText: (t) => seen.push(t) }));
    assert.deepEqual(result, {
      kind: "text",
      text: "The north gate is shut.",
      usage: { inputTokens: 10, cachedInputTokens: 2, outputTokens: 5 },
    });
    assert.ok(seen.length >= 1);
    assert.equal(seen.at(-1), snapshots.at(-1));
    let last = -1;
    for (const s of seen) {
      const i = snapshots.indexOf(s);
      assert.ok(i > last, `snapshot ${s} out of order`);
      last = i;
    }
  } finally {
    await cleanup();
  }
});

Deno.test("system model: stream false forwards no snapshots", async () => {
  const { model } = scripted({
    step: [{ events: [{ type: "text", text: "x" }], result: { kind: "text", text: "x" } }],
  });
  try {
    const seen: string[] = [];
    await model.step(request({ stream: false, onText: (t) => seen.push(t) }));
    assert.deepEqual(seen, []);
  } finally {
    await cleanup();
  }
});

Deno.test("system model: a toolCalls result (arguments as object or JSON text)", async () => {
  const { model } = scripted({
    step: [{
      result: {
        kind: "toolCalls",
        calls: [
          { name: "open_gate", arguments: { gate: "north" }, nativeId: "fm-1" },
          { name: "ring_bell", arguments: '{"times":2}' },
          { name: "look", arguments: null },
        ],
        usage: null,
      },
    }],
  });
  try {
    const result = await model.step(request({ toolCallingMode: "required" }));
    assert.deepEqual(result, {
      kind: "toolCalls",
      calls: [
        { name: "open_gate", arguments: { gate: "north" }, nativeId: "fm-1" },
        { name: "ring_bell", arguments: { times: 2 } },
        { name: "look", arguments: {} },
      ],
      usage: null,
    });
  } finally {
    await cleanup();
  }
});

Deno.test("system model: structured result with onPartial snapshots", async () => {
  const partials = [{ reasoning: "Snik" }, { reasoning: "Snik is timid" }, {
    reasoning: "Snik is timid",
    choice: "flee",
  }];
  const { model } = scripted({
    step: [{
      events: partials.map((value) => ({ type: "partial", value })),
      delayMs: 2,
      result: {
        kind: "structured",
        value: partials[2],
        text: '{"reasoning":"Snik is timid","choice":"flee"}',
        usage: null,
      },
    }],
  });
  try {
    const seen: JsonValue[] = [];
    const result = await model.step(request({ onPartial: (v) => seen.push(v) }));
    assert.deepEqual(result, {
      kind: "structured",
      value: partials[2],
      text: '{"reasoning":"Snik is timid","choice":"flee"}',
      usage: null,
    });
    assert.ok(seen.length >= 1);
    assert.deepEqual(seen.at(-1), partials[2]);
  } finally {
    await cleanup();
  }
});

Deno.test("system model: structured result without text gets its JSON text", async () => {
  const { model } = scripted({ step: [{ result: { kind: "structured", value: { a: 1 } } }] });
  try {
    assert.deepEqual(await model.step(request()), {
      kind: "structured",
      value: { a: 1 },
      text: '{"a":1}',
      usage: null,
    });
  } finally {
    await cleanup();
  }
});

Deno.test("system model: AbortSignal mid-stream rejects with cancelled; no snapshot after abort", async () => {
  const { model } = scripted({
    step: [{
      events: [{ type: "text", text: "Hal" }, { type: "text", text: "Halt" }],
      delayMs: 5,
      hang: true,
    }],
  });
  try {
    const controller = new AbortController();
    const seen: string[] = [];
    await assert.rejects(
      model.step(request({
        signal: controller.signal,
        onText: (t) => {
          seen.push(t);
          controller.abort();
        },
      })),
      isBridge("cancelled"),
    );
    // One snapshot, then nothing after the abort. Which one depends on whether one poll of the plugin saw
    // both events (5 ms apart) — under load it can.
    assert.equal(seen.length, 1, JSON.stringify(seen));
    assert.ok(seen[0] === "Hal" || seen[0] === "Halt", seen[0]);
  } finally {
    await cleanup();
  }
});

Deno.test("system model: an already aborted signal rejects with cancelled", async () => {
  const { model, sent } = scripted();
  try {
    await assert.rejects(model.step(request({ signal: AbortSignal.abort() })), isBridge("cancelled"));
    assert.equal(sent.length, 0);
  } finally {
    await cleanup();
  }
});

const ERROR_CASES: {
  error: JsonObject;
  code: keyof typeof ERROR_CODES;
  message: string;
  data: JsonObject;
}[] = [
  {
    error: {
      code: "model_unavailable",
      message: "Model assets are unavailable.",
      detail: { reason: "model_not_ready" },
    },
    code: "model_unavailable",
    message: "Model assets are unavailable.",
    data: { reason: "model_not_ready" },
  },
  {
    error: { code: "guardrail_violation", message: "Blocked." },
    code: "guardrail_violation",
    message: "Blocked.",
    data: {},
  },
  {
    error: { code: "refusal", message: "I can't help." },
    code: "refusal",
    message: "I can't help.",
    data: {},
  },
  {
    error: {
      code: "context_size_exceeded",
      message: "The conversation (8193 tokens) exceeds the model's context size of 8192 tokens.",
      detail: { contextSize: 8192, tokenCount: 8193 },
    },
    code: "context_size_exceeded",
    message: "The conversation (8193 tokens) exceeds the model's context size of 8192 tokens.",
    data: { contextSize: 8192, tokenCount: 8193 },
  },
  {
    error: {
      code: "rate_limited",
      message: "Slow down.",
      detail: { retryAfter: "2100-01-01T00:00:00Z", retryAfterSeconds: 2.2 },
    },
    code: "rate_limited",
    message: "Slow down.",
    data: { retryAfter: "2100-01-01T00:00:00.000Z", retryAfterSeconds: 3 },
  },
  {
    error: { code: "unsupported_language", message: "Klingon." },
    code: "unsupported_language",
    message: "Klingon.",
    data: {},
  },
  {
    error: {
      code: "invalid_schema",
      message: "Bad guide.",
      detail: { path: "tools[0].parameters", schemaPath: "#/properties/x" },
    },
    code: "invalid_schema",
    message: "Bad guide.",
    data: { path: "tools[0].parameters", schemaPath: "#/properties/x" },
  },
  {
    error: { code: "invalid_request", message: "Bad transcript." },
    code: "invalid_request",
    message: "Bad transcript.",
    data: {},
  },
  { error: { code: "busy", message: "Busy." }, code: "busy", message: "Busy.", data: {} },
  {
    error: {
      code: "generation_failed",
      message: "ModelManagerError 1013.",
      detail: { native: { domain: "x", code: 1013 } },
    },
    code: "generation_failed",
    message: "ModelManagerError 1013.",
    data: {},
  },
  {
    error: { code: "unsupported", message: "countTokens needs macOS 26.4." },
    code: "invalid_request",
    message: "countTokens needs macOS 26.4.",
    data: {},
  },
  {
    error: { code: "some_future_code", message: "Odd." },
    code: "generation_failed",
    message: "Odd.",
    data: {},
  },
  { error: { code: "refusal" }, code: "refusal", message: "The model refused to respond.", data: {} },
  {
    error: { code: "cancelled", message: "Stopped." },
    code: "cancelled",
    message: "The request was cancelled.",
    data: {},
  },
];

Deno.test("system model: every plugin error code maps to its §8 error", async () => {
  const { model } = scripted({ step: ERROR_CASES.map((c) => ({ error: c.error })) });
  try {
    for (const c of ERROR_CASES) {
      await assert.rejects(
        model.step(request()),
        isBridge(c.code, (e) => {
          assert.equal(e.message, c.message, JSON.stringify(c.error));
          assert.deepEqual(e.data, c.data, JSON.stringify(c.error));
        }),
      );
    }
  } finally {
    await cleanup();
  }
});

Deno.test("system model: rate_limited with only seconds (or only a date) fills in the other", async () => {
  // The bridge reads the clock when it maps the error; the test brackets that moment with its own reads
  // (before the step, after its rejection), so a step that runs late on a loaded machine is no failure.
  const at = Date.now() + 9500;
  const { model } = scripted({
    step: [
      { error: { code: "rate_limited", message: "r", detail: { retryAfterSeconds: 5 } } },
      { error: { code: "rate_limited", message: "r", detail: { retryAfter: new Date(at).toISOString() } } },
      { error: { code: "rate_limited", message: "r", detail: { retryAfter: "not a date" } } },
    ],
  });
  try {
    let before = Date.now();
    await assert.rejects(
      model.step(request()),
      isBridge("rate_limited", (e) => {
        const after = Date.now();
        assert.equal(e.data.retryAfterSeconds, 5);
        const retryAt = Date.parse(e.data.retryAfter as string);
        assert.ok(retryAt >= before + 5000 && retryAt <= after + 5000, `${e.data.retryAfter}`);
      }),
    );
    before = Date.now();
    await assert.rejects(
      model.step(request()),
      isBridge("rate_limited", (e) => {
        const after = Date.now();
        // Rounded up: 9.5 s left (less the time the step took) is 10 s.
        const least = Math.max(0, Math.ceil((at - after) / 1000));
        const most = Math.ceil((at - before) / 1000);
        const seconds = e.data.retryAfterSeconds as number;
        assert.ok(seconds >= least && seconds <= most, `${seconds} is not within ${least}…${most}`);
        assert.equal(e.data.retryAfter, new Date(at).toISOString());
      }),
    );
    await assert.rejects(
      model.step(request()),
      isBridge("rate_limited", (e) => assert.deepEqual(e.data, {})),
    );
  } finally {
    await cleanup();
  }
});

Deno.test("system model: malformed results fail with generation_failed", async () => {
  const bad = [
    { kind: "text" },
    { kind: "toolCalls", calls: [] },
    { kind: "toolCalls", calls: [{ arguments: {} }] },
    { kind: "toolCalls", calls: [{ name: "x", arguments: "{nope" }] },
    { kind: "toolCalls", calls: [{ name: "x", arguments: [1] }] },
    { kind: "structured" },
    { kind: "poem" },
  ];
  const { model } = scripted({ step: bad.map((result) => ({ result })) });
  try {
    for (const _ of bad) {
      await assert.rejects(
        model.step(request()),
        isBridge("generation_failed", (e) => assert.match(e.message, /malformed result/)),
      );
    }
  } finally {
    await cleanup();
  }
});

Deno.test("system model: availability values come from the plugin (sorted languages, contextSize)", async () => {
  const { model } = scripted();
  try {
    assert.equal(model.contextSize, 4096);
    assert.deepEqual(await model.availability(), {
      available: true,
      contextSize: 8192,
      variant: "AFM 3 Core Advanced",
      supportedLanguages: ["da", "de", "en", "en-AU"],
    });
    assert.equal(model.contextSize, 8192);
    // Another model on the same library sees the shared value without asking.
    assert.equal(createSystemModel({ libraryPath: PATH }).contextSize, 8192);
  } finally {
    await cleanup();
  }
});

Deno.test("system model: unavailable plugin → availability reason, step rejects model_unavailable", async () => {
  const { model, sent } = scripted({
    availability: { available: false, reason: "model_not_ready", contextSize: 0, supportedLanguages: ["en"] },
  });
  try {
    assert.deepEqual(await model.availability(), {
      available: false,
      reason: "model_not_ready",
      contextSize: 4096,
      supportedLanguages: ["en"],
    });
    await assert.rejects(
      model.step(request()),
      isBridge("model_unavailable", (e) => {
        assert.match(e.message, /model_not_ready/);
        assert.deepEqual(e.data, { reason: "model_not_ready" });
      }),
    );
    assert.ok(!sent.some((b) => b.op === "step"), "no step was sent");
  } finally {
    await cleanup();
  }
});

Deno.test("system model: malformed availability results are reported as unknown", async () => {
  for (const result of [{ contextSize: 1 }, { available: false }]) {
    const { model } = scripted({ availability: result });
    try {
      const a = await model.availability();
      assert.equal(a.available, false);
      assert.equal(a.reason, "unknown");
    } finally {
      await cleanup();
    }
  }
});

Deno.test("system model: absent library → unavailable with the right reason, no crash", async () => {
  const eligible = Deno.build.os === "darwin" && Deno.build.arch === "aarch64";
  const model = createSystemModel({ libraryPath: "/nonexistent/libOAMFoundationModels.dylib" });
  try {
    const a = await model.availability();
    assert.equal(a.available, false);
    assert.equal(a.reason, eligible ? "unknown" : "device_not_eligible");
    assert.equal(a.contextSize, 4096);
    assert.deepEqual(a.supportedLanguages, []);
    assert.match(a.detail ?? "", /nonexistent/);
    await assert.rejects(
      model.step(request()),
      isBridge("model_unavailable", (e) => {
        assert.match(e.message, eligible ? /\(unknown\)/ : /\(device_not_eligible\)/);
        assert.equal(e.data.reason, a.reason);
      }),
    );
    assert.equal(await model.countTokens!({ ...request(), prompt: "123456" }), Math.ceil((23 + 6) / 3));
  } finally {
    await cleanup();
  }
});

Deno.test({
  name: "system model: no OAM_FM_LIBRARY off macOS → device_not_eligible without detail",
  // On macOS the default plugin location is searched instead (a machine-dependent outcome).
  ignore: Deno.build.os === "darwin",
  fn: async () => {
    const model = createSystemModel({ env: () => undefined });
    const a = await model.availability();
    assert.deepEqual(a, {
      available: false,
      reason: "device_not_eligible",
      contextSize: 4096,
      supportedLanguages: [],
    });
    // The turn's error says what to use instead.
    await assert.rejects(
      model.step(request()),
      isBridge("model_unavailable", (e) => {
        assert.equal(
          e.message,
          "The system model is unavailable (device_not_eligible). Apple's on-device model runs on Apple silicon " +
            `Macs with Apple Intelligence only; give the session, NPC, decision or generation another model: ` +
            `{"type": "scripted", …}, "openai" or "llama".`,
        );
        assert.deepEqual(e.data, { reason: "device_not_eligible" });
      }),
    );
  },
});

Deno.test("system model: OAM_FM_LIBRARY from the env option loads the library; a throwing env is 'unset'", async () => {
  const model = createSystemModel({ env: (name) => name === "OAM_FM_LIBRARY" ? PATH : undefined });
  try {
    const a = await model.availability();
    assert.equal(a.available, true);
    assert.equal(a.variant, "fm_double");
    const denied = createSystemModel({
      env: () => {
        throw new Deno.errors.NotCapable('Requires env access to "OAM_FM_LIBRARY"');
      },
    });
    const b = await denied.availability();
    assert.equal(b.available, false);
  } finally {
    await cleanup();
  }
});

Deno.test("system model: countTokens uses the plugin, falls back to an estimate when unsupported", async () => {
  const { model } = scripted({
    countTokens: [{ result: { tokens: 42 } }, { error: { code: "unsupported", message: "no" } }],
  });
  try {
    await model.availability(); // features.tokenCount = true
    assert.equal(await model.countTokens!(request()), 42);
    const estimate = await model.countTokens!(request());
    assert.equal(estimate, Math.ceil(("You are a castle guard.".length + "Open the gate.".length) / 3));
    // Remembered: no further plugin round trip.
    assert.equal(await model.countTokens!(request()), estimate);
  } finally {
    await cleanup();
  }
});

Deno.test("system model: many models share one handle; concurrent steps all succeed", async () => {
  const models: LanguageModel[] = Array.from({ length: 8 }, (_, i) =>
    createSystemModel({
      libraryPath: PATH,
      decorateRequest: (body) => {
        body["x-double"] = body.op === "availability"
          ? { result: AVAILABLE }
          : { delayMs: i % 3, result: { kind: "text", text: `m${i}` } };
      },
    }));
  try {
    const results = await Promise.all(models.map((m) => m.step(request())));
    assert.deepEqual(results.map((r) => (r as { text: string }).text), models.map((_, i) => `m${i}`));
  } finally {
    await cleanup();
  }
});

Deno.test("system model: closeSystemModels cancels a running step; the model reopens afterwards", async () => {
  const { model, submitted } = scripted({
    step: [{ hang: true }, { result: { kind: "text", text: "again" } }],
  });
  try {
    const running = model.step(request());
    await submitted("step");
    closeSystemModels();
    await assert.rejects(running, isBridge("cancelled"));
    await systemModelsIdle();
    assert.deepEqual(await model.step(request()), { kind: "text", text: "again", usage: null });
  } finally {
    await cleanup();
  }
});

Deno.test("system model: a throwing onText fails the step with that error (mapped)", async () => {
  const { model } = scripted({ step: [{ events: [{ type: "text", text: "x" }], hang: true }] });
  try {
    await assert.rejects(
      model.step(request({
        onText: () => {
          throw BridgeError.of("invalid_request", "listener says no");
        },
      })),
      isBridge("invalid_request", (e) => assert.equal(e.message, "listener says no")),
    );
  } finally {
    await cleanup();
  }
});
