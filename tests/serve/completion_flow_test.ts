/**
 * How completions run and end, on the wire: the raw event stream, stop sequences, json_object, refusals,
 * guardrails, token limits, request mapping into the model step, and the lifecycle under pressure — a client
 * that disconnects mid-stream (generation stops, the slot is freed), a full queue (429, never a hang), time
 * limits (504, or an error event once streaming), and a server that stops mid-stream.
 */
import assert from "node:assert/strict";
import type { LanguageModel, StepRequest, StepResult } from "../../src/models/language_model.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import { chatCompletions } from "../../src/serve/chat_endpoint.ts";
import { JSON_OBJECT_INSTRUCTION } from "../../src/serve/completion_plan.ts";
import { ConcurrencyLimiter } from "../../src/serve/limiter.ts";
import { resolveServeConfiguration } from "../../src/serve/server_config.ts";
import {
  ask,
  HoldingModel,
  idle,
  postChat,
  RecordingModel,
  script,
  serve,
  sseData,
} from "./serve_fixture.ts";

// deno-lint-ignore no-explicit-any -- the parsed JSON of a completion
async function completion(base: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await postChat(base, { messages: ask("x"), ...body } as never);
  assert.equal(response.status, 200, await response.clone().text());
  return await response.json();
}

Deno.test("the raw event stream: data lines, one id, usage null until the usage chunk, then [DONE]", async () => {
  await using s = await serve(script({ text: "Hi there", chunks: 2 }));
  const response = await postChat(s.base, {
    messages: ask("x"),
    stream: true,
    stream_options: { include_usage: true },
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/event-stream; charset=utf-8");
  assert.equal(response.headers.get("cache-control"), "no-cache");
  const data = await sseData(response);
  assert.equal(data.at(-1), "[DONE]");
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
  const { id, created } = chunks[0];
  const chunk = (delta: unknown, finish: string | null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: "system",
    system_fingerprint: "fp_open_apple_models",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
  });
  assert.deepEqual(chunks.slice(0, -1), [
    chunk({ role: "assistant", content: "" }, null),
    chunk({ content: "Hi t" }, null),
    chunk({ content: "here" }, null),
    chunk({}, "stop"),
  ]);
  assert.deepEqual(Object.keys(chunks.at(-1)), [
    "id",
    "object",
    "created",
    "model",
    "system_fingerprint",
    "choices",
    "usage",
  ]);
  assert.deepEqual(chunks.at(-1).choices, []);
  // Without include_usage the chunks carry no usage member at all.
  await using plain = await serve(script({ text: "Hi" }));
  const plainData = await sseData(await postChat(plain.base, { messages: ask("x"), stream: true }));
  assert.ok(plainData.slice(0, -1).every((d) => !("usage" in JSON.parse(d))));
});

Deno.test("stop sequences end the answer and never leak, even split across streamed snapshots", async () => {
  await using s = await serve(script({ text: "Open the gate. STOP and wait.", chunks: 10 }, {
    text: "Open the gate. STOP and wait.",
  }));
  const data = await sseData(
    await postChat(s.base, { messages: ask("x"), stream: true, stop: ["STOP", "xyz"] }),
  );
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
  const text = chunks.map((c) => c.choices[0].delta.content ?? "").join("");
  assert.equal(text, "Open the gate. ");
  assert.equal(chunks.at(-1).choices[0].finish_reason, "stop");
  const whole = await completion(s.base, { stop: "STOP" });
  assert.equal(whole.choices[0].message.content, "Open the gate. ");
});

Deno.test("json_object: the instruction is added and the object is taken out of fences; no object is a 500", async () => {
  const model = new RecordingModel(
    script({ text: 'Here:\n```json\n{"gold": 12}\n```' }, { text: "no json here" }),
  );
  await using s = await serve(model, { serverInstructions: "You run a shop." });
  const ok = await completion(s.base, {
    messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "Gold?" }, {
      role: "developer",
      content: "Answer in JSON.",
    }],
    response_format: { type: "json_object" },
  });
  assert.equal(ok.choices[0].message.content, '{"gold": 12}');
  assert.equal(
    model.steps[0].instructions,
    `You run a shop.\n\nBe terse.\n\nAnswer in JSON.\n\n${JSON_OBJECT_INSTRUCTION}`,
  );
  const bad = await postChat(s.base, { messages: ask("x"), response_format: { type: "json_object" } });
  assert.equal(bad.status, 500);
  const error = (await bad.json()).error;
  assert.deepEqual([error.type, error.code], ["server_error", "invalid_json_output"]);
});

