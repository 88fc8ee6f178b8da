/**
 * Hostile clients against the server over raw TCP: a body that never ends, a client that goes away in the
 * middle of its body, control characters in headers that end up in the log, a `null` origin.
 */
import assert from "node:assert/strict";
import { STOP_GRACE_MS } from "../../src/serve/openai_server.ts";
import { ask, postChat, recordingLogger, RecordingModel, script, serve, within } from "./serve_fixture.ts";

/** One whole response from `conn` (headers and a `Content-Length` body), or all there is until it closes. */
async function readResponse(conn: Deno.Conn): Promise<string> {
  let text = "";
  const buffer = new Uint8Array(4096);
  for (;;) {
    const end = text.indexOf("\r\n\r\n");
    const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text);
    if (end !== -1 && length && text.length >= end + 4 + Number(length[1])) return text;
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) return text;
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
}

const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

Deno.test("a chunked body that never ends is answered 408 at the request's time limit, with Connection: close", async () => {
  const model = new RecordingModel(script({ text: "never" }));
  const log = recordingLogger();
  await using s = await serve(model, { requestTimeoutMs: 300, logger: log.logger });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: s.server.port! });
  await conn.write(latin1(
    "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
      "Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n",
  ));
  // Before: no answer until the client gave up (the time limit only counted once the body was read).
  const answer = await within(readResponse(conn), "the server to answer");
  conn.close();
  assert.match(answer, /^HTTP\/1\.1 408 /);
  assert.match(answer, /\r\nconnection: close\r\n/i);
  const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
  assert.deepEqual(body, {
    error: {
      message:
        "The request body did not arrive within 0.3 seconds: send it whole, or start the server with a " +
        "larger --timeout (seconds per completion, body included).",
      type: "invalid_request_error",
      param: null,
      code: "request_timeout",
    },
  });
  assert.equal(model.steps.length, 0);
  assert.deepEqual(log.lines.filter((l) => l.startsWith("error")), []);
  // The server goes on serving: the next request is answered.
  const next = await postChat(s.base, { messages: ask("Hello") });
  assert.equal(next.status, 200);
  assert.equal((await next.json()).choices[0].message.content, "never");
});

Deno.test("a client that goes away in the middle of its body is an info line, not an internal error", async () => {
  const log = recordingLogger();
  await using s = await serve(script({ text: "never" }), { logger: log.logger });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: s.server.port! });
  await conn.write(latin1(
    "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
      "Content-Length: 100\r\n\r\n{",
  ));
  conn.close();
  const line = await log.seen(/POST \/v1\/chat\/completions → /);
  // Before: "error: Internal error in '/v1/chat/completions' (a bug; please report it): BadResource…" and a
  // 500 warning, for every client that hangs up.
  assert.match(line, /^info: POST \/v1\/chat\/completions → 400 /);
  assert.deepEqual(log.lines.filter((l) => !l.startsWith("info")), []);
  // The server goes on serving: the next request is answered.
  const next = await postChat(s.base, { messages: ask("Hello") });
  assert.equal(next.status, 200);
  assert.equal((await next.json()).choices[0].message.content, "never");
});

Deno.test("control and bidi characters a client puts in Origin or Host do not reach the log as they are", async () => {
  const log = recordingLogger();
  await using s = await serve(script({ text: "never" }), { logger: log.logger, allowedHosts: ["game.lan"] });
  // obs-text bytes: 0x9B is C1 CSI (a terminal escape), E2 80 AE is U+202E in UTF-8 read as Latin-1.
  for (const header of ["Origin: http://e\x9b31mRED\xe2\x80\xae", "Host: e\x9b31m"]) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: s.server.port! });
    const host = header.startsWith("Host") ? "" : "Host: 127.0.0.1\r\n";
    await conn.write(
      latin1(`GET /rpc HTTP/1.1\r\n${host}${header}\r\nUpgrade: websocket\r\nConnection: close\r\n\r\n`),
    );
    assert.match(await within(readResponse(conn), "the refusal"), /^HTTP\/1\.1 4(03|21) /);
    conn.close();
  }
  await log.seen(/origin 'http:\/\/e/);
  await log.seen(/host 'e/);
  const logged = log.lines.join("\n");
  assert.doesNotMatch(logged, /[\u0080-\u009f\u202e]/);
  assert.match(logged, /http:\/\/e%9B31mRED/);
});

Deno.test("a 'null' origin is refused without advice to allow it (any sandboxed page sends it)", async () => {
  await using s = await serve(script({ text: "never" }));
  const response = await fetch(`${s.base}/v1/models`, { headers: { origin: "null" } });
  const { error } = await response.json();
  assert.equal(response.status, 403);
  assert.doesNotMatch(error.message, /--allow-origin null/);
  assert.match(error.message, /'null'/);
});

Deno.test("stopping the server while a client is in the middle of its body ends cleanly", async () => {
  const log = recordingLogger();
  const s = await serve(script({ text: "never" }), { logger: log.logger });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: s.server.port! });
  await conn.write(latin1(
    "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
      "Content-Length: 100\r\n\r\n{",
  ));
  // Another request answered: the first one's handler is reading its body by now.
  assert.equal((await fetch(`${s.base}/health`)).status, 200);
  const stopped = s.server.stop();
  const answer = await within(readResponse(conn), "the answer to the cut request");
  assert.match(answer, /^HTTP\/1\.1 503 /);
  assert.match(answer, /server_shutting_down/);
  // The client keeps the connection with its body unfinished. Before: after the grace period the forced close
  // threw an uncaught BadResource, which ended the process (`oam serve` exited 1 with a stack on SIGTERM).
  await within(stopped, "the server to stop", 3 * STOP_GRACE_MS);
  conn.close();
});
