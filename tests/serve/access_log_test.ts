/**
 * The server's log as the developer of a client reads it: an error answer names its code and the field at
 * fault, a client that gives up is not logged as a server failure, and a stream that ends badly after its
 * 200 says how it ended.
 */
import assert from "node:assert/strict";
import { BridgeError } from "../../src/protocol/errors.ts";
import {
  ask,
  FailsMidwayModel,
  HoldingModel,
  idle,
  postChat,
  recordingLogger,
  script,
  serve,
} from "./serve_fixture.ts";

const withoutMs = (line: string) => line.replace(/ \d+ms/, " _ms");

Deno.test("access log: an error answer's line names its code and the request field at fault", async () => {
  const log = recordingLogger();
  await using s = await serve(script({ text: "Hi." }), { logger: log.logger });
  await (await postChat(s.base, { model: "system", messages: [{ role: "wizard", content: "hi" }] })).body
    ?.cancel();
  await (await postChat(s.base, { model: "gpt-4o-mini", messages: ask("hi") })).body?.cancel();
  await (await fetch(`${s.base}/v1/nope`)).body?.cancel();
  assert.deepEqual(log.lines.map(withoutMs), [
    "info: POST /v1/chat/completions → 400 invalid_value (messages[0].role) _ms",
    "info: POST /v1/chat/completions → 404 model_not_found (model) _ms",
    "info: GET /v1/nope → 404 unknown_url _ms",
  ]);
});

Deno.test("access log: a client that closes the connection before its answer is an info line saying so, not a warning of a 500", async () => {
  const log = recordingLogger();
  const model = new HoldingModel();
  await using s = await serve(model, { logger: log.logger });
  const gone = new AbortController();
  const request = postChat(s.base, { model: "system", messages: ask("Tell a long story.") }, {}, gone.signal);
  await model.whenStarted(1);
  gone.abort();
  await request.catch(() => {});
  const line = await log.seen(/POST \/v1\/chat\/completions/);
  await idle(s.server);
  assert.equal(
    withoutMs(line),
    "info: POST /v1/chat/completions → no answer: the client closed the connection; its generation was " +
      "cancelled _ms",
  );
  assert.deepEqual(log.lines.filter((l) => /^(warning|error): /.test(l)), []);
});

Deno.test("access log: a stream that fails after its 200 logs a warning with the error the client got", async () => {
  const log = recordingLogger();
  const lost = new FailsMidwayModel(
    "The road north",
    BridgeError.of("model_unavailable", "The model stopped."),
  );
  await using s = await serve(lost, { logger: log.logger });
  const response = await postChat(s.base, { model: "system", messages: ask("Which way?"), stream: true });
  await response.text();
  const line = await log.seen(/^warning: /);
  assert.equal(
    withoutMs(line),
    "warning: POST /v1/chat/completions: the stream ended with an error after _ms: 503 model_unavailable: " +
      "The model stopped.",
  );
});

Deno.test("access log: a stream the client cancels mid-way is an info line saying so", async () => {
  const log = recordingLogger();
  const model = new HoldingModel();
  await using s = await serve(model, { logger: log.logger });
  const response = await postChat(s.base, {
    model: "system",
    messages: ask("Tell a long story."),
    stream: true,
  });
  const reader = response.body!.getReader();
  await reader.read();
  await reader.cancel();
  await model.whenAborted(1);
  const cut = await log.seen(/closed the connection/);
  await idle(s.server);
  // The access line went out with the 200; the line of the stream's end follows it.
  const access = log.lines.indexOf(log.lines.find((l) => l.startsWith("info: POST"))!);
  assert.equal(withoutMs(log.lines[access]), "info: POST /v1/chat/completions → 200 (stream) _ms");
  assert.ok(log.lines.indexOf(cut) > access);
  assert.equal(
    withoutMs(cut),
    "info: POST /v1/chat/completions: the client closed the connection after _ms of the stream; its " +
      "generation was cancelled.",
  );
  assert.deepEqual(log.lines.filter((l) => /^(warning|error): /.test(l)), []);
});
