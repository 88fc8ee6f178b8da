/**
 * Raw HTTP: who may call the server and where — the API key (401 before any model work), CORS preflight and
 * origins, the Host check of a loopback listener, routes and methods, and the model and health endpoints.
 */
import assert from "node:assert/strict";
import { UnavailableModel } from "../../src/models/unavailable.ts";
import { OpenAIServer } from "../../src/serve/openai_server.ts";
import { ask, postChat, rawHttp, RecordingModel, script, serve } from "./serve_fixture.ts";

Deno.test("auth: a missing or wrong key is 401 with WWW-Authenticate and no model work; health stays open", async () => {
  const model = new RecordingModel(script({ text: "Welcome." }));
  await using s = await serve(model, { apiKey: "s3cret" });
  const missing = await postChat(s.base, { messages: ask("x") });
  assert.equal(missing.status, 401);
  assert.equal(missing.headers.get("www-authenticate"), "Bearer");
  assert.deepEqual(await missing.json(), {
    error: {
      message: "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'.",
      type: "invalid_request_error",
      param: null,
      code: "invalid_api_key",
    },
  });
  for (const header of ["Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "s3cret"]) {
    const wrong = await postChat(s.base, { messages: ask("x") }, { authorization: header });
    assert.equal(wrong.status, 401, header);
    await wrong.body?.cancel();
  }
  const models = await fetch(`${s.base}/v1/models`);
  assert.equal(models.status, 401);
  await models.body?.cancel();
  assert.equal(model.steps.length, 0);
  const health = await fetch(`${s.base}/health`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
  const ok = await postChat(s.base, { messages: ask("x") }, { authorization: "bearer  s3cret " });
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).choices[0].message.content, "Welcome.");
  assert.equal(model.steps.length, 1);
});

Deno.test("CORS: preflight of an allowed origin is 204 with the allow headers; other origins get 403", async () => {
  await using s = await serve(script({ text: "Hi." }), { allowedOrigins: ["http://game.local:8080"] });
  const preflight = await fetch(`${s.base}/v1/chat/completions`, {
    method: "OPTIONS",
    headers: {
      origin: "http://game.local:8080",
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type, authorization",
    },
  });
  assert.equal(preflight.status, 204);
  assert.equal(await preflight.text(), "");
  assert.deepEqual(Object.fromEntries(preflight.headers), {
    "access-control-allow-headers": "content-type, authorization",
    "access-control-allow-methods": "GET, POST, OPTIONS",
    "access-control-allow-origin": "http://game.local:8080",
    "access-control-expose-headers": "Retry-After, x-should-retry",
    "access-control-max-age": "600",
    allow: "GET, POST, OPTIONS",
    date: preflight.headers.get("date")!,
    "x-content-type-options": "nosniff",
    vary: "Origin",
  });
  const post = await postChat(s.base, { messages: ask("x") }, { origin: "http://game.local:8080" });
  assert.equal(post.headers.get("access-control-allow-origin"), "http://game.local:8080");
  assert.equal(post.headers.get("vary"), "Origin");
  await post.body?.cancel();
  const evil = await fetch(`${s.base}/v1/chat/completions`, {
    method: "OPTIONS",
    headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
  });
  assert.equal(evil.status, 403);
  assert.equal(evil.headers.get("access-control-allow-origin"), null);
  assert.equal((await evil.json()).error.code, "origin_not_allowed");
  const evilPost = await postChat(s.base, { messages: ask("x") }, { origin: "http://evil.example" });
  assert.equal(evilPost.status, 403);
  await evilPost.body?.cancel();
});

Deno.test("CORS: '*' allows any origin and answers with '*'", async () => {
  await using s = await serve(script({ text: "Hi." }), { allowedOrigins: ["*"] });
  const post = await postChat(s.base, { messages: ask("x") }, { origin: "http://anywhere.example" });
  assert.equal(post.status, 200);
  assert.equal(post.headers.get("access-control-allow-origin"), "*");
  await post.body?.cancel();
});