Deno.test("a refusal is a 200 with message.refusal; guardrails before any text are 400 content_filter", async () => {
  await using s = await serve(script(
    { error: "refusal", message: "I can't help with that." },
    { error: "guardrail_violation", message: "Blocked." },
    { error: "context_size_exceeded", message: "8443 tokens exceeds the context of 8192." },
  ));
  const refused = await completion(s.base, {});
  assert.deepEqual(refused.choices[0], {
    index: 0,
    message: { role: "assistant", content: null, refusal: "I can't help with that.", annotations: [] },
    logprobs: null,
    finish_reason: "stop",
  });
  const blocked = await postChat(s.base, { messages: ask("x") });
  assert.deepEqual([blocked.status, await blocked.json()], [400, {
    error: {
      message: "The request was blocked by the model's safety guardrails. Blocked.",
      type: "invalid_request_error",
      param: "messages",
      code: "content_filter",
    },
  }]);
  const long = await postChat(s.base, { messages: ask("x") });
  assert.deepEqual([long.status, (await long.json()).error], [400, {
    message: "8443 tokens exceeds the context of 8192.",
    type: "invalid_request_error",
    param: "messages",
    code: "context_length_exceeded",
  }]);
});

/** Streams a first part of an answer, then fails its step with a guardrail violation. */
class BlockedMidway implements LanguageModel {
  readonly kind = "blocked";
  readonly contextSize = 8192;
  readonly trimsHistory = false;
  availability() {
    return Promise.resolve({ available: true, contextSize: 8192, supportedLanguages: [] });
  }
  step(request: StepRequest): Promise<StepResult> {
    request.onText?.("The secret word is");
    return Promise.reject(BridgeError.of("guardrail_violation", "Blocked."));
  }
}

Deno.test("a guardrail block after part of the answer ends it with finish_reason content_filter", async () => {
  await using s = await serve(new BlockedMidway());
  const whole = await completion(s.base, {});
  assert.deepEqual(
    [whole.choices[0].message.content, whole.choices[0].finish_reason],
    ["The secret word is", "content_filter"],
  );
  const data = await sseData(await postChat(s.base, { messages: ask("x"), stream: true }));
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d).choices[0]);
  assert.deepEqual(chunks.map((c) => [c.delta, c.finish_reason]), [
    [{ role: "assistant", content: "" }, null],
    [{ content: "The secret word is" }, null],
    [{}, "content_filter"],
  ]);
});

Deno.test("max_completion_tokens reached is finish_reason length; sampling options reach the model step", async () => {
  const model = new RecordingModel(script(
    { text: "A rather long answer that goes on." },
    { text: "ok" },
    { text: "ok" },
    { text: "ok" },
  ));
  await using s = await serve(model);
  const limited = await completion(s.base, { max_completion_tokens: 3, max_tokens: 100 });
  assert.equal(limited.choices[0].finish_reason, "length");
  assert.deepEqual(model.steps[0].options, { maximumResponseTokens: 3, reportCutOff: true });
  await completion(s.base, { temperature: 0, top_p: 0.5 });
  assert.deepEqual(model.steps[1].options, { sampling: { mode: "greedy" }, reportCutOff: true });
  await completion(s.base, { temperature: 0.7, top_p: 0.9, seed: 42 });
  assert.deepEqual(model.steps[2].options, {
    temperature: 0.7,
    sampling: { mode: "topP", p: 0.9, seed: 42 },
    reportCutOff: true,
  });
  await completion(s.base, { seed: 7 });
  assert.deepEqual(model.steps[3].options, { sampling: { mode: "topP", p: 1, seed: 7 }, reportCutOff: true });
});

Deno.test("client disconnect mid-stream: generation stops and the slot is freed", async () => {
  const holding = new HoldingModel("Once upon", " a time.");
  await using s = await serve(holding, { maxConcurrentRequests: 1, maxQueuedRequests: 0 });
  const controller = new AbortController();
  const response = await postChat(s.base, { messages: ask("x"), stream: true }, {}, controller.signal);
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  let seen = "";
  while (!seen.includes("Once upon")) seen += new TextDecoder().decode((await reader.read()).value);
  assert.equal(s.server.activeRequests, 1);
  controller.abort();
  await reader.cancel().catch(() => {});
  await holding.whenAborted(1);
  await idle(s.server);
  const health = await (await fetch(`${s.base}/health`)).json();
  assert.deepEqual([health.active_requests, health.queued_requests], [0, 0]);
  // The single slot serves the next request.
  const next = postChat(s.base, { messages: ask("x") });
  await holding.whenStarted(2);
  holding.release();
  assert.equal((await (await next).json()).choices[0].message.content, "Once upon a time.");
});

Deno.test("client disconnect while waiting for a whole answer cancels the generation too", async () => {
  const holding = new HoldingModel();
  await using s = await serve(holding);
  const controller = new AbortController();
  const pending = postChat(s.base, { messages: ask("x") }, {}, controller.signal).catch((e) => e);
  await holding.whenStarted(1);
  controller.abort();
  assert.ok((await pending) instanceof Error);
  await holding.whenAborted(1);
  await idle(s.server);
  assert.equal(s.server.activeRequests, 0);
});

