/**
 * The `{"type": "openai", …}` model parameter on the wire: every member's validation error as the whole
 * `session/create` response (raw JSON text in, so `__proto__` keys and numbers JSON cannot round-trip through
 * `JSON.stringify` reach the bridge as a client sends them), and what a valid spec turns into.
 */
import assert from "node:assert/strict";
import { parseOpenAIModelSpec } from "../../src/models/openai_config.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { WireClient } from "../helpers/wire.ts";

/** The `session/create` response to a request whose `model` member is the raw JSON text `model`. */
async function createWith(model: string): Promise<JsonObject> {
  const wire = new WireClient();
  try {
    wire.sendLine(
      `{"jsonrpc":"2.0","id":1,"method":"session/create","params":{"session":"s","model":${model}}}`,
    );
    return await wire.response(1);
  } finally {
    await wire.engine.shutdown();
  }
}

function invalidParams(message: string): JsonObject {
  return { jsonrpc: "2.0", id: 1, error: { code: -32602, message, data: { code: "invalid_params" } } };
}

const OK = '"baseURL":"http://h/v1","model":"m"';

/** [model parameter as JSON text, the exact message of the -32602 answer]. */
const REJECTED: [string, string][] = [
  // baseURL
  ['{"type":"openai","model":"m"}', "Missing required parameter 'model.baseURL'."],
  ['{"type":"openai","baseURL":null,"model":"m"}', "Missing required parameter 'model.baseURL'."],
  ['{"type":"openai","baseURL":1,"model":"m"}', "Parameter 'model.baseURL' must be a string; got 1."],
  [
    '{"type":"openai","baseURL":["http://h/v1"],"model":"m"}',
    `Parameter 'model.baseURL' must be a string; got ["http://h/v1"].`,
  ],
  [
    '{"type":"openai","baseURL":"not a url","model":"m"}',
    `Parameter 'model.baseURL' must be an absolute http(s) URL; got "not a url".`,
  ],
  [
    '{"type":"openai","baseURL":"   ","model":"m"}',
    `Parameter 'model.baseURL' must be an absolute http(s) URL; got "   ".`,
  ],
  [
    '{"type":"openai","baseURL":"ftp://h/v1","model":"m"}',
    `Parameter 'model.baseURL' must be an http(s) URL; got "ftp://h/v1".`,
  ],
  [
    '{"type":"openai","baseURL":"localhost:8080/v1","model":"m"}',
    `Parameter 'model.baseURL' must be an http(s) URL; got "localhost:8080/v1".`,
  ],
  [
    '{"type":"openai","baseURL":"http://u:p@h/v1","model":"m"}',
    `Parameter 'model.baseURL' must not contain credentials (use 'apiKey' or 'headers'); got "http://u:p@h/v1".`,
  ],
  [
    '{"type":"openai","baseURL":"http://u@h/v1","model":"m"}',
    `Parameter 'model.baseURL' must not contain credentials (use 'apiKey' or 'headers'); got "http://u@h/v1".`,
  ],
  [
    '{"type":"openai","baseURL":"http://h/v1?x=1","model":"m"}',
    `Parameter 'model.baseURL' must not contain a query or fragment; got "http://h/v1?x=1".`,
  ],
  [
    '{"type":"openai","baseURL":"http://h/v1#f","model":"m"}',
    `Parameter 'model.baseURL' must not contain a query or fragment; got "http://h/v1#f".`,
  ],
  [
    '{"type":"openai","baseURL":"http://h/v1#","model":"m"}',
    `Parameter 'model.baseURL' must not contain a query or fragment; got "http://h/v1#".`,
  ],
  // A long value is shown cut to 77 characters and "...".
  [
    `{"type":"openai","baseURL":"${"x".repeat(200)}","model":"m"}`,
    `Parameter 'model.baseURL' must be an absolute http(s) URL; got "${"x".repeat(76)}....`,
  ],
  // model
  ['{"type":"openai","baseURL":"http://h/v1"}', "Missing required parameter 'model.model'."],
  ['{"type":"openai","baseURL":"http://h/v1","model":null}', "Missing required parameter 'model.model'."],
  ['{"type":"openai","baseURL":"http://h/v1","model":3}', "Parameter 'model.model' must be a string; got 3."],
  [
    '{"type":"openai","baseURL":"http://h/v1","model":{"id":"m"}}',
    `Parameter 'model.model' must be a string; got {"id":"m"}.`,
  ],
  ['{"type":"openai","baseURL":"http://h/v1","model":""}', "Parameter 'model.model' must not be empty."],
  ['{"type":"openai","baseURL":"http://h/v1","model":" \\t "}', "Parameter 'model.model' must not be empty."],
  // apiKey
  [`{"type":"openai",${OK},"apiKey":5}`, "Parameter 'model.apiKey' must be a string; got 5."],
  [`{"type":"openai",${OK},"apiKey":true}`, "Parameter 'model.apiKey' must be a string; got true."],
  [
    `{"type":"openai",${OK},"apiKey":"sk\\r\\nX-Injected: 1"}`,
    "Parameter 'model.apiKey' contains characters not allowed in a header.",
  ],
  [
    `{"type":"openai",${OK},"apiKey":"sk-\\u20ac"}`,
    "Parameter 'model.apiKey' contains characters not allowed in a header.",
  ],
  [
    `{"type":"openai",${OK},"apiKey":"sk-\\u0000"}`,
    "Parameter 'model.apiKey' contains characters not allowed in a header.",
  ],
  // headers
  [
    `{"type":"openai",${OK},"headers":"X-A: 1"}`,
    `Parameter 'model.headers' must be an object; got "X-A: 1".`,
  ],
  [`{"type":"openai",${OK},"headers":["a"]}`, `Parameter 'model.headers' must be an object; got ["a"].`],
  [
    `{"type":"openai",${OK},"headers":{"X-A":1}}`,
    "Parameter 'model.headers.X-A' must be a string; got 1.",
  ],
  [
    `{"type":"openai",${OK},"headers":{"X-A":null}}`,
    "Parameter 'model.headers.X-A' must be a string; got null.",
  ],
  // The value's type is checked before the name.
  [
    `{"type":"openai",${OK},"headers":{"bad name":1}}`,
    "Parameter 'model.headers.bad name' must be a string; got 1.",
  ],
  [
    `{"type":"openai",${OK},"headers":{"bad name":"v"}}`,
    "'model.headers.bad name' is not a valid HTTP header name.",
  ],
  [`{"type":"openai",${OK},"headers":{"":"v"}}`, "'model.headers.' is not a valid HTTP header name."],
  [
    `{"type":"openai",${OK},"headers":{"X-A":"v\\nX-B: w"}}`,
    "Parameter 'model.headers.X-A' contains characters not allowed in a header.",
  ],
  // The first bad header (in the order sent) is the one named.
  [
    `{"type":"openai",${OK},"headers":{"X-A":"ok","X-B":2,"X-C":3}}`,
    "Parameter 'model.headers.X-B' must be a string; got 2.",
  ],
  // timeoutSeconds
  ...["-1", "86400.5", "1e400", "-1e400", '"5"', "true", "[1]", "{}"].map((value): [string, string] => [
    `{"type":"openai",${OK},"timeoutSeconds":${value}}`,
    "Parameter 'model.timeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got " +
    `${JSON.stringify(JSON.parse(value))}.`,
  ]),
];

