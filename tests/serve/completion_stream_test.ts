/**
 * The branches of a streamed completion a client meets over HTTP: a refusal and an empty answer as events,
 * failures before the first event (their own status and a JSON body, never an event stream), a model failure
 * after the first event (an error event, then `[DONE]`, no usage chunk), and a client that goes away before
 * the first event (the turn is cancelled and its slot freed).
 */
import assert from "node:assert/strict";
import type { ModelAvailability } from "../../src/models/language_model.ts";
import { UnavailableModel } from "../../src/models/unavailable.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import {
  ask,
  FailsMidwayModel,
  HoldingModel,
  idle,
  postChat,
  script,
  serve,
  sseData,
  within,
} from "./serve_fixture.ts";

const STREAM = { messages: ask("x"), stream: true, stream_options: { include_usage: true } };

/** The chunks of a stream ending in `[DONE]`, reduced to each choice's `[delta, finish_reason]`. */
async function deltas(response: Response): Promise<unknown[]> {
  const data = await sseData(response);
  assert.equal(data.at(-1), "[DONE]");
  return data.slice(0, -1).map((d) => {
    const choice = JSON.parse(d).choices[0];
    return choice === undefined ? "usage" : [choice.delta, choice.finish_reason];
  });
}

Deno.test("a streamed refusal is a refusal delta, then finish_reason stop and the usage chunk", async () => {
  await using s = await serve(script({ error: "refusal", message: "I can't help with that." }));
  const response = await postChat(s.base, STREAM);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("x-accel-buffering"), "no");
  assert.deepEqual(await deltas(response), [
    [{ role: "assistant", content: "" }, null],
    [{ refusal: "I can't help with that." }, null],
    [{}, "stop"],
    "usage",
  ]);
});

Deno.test("an empty streamed answer is the role chunk and the finish chunk", async () => {
  await using s = await serve(script({ text: "" }));
  assert.deepEqual(await deltas(await within(postChat(s.base, STREAM), "the stream to begin")), [
    [{ role: "assistant", content: "" }, null],
    [{}, "stop"],
    "usage",
  ]);
});

Deno.test("a stream that fails before its first event is a plain JSON error with its own status", async () => {
  await using s = await serve(script(
    { error: "context_size_exceeded", message: "8443 tokens exceeds the context of 8192." },
    { error: "guardrail_violation", message: "Blocked." },
  ));
  const expect = async (response: Response, status: number, error: unknown) => {
    assert.equal(response.headers.get("content-type"), "application/json");
    assert.deepEqual([response.status, await response.json()], [status, { error }]);
  };
  await expect(await postChat(s.base, STREAM), 400, {
    message: "8443 tokens exceeds the context of 8192.",
    type: "invalid_request_error",
    param: "messages",
    code: "context_length_exceeded",
  });
  await expect(await postChat(s.base, STREAM), 400, {
    message: "The request was blocked by the model's safety guardrails. Blocked.",
    type: "invalid_request_error",
    param: "messages",
    code: "content_filter",
  });
  // The time limit reached while the model has produced nothing yet.
  const silent = new HoldingModel("", "late");
  await using slow = await serve(silent, { requestTimeoutMs: 200 });
  await expect(await postChat(slow.base, STREAM), 504, {
    message: "The request did not finish within 0.2 seconds.",
    type: "server_error",
    param: null,
    code: "timeout",
  });
  await silent.whenAborted(1);
  await using down = await serve(new UnavailableModel("model_not_ready"));
  const unavailable = await postChat(down.base, STREAM);
  assert.equal(unavailable.headers.get("retry-after"), "30");
  assert.equal(unavailable.headers.get("x-should-retry"), null);
  await expect(unavailable, 503, {
    message: "The model 'system' is unavailable: model_not_ready.",
    type: "server_error",
    param: null,
    code: "model_unavailable",
  });
});

Deno.test("a backend that refuses the credentials or the model is a 503 without Retry-After; its own Retry-After is passed on", async () => {
  const cases: Array<[Record<string, string | number>, string | null, string | null]> = [
    [{ reason: "auth" }, null, "false"],
    [{ reason: "not_found" }, null, "false"],
    [{ reason: "unreachable" }, "30", null],
    [{ retryAfterSeconds: 4.2 }, "5", null],
  ];
  for (const [data, retryAfter, shouldRetry] of cases) {
    await using s = await serve(
      new FailsMidwayModel("", BridgeError.of("model_unavailable", "The model server said no.", data)),
    );
    const response = await postChat(s.base, { messages: ask("x") });
    assert.deepEqual(
      [response.status, response.headers.get("retry-after"), response.headers.get("x-should-retry")],
      [503, retryAfter, shouldRetry],
      JSON.stringify(data),
    );
    assert.deepEqual(await response.json(), {
      error: {
        message: "The model server said no.",
        type: "server_error",
        param: null,
        code: "model_unavailable",
      },
    });
  }
});

/**
 * A backend (not the on-device model) whose availability check failed, with the check's `detail` and, as the
 * backend marks it, whether waiting can cure it (tests/models/openai_availability_test.ts and
 * tests/llama/llama_for_good_test.ts check that the real backends mark these cases).
 */
