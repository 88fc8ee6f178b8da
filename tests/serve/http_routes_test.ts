/**
 * The routing table as a client meets it: every path with its aliases and trailing slashes, HEAD, 405 with
 * `Allow` for every other method, the 404 that lists what is served, the order of the screening (route and
 * method before the API key, the key before the content type, preflight without a key), the Host check of a
 * listener that is not on loopback, and a server that is stopping.
 */
import assert from "node:assert/strict";
import { UnavailableModel } from "../../src/models/unavailable.ts";
import { OpenAIServer } from "../../src/serve/openai_server.ts";
import { ask, rawHttp, script, serve } from "./serve_fixture.ts";

/** The status of a request whose body does not matter. */
async function statusOf(url: string, init: RequestInit = {}): Promise<number> {
  const response = await fetch(url, init);
  await response.body?.cancel();
  return response.status;
}

Deno.test("routes: every path with its aliases, trailing slashes and HEAD", async () => {
  await using s = await serve(script({ text: "Hi." }), { modelAliases: new Map([["meta/llama", "system"]]) });
  const json = async (path: string) => {
    const response = await fetch(`${s.base}${path}`);
    assert.equal(response.status, 200, path);
    return await response.json();
  };
  for (const path of ["/health", "/healthz", "/v1/health", "/health//"]) {
    assert.equal((await json(path)).status, "ok", path);
  }
  const head = await fetch(`${s.base}/health`, { method: "HEAD" });
  assert.deepEqual([head.status, await head.text()], [200, ""]);
  for (const path of ["/models", "/v1/models/"]) {
    assert.deepEqual(
      (await json(path)).data.map((m: { id: string }) => m.id),
      ["system", "meta/llama"],
      path,
    );
  }
  for (const path of ["/models/system", "/v1/models/system/"]) assert.equal((await json(path)).id, "system");
  // A model id may hold a slash, as such or percent-encoded.
  for (const path of ["/v1/models/meta/llama", "/models/meta%2Fllama"]) {
    const model = await json(path);
    assert.deepEqual([model.id, model.parent], ["meta/llama", "system"], path);
  }
});

Deno.test("a model id that is not valid percent-encoding is an unknown model (404), not a server failure", async () => {
  const logged: string[] = [];
  const note = (level: string) => (message: string) => logged.push(`${level}: ${message}`);
  await using s = await serve(script({ text: "Hi." }), {
    logger: { debug: note("debug"), info: note("info"), warning: note("warning"), error: note("error") },
  });
  const response = await fetch(`${s.base}/v1/models/%E0%A4%A`);
  assert.deepEqual([response.status, await response.json()], [404, {
    error: {
      message: "The model '%E0%A4%A' does not exist. Available models: system.",
      type: "invalid_request_error",
      param: "model",
      code: "model_not_found",
    },
  }]);
  assert.deepEqual(logged.filter((line) => !line.startsWith("info: ")), []);
  // The server goes on serving.
  const models = await fetch(`${s.base}/v1/models`);
  assert.equal(models.status, 200);
  assert.equal((await models.json()).object, "list");
});

Deno.test("routes: any other method is 405 with Allow and the method, path and allowed method named", async () => {
  await using s = await serve(script({ text: "Hi." }));
  const cases: Array<[string, string, string, string]> = [
    ["POST", "/health", "/health", "GET, HEAD"],
    ["DELETE", "/v1/models", "/v1/models", "GET, HEAD"],
    ["PUT", "/models/system/", "/models/system", "GET, HEAD"],
    ["GET", "/chat/completions", "/chat/completions", "POST"],
    ["PATCH", "/v1/chat/completions", "/v1/chat/completions", "POST"],
    ["POST", "/rpc", "/rpc", "GET"],
  ];
  for (const [method, path, shown, allow] of cases) {
    const response = await fetch(`${s.base}${path}`, { method });
    assert.deepEqual([response.status, response.headers.get("allow"), await response.json()], [405, allow, {
      error: {
        message: `Method ${method} is not allowed for ${shown}; use ${allow}.`,
        type: "invalid_request_error",
        param: null,
        code: "method_not_allowed",
      },
    }], `${method} ${path}`);
  }
});