Deno.test("CORS: a page can read the headers that tell its SDK whether to retry (x-should-retry, Retry-After)", async () => {
  // A browser hides every response header not listed in Access-Control-Expose-Headers (except a few such as
  // Content-Type). Before, x-should-retry was hidden: openai's SDK in a page retried a model that cannot
  // become available twice, with back-off, instead of failing at once as it does outside a browser.
  const origin = "http://game.local:8080";
  await using down = await serve(new UnavailableModel("device_not_eligible"), { allowedOrigins: [origin] });
  const refused = await postChat(down.base, { messages: ask("x") }, { origin });
  await refused.body?.cancel();
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("x-should-retry"), "false");
  const exposed = (refused.headers.get("access-control-expose-headers") ?? "").toLowerCase().split(/\s*,\s*/);
  assert.ok(exposed.includes("x-should-retry"), `exposed: ${exposed.join(", ")}`);
  assert.ok(exposed.includes("retry-after"), `exposed: ${exposed.join(", ")}`);
});

Deno.test("Host check: a loopback listener serves only loopback names (DNS rebinding) unless allowed", async () => {
  await using s = await serve(script({ text: "Hi." }, { text: "Hi." }, { text: "Hi." }));
  const port = s.server.port!;
  const body = JSON.stringify({ messages: ask("x") });
  const post = (host: string) =>
    rawHttp(
      port,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json`,
      body,
    );
  const rebinding = await post("attacker.example");
  assert.equal(rebinding.status, 421);
  assert.equal(JSON.parse(rebinding.body).error.code, "invalid_host");
  for (const host of ["localhost:1976", "127.0.0.1", "[::1]:80"]) {
    assert.equal((await post(host)).status, 200, host);
  }
  await using named = await serve(script({ text: "Hi." }), { allowedHosts: ["game.lan"] });
  const allowed = await rawHttp(
    named.server.port!,
    "POST /v1/chat/completions HTTP/1.1\r\nHost: game.lan:1976\r\nContent-Type: application/json",
    body,
  );
  assert.equal(allowed.status, 200);
});

Deno.test("routes: 404 unknown_url, 405 with Allow, 415 for a non-JSON body", async () => {
  await using s = await serve(script({ text: "Hi." }));
  const unknown = await fetch(`${s.base}/v2/nothing`);
  assert.deepEqual([unknown.status, (await unknown.json()).error.code], [404, "unknown_url"]);
  const wrongMethod = await fetch(`${s.base}/v1/chat/completions`);
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.get("allow"), "POST");
  assert.equal((await wrongMethod.json()).error.code, "method_not_allowed");
  const text = await postChat(s.base, JSON.stringify({ messages: ask("x") }), {
    "content-type": "text/plain",
  });
  const refused = (await text.json()).error;
  assert.deepEqual([text.status, refused.code], [415, "unsupported_media_type"]);
  // curl -d sends application/x-www-form-urlencoded unless told otherwise: the message names the header to send.
  assert.equal(
    refused.message,
    "Content-Type must be application/json: send the header 'Content-Type: application/json' " +
      "(curl: -H 'Content-Type: application/json').",
  );
  // The path alias without /v1 and a trailing slash work too.
  const alias = await fetch(`${s.base}/chat/completions/`, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8" },
    body: JSON.stringify({ messages: ask("x") }),
  });
  assert.equal((await alias.json()).choices[0].message.content, "Hi.");
});

Deno.test("models: the list with aliases, one model, an unknown one; an alias answers as itself", async () => {
  await using s = await serve(script({ text: "Hi." }), {
    modelAliases: new Map([["gpt-4o-mini", "system"]]),
  });
  const list = await (await fetch(`${s.base}/v1/models`)).json();
  const created = list.data[0].created;
  assert.equal(typeof created, "number");
  assert.deepEqual(list, {
    object: "list",
    data: [
      { id: "system", object: "model", created, owned_by: "open-apple-models" },
      { id: "gpt-4o-mini", object: "model", created, owned_by: "open-apple-models", parent: "system" },
    ],
  });
  assert.deepEqual(await (await fetch(`${s.base}/v1/models/gpt-4o-mini`)).json(), list.data[1]);
  const unknown = await fetch(`${s.base}/v1/models/gpt-9`);
  assert.deepEqual([unknown.status, (await unknown.json()).error.code], [404, "model_not_found"]);
  const head = await fetch(`${s.base}/v1/models`, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), "");
  const aliased = await postChat(s.base, { model: "gpt-4o-mini", messages: ask("x") });
  assert.equal((await aliased.json()).model, "gpt-4o-mini");
});

Deno.test("health: ok with counts, or 503 with the unavailable model's reason", async () => {
  await using s = await serve(script({ text: "Hi." }));
  const ok = await fetch(`${s.base}/health`);
  assert.deepEqual([ok.status, await ok.json()], [200, {
    status: "ok",
    default_model: "system",
    models: { system: "available" },
    active_requests: 0,
    queued_requests: 0,
    rpc_connections: 0,
  }]);
  await using down = await serve(new UnavailableModel("model_not_ready"));
  const unavailable = await fetch(`${down.base}/healthz`);
  assert.deepEqual([unavailable.status, await unavailable.json()], [503, {
    status: "unavailable",
    default_model: "system",
    models: { system: "unavailable: model_not_ready" },
    active_requests: 0,
    queued_requests: 0,
    rpc_connections: 0,
    reason: "model_not_ready",
  }]);
});

Deno.test("handle() serves a request without sockets (embedding), with no Host check and no WebSocket", async () => {
  const server = new OpenAIServer({ models: new Map([["system", script({ text: "In process." })]]) });
  const response = await server.handle(
    new Request("http://anything.example/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: ask("x") }),
    }),
  );
  assert.equal((await response.json()).choices[0].message.content, "In process.");
  const rpc = await server.handle(new Request("http://localhost/rpc", { headers: { upgrade: "websocket" } }));
  assert.deepEqual([rpc.status, (await rpc.json()).error.code], [400, "upgrade_required"]);
  assert.throws(() => new OpenAIServer({}), /Configure at least one model\./);
});

Deno.test("a refusal the browser page cannot read is logged with its reason: a WebSocket or a disallowed origin", async () => {
  const logged: string[] = [];
  const note = (level: string) => (message: string) => logged.push(`${level}: ${message}`);
  await using s = await serve(script({ text: "Hi." }), {
    allowedOrigins: ["http://127.0.0.1:5173"],
    apiKey: "k",
    rpc: { engine: {}, maxConnections: 4, maxMessageBytes: 1 << 20 },
    logger: { debug: note("debug"), info: note("info"), warning: note("warning"), error: note("error") },
  });
  const port = s.server.port;
  // What a page on http://localhost:5173 does: the browser only says "Unexpected response code: 403".
  await new Promise<CloseEvent>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/rpc?api_key=k`, {
      headers: { origin: "http://localhost:5173" },
    });
    ws.addEventListener("close", resolve);
    ws.addEventListener("error", () => {});
  });
  // A WebSocket with a wrong key: the page cannot read the 401 body either.
  await new Promise<CloseEvent>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/rpc?api_key=nope`);
    ws.addEventListener("close", resolve);
    ws.addEventListener("error", () => {});
  });
  // A WebSocket without a key: the log says how a WebSocket sends one (a page cannot set headers).
  await new Promise<CloseEvent>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/rpc`);
    ws.addEventListener("close", resolve);
    ws.addEventListener("error", () => {});
  });
  // fetch from a disallowed origin: no CORS grant, so the page cannot read the 403 body.
  const fetched = await fetch(`${s.base}/v1/models`, {
    headers: { origin: "http://localhost:5173", authorization: "Bearer k" },
  });
  assert.equal(fetched.status, 403);
  await fetched.body?.cancel();
  // An ordinary refusal the caller reads itself stays a plain access line.
  const plain = await fetch(`${s.base}/v1/models`);
  assert.equal(plain.status, 401);
  await plain.body?.cancel();
  const lines = logged.map((line) => line.replace(/ \d+ms/, ""));
  assert.deepEqual(lines, [
    "warning: GET /rpc → 403 origin_not_allowed: Requests from origin 'http://localhost:5173' are not allowed. Start the server with --allow-origin http://localhost:5173 to permit browser access.",
    "warning: GET /rpc → 401 invalid_api_key: Incorrect API key provided: send the key the server was started with (its " +
    "--api-key or OAM_API_KEY).",
    "warning: GET /rpc → 401 invalid_api_key: You didn't provide an API key. Send it in the URL as ?api_key=<key> (the typed " +
    "client's WebSocketTransport option apiKey) or as 'Authorization: Bearer <key>'.",
    "warning: GET /v1/models → 403 origin_not_allowed: Requests from origin 'http://localhost:5173' are not allowed. Start the server with --allow-origin http://localhost:5173 to permit browser access.",
    "info: GET /v1/models → 401 invalid_api_key",
  ]);
});