Deno.test("under --max-concurrent pressure requests run, queue in order or get 429 at once; none hang", async () => {
  const holding = new HoldingModel("a", "nswer");
  await using s = await serve(holding, { maxConcurrentRequests: 2, maxQueuedRequests: 2 });
  const requests = Array.from({ length: 6 }, () => postChat(s.base, { messages: ask("x") }));
  await holding.whenStarted(2);
  // Two run and two wait; the last two were turned away at once.
  const early = await Promise.all([requests[4], requests[5]]);
  for (const r of early) {
    assert.deepEqual([r.status, r.headers.get("retry-after"), (await r.json()).error.code], [
      429,
      "1",
      "rate_limited",
    ]);
  }
  const health = await (await fetch(`${s.base}/health`)).json();
  assert.deepEqual([health.active_requests, health.queued_requests], [2, 2]);
  for (let n = 1; n <= 4; n++) {
    await holding.whenStarted(Math.min(n + 1, 4));
    holding.release();
  }
  const done = await Promise.all(requests.slice(0, 4));
  for (const r of done) assert.equal((await r.json()).choices[0].message.content, "answer");
  await idle(s.server);
});

const TIMEOUT = {
  message: "The request did not finish within 0.3 seconds.",
  type: "server_error",
  param: null,
  code: "timeout",
};

Deno.test("time limits: 504 while generating, and 504 for a request that waited its whole limit for the slot", async () => {
  // The model keeps going after its turn is cancelled, so the one slot stays taken until `release()`: the
  // second request's limit surely ends while it waits. (Without that, which of the two happened first, the
  // first turn ending or the second request's limit, depended on how busy the machine was.)
  const holding = new HoldingModel("Once upon", " a time.", { holdThroughAbort: true });
  await using s = await serve(holding, { maxConcurrentRequests: 1, requestTimeoutMs: 300 });
  const generating = postChat(s.base, { messages: ask("x") });
  await holding.whenStarted(1);
  const queued = await postChat(s.base, { messages: ask("x") });
  assert.deepEqual([queued.status, (await queued.json()).error], [504, {
    message:
      "The request waited 0.3 seconds for a free slot and did not start: 1 completion runs at a time " +
      "and the time limit includes the wait. Retry later, or start the server with a higher " +
      "--max-concurrent or --timeout.",
    type: "server_error",
    param: null,
    code: "timeout",
  }]);
  await holding.whenAborted(1);
  holding.release();
  const first = await generating;
  assert.deepEqual([first.status, (await first.json()).error], [504, TIMEOUT]);
  assert.equal(holding.started, 1); // the queued request never reached the model
});

Deno.test("time limits: once streaming, a timeout is an error event then [DONE]", async () => {
  const holding = new HoldingModel();
  await using s = await serve(holding, { maxConcurrentRequests: 1, requestTimeoutMs: 300 });
  const streamed = await postChat(s.base, { messages: ask("x"), stream: true });
  assert.equal(streamed.status, 200);
  const data = await sseData(streamed);
  assert.deepEqual(data.slice(-2), [JSON.stringify({ error: TIMEOUT }), "[DONE]"]);
  assert.equal(JSON.parse(data[1]).choices[0].delta.content, "Once upon");
  await holding.whenAborted(1);
});

Deno.test("a request that times out waiting for a slot says it never started, and what to change", async () => {
  // Before, it read "The request did not finish within 0.05 seconds." as if the model had been too slow.
  const config = resolveServeConfiguration({
    models: new Map([["system", script({ text: "never" })]]),
    requestTimeoutMs: 50,
  });
  const limiter = new ConcurrencyLimiter(2, 4);
  for (let i = 0; i < 2; i++) assert.equal(await limiter.acquire(Date.now()), "acquired"); // both slots busy
  const response = await chatCompletions(
    new Request("http://localhost/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: ask("x") }),
    }),
    { config, limiter, runs: new Set(), clientGone: new AbortController().signal },
  );
  assert.deepEqual([response.status, (await response.json()).error], [504, {
    message: "The request waited 0.05 seconds for a free slot and did not start: 2 completions run at a " +
      "time and the time limit includes the wait. Retry later, or start the server with a higher " +
      "--max-concurrent or --timeout.",
    type: "server_error",
    param: null,
    code: "timeout",
  }]);
  assert.equal(limiter.queued, 0);
});

Deno.test("stopping the server mid-stream ends the stream with an error event and cancels generation", async () => {
  const holding = new HoldingModel();
  const s = await serve(holding);
  const response = await postChat(s.base, { messages: ask("x"), stream: true });
  await holding.whenStarted(1);
  const stopped = s.server.stop();
  const data = await sseData(response);
  assert.deepEqual(data.slice(-2), [
    JSON.stringify({
      error: {
        message: "The server is shutting down.",
        type: "server_error",
        param: null,
        code: "server_shutting_down",
      },
    }),
    "[DONE]",
  ]);
  await stopped;
  await holding.whenAborted(1);
  await s.server.stopped;
  const refused = await fetch(`${s.base}/health`).then(() => "served", () => "refused");
  assert.equal(refused, "refused");
});