Deno.test("routes: an unknown URL is 404 naming what is served, /rpc only when it is", async () => {
  const unknown = (rpc: string) => ({
    error: {
      message:
        `Unknown request URL: GET /v2/nothing. Supported: POST /v1/chat/completions, GET /v1/models, GET /health${rpc}.`,
      type: "invalid_request_error",
      param: null,
      code: "unknown_url",
    },
  });
  await using s = await serve(script({ text: "Hi." }));
  const withRpc = await fetch(`${s.base}/v2/nothing/`);
  assert.deepEqual([withRpc.status, await withRpc.json()], [404, unknown(", GET /rpc (WebSocket)")]);
  await using bare = await serve(script({ text: "Hi." }), { rpc: null });
  const withoutRpc = await fetch(`${bare.base}/v2/nothing`);
  assert.deepEqual([withoutRpc.status, await withoutRpc.json()], [404, unknown("")]);
});

Deno.test("screening order: route and method before the API key, the key before the content type", async () => {
  await using s = await serve(script({ text: "Hi." }), { apiKey: "k" });
  const key = { authorization: "Bearer k" };
  assert.equal(await statusOf(`${s.base}/nowhere`), 404);
  assert.equal(await statusOf(`${s.base}/v1/chat/completions`), 405);
  assert.equal(await statusOf(`${s.base}/v1/models`, { method: "POST" }), 405);
  assert.equal(await statusOf(`${s.base}/v1/models/system`, { method: "POST" }), 405);
  const plain = { method: "POST", headers: { "content-type": "text/plain" }, body: "hello" };
  const noKey = await fetch(`${s.base}/v1/chat/completions`, plain);
  assert.deepEqual([noKey.status, noKey.headers.get("www-authenticate"), (await noKey.json()).error.code], [
    401,
    "Bearer",
    "invalid_api_key",
  ]);
  const withKey = { ...plain, headers: { ...plain.headers, ...key } };
  assert.equal(await statusOf(`${s.base}/v1/chat/completions`, withKey), 415);
  // One model is behind the key like the list.
  const model = await fetch(`${s.base}/v1/models/system`);
  assert.deepEqual([model.status, model.headers.get("www-authenticate"), (await model.json()).error.code], [
    401,
    "Bearer",
    "invalid_api_key",
  ]);
  assert.equal(await statusOf(`${s.base}/v1/models/system`, { headers: key }), 200);
});

Deno.test("preflight: answered before the API key and the route; CORS headers only for an Origin", async () => {
  await using s = await serve(script({ text: "Hi." }), {
    apiKey: "k",
    allowedOrigins: ["http://game.local"],
  });
  const bare = await fetch(`${s.base}/v1/chat/completions`, { method: "OPTIONS" });
  assert.equal(bare.status, 204);
  assert.deepEqual(Object.fromEntries(bare.headers), {
    allow: "GET, POST, OPTIONS",
    date: bare.headers.get("date")!,
    "x-content-type-options": "nosniff",
  });
  const browser = await fetch(`${s.base}/anything/at/all`, {
    method: "OPTIONS",
    headers: { origin: "http://game.local", "access-control-request-method": "POST" },
  });
  assert.equal(browser.status, 204);
  assert.deepEqual(Object.fromEntries(browser.headers), {
    "access-control-allow-headers": "Authorization, Content-Type",
    "access-control-allow-methods": "GET, POST, OPTIONS",
    "access-control-allow-origin": "http://game.local",
    "access-control-expose-headers": "Retry-After, x-should-retry",
    "access-control-max-age": "600",
    allow: "GET, POST, OPTIONS",
    date: browser.headers.get("date")!,
    "x-content-type-options": "nosniff",
    vary: "Origin",
  });
});