Deno.test("openai model parameter: every bad member is answered with -32602 naming it", async () => {
  for (const [model, message] of REJECTED) {
    assert.deepEqual(await createWith(model), invalidParams(message), model);
  }
});

Deno.test("openai model parameter: after every rejected spec on one connection, the bridge still answers", async () => {
  const wire = new WireClient();
  try {
    REJECTED.forEach(([model], i) =>
      wire.sendLine(
        `{"jsonrpc":"2.0","id":${i + 1},"method":"session/create","params":{"session":"s","model":${model}}}`,
      )
    );
    wire.sendLine(`{"jsonrpc":"2.0","id":"after","method":"session/create","params":{"session":"s"}}`);
    for (const [i, [model, message]] of REJECTED.entries()) {
      assert.deepEqual(await wire.response(i + 1), { ...invalidParams(message), id: i + 1 }, model);
    }
    // A valid create on the same connection succeeds (its warnings depend on this machine's system model).
    const after = await wire.response("after");
    assert.equal((after.result as JsonObject | undefined)?.session, "s", JSON.stringify(after));
  } finally {
    await wire.engine.shutdown();
  }
});

Deno.test("openai model parameter: a valid spec creates the session; unknown members are ignored with a warning", async () => {
  const cases: Array<[string, string[]]> = [
    [`{"type":"openai",${OK}}`, []],
    [`{"type":"openai",${OK},"apiKey":null,"headers":null,"timeoutSeconds":null}`, []],
    [`{"type":"openai",${OK},"apiKey":"","headers":{},"timeoutSeconds":0}`, []],
    [`{"type":"openai",${OK},"timeoutSeconds":86400,"temperature":2,"apikey":"x"}`, [
      "Unknown parameter 'model.temperature' was ignored.",
      "Unknown parameter 'model.apikey' was ignored (did you mean 'apiKey'?).",
    ]],
    [`{"type":"openai",${OK},"__proto__":{"apiKey":1,"timeoutSeconds":-1}}`, [
      "Unknown parameter 'model.__proto__' was ignored.",
    ]],
    [`{"type":"openai",${OK},"headers":{"__proto__":"v"}}`, []],
  ];
  for (const [model, warnings] of cases) {
    assert.deepEqual(
      await createWith(model),
      { jsonrpc: "2.0", id: 1, result: { session: "s", warnings } },
      model,
    );
  }
});

