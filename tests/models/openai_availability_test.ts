import assert from "node:assert/strict";
import { createOpenAIModel } from "../../src/models/openai_model.ts";
import type { JsonValue } from "../../src/protocol/json.ts";
import { closedPort, json, type MockHandler, MockServer } from "./openai_mock_server.ts";
import { WireClient } from "../helpers/wire.ts";

function llamaModels(id: string, meta: Record<string, JsonValue>): JsonValue {
  return {
    object: "list",
    data: [{ id, object: "model", created: 1, owned_by: "llamacpp", meta }],
    models: [{ name: id, model: id }],
  };
}

async function withServer(handler: MockHandler, run: (server: MockServer) => Promise<void>): Promise<void> {
  const server = new MockServer(handler);
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

Deno.test("openai availability: llama.cpp meta.n_ctx becomes the context size", async () => {
  await withServer(
    () => json(llamaModels("tiny.gguf", { n_ctx: 2048, n_ctx_train: 32768 })),
    async (server) => {
      const model = createOpenAIModel({ baseURL: server.baseURL, model: "tiny.gguf", apiKey: "k" });
      assert.equal(model.contextSize, 4096);
      const availability = await model.availability();
      assert.deepEqual(availability, {
        available: true,
        contextSize: 2048,
        variant: "tiny.gguf",
        supportedLanguages: [],
      });
      assert.equal(model.contextSize, 2048);
      assert.equal(server.requests[0].method, "GET");
      assert.equal(server.requests[0].path, "/v1/models");
      assert.equal(server.requests[0].headers.get("authorization"), "Bearer k");
    },
  );
});

Deno.test("openai availability: llama.cpp without meta.n_ctx asks /props, then n_ctx_train", async () => {
  await withServer(
    (request) =>
      request.path === "/props"
        ? json({ default_generation_settings: { n_ctx: 3000 } })
        : json(llamaModels("m", { n_ctx_train: 32768 })),
    async (server) => {
      const model = createOpenAIModel({ baseURL: server.baseURL, model: "any-name" });
      const availability = await model.availability();
      assert.equal(availability.available, true, "llama.cpp serves its single model under any name");
      assert.equal(availability.contextSize, 3000);
      assert.deepEqual(server.requests.map((r) => r.path), ["/v1/models", "/props"]);
    },
  );
  await withServer(
    (request) => request.path === "/props" ? json({}, 404) : json(llamaModels("m", { n_ctx_train: 32768 })),
    async (server) => {
      const availability = await createOpenAIModel({ baseURL: server.baseURL, model: "m" }).availability();
      assert.equal(availability.contextSize, 32768);
    },
  );
});

Deno.test("openai availability: a model the server does not list is unavailable", async () => {
  await withServer(
    () =>
      json({ object: "list", data: [{ id: "gpt-a", object: "model" }, { id: "gpt-b", object: "model" }] }),
    async (server) => {
      const availability = await createOpenAIModel({ baseURL: server.baseURL, model: "gpt-c" })
        .availability();
      assert.equal(availability.available, false);
      assert.equal(availability.reason, "unknown");
      assert.equal(availability.contextSize, 4096);
      assert.equal(availability.variant, "gpt-c");
      assert.match(availability.detail ?? "", /does not offer model 'gpt-c' \(it lists: gpt-a, gpt-b\)/);
      // No llama.cpp: no /props probe.
      assert.equal(server.requests.length, 1);
    },
  );
});

Deno.test("openai availability: vLLM-style max_model_len is used", async () => {
  await withServer(
    () =>
      json({
        object: "list",
        data: [{ id: "qwen", object: "model", owned_by: "vllm", max_model_len: 16384 }],
      }),
    async (server) => {
      const availability = await createOpenAIModel({ baseURL: server.baseURL, model: "qwen" }).availability();
      assert.equal(availability.available, true);
      assert.equal(availability.contextSize, 16384);
    },
  );
});

Deno.test("openai availability: HTTP errors, bad bodies and unreachable servers are reported", async () => {
  await withServer(() => json({ error: { message: "Invalid API key" } }, 401), async (server) => {
    const availability = await createOpenAIModel({ baseURL: server.baseURL, model: "m" }).availability();
    assert.equal(availability.available, false);
    assert.equal(availability.reason, "unknown");
    assert.match(availability.detail ?? "", /HTTP 401: Invalid API key/);
  });
  await withServer(
    () => new Response("nope", { headers: { "content-type": "text/plain" } }),
    async (server) => {
      const availability = await createOpenAIModel({ baseURL: server.baseURL, model: "m" }).availability();
      assert.equal(availability.available, false);
      assert.match(availability.detail ?? "", /not valid JSON/);
    },
  );
  await withServer(() => json({ models: [] }), async (server) => {
    const availability = await createOpenAIModel({ baseURL: server.baseURL, model: "m" }).availability();
    assert.match(availability.detail ?? "", /did not return a model list/);
  });
  const availability = await createOpenAIModel({ baseURL: `http://127.0.0.1:${closedPort()}/v1`, model: "m" })
    .availability();
  assert.equal(availability.available, false);
  assert.match(availability.detail ?? "", /Cannot reach the model server/);
});

Deno.test("openai availability: refused credentials and a model the server does not offer are permanent, a server down is not", async () => {
  // `permanent` tells `oam serve` not to ask for a retry; it is not sent by model/availability.
  for (const status of [401, 403]) {
    await withServer(() => json({ error: { message: "No." } }, status), async (server) => {
      const availability = await createOpenAIModel({ baseURL: server.baseURL, model: "m" }).availability();
      assert.equal(availability.permanent, true, `HTTP ${status}`);
    });
  }
  await withServer(
    () => json({ object: "list", data: [{ id: "other", object: "model" }] }),
    async (server) => {
      const availability = await createOpenAIModel({ baseURL: server.baseURL, model: "m" }).availability();
      assert.equal(availability.permanent, true);
    },
  );
  await withServer(() => json({ error: { message: "Loading." } }, 503), async (server) => {
    const availability = await createOpenAIModel({ baseURL: server.baseURL, model: "m" }).availability();
    assert.equal(availability.available, false);
    assert.equal(availability.permanent, undefined);
  });
  const down = await createOpenAIModel({ baseURL: `http://127.0.0.1:${closedPort()}/v1`, model: "m" })
    .availability();
  assert.equal(down.available, false);
  assert.equal(down.permanent, undefined);
});

Deno.test("openai availability: model/availability does not send 'permanent' (the protocol has no such field)", async () => {
  await withServer(() => json({ error: { message: "Invalid API key" } }, 401), async (server) => {
    const model = createOpenAIModel({ baseURL: server.baseURL, model: "m" });
    const c = new WireClient({ systemModel: () => model });
    c.request("model/availability", {}, 1);
    const result = (await c.response(1)).result as Record<string, unknown>;
    assert.deepEqual(Object.keys(result), [
      "available",
      "reason",
      "contextSize",
      "variant",
      "supportedLanguages",
      "detail",
    ]);
    await c.close();
  });
});
