import assert from "node:assert/strict";
import {
  openAIModelSpecWarnings,
  parseOpenAIModelFlag,
  parseOpenAIModelSpec,
} from "../../src/models/openai_config.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

function invalid(spec: JsonObject): string {
  try {
    parseOpenAIModelSpec(spec, "model");
  } catch (error) {
    assert.ok(error instanceof BridgeError);
    assert.equal(error.dataCode, "invalid_params");
    assert.equal(error.code, -32602);
    return error.message;
  }
  assert.fail(`expected ${JSON.stringify(spec)} to be rejected`);
}

Deno.test("openai config: a full spec is parsed and normalised", () => {
  const config = parseOpenAIModelSpec({
    type: "openai",
    baseURL: " http://127.0.0.1:8080/v1/ ",
    model: "qwen2.5",
    apiKey: "sk-1",
    headers: { "X-Org": "games", "api-key": "a" },
    timeoutSeconds: 2.5,
  }, "model");
  assert.deepEqual(config, {
    baseURL: "http://127.0.0.1:8080/v1",
    model: "qwen2.5",
    apiKey: "sk-1",
    headers: { "X-Org": "games", "api-key": "a" },
    timeoutMs: 2500,
  });
});

Deno.test("openai config: minimal spec; null members count as absent", () => {
  assert.deepEqual(
    parseOpenAIModelSpec(
      { type: "openai", baseURL: "https://api.example.com/v1", model: "m", apiKey: null },
      "x",
    ),
    { baseURL: "https://api.example.com/v1", model: "m" },
  );
});

Deno.test("openai config: bad specs name the member", () => {
  assert.equal(invalid({ type: "openai", model: "m" }), "Missing required parameter 'model.baseURL'.");
  assert.equal(
    invalid({ type: "openai", baseURL: 1, model: "m" }),
    "Parameter 'model.baseURL' must be a string; got 1.",
  );
  assert.match(invalid({ baseURL: "ftp://h/v1", model: "m" }), /'model.baseURL' must be an http\(s\) URL/);
  assert.match(
    invalid({ baseURL: "localhost:8080", model: "m" }),
    /'model.baseURL' must be an http\(s\) URL/,
  );
  assert.match(
    invalid({ baseURL: "not a url", model: "m" }),
    /'model.baseURL' must be an absolute http\(s\) URL/,
  );
  assert.match(invalid({ baseURL: "http://u:p@h/v1", model: "m" }), /must not contain credentials/);
  assert.match(invalid({ baseURL: "http://h/v1?x=1", model: "m" }), /query or fragment/);
  assert.equal(invalid({ baseURL: "http://h/v1" }), "Missing required parameter 'model.model'.");
  assert.equal(
    invalid({ baseURL: "http://h/v1", model: "  " }),
    "Parameter 'model.model' must not be empty.",
  );
  assert.equal(
    invalid({ baseURL: "http://h/v1", model: 3 }),
    "Parameter 'model.model' must be a string; got 3.",
  );
  assert.equal(
    invalid({ baseURL: "http://h/v1", model: "m", apiKey: 5 }),
    "Parameter 'model.apiKey' must be a string; got 5.",
  );
  assert.match(
    invalid({ baseURL: "http://h/v1", model: "m", apiKey: "a\r\nX: y" }),
    /'model.apiKey' contains/,
  );
  assert.equal(
    invalid({ baseURL: "http://h/v1", model: "m", headers: ["a"] }),
    "Parameter 'model.headers' must be an object; got [\"a\"].",
  );
  assert.equal(
    invalid({ baseURL: "http://h/v1", model: "m", headers: { "X-A": 1 } }),
    "Parameter 'model.headers.X-A' must be a string; got 1.",
  );
  assert.match(
    invalid({ baseURL: "http://h/v1", model: "m", headers: { "bad name": "v" } }),
    /not a valid HTTP header/,
  );
  assert.match(
    invalid({ baseURL: "http://h/v1", model: "m", headers: { "X-A": "v\nw" } }),
    /'model.headers.X-A'/,
  );
  assert.match(invalid({ baseURL: "http://h/v1", model: "m", timeoutSeconds: -1 }), /from 0 to 86400/);
  assert.match(
    invalid({ baseURL: "http://h/v1", model: "m", timeoutSeconds: "5" }),
    /'model.timeoutSeconds'/,
  );
  assert.match(
    invalid({ type: "scripted", baseURL: "http://h/v1", model: "m" }),
    /'model.type' must be "openai"/,
  );
  const long = invalid({ baseURL: "x".repeat(200), model: "m" });
  assert.ok(long.endsWith('..."') || long.endsWith("....") || long.includes("..."), long);
});

Deno.test("openai config: a __proto__ header stays a plain own key", () => {
  const headers = JSON.parse('{"__proto__": "v", "X-B": "w"}');
  const config = parseOpenAIModelSpec({ baseURL: "http://h/v1", model: "m", headers }, "model");
  assert.ok(config.headers !== undefined);
  assert.equal(Object.hasOwn(config.headers, "__proto__"), true);
  assert.equal(Object.getPrototypeOf(config.headers), Object.prototype);
  assert.deepEqual(Object.keys(config.headers), ["__proto__", "X-B"]);
});

Deno.test("openai config: unknown members are reported as warnings", () => {
  assert.deepEqual(
    openAIModelSpecWarnings(
      { type: "openai", baseURL: "u", model: "m", apikey: "x", temperature: 1 },
      "model",
    ),
    [
      "Unknown parameter 'model.apikey' was ignored (did you mean 'apiKey'?).",
      "Unknown parameter 'model.temperature' was ignored.",
    ],
  );
});

Deno.test("openai config: --model openai:<baseURL>#<model>", () => {
  assert.deepEqual(parseOpenAIModelFlag("openai:http://127.0.0.1:8080/v1#tiny-chat"), {
    baseURL: "http://127.0.0.1:8080/v1",
    model: "tiny-chat",
  });
  assert.deepEqual(parseOpenAIModelFlag("openai:https://api.example.com/v1/#org/model:v2#x"), {
    baseURL: "https://api.example.com/v1",
    model: "org/model:v2#x",
  });
  const bad: [string, RegExp][] = [
    ["system", /expected openai:<baseURL>#<model>/],
    ["openai:http://h/v1", /missing '#<model>'/],
    ["openai:http://h/v1#", /missing model id/],
    ["openai:#m", /missing base URL/],
    ["openai:file:///x#m", /must be an http\(s\) URL/],
  ];
  for (const [flag, pattern] of bad) {
    assert.throws(
      () => parseOpenAIModelFlag(flag),
      (e: unknown) => e instanceof Error && pattern.test(e.message),
    );
  }
});