/** The backend settings a spec (JSON text, as a client sends it) turns into. */
function configOf(spec: string): unknown {
  return parseOpenAIModelSpec(JSON.parse(spec), "model");
}

Deno.test("openai model parameter: defaults, normalisation and conversions of a valid spec", () => {
  // Absent, null and empty members leave the backend's defaults (no key, no headers, 120 s timeout).
  assert.deepEqual(configOf(`{${OK}}`), { baseURL: "http://h/v1", model: "m" });
  assert.deepEqual(
    configOf(`{${OK},"type":null,"apiKey":null,"headers":null,"timeoutSeconds":null}`),
    { baseURL: "http://h/v1", model: "m" },
  );
  assert.deepEqual(configOf(`{${OK},"apiKey":""}`), { baseURL: "http://h/v1", model: "m" });
  assert.deepEqual(configOf(`{${OK},"headers":{}}`), { baseURL: "http://h/v1", model: "m", headers: {} });
  // The base URL is trimmed and loses its trailing slashes; the model id is sent as given.
  assert.deepEqual(configOf('{"baseURL":" https://H.example:443/v1/// ","model":" m "}'), {
    baseURL: "https://h.example/v1",
    model: " m ",
  });
  assert.deepEqual(configOf('{"baseURL":"http://h","model":"m"}'), { baseURL: "http://h", model: "m" });
  // Any Unicode white space around it goes, not only what the URL parser strips itself.
  assert.deepEqual(configOf('{"baseURL":"\\u00a0http://h/v1\\u3000","model":"m"}'), {
    baseURL: "http://h/v1",
    model: "m",
  });
  // Tab, space and Latin-1 are allowed in header values and the key.
  assert.deepEqual(configOf(`{${OK},"apiKey":"a b\\tc\\u00e9","headers":{"X-A":""}}`), {
    baseURL: "http://h/v1",
    model: "m",
    apiKey: "a b\tc\u00e9",
    headers: { "X-A": "" },
  });
  // Seconds become whole milliseconds; 0 (no limit) and the 86400 maximum are accepted. A positive time below
  // half a millisecond is 1 ms, never 0: 0 would mean no limit, the opposite of what was asked.
  assert.deepEqual(
    [0, 1e-9, 0.0004, 0.0015, 2.5, 86400].map((s) =>
      (configOf(`{${OK},"timeoutSeconds":${s}}`) as JsonObject).timeoutMs
    ),
    [0, 1, 1, 2, 2500, 86_400_000],
  );
  // A `__proto__` key is a plain member (ignored), and members a spec object inherits are not read.
  assert.deepEqual(configOf(`{"__proto__":{"apiKey":"k","timeoutSeconds":1},${OK}}`), {
    baseURL: "http://h/v1",
    model: "m",
  });
  const inherited = Object.assign(
    Object.create({ apiKey: "k", timeoutSeconds: 1, headers: { "X-A": "v" } }),
    {
      baseURL: "http://h/v1",
      model: "m",
    },
  );
  assert.deepEqual(parseOpenAIModelSpec(inherited, "model"), { baseURL: "http://h/v1", model: "m" });
});

Deno.test("openai model parameter: a value that is not an object is rejected", () => {
  assert.throws(
    () => parseOpenAIModelSpec([] as unknown as JsonObject, "requests[0].model"),
    { code: -32602, message: "'requests[0].model' must be an object." },
  );
});

Deno.test("openai model parameter: NaN seconds (not JSON, but a host may pass it) are rejected", () => {
  assert.throws(
    () => parseOpenAIModelSpec({ baseURL: "http://h/v1", model: "m", timeoutSeconds: NaN }, "model"),
    {
      code: -32602,
      message:
        "Parameter 'model.timeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got null.",
    },
  );
});

Deno.test("openai model parameter: another type is rejected (the registry only routes type openai here)", () => {
  assert.throws(
    () => parseOpenAIModelSpec({ type: "scripted", baseURL: "http://h/v1", model: "m" }, "model"),
    { code: -32602, message: `Parameter 'model.type' must be "openai"; got "scripted".` },
  );
});
