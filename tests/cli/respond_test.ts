import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { statusWithin } from "../helpers/deadline.ts";
import { Fixtures, jsonLines, oam, oamCommand, StreamWatcher } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());
const hello = await fx.write("hello.json", [{ text: "Hello there, traveller!" }]);
const echoPrompt = await fx.write("echo.json", [{ template: "You said: {prompt}" }]);
const tools = await fx.write(
  "tools.jsonc",
  `// weather tools
{"tools": [
  {"name": "get_weather", "description": "Weather for a city",
   "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
  {"name": "now", "description": "The time", "x-oam": {"command": ["echo", "{\\"time\\": \\"12:00\\"}"]}},
]}`,
);
const twoCalls = await fx.write("two_calls.json", [
  { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }, { name: "now", arguments: {} }] },
  { template: "unused" },
]);
const resumed = await fx.write("resumed.json", [{ template: "Outputs: {toolOutputs}" }]);

Deno.test("respond: prints the streamed answer and exits 0", async () => {
  const r = await oam(["respond", "--script", hello, "Hi"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "Hello there, traveller!\n");
  assert.equal(r.stderr, "");
});

Deno.test("respond: --json prints one result object", async () => {
  const r = await oam(["respond", "--script", hello, "--json", "Hi"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = jsonLines(r.stdout);
  assert.equal(lines.length, 1);
  const out = lines[0] as JsonObject;
  assert.deepEqual(Object.keys(out), ["status", "text", "toolCalls", "usage", "steps"]);
  assert.equal(out.status, "completed");
  assert.equal(out.text, "Hello there, traveller!");
  assert.deepEqual(out.toolCalls, []);
});

Deno.test("respond: --events prints JSON lines ending with completed", async () => {
  const r = await oam(["respond", "--script", hello, "--events", "Hi"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = jsonLines(r.stdout) as JsonObject[];
  assert.equal(lines[0].type, "modelStep");
  const texts = lines.filter((l) => l.type === "text");
  assert.ok(texts.length >= 2);
  assert.equal(texts.map((t) => t.delta).join(""), "Hello there, traveller!");
  const last = lines[lines.length - 1];
  assert.equal(last.type, "completed");
  assert.equal((last.response as JsonObject).text, "Hello there, traveller!");
});

Deno.test("respond: the prompt is the arguments plus piped stdin", async () => {
  const r = await oam(["respond", "--script", echoPrompt, "--json", "Summarize:"], {
    stdin: "line one\nline two\n",
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((jsonLines(r.stdout)[0] as JsonObject).text, "You said: Summarize:\n\nline one\nline two");
  const none = await oam(["respond", "--script", echoPrompt, "--json", "--no-stdin", "only args"], {
    stdin: "ignored",
  });
  assert.equal((jsonLines(none.stdout)[0] as JsonObject).text, "You said: only args");
});

Deno.test("respond: usage errors exit 2 with a one-line error naming the code", async () => {
  const r = await oam(["respond", "--script", hello]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^Error: No prompt: pass it as arguments or pipe it on stdin\. \[usage\]\n$/);
  const bad = await oam(["respond", "--bogus", "x"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Unknown option '--bogus'\. Run 'deno run -A cli\.ts respond --help'\. \[usage\]/);
  const json = await oam(["respond", "--json", "--script", hello]);
  assert.equal(json.code, 2);
  assert.deepEqual(JSON.parse(json.stderr), {
    error: { code: "usage", message: "No prompt: pass it as arguments or pipe it on stdin." },
  });
  const choice = await oam(["respond", "--script", hello, "--tools", tools, "--tool-choice", "nope", "x"]);
  assert.equal(choice.code, 2);
  assert.match(
    choice.stderr,
    /--tool-choice names 'nope', which is not one of the tools: get_weather, now\./,
  );
});

Deno.test("respond: error classes map to stable exit codes", async () => {
  const cases: Array<[string, number, string]> = [
    ["model_unavailable", 3, "model_unavailable"],
    ["guardrail_violation", 4, "guardrail_violation"],
    ["refusal", 4, "refusal"],
    ["context_size_exceeded", 5, "context_size_exceeded"],
    ["invalid_request", 2, "invalid_request"],
  ];
  await Promise.all(cases.map(async ([error, code, name]) => {
    const script = await fx.write(`err_${error}.json`, [{ error }]);
    const r = await oam(["respond", "--script", script, "--events", "x"]);
    assert.equal(r.code, code, `${error}: ${r.stderr}`);
    assert.equal(JSON.parse(r.stderr).error.code, name);
    const lines = jsonLines(r.stdout) as JsonObject[];
    assert.equal(lines[lines.length - 1].type, "error");
  }));
  const limited = await fx.write("rate.json", [{ error: "rate_limited" }]);
  const r = await oam(["respond", "--script", limited, "x"]);
  assert.equal(r.code, 6);
  assert.match(r.stderr, /^Error: Scripted rate_limited\. \[rate_limited\]\n$/);
  const failed = await fx.write("failed.json", [{ error: "generation_failed" }]);
  assert.equal((await oam(["respond", "--script", failed, "x"])).code, 1);
});

Deno.test("respond: a scripted error step fails its turn; it is not retried with the next step", async () => {
  // A real model's transient failure is tried again; a script's error is the answer the script gives, so a
  // retry would only play the next step in its place (and the script would run one step early from then on).
  for (const error of ["generation_failed", "rate_limited"]) {
    const script = await fx.write(`once_${error}.json`, [{ error }, { text: "Next step." }]);
    const r = await oam(["respond", "--script", script, "x"]);
    assert.equal(r.stdout, "", error);
    assert.equal(r.stderr, `Error: Scripted ${error}. [${error}]\n`);
    assert.equal(r.code, error === "rate_limited" ? 6 : 1);
  }
  // An invalid structured answer too: the step after it is not played as the retry.
  const schema = await fx.write("n.schema.json", {
    type: "object",
    properties: { n: { type: "integer" } },
    required: ["n"],
  });
  const invalid = await fx.write("invalid.json", [{ json: { n: "one" } }, { json: { n: 2 } }]);
  const bad = await oam(["respond", "--script", invalid, "--schema", schema, "x"]);
  assert.equal(bad.code, 1, bad.stdout);
  assert.match(
    bad.stderr,
    /^Error: The model gave an invalid answer: .*must be integer.*\[generation_failed\]\n$/,
  );
});

Deno.test("respond: an unavailable model exits 3 with advice", async () => {
  const r = await oam(["respond", "--json", "--model", "openai:http://127.0.0.1:9/v1#m", "hi"]);
  assert.equal(r.code, 3);
  assert.equal(r.stdout, "");
  const e = JSON.parse(r.stderr).error;
  assert.equal(e.code, "model_unavailable");
  assert.match(e.message, /is unavailable/);
});

Deno.test("respond: --schema gives structured output", async () => {
  const schema = await fx.write("mood.schema.json", {
    type: "object",
    properties: { reasoning: { type: "string" }, mood: { enum: ["calm", "angry"] } },
    required: ["reasoning", "mood"],
  });
  const script = await fx.write("mood.json", [{ json: { mood: "calm", reasoning: "quiet day" } }]);
  const r = await oam(["respond", "--script", script, "--schema", schema, "--json", "How are you?"]);
  assert.equal(r.code, 0, r.stderr);
  const out = jsonLines(r.stdout)[0] as JsonObject;
  assert.deepEqual(out.structured, { reasoning: "quiet day", mood: "calm" });
  assert.equal(out.text, '{"reasoning":"quiet day","mood":"calm"}');
  const human = await oam(["respond", "--script", script, "--schema", schema, "How are you?"]);
  assert.deepEqual(JSON.parse(human.stdout), { reasoning: "quiet day", mood: "calm" });
  const bad = await fx.write("bad.schema.json", { type: "object", properties: { a: { type: "bogus" } } });
  const invalid = await oam(["respond", "--script", script, "--schema", bad, "x"]);
  // The file and the place in it, as 'oam schema convert' says it, before any turn.
  assert.deepEqual([invalid.code, invalid.stdout, invalid.stderr], [
    2,
    "",
    `Error: ${bad}: #/properties/a (line 1, column 36): unsupported type 'bogus' (a type is one of object, array, string, integer, number, boolean, null) [invalid_schema]\n`,
  ]);
});

Deno.test("respond: an integer bound past the safe range says it was clamped, in the answer's error too", async () => {
  const schema = await fx.write("big.schema.json", {
    type: "object",
    properties: { n: { type: "integer", maximum: 1e300 } },
    required: ["n"],
  });
  const script = await fx.write("big.json", [{ json: { n: 1e20 } }]);
  const r = await oam(["respond", "--script", script, "--schema", schema, "n?"]);
  // It read "must be <= 9007199254740991." and nothing more: a bound the schema never wrote.
  assert.deepEqual([r.code, r.stdout, r.stderr], [
    1,
    "",
    "Error: The model gave an invalid answer: the answer does not match the response schema: #/properties/n: " +
    "must be <= 9007199254740991. It was step 1 of 1. The schema's warnings: #/properties/n: integer upper bound 1e+300 is clamped " +
    "to 9007199254740991, the largest safe integer (2^53-1). [generation_failed]\n",
  ]);
});

Deno.test("respond: client tools pause with exit 10; resume needs every output", async () => {
  const save = fx.path("paused.json");
  const r = await oam([
    "respond",
    "--script",
    twoCalls,
    "--tools",
    tools,
    "--json",
    "--save-transcript",
    save,
    "Weather?",
  ]);
  assert.equal(r.code, 10, r.stderr);
  const out = jsonLines(r.stdout)[0] as JsonObject;
  assert.equal(out.status, "tool_calls");
  assert.equal(out.transcript, save);
  const calls = out.calls as JsonObject[];
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, "get_weather");
  assert.deepEqual(calls[0].arguments, { city: "Paris" });
  const id = calls[0].id as string;
  const saved = await fx.read("paused.json") as JsonObject;
  const pending = (saved.oam as JsonObject).pending as JsonObject;
  assert.equal((pending.calls as JsonObject[]).length, 2);
  // The command tool already ran.
  assert.deepEqual(pending.outputs, [{
    id: (pending.calls as JsonObject[])[1].id,
    output: { time: "12:00" },
    isError: false,
  }]);
  assert.equal(pending.roundsUsed, 1);
  assert.equal(pending.callsUsed, 2);

  /** `oam respond` resuming the saved turn with `args` (its tool outputs, flags, a prompt). */
  const resume = (args: string[], options?: Parameters<typeof oam>[1]) =>
    oam(["respond", "--script", resumed, "--resume", save, ...args], options);
  const missing = await resume(["--json"]);
  assert.equal(missing.code, 2);
  assert.equal(JSON.parse(missing.stderr).error.code, "missing_tool_output");
  const unknown = await resume(["--tool-output", "call_x=1"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /no pending tool call 'call_x'/);
  const withPrompt = await resume(["--tool-output", `${id}=x`, "hi"]);
  assert.equal(withPrompt.code, 2);

  const done = await resume(["--json", "--tool-output", `${id}={"temp": 21}`]);
  assert.equal(done.code, 0, done.stderr);
  const result = jsonLines(done.stdout)[0] as JsonObject;
  assert.equal(result.text, 'Outputs: {"temp":21}\n{"time":"12:00"}');
  // Budget left: 4 - 1 rounds.
  assert.equal((result.steps as JsonObject[])[0].toolCallingMode, "allowed");

  const file = await fx.write("sunny.txt", "sunny\n");
  const fromFile = await resume(["--tool-output", `${id}=@${file}`]);
  assert.equal(fromFile.stdout, 'Outputs: sunny\n{"time":"12:00"}\n');
  // A file saved with a byte order mark (Windows Notepad): the mark is not part of the output.
  const marked = await fx.write("marked.txt", "\ufeff晴れ\r\n");
  const fromMarked = await resume(["--tool-output", `${id}=@${marked}`]);
  assert.equal(fromMarked.stdout, 'Outputs: 晴れ\n{"time":"12:00"}\n');
  const asError = await resume(["--tool-error", `${id}=offline`]);
  assert.equal(asError.stdout, 'Outputs: Error: offline\n{"time":"12:00"}\n');
  const fromStdin = await resume(["--tool-output", `${id}=@-`], { stdin: "rainy\n" });
  assert.equal(fromStdin.stdout, 'Outputs: rainy\n{"time":"12:00"}\n');
  // A missing file names the flag that named it, as --script and --schema do.
  const noFile = await resume(["--tool-output", `${id}=@nope.txt`]);
  assert.deepEqual([noFile.code, noFile.stdout, noFile.stderr], [
    2,
    "",
    `Error: --tool-output ${id}: No such file: 'nope.txt'. [invalid_input]\n`,
  ]);
});

Deno.test("respond: a resumed turn keeps the remaining tool budget", async () => {
  const script = await fx.write("one_call.json", [{
    toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }],
  }]);
  const save = fx.path("budget.json");
  const r = await oam([
    "respond",
    "--script",
    script,
    "--tools",
    tools,
    "--max-tool-rounds",
    "1",
    "--tool-choice",
    "required",
    "--events",
    "--save-transcript",
    save,
    "x",
  ]);
  assert.equal(r.code, 10, r.stderr);
  const lines = jsonLines(r.stdout) as JsonObject[];
  const last = lines[lines.length - 1];
  assert.equal(last.type, "tool_calls");
  assert.ok(!r.stdout.includes("The turn was cancelled"), "the pause does not show its own cancel");
  const id = (last.calls as JsonObject[])[0].id as string;
  const done = await oam([
    "respond",
    "--script",
    resumed,
    "--resume",
    save,
    "--json",
    "--tool-output",
    `${id}=warm`,
  ]);
  assert.equal(done.code, 0, done.stderr);
  const step = (jsonLines(done.stdout)[0] as JsonObject).steps as JsonObject[];
  assert.equal(step[0].toolCallingMode, "disallowed");
});

Deno.test("respond: --save-transcript and --resume continue a conversation", async () => {
  const save = fx.path("conversation.json");
  const first = await oam([
    "respond",
    "--script",
    hello,
    "-i",
    "Be brief.",
    "--save-transcript",
    save,
    "--json",
    "Hi",
  ]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal((jsonLines(first.stdout)[0] as JsonObject).transcript, save);
  const second = await oam([
    "respond",
    "--script",
    echoPrompt,
    "--resume",
    save,
    "--save-transcript",
    save,
    "Again",
  ]);
  assert.equal(second.stdout, "You said: Again\n");
  // The conversation waits for no tool call: a tool output is a usage error that names the file.
  const output = await oam([
    "respond",
    "--script",
    echoPrompt,
    "--resume",
    save,
    "--tool-output",
    "call_1=x",
  ]);
  assert.deepEqual(
    [output.code, output.stdout, output.stderr],
    [
      2,
      "",
      `Error: ${save} is not waiting for tool calls: continue it with a prompt, without --tool-output and ` +
      "--tool-error. [usage]\n",
    ],
  );
  const saved = await fx.read("conversation.json") as JsonObject;
  assert.equal(saved.modelName, "scripted");
  const entries = ((saved.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(entries.map((e) => e.role), ["instructions", "user", "response", "user", "response"]);
  assert.equal((entries[0].contents as JsonObject[])[0].text, "Be brief.");
});

Deno.test("respond and chat: --resume of a JSON file that is no conversation names the file", async () => {
  const notSaved = await fx.write("not_a_conversation.json", { name: "get_weather" });
  const emptyTranscript = await fx.write("no_entries.json", { transcript: {}, oam: { version: 1 } });
  for (const file of [notSaved, emptyTranscript]) {
    const message = `Error: ${file}: not a saved conversation (from --save-transcript or /save) or a ` +
      "session/transcript result: it has no transcript entries. [invalid_input]\n";
    const respond = await oam(["respond", "--script", hello, "--resume", file, "Hi"]);
    assert.deepEqual([respond.code, respond.stdout, respond.stderr], [2, "", message]);
    const chat = await oam(["chat", "--script", hello, "--resume", file], { stdin: "Hi\n" });
    assert.deepEqual([chat.code, chat.stdout, chat.stderr], [2, "", message]);
  }
});

Deno.test("respond: a --save-transcript that cannot be written fails with exit 1 after the answer's line ends", async () => {
  // No write permission there: only the write itself finds out (a missing folder is refused before the turn).
  const denied = fx.path("denied.json");
  const r = await oam(["respond", "--script", hello, "--save-transcript", denied, "Hi"], {
    permissions: ["--allow-read", "--allow-env", "--allow-write=/nonexistent-oam-folder"],
  });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "Hello there, traveller!\n");
  assert.equal(
    r.stderr,
    `Error: Cannot write '${denied}': permission denied (needs --allow-write). [io_error]\n`,
  );
});

Deno.test("respond: stdin is read once: a file flag may take it (the prompt is then the arguments), not two", async () => {
  const save = fx.path("from_stdin.json");
  const first = await oam(["respond", "--script", hello, "--save-transcript", save, "Hi"]);
  assert.equal(first.code, 0, first.stderr);
  const resumed = await oam(["respond", "--script", echoPrompt, "--resume", "-", "Again"], {
    stdin: await Deno.readTextFile(save),
  });
  assert.deepEqual([resumed.code, resumed.stdout, resumed.stderr], [0, "You said: Again\n", ""]);
  const twice = await oam(["respond", "--script", hello, "--tools", "-", "--schema", "-", "x"], {
    stdin: await Deno.readTextFile(tools),
  });
  assert.deepEqual([twice.code, twice.stdout, twice.stderr], [
    2,
    "",
    "Error: Only one input can come from stdin: --tools - reads it, so --schema - cannot. [usage]\n",
  ]);
  // oam chat reads what you type from stdin: a file flag cannot take it.
  const chat = await oam(["chat", "--script", hello, "--resume", "-"], {
    stdin: await Deno.readTextFile(save),
  });
  assert.deepEqual([chat.code, chat.stdout, chat.stderr], [
    2,
    "",
    "Error: oam chat reads what you type from stdin: --resume cannot come from stdin ('-'); give a file. [usage]\n",
  ]);
});

Deno.test("respond: Ctrl-C cancels the turn and exits 130", async () => {
  const slow = await fx.write("slow.json", [{ toolCalls: [{ name: "wait", arguments: {} }] }]);
  const waitTool = await fx.write("wait_tools.json", [{
    name: "wait",
    description: "waits",
    "x-oam": { command: ["sleep", "30"] },
  }]);
  const child = oamCommand(["respond", "--script", slow, "--tools", waitTool, "--events", "x"], {}, "null")
    .spawn();
  const watcher = new StreamWatcher(child.stdout);
  await watcher.until((t) => t.includes('"toolCallStarted"'));
  child.kill("SIGINT");
  const [status, stderr] = await Promise.all([
    statusWithin(child, "oam respond to exit after SIGINT"),
    new Response(child.stderr).text(),
    watcher.rest(),
  ]);
  assert.equal(status.code, 130, stderr);
  assert.equal(JSON.parse(stderr).error.code, "interrupted");
});

Deno.test("respond: --help lists flags, exit codes and an example", async () => {
  const r = await oam(["respond", "--help"]);
  assert.equal(r.code, 0);
  for (const s of ["--tool-output", "--events", "Exit codes:", "10   client tool calls", "Examples:"]) {
    assert.ok(r.stdout.includes(s), s);
  }
});

Deno.test("respond: --verbose shows tool calls on stderr with the marks of oam chat and oam npc", async () => {
  const script = await fx.write("now.json", [
    { toolCalls: [{ name: "now", arguments: {} }] },
    { template: "It is {toolOutput}." },
  ]);
  const r = await oam(["respond", "-v", "--tools", tools, "--script", script, "Time?"]);
  assert.deepEqual([r.code, r.stdout], [0, 'It is {"time":"12:00"}.\n'], r.stderr);
  assert.equal(r.stderr, '  ⚙ now {}\n  ↳ {"time":"12:00"}\n');
});

Deno.test("respond: --verbose shows the turn's warnings too (a schema's), not only the session's", async () => {
  const schema = await fx.write(
    "bare_schema.json",
    '{\n  "type": "object",\n  "properties": {\n    "bag": {"type": "object"}\n  }\n}\n',
  );
  const script = await fx.write("bare_answer.json", [{ json: { bag: {} } }]);
  const r = await oam(["respond", "-v", "--schema", schema, "--script", script, "Loot?"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { bag: {} });
  // Worded for the file, as 'oam schema convert' and the check before the turn say it.
  assert.equal(
    r.stderr,
    `warning: ${schema}: #/properties/bag (line 4, column 12): object without 'properties' is generated as {}; ` +
      "list the properties it should have\n",
  );
  // --json keeps the bridge's wording, as 'oam schema convert --json' does.
  const json = await oam(["respond", "--json", "--schema", schema, "--script", script, "Loot?"]);
  assert.deepEqual(JSON.parse(json.stdout).warnings, [
    "#/properties/bag: object without 'properties' is generated as {}; list the properties it should have",
  ]);
  // Without --verbose the answer alone, as before.
  const quiet = await oam(["respond", "--schema", schema, "--script", script, "Loot?"]);
  assert.deepEqual([quiet.code, quiet.stderr], [0, ""]);
});
