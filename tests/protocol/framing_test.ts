/**
 * §1 framing over the wire: blank lines, parse errors, invalid messages and ids, id echoing, params rules,
 * notifications, stray responses, prototype pollution, deep nesting and huge strings.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

const MAX_ID = 9007199254740991;

function invalidMessage(id: string | number | null, message: string): JsonObject {
  return { jsonrpc: "2.0", id, error: { code: -32600, message, data: { code: "invalid_message" } } };
}

const ID_TYPE = "'id' must be a string or a number.";
const ID_RANGE =
  "A numeric 'id' must be finite and at most 2^53-1 (9007199254740991) in magnitude so it can be echoed exactly; use a string id.";
const JSONRPC = `Missing or unsupported 'jsonrpc' version; expected "2.0".`;

Deno.test("blank and whitespace-only lines are ignored", async () => {
  const c = new WireClient();
  for (const line of ["", " ", "\t", "  \t  ", "\r", "\uFEFF"]) c.sendLine(line);
  c.sendLine('{"jsonrpc":"2.0","id":1,"method":"ping"}');
  await c.response(1);
  assert.deepEqual(c.lines, ['{"jsonrpc":"2.0","id":1,"result":{}}']);
  await c.close();
});

Deno.test("a UTF-8 BOM before a message is tolerated", async () => {
  const c = new WireClient();
  c.sendLine('\uFEFF{"jsonrpc":"2.0","id":"bom","method":"ping"}');
  assert.deepEqual(await c.response("bom"), { jsonrpc: "2.0", id: "bom", result: {} });
  await c.close();
});

Deno.test("unparseable lines answer -32700 with id null and 'Invalid JSON' messages", async () => {
  const c = new WireClient();
  const bad = [
    "{nope",
    '{"jsonrpc":"2.0","id":1,"method":"ping"',
    '{"jsonrpc":"2.0","id":1,"method":"ping"} trailing',
    '{"jsonrpc":"2.0","id":01,"method":"ping"}',
    '{"jsonrpc":"2.0","id":"a\u0001b","method":"ping"}',
    "{'single':1}",
    "NaN",
    '{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":"\\ud800"}}',
  ];
  for (const line of bad) c.sendLine(line);
  assert.equal(c.messages.length, bad.length);
  for (const m of c.messages) {
    assert.deepEqual(Object.keys(m), ["jsonrpc", "id", "error"]);
    assert.equal(m.id, null);
    const e = m.error as JsonObject;
    assert.equal(e.code, -32700);
    assert.deepEqual(e.data, { code: "parse_error" });
    assert.match(e.message as string, /^Invalid JSON/);
  }
  assert.match((c.messages[0].error as JsonObject).message as string, /^Invalid JSON at byte \d+: /);
  // still serving
  c.request("ping", undefined, 3);
  assert.deepEqual(await c.response(3), { jsonrpc: "2.0", id: 3, result: {} });
  await c.close();
});

Deno.test("batches and non-object messages answer -32600 with id null", async () => {
  const c = new WireClient();
  c.sendLine('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
  c.sendLine("[]");
  for (const line of ["42", '"ping"', "null", "true"]) c.sendLine(line);
  const batch = "Batch requests are not supported; send one message per line.";
  const notObject = "A JSON-RPC message must be an object.";
  assert.deepEqual([...c.messages], [
    invalidMessage(null, batch),
    invalidMessage(null, batch),
    invalidMessage(null, notObject),
    invalidMessage(null, notObject),
    invalidMessage(null, notObject),
    invalidMessage(null, notObject),
  ]);
  await c.close();
});

Deno.test("a missing or wrong jsonrpc version is -32600 echoing a valid id", async () => {
  const c = new WireClient();
  c.sendLine('{"id":1,"method":"ping"}');
  c.sendLine('{"jsonrpc":"1.0","id":"two","method":"ping"}');
  c.sendLine('{"jsonrpc":2.0,"id":3,"method":"ping"}');
  c.sendLine('{"jsonrpc":null,"id":4,"method":"ping"}');
  c.sendLine('{"method":"ping"}');
  c.sendLine('{"id":null,"method":"ping"}');
  assert.deepEqual([...c.messages], [
    invalidMessage(1, JSONRPC),
    invalidMessage("two", JSONRPC),
    invalidMessage(3, JSONRPC),
    invalidMessage(4, JSONRPC),
    invalidMessage(null, JSONRPC),
    invalidMessage(null, ID_TYPE),
  ]);
  await c.close();
});

Deno.test("invalid ids are rejected with id null and the request is not executed", async () => {
  const c = new WireClient();
  const create = (id: string) =>
    `{"jsonrpc":"2.0","id":${id},"method":"session/create","params":{"session":"x${c.messages.length}","model":"scripted"}}`;
  const cases: Array<[string, string]> = [
    ["null", ID_TYPE],
    ["{}", ID_TYPE],
    ['{"a":1}', ID_TYPE],
    ["[1]", ID_TYPE],
    ["true", ID_TYPE],
    ["1e300", ID_RANGE],
    ["-1e300", ID_RANGE],
    ["1e400", ID_RANGE],
    ["9007199254740992", ID_RANGE],
    ["-9007199254740992", ID_RANGE],
    ["18446744073709551615", ID_RANGE],
    ["9007199254740993", ID_RANGE],
  ];
  for (const [id] of cases) c.sendLine(create(id));
  assert.deepEqual(c.messages, cases.map(([, message]) => invalidMessage(null, message)));
  const list = await c.call("session/list");
  assert.deepEqual(list, { sessions: [] });
  await c.close();
});

Deno.test("'method' must be a non-empty string (-32600 echoing the id)", async () => {
  const c = new WireClient();
  c.sendLine('{"jsonrpc":"2.0","id":5,"method":5}');
  c.sendLine('{"jsonrpc":"2.0","id":"e","method":""}');
  c.sendLine('{"jsonrpc":"2.0","id":6,"method":null}');
  c.sendLine('{"jsonrpc":"2.0","id":7,"method":["ping"]}');
  c.sendLine('{"jsonrpc":"2.0","method":{}}');
  c.sendLine('{"jsonrpc":"2.0","id":8}');
  c.sendLine('{"jsonrpc":"2.0"}');
  const m = "'method' must be a non-empty string.";
  const neither = "A message needs 'method' (request or notification) or 'result'/'error' (response).";
  assert.deepEqual([...c.messages], [
    invalidMessage(5, m),
    invalidMessage("e", m),
    invalidMessage(6, m),
    invalidMessage(7, m),
    invalidMessage(null, m),
    invalidMessage(8, neither),
    invalidMessage(null, neither),
  ]);
  await c.close();
});

Deno.test("unknown methods answer -32601 with data.method", async () => {
  const c = new WireClient();
  c.request("frob/nicate", {}, 1);
  assert.deepEqual(await c.response(1), {
    jsonrpc: "2.0",
    id: 1,
    error: {
      code: -32601,
      message: "Unknown method 'frob/nicate'.",
      data: { code: "method_not_found", method: "frob/nicate" },
    },
  });
  await c.close();
});

Deno.test("ids are echoed exactly, integers as plain digits", async () => {
  const c = new WireClient();
  const ids = ["abc", "", "7", "t-1", 0, -7, 42, MAX_ID, -MAX_ID, 1.5, -0.25];
  for (const id of ids) c.request("ping", undefined, id);
  for (const id of ids) await c.response(id);
  assert.deepEqual(c.lines, [
    '{"jsonrpc":"2.0","id":"abc","result":{}}',
    '{"jsonrpc":"2.0","id":"","result":{}}',
    '{"jsonrpc":"2.0","id":"7","result":{}}',
    '{"jsonrpc":"2.0","id":"t-1","result":{}}',
    '{"jsonrpc":"2.0","id":0,"result":{}}',
    '{"jsonrpc":"2.0","id":-7,"result":{}}',
    '{"jsonrpc":"2.0","id":42,"result":{}}',
    '{"jsonrpc":"2.0","id":9007199254740991,"result":{}}',
    '{"jsonrpc":"2.0","id":-9007199254740991,"result":{}}',
    '{"jsonrpc":"2.0","id":1.5,"result":{}}',
    '{"jsonrpc":"2.0","id":-0.25,"result":{}}',
  ]);
  // 1.0 and 1e2 are the integers 1 and 100: echoed as plain digits
  c.sendLine('{"jsonrpc":"2.0","id":1.0,"method":"ping"}');
  c.sendLine('{"jsonrpc":"2.0","id":1e2,"method":"ping"}');
  assert.deepEqual(c.lines.slice(-2), [
    '{"jsonrpc":"2.0","id":1,"result":{}}',
    '{"jsonrpc":"2.0","id":100,"result":{}}',
  ]);
  await c.close();
});

Deno.test("the request id is echoed exactly as requestId in events and tool/call", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "g",
    tools: [{ name: "look", description: "Look around." }],
    model: scripted({ toolCalls: [{ name: "look" }] }, { text: "ok", chunks: 1 }),
  });
  c.request("session/respond", { session: "g", prompt: "hi", stream: true }, MAX_ID);
  const call = await c.toolCall(1);
  assert.equal((call.params as JsonObject).requestId, MAX_ID);
  c.reply(call.id, { output: "a room" });
  await c.response(MAX_ID);
  const related = c.related(MAX_ID);
  assert.deepEqual(related.map(WireClient.kind), [
    "event:modelStep",
    "event:toolCallStarted",
    "tool/call",
    "event:toolCallCompleted",
    "event:modelStep",
    "event:text",
    "response",
  ]);
  const lines = c.lines.slice(-related.length);
  for (const line of lines.slice(0, -1)) assert.ok(line.includes('"requestId":9007199254740991,'), line);
  assert.ok(lines[lines.length - 1].startsWith('{"jsonrpc":"2.0","id":9007199254740991,"result":'));

  c.request("session/respond", { session: "g", prompt: "again", stream: true }, "req-α");
  await c.response("req-α");
  const events = c.related("req-α").filter((m) => m.method === "session/event");
  assert.ok(events.length > 0);
  for (const e of events) {
    assert.deepEqual(Object.keys(e.params as JsonObject), ["session", "requestId", "event"]);
  }
  await c.close();
});

Deno.test("params: absent and null mean {}, non-objects are -32602", async () => {
  const c = new WireClient();
  c.sendLine('{"jsonrpc":"2.0","id":1,"method":"session/list"}');
  c.sendLine('{"jsonrpc":"2.0","id":2,"method":"session/list","params":null}');
  c.sendLine('{"jsonrpc":"2.0","id":3,"method":"session/list","params":[]}');
  c.sendLine('{"jsonrpc":"2.0","id":4,"method":"session/create","params":["guard"]}');
  c.sendLine('{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}');
  c.sendLine('{"jsonrpc":"2.0","id":6,"method":"ping","params":7}');
  const notObject = (id: number) => ({
    jsonrpc: "2.0",
    id,
    error: { code: -32602, message: "params must be an object.", data: { code: "invalid_params" } },
  });
  assert.deepEqual([...c.messages], [
    { jsonrpc: "2.0", id: 1, result: { sessions: [] } },
    { jsonrpc: "2.0", id: 2, result: { sessions: [] } },
    notObject(3),
    notObject(4),
    notObject(5),
    notObject(6),
  ]);
  await c.close();
});

Deno.test("null members are treated as absent", async () => {
  const c = new WireClient();
  const created = await c.call("session/create", {
    session: null,
    instructions: null,
    tools: null,
    options: null,
    history: null,
    model: scripted({ text: "hi" }),
  });
  assert.deepEqual(created, { session: "s1", warnings: [] });
  await c.call("session/create", {
    session: "o",
    options: {
      toolChoice: null,
      maxToolRounds: null,
      maxToolCalls: null,
      enabledTools: null,
      temperature: null,
      maxResponseTokens: null,
      sampling: null,
      toolTimeoutSeconds: null,
      trimHistory: null,
      reservedResponseTokens: null,
      maxAttempts: null,
    },
    model: scripted({ text: "hi" }),
  });
  c.request("session/respond", {
    session: "s1",
    prompt: "x",
    schema: null,
    stream: null,
    toolChoice: null,
    maxToolRounds: null,
    maxToolCalls: null,
    enabledTools: null,
  }, 9);
  const r = await c.response(9);
  assert.deepEqual(r.result, {
    session: "s1",
    text: "hi",
    toolCalls: [],
    usage: (r.result as JsonObject).usage,
    steps: [{
      index: 0,
      completedToolRounds: 0,
      toolCallingMode: "disallowed",
      enabledTools: [],
      trimmedEntries: 0,
    }],
  });
  // a null required member is missing
  c.request("session/respond", { session: "s1", prompt: null }, 10);
  assert.deepEqual((await c.response(10)).error, {
    code: -32602,
    message: "Missing required parameter 'prompt'.",
    data: { code: "invalid_params" },
  });
  await c.close();
});

Deno.test("unknown params of session/create and session/respond are ignored and reported", async () => {
  const c = new WireClient();
  const created = await c.call("session/create", {
    session: "u",
    colour: "red",
    options: { maxToolRounds: 1, speed: 9, toolchoice: "none" },
    model: scripted({ text: "ok" }),
    zzz: null,
  });
  assert.deepEqual(created, {
    session: "u",
    warnings: [
      "Unknown parameter 'colour' was ignored.",
      "Unknown parameter 'zzz' was ignored.",
      "Unknown parameter 'options.speed' was ignored.",
      "Unknown parameter 'options.toolchoice' was ignored (did you mean 'toolChoice'?).",
    ],
  });
  c.request("session/respond", { session: "u", prompt: "x", temperature: 2, extra: { a: 1 } }, 1);
  const result = (await c.response(1)).result as JsonObject;
  assert.deepEqual(Object.keys(result), ["session", "text", "toolCalls", "usage", "steps", "warnings"]);
  assert.deepEqual(result.warnings, [
    "Unknown parameter 'temperature' was ignored.",
    "Unknown parameter 'extra' was ignored.",
  ]);
  await c.close();
});

Deno.test("notifications are executed but never answered, even when they fail", async () => {
  const c = new WireClient();
  c.sendLine('{"jsonrpc":"2.0","method":"ping"}');
  c.sendLine('{"jsonrpc":"2.0","method":"frob"}');
  c.sendLine('{"jsonrpc":"2.0","method":"session/respond","params":{"session":"missing"}}');
  c.sendLine('{"jsonrpc":"2.0","method":"session/list","params":[1]}');
  c.sendLine('{"jsonrpc":"2.0","method":"session/create","params":{"session":"n","model":"scripted"}}');
  c.sendLine('{"jsonrpc":"2.0","method":"session/create","params":{"session":"n","model":"scripted"}}');
  c.sendLine(
    '{"jsonrpc":"2.0","method":"session/respond","params":{"session":"n","prompt":"hi","stream":true}}',
  );
  c.request("session/list", {}, 1);
  const list = await c.response(1);
  const sessions = (list.result as JsonObject).sessions as JsonObject[];
  assert.deepEqual(sessions.map((s) => s.session), ["n"]);
  await c.engine.idle();
  // the notified turn ran (its events are streamed with a local requestId) but got no response
  const kinds = c.messages.map(WireClient.kind);
  assert.deepEqual(kinds.filter((k) => k === "response" || k === "error"), ["response"]);
  const events = c.messages.filter((m) => m.method === "session/event");
  assert.ok(events.length >= 2);
  for (const e of events) assert.match(String((e.params as JsonObject).requestId), /^local-\d+$/);
  assert.equal(
    ((await c.call("session/list")).sessions as JsonObject[])[0].entries,
    2,
  );
  await c.close();
});

Deno.test("responses to unknown or finished ids are ignored and the bridge keeps serving", async () => {
  const c = new WireClient();
  c.sendLine('{"jsonrpc":"2.0","id":"t-99","result":{"output":"x"}}');
  c.sendLine('{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"x"}}');
  c.sendLine('{"jsonrpc":"2.0","id":"t-1","result":null}');
  c.sendLine('{"jsonrpc":"2.0","id":"t-2","error":null}');
  assert.deepEqual([...c.messages], []);
  c.request("ping", undefined, 1);
  assert.deepEqual([...c.messages], [{ jsonrpc: "2.0", id: 1, result: {} }]);
  await c.close();
});

Deno.test("__proto__ and constructor keys in params and tool arguments do not pollute prototypes", async () => {
  const c = new WireClient();
  c.sendLine(
    '{"jsonrpc":"2.0","id":1,"method":"session/create","params":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"session":"p",' +
      '"options":{"__proto__":{"polluted":1},"maxToolRounds":2},' +
      '"tools":[{"name":"t","description":"A tool.","parameters":{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"type":"string"}}},"__proto__":{"polluted":true}}],' +
      '"model":{"type":"scripted","steps":[{"toolCalls":[{"name":"t","arguments":{"__proto__":{"polluted":true},"constructor":"x"}}]},{"template":"{toolOutput}"}]}}}',
  );
  const created = await c.response(1);
  assert.deepEqual((created.result as JsonObject).warnings, [
    "Unknown parameter '__proto__' was ignored.",
    "Unknown parameter 'constructor' was ignored.",
    "Unknown parameter 'options.__proto__' was ignored.",
  ]);
  c.sendLine(
    '{"jsonrpc":"2.0","id":2,"method":"session/respond","params":{"session":"p","prompt":"x","__proto__":{"polluted":true}}}',
  );
  const call = await c.toolCall(1);
  const callLine = c.lines.find((l) => l.includes('"method":"tool/call"'))!;
  assert.ok(callLine.includes('"arguments":{"__proto__":{"polluted":true},"constructor":"x"}'), callLine);
  c.sendLine(`{"jsonrpc":"2.0","id":"${call.id}","result":{"__proto__":{"polluted":true}}}`);
  const r = await c.response(2);
  assert.equal((r.result as JsonObject).text, '{"__proto__":{"polluted":true}}');
  assert.deepEqual((r.result as JsonObject).warnings, ["Unknown parameter '__proto__' was ignored."]);
  // the transcript and list still work and nothing leaked into Object.prototype
  await c.call("session/transcript", { session: "p" });
  await c.call("session/list");
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
  await c.close();
});

function nested(depth: number): string {
  // the message object is level 1, params level 2: `depth` levels in total
  return `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":${"[".repeat(depth - 2)}${
    "]".repeat(depth - 2)
  }}}`;
}

Deno.test("deeply nested JSON is answered with an error and the bridge stays alive", async () => {
  const c = new WireClient();
  c.sendLine(nested(10_000));
  c.sendLine(
    `{"jsonrpc":"2.0","id":2,"method":"ping","params":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`,
  );
  c.sendLine("[".repeat(100_000));
  assert.equal(c.messages.length, 3);
  for (const m of c.messages) {
    assert.equal(m.id, null);
    assert.equal((m.error as JsonObject).code, -32700);
    assert.match((m.error as JsonObject).message as string, /^Invalid JSON/);
  }
  c.request("ping", undefined, 3);
  assert.deepEqual(await c.response(3), { jsonrpc: "2.0", id: 3, result: {} });
  await c.close();
});

Deno.test("nesting limit: 100 levels are accepted, 101 are not", async () => {
  const c = new WireClient();
  c.sendLine(nested(100));
  assert.deepEqual([...c.messages], [{ jsonrpc: "2.0", id: 1, result: {} }]);
  c.sendLine(nested(101));
  assert.equal((c.messages[1].error as JsonObject).code, -32700);
  await c.close();
});

Deno.test("a 1 MB prompt is fine and comes back whole", async () => {
  const c = new WireClient();
  const prompt = "é".repeat(512 * 1024) + "x".repeat(1024 * 1024 - 512 * 1024);
  await c.call("session/create", { session: "big", model: scripted({ template: "{prompt}" }) });
  c.request("session/respond", { session: "big", prompt }, 1);
  const r = await c.response(1);
  assert.equal((r.result as JsonObject).text, prompt);
  await c.close();
});

Deno.test("outgoing messages are compact single lines; U+2028/U+2029 are escaped", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "ls",
    model: scripted({ text: "a\u2028b\u2029c\nd", chunks: 1 }),
  });
  c.request("session/respond", { session: "ls", prompt: "x" }, 1);
  await c.response(1);
  const line = c.lines[c.lines.length - 1];
  assert.ok(line.includes('"text":"a\\u2028b\\u2029c\\nd"'), line);
  assert.ok(!/[\u2028\u2029\n]/.test(line));
  assert.equal(((JSON.parse(line) as JsonObject).result as JsonObject).text, "a\u2028b\u2029c\nd");
  await c.close();
});

Deno.test("__proto__ as a session id, tool name and structured-output key is plain data", async () => {
  const c = new WireClient();
  c.sendLine(
    '{"jsonrpc":"2.0","id":1,"method":"session/create","params":{"session":"__proto__","tools":[{"name":"__proto__","description":"x"}],' +
      '"model":{"type":"scripted","steps":[{"json":{"b":"y","__proto__":{"a":"x","polluted":true}}}]}}}',
  );
  c.sendLine(
    '{"jsonrpc":"2.0","id":2,"method":"session/respond","params":{"session":"__proto__","prompt":"x","schema":' +
      '{"type":"object","properties":{"__proto__":{"type":"object","properties":{"a":{"type":"string"},"polluted":{"type":"boolean"}}},' +
      '"b":{"type":"string"}}}}}',
  );
  await c.response(2);
  const line = c.lines.find((l) => l.startsWith('{"jsonrpc":"2.0","id":2,'))!;
  assert.ok(line.includes('"structured":{"__proto__":{"a":"x","polluted":true},"b":"y"}'), line);
  const list = await c.call("session/list");
  assert.deepEqual((list.sessions as JsonObject[]).map((s) => [s.session, s.tools]), [["__proto__", [
    "__proto__",
  ]]]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  await c.close();
});

Deno.test("a parse error names the byte where the line stops being JSON, also where V8 names no position", async () => {
  const c = new WireClient();
  c.sendLine("not json");
  c.sendLine('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"näme":tru}}');
  c.request("ping", undefined, 3);
  assert.deepEqual(await c.response(3), { jsonrpc: "2.0", id: 3, result: {} });
  assert.deepEqual(c.messages.slice(0, 2).map((m) => (m.error as JsonObject).message), [
    `Invalid JSON at byte 1: Unexpected token 'o', "not json" is not valid JSON`,
    `Invalid JSON at byte 61: Unexpected token '}', ...""näme":tru}}" is not valid JSON`,
  ]);
  await c.close();
});