Deno.test("Host check: a listener off loopback checks the Host only against the allowed hosts", async () => {
  const get = (port: number, host: string) =>
    rawHttp(port, `GET /v1/models HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer k`);
  await using open = await serve(script({ text: "Hi." }), { host: "0.0.0.0", apiKey: "k" });
  assert.equal((await get(open.server.port!, "attacker.example")).status, 200);
  await using named = await serve(script({ text: "Hi." }), {
    host: "0.0.0.0",
    apiKey: "k",
    allowedHosts: ["game.lan"],
  });
  const port = named.server.port!;
  const refused = await get(port, "attacker.example");
  assert.deepEqual([refused.status, JSON.parse(refused.body).error.code], [421, "invalid_host"]);
  assert.equal((await get(port, "game.lan:1976")).status, 200);
  assert.equal((await get(port, "localhost")).status, 200);
});

Deno.test("a stopping server refuses new completions and bridge connections with 500 server_shutting_down", async () => {
  const server = new OpenAIServer({ models: new Map([["system", script({ text: "Hi." })]]) });
  await server.stop();
  const shuttingDown = {
    error: {
      message: "The server is shutting down.",
      type: "server_error",
      param: null,
      code: "server_shutting_down",
    },
  };
  const chat = await server.handle(
    new Request("http://localhost/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: ask("x") }),
    }),
  );
  assert.deepEqual([chat.status, await chat.json()], [500, shuttingDown]);
  assert.equal(chat.headers.get("x-should-retry"), "false");
  const rpc = await server.handle(new Request("http://localhost/rpc", { headers: { upgrade: "websocket" } }));
  assert.deepEqual([rpc.status, await rpc.json()], [500, shuttingDown]);
});

Deno.test("health: 503 'stopping' from the moment the server begins to stop, so a load balancer stops routing", async () => {
  const server = new OpenAIServer({ models: new Map([["system", script({ text: "Hi." })]]) });
  const healthy = await server.handle(new Request("http://localhost/health"));
  assert.deepEqual([healthy.status, (await healthy.json()).status], [200, "ok"]);
  const stopped = server.stop();
  for (const path of ["/health", "/healthz", "/v1/health"]) {
    const stopping = await server.handle(new Request(`http://localhost${path}`));
    assert.deepEqual([stopping.status, await stopping.json()], [503, {
      status: "stopping",
      default_model: "system",
      models: { system: "available" },
      active_requests: 0,
      queued_requests: 0,
      rpc_connections: 0,
      reason: "server_shutting_down",
    }], path);
  }
  await stopped;
  const head = await server.handle(new Request("http://localhost/health", { method: "HEAD" }));
  assert.equal(head.status, 503);
  await head.body?.cancel();
});

Deno.test("health: its 503 answers are logged at info (a load balancer probing every second fills no log with warnings); other 5xx stay warnings", async () => {
  const logged: string[] = [];
  const note = (level: string) => (message: string) =>
    logged.push(`${level}: ${message.replace(/ \d+ms$/, "")}`);
  const logger = { debug: note("debug"), info: note("info"), warning: note("warning"), error: note("error") };
  const chat = () =>
    new Request("http://localhost/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: ask("x") }),
    });
  const server = new OpenAIServer({ models: new Map([["system", script({ text: "Hi." })]]), logger });
  const stopped = server.stop();
  for (const path of ["/health", "/healthz/", "/v1/health"]) {
    await (await server.handle(new Request(`http://localhost${path}`))).body?.cancel();
  }
  await stopped;
  await (await server.handle(new Request("http://localhost/health", { method: "HEAD" }))).body?.cancel();
  await (await server.handle(chat())).body?.cancel();
  // A model that cannot run: /health says so (503 'unavailable') at info, every completion refused is a warning.
  const down = new OpenAIServer({
    models: new Map([["system", new UnavailableModel("model_not_ready")]]),
    logger,
  });
  const unavailable = await down.handle(new Request("http://localhost/health"));
  assert.equal((await unavailable.json()).status, "unavailable");
  await (await down.handle(chat())).body?.cancel();
  assert.deepEqual(logged, [
    "info: GET /health → 503",
    "info: GET /healthz/ → 503",
    "info: GET /v1/health → 503",
    "info: HEAD /health → 503",
    "warning: POST /v1/chat/completions → 500 server_shutting_down",
    "info: GET /health → 503",
    "warning: POST /v1/chat/completions → 503 model_unavailable",
  ]);
});