class UnreachableBackend extends UnavailableModel {
  override readonly kind: string = "openai";
  readonly #permanent: boolean;

  constructor(detail: string, permanent: boolean) {
    super("unknown", detail);
    this.#permanent = permanent;
  }

  override availabilityNow(): ModelAvailability {
    return { ...super.availabilityNow(), ...(this.#permanent ? { permanent: true } : {}) };
  }
}

Deno.test("a backend found unavailable at start says why in the 503, and a grant or model id waiting cannot bring is not retried", async () => {
  const noGrant =
    'Cannot reach the model server at http://127.0.0.1:8080/v1/models: Requires net access to "127.0.0.1:8080", run again with the --allow-net flag';
  const cases: Array<[string, string, string | null, string | null]> = [
    [noGrant, `The model 'system' is unavailable: unknown. ${noGrant}.`, null, "false"],
    [
      "The server does not offer model 'wrong' (it lists: local).",
      "The model 'system' is unavailable: unknown. The server does not offer model 'wrong' (it lists: local).",
      null,
      "false",
    ],
    [
      "The model file 'x.gguf' does not exist, and without --allow-env no cached model can be looked up by that name.",
      "The model 'system' is unavailable: unknown. The model file 'x.gguf' does not exist, and without --allow-env " +
      "no cached model can be looked up by that name.",
      null,
      "false",
    ],
    [
      "GET http://127.0.0.1:8080/v1/models answered HTTP 401: Invalid API key",
      "The model 'system' is unavailable: unknown. GET http://127.0.0.1:8080/v1/models answered HTTP 401: " +
      "Invalid API key.",
      null,
      "false",
    ],
    [
      "Cannot reach the model server at http://127.0.0.1:8080/v1/models: fetch failed: Connection refused",
      "The model 'system' is unavailable: unknown. Cannot reach the model server at " +
      "http://127.0.0.1:8080/v1/models: fetch failed: Connection refused.",
      "30",
      null,
    ],
  ];
  for (const [detail, message, retryAfter, shouldRetry] of cases) {
    // The cases without a Retry-After are those the backend's check marks as waiting cannot cure.
    await using s = await serve(new UnreachableBackend(detail, retryAfter === null));
    const response = await postChat(s.base, { messages: ask("x") });
    assert.deepEqual(
      [response.status, response.headers.get("retry-after"), response.headers.get("x-should-retry")],
      [503, retryAfter, shouldRetry],
      detail,
    );
    assert.deepEqual(await response.json(), {
      error: { message, type: "server_error", param: null, code: "model_unavailable" },
    });
  }
});

/** A backend whose check found it unavailable for good, in words no rule knows. */
class RefusedForGood extends UnavailableModel {
  override readonly kind: string = "openai";
  override availabilityNow(): ModelAvailability {
    return { ...super.availabilityNow(), permanent: true };
  }
}

Deno.test("a backend whose check says waiting cannot help is not retried, whatever its detail's words", async () => {
  // The check's result says so (`permanent`); the 503 reads that, not the detail's text.
  await using s = await serve(new RefusedForGood("unknown", "The licence server turned this machine away"));
  const response = await postChat(s.base, { messages: ask("x") });
  assert.deepEqual(
    [response.status, response.headers.get("retry-after"), response.headers.get("x-should-retry")],
    [503, null, "false"],
  );
  assert.deepEqual(await response.json(), {
    error: {
      message: "The model 'system' is unavailable: unknown. The licence server turned this machine away.",
      type: "server_error",
      param: null,
      code: "model_unavailable",
    },
  });
});

Deno.test("a model failure after the first event is an error event, then [DONE], without a usage chunk", async () => {
  await using s = await serve(
    new FailsMidwayModel(
      "The road north",
      BridgeError.of("model_unavailable", "The model stopped responding."),
    ),
  );
  const response = await postChat(s.base, STREAM);
  assert.equal(response.status, 200);
  const data = await sseData(response);
  assert.deepEqual(data.slice(0, 2).map((d) => JSON.parse(d).choices[0].delta), [
    { role: "assistant", content: "" },
    { content: "The road north" },
  ]);
  assert.deepEqual(data.slice(2), [
    JSON.stringify({
      error: {
        message: "The model stopped responding.",
        type: "server_error",
        param: null,
        code: "model_unavailable",
      },
    }),
    "[DONE]",
  ]);
  await idle(s.server);
});

Deno.test("a client that goes away before the first event of a stream cancels the turn and frees the slot", async () => {
  const silent = new HoldingModel("", "late");
  await using s = await serve(silent, { maxConcurrentRequests: 1 });
  const controller = new AbortController();
  const pending = postChat(s.base, STREAM, {}, controller.signal).catch((e) => e);
  await silent.whenStarted(1);
  controller.abort();
  assert.ok((await pending) instanceof Error);
  await silent.whenAborted(1);
  await idle(s.server);
  assert.equal(s.server.activeRequests, 0);
});
