import assert from "node:assert/strict";
import { parseFlags } from "../../src/cli/args.ts";
import { CliError, exitCodeFor, toCliError } from "../../src/cli/cli_error.ts";
import { outputValue, runCommandTool } from "../../src/cli/command_tools.ts";
import { appendEntries, toolCallsEntry, toolOutputEntry } from "../../src/cli/conversation_file.ts";
import { LineReader, parseJsonc } from "../../src/cli/input.ts";
import { typedAnswer } from "../../src/cli/render.ts";
import { besideQuestion } from "../../src/cli/tool_prompt.ts";
import { toolsFromValue } from "../../src/cli/tools_file.ts";
import { colorsEnabled, displayWidth, makeStyle, oneLine, spinnerLine } from "../../src/cli/tty.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

function stream(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      controller.close();
    },
  });
}

Deno.test("parseJsonc: comments, trailing commas, own __proto__ keys, positioned errors", () => {
  assert.deepEqual(parseJsonc('{"a": [1, 2,], /* c */ "b": null, // x\n}', "f"), { a: [1, 2], b: null });
  const value = parseJsonc('{"__proto__": {"polluted": true}}', "f") as JsonObject;
  assert.ok(Object.hasOwn(value, "__proto__"));
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
  assert.equal(({} as JsonObject).polluted, undefined);
  assert.throws(() => parseJsonc('{\n  "a": }', "cfg.jsonc"), (e: unknown) => {
    assert.ok(e instanceof CliError);
    assert.equal(e.code, "invalid_input");
    assert.equal(e.message, "cfg.jsonc: not valid JSON: expected a value at line 2, column 8 (found '}').");
    return true;
  });
  assert.throws(() => parseJsonc("   ", "empty"), /empty: empty input; expected JSON\./);
});

Deno.test("parseJsonc: syntax errors read as words with a line and a column, never a parser code", () => {
  const cases: Array<[string, string]> = [
    ['{\n  "a": 1\n  "b": 2\n}', "expected ',' or '}' at line 3, column 3 (found '\"b\"')"],
    ["[1, 2 3]", "expected ',' or ']' at line 1, column 7 (found '3')"],
    ['{"a": [1, {"b": 2 "c": 3}]}', "expected ',' or '}' at line 1, column 19 (found '\"c\"')"],
    ['{"a" 1}', "expected ':' after the property name at line 1, column 6 (found '1')"],
    ['{"a": 1', "expected ',' or '}' at line 1, column 8 (found the end of the input)"],
    ['{"a": "x', "unterminated string at line 1, column 7 (found '\"x')"],
    ["[1, 2", "expected ',' or ']' at line 1, column 6 (found the end of the input)"],
    ['{"a": 1} x', "unexpected character at line 1, column 10 (found 'x')"],
  ];
  for (const [text, problem] of cases) {
    assert.throws(() => parseJsonc(text, "f.json"), (e: unknown) => {
      assert.ok(e instanceof CliError);
      assert.equal(e.message, `f.json: not valid JSON: ${problem}.`, text);
      assert.doesNotMatch(e.message, /[A-Z][a-z]+Expected|InvalidSymbol/);
      return true;
    });
  }
});

Deno.test("LineReader: lines across chunks, CRLF, last line without newline, end of input", async () => {
  const reader = new LineReader(stream("one\r\ntw", "o\n", "\nthree"));
  assert.equal(await reader.readLine(), "one");
  assert.equal(await reader.readLine(), "two");
  assert.equal(await reader.readLine(), "");
  assert.equal(await reader.readLine(), "three");
  assert.equal(await reader.readLine(), null);
  assert.equal(await reader.readLine(), null);
  assert.ok(reader.ended);
});

Deno.test("LineReader: a withdrawn read leaves the line for the next read", async () => {
  let push!: (text: string) => void;
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      push = (text) => controller.enqueue(new TextEncoder().encode(text));
    },
  });
  const reader = new LineReader(source);
  const abort = new AbortController();
  const first = reader.readLine(abort.signal);
  abort.abort();
  assert.equal(await first, undefined);
  const second = reader.readLine();
  push("kept\n");
  assert.equal(await second, "kept");
});

Deno.test("parseFlags: usage errors name the command", () => {
  const spec = { json: { type: "boolean" }, tools: { type: "string" } } as const;
  assert.deepEqual(
    parseFlags(["--json", "a", "b"], { command: "x", flags: spec, positionals: true }).positionals,
    ["a", "b"],
  );
  assert.throws(
    () => parseFlags(["--nope"], { command: "x", flags: spec, positionals: true }),
    /^CliError: Unknown option '--nope'\. Run 'oam x --help'\.$/,
  );
  assert.throws(
    () => parseFlags(["--tools"], { command: "x", flags: spec, positionals: true }),
    /--tools needs a value\. Run 'oam x --help'\./,
  );
  assert.throws(
    () => parseFlags(["pos"], { command: "x", flags: spec, positionals: false }),
    /Unexpected argument 'pos'\./,
  );
});

Deno.test("exit codes: every error class has its stable code", () => {
  const table: Array<[string, number]> = [
    ["usage", 2],
    ["invalid_input", 2],
    ["invalid_params", 2],
    ["invalid_schema", 2],
    ["invalid_request", 2],
    ["unsupported_language", 2],
    ["missing_tool_output", 2],
    ["model_unavailable", 3],
    ["guardrail_violation", 4],
    ["refusal", 4],
    ["context_size_exceeded", 5],
    ["rate_limited", 6],
    ["cancelled", 130],
    ["interrupted", 130],
    ["generation_failed", 1],
    ["io_error", 1],
    ["tool_failed", 1],
    ["__proto__", 1],
    ["constructor", 1],
  ];
  for (const [code, exit] of table) assert.equal(exitCodeFor(code), exit, code);
  const e = toCliError(BridgeError.of("world_error", "bad path", { world: "w" }));
  assert.equal(e.code, "world_error");
  assert.deepEqual(e.data, { world: "w" });
  assert.equal(toCliError(new Deno.errors.NotFound("x")).code, "io_error");
});

Deno.test("tools files: x-oam blocks become command tools; the bridge never sees them", () => {
  const loaded = toolsFromValue({
    tools: [
      { name: "ext", description: "d" },
      {
        type: "function",
        function: {
          name: "cmd",
          description: "c",
          "x-oam": { command: "date", timeout: 2, cwd: "sub", env: { A: "1" } },
        },
      },
    ],
  }, { label: "t.json", baseDir: "/base" });
  assert.deepEqual(loaded.definitions[0], { name: "ext", description: "d" });
  assert.deepEqual(loaded.definitions[1], {
    type: "function",
    function: { name: "cmd", description: "c" },
    timeoutSeconds: 0,
  });
  const spec = loaded.commands.get("cmd")!;
  assert.equal(spec.shell, "date");
  assert.equal(spec.cwd, "/base/sub");
  assert.equal(spec.timeoutSeconds, 2);
  assert.equal(spec.env.A, "1");
  assert.equal(loaded.raw.length, 2);
  assert.throws(
    () => toolsFromValue({ name: "x" }, { label: "t.json", baseDir: "/" }),
    /expected an array of tool definitions/,
  );
  assert.throws(
    () =>
      toolsFromValue([{ name: "x", "x-oam": { command: ["a"], timeout: -1 } }], {
        label: "t.json",
        baseDir: "/",
      }),
    /'t\.json: tools\[0\]\.x-oam\.timeout' must be a number of seconds/,
  );
});

Deno.test("tools files: a key of an x-oam block oam does not read is refused, with the key it meant", () => {
  const load = (block: Record<string, unknown>) => () =>
    toolsFromValue([{ name: "x", "x-oam": block }] as never, { label: "t.json", baseDir: "/" });
  // "timout" was ignored: the command ran with the default 30 s and nothing said so.
  assert.throws(load({ command: ["a"], timout: 3 }), {
    message: "'t.json: tools[0].x-oam.timout' is not a key oam reads (did you mean 'timeout'?); an x-oam " +
      "block has command, timeout, cwd, env, maxOutputChars.",
  });
  // "comand" said only that 'command' must be a non-empty argv array.
  assert.throws(load({ comand: ["a"] }), {
    message: "'t.json: tools[0].x-oam.comand' is not a key oam reads (did you mean 'command'?); an x-oam " +
      "block has command, timeout, cwd, env, maxOutputChars.",
  });
  assert.throws(load({ command: ["a"], shell: true }), {
    message: "'t.json: tools[0].x-oam.shell' is not a key oam reads; an x-oam block has command, timeout, " +
      "cwd, env, maxOutputChars.",
  });
});

Deno.test("command tools: JSON stdout, arguments on stdin and in the environment, failures, timeouts", async () => {
  const base = { shell: null, cwd: null, env: {}, maxOutputChars: 8000, baseDir: "/", timeoutSeconds: 5 };
  const echo = await runCommandTool({
    ...base,
    argv: ["sh", "-c", 'read -r line; printf \'{"in": %s, "env": "%s"}\' "$line" "$OAM_TOOL_NAME"'],
  }, { name: "probe", call: { id: "call_1", arguments: { city: "Oslo" } } });
  assert.deepEqual(echo, { output: { in: { city: "Oslo" }, env: "probe" }, isError: false });
  const fail = await runCommandTool({ ...base, argv: ["sh", "-c", "echo broken >&2; exit 3"] }, {
    name: "f",
    call: {
      id: "c",
      arguments: {},
    },
  });
  assert.deepEqual(fail, { output: "Command exited with status 3: broken", isError: true });
  const slow = await runCommandTool({ ...base, argv: ["sleep", "5"], timeoutSeconds: 0.2 }, {
    name: "slow",
    call: {
      id: "c",
      arguments: {},
    },
  });
  assert.deepEqual(slow, { output: "Tool 'slow' timed out after 0.2s.", isError: true });
  const missing = await runCommandTool({ ...base, argv: ["/no/such/program"] }, {
    name: "m",
    call: {
      id: "c",
      arguments: {},
    },
  });
  assert.equal(missing.isError, true);
  const long = await runCommandTool({ ...base, argv: ["echo", "abcdefghij"], maxOutputChars: 4 }, {
    name: "l",
    call: {
      id: "c",
      arguments: {},
    },
  });
  assert.deepEqual(long, { output: "abcd… (output cut at 4 characters)", isError: false });
});

Deno.test("typed answers and output values", () => {
  assert.deepEqual(typedAnswer("/error no signal"), { output: "no signal", isError: true });
  assert.deepEqual(typedAnswer('{"a": 1}'), { output: { a: 1 }, isError: false });
  assert.deepEqual(typedAnswer("42"), { output: "42", isError: false });
  assert.deepEqual(outputValue("[1, 2]\n"), [1, 2]);
  assert.equal(outputValue("{not json\n"), "{not json");
});

Deno.test("conversation files: tool-call and tool-output entries", () => {
  const envelope = { type: "FoundationModels.Transcript", version: "1.1", transcript: { entries: [] } };
  const call = { id: "call_1", name: "get_weather", arguments: { city: "Oslo" } };
  const out = appendEntries(envelope, [
    toolCallsEntry([call]),
    toolOutputEntry(call, { output: { temp: 3 }, isError: false }),
    toolOutputEntry(call, { output: "down", isError: true }),
  ]);
  const entries = (out.transcript as JsonObject).entries as JsonObject[];
  assert.equal((envelope.transcript.entries as unknown[]).length, 0, "the input is not changed");
  assert.deepEqual((entries[0].toolCalls as JsonObject[])[0], {
    id: "call_1",
    name: "get_weather",
    arguments: '{"city":"Oslo"}',
  });
  assert.equal(entries[1].toolCallID, "call_1");
  assert.deepEqual((entries[1].contents as JsonObject[])[0].structure, {
    source: "get_weather",
    content: { temp: 3 },
  });
  assert.equal((entries[2].contents as JsonObject[])[0].text, "Error: down");
});

Deno.test("styles are plain when colors are off", () => {
  const plain = makeStyle(false);
  assert.equal(plain.red(plain.bold("x")), "x");
  const color = makeStyle(true);
  assert.equal(color.bold("x"), "\x1b[1mx\x1b[22m");
});

Deno.test("colors: only on a terminal, never with NO_COLOR", () => {
  const terminal = { isTerminal: () => true };
  const pipe = { isTerminal: () => false };
  const saved = Deno.env.get("NO_COLOR");
  try {
    Deno.env.delete("NO_COLOR");
    assert.equal(colorsEnabled(terminal), true);
    assert.equal(colorsEnabled(pipe), false);
    Deno.env.set("NO_COLOR", "1");
    assert.equal(colorsEnabled(terminal), false);
    Deno.env.set("NO_COLOR", "");
    assert.equal(colorsEnabled(terminal), true);
  } finally {
    if (saved === undefined) Deno.env.delete("NO_COLOR");
    else Deno.env.set("NO_COLOR", saved);
  }
});

Deno.test("oneLine: a shortened line is cut between characters, never inside an emoji or an accented letter", () => {
  const family = "👨‍👩‍👧‍👦"; // one character of 11 code units
  assert.equal(oneLine(`ab${family}cd`, 4), `ab${family}…`);
  assert.equal(oneLine(`${"あ".repeat(3)}😀xyz`, 5), "あああ😀…");
  assert.equal(oneLine("e\u0301e\u0301e\u0301e\u0301", 3), "e\u0301e\u0301…");
  // Not longer than `max` characters as seen: nothing is cut.
  assert.equal(oneLine(`${family}${family}`, 2), `${family}${family}`);
  for (let max = 2; max < 12; max++) assert.ok(oneLine("x😀".repeat(10), max).isWellFormed());
});

Deno.test("command tools: output cut at maxOutputChars keeps whole characters", async () => {
  const base = { shell: null, cwd: null, env: {}, maxOutputChars: 3, baseDir: "/", timeoutSeconds: 5 };
  const call = { id: "c", arguments: {} };
  const ok = await runCommandTool({ ...base, argv: ["printf", "a😀👍🏽金貨"] }, { name: "t", call });
  assert.deepEqual(ok, { output: "a😀👍🏽… (output cut at 3 characters)", isError: false });
  const fail = await runCommandTool({ ...base, argv: ["sh", "-c", "printf 'a😀👍🏽金貨' >&2; exit 1"] }, {
    name: "t",
    call,
  });
  assert.deepEqual(fail, { output: "Command exited with status 1: a😀👍🏽", isError: true });
});

Deno.test("spinner: its line fits the terminal, full-width characters and emoji taking two columns", () => {
  const plain = makeStyle(false);
  const name = "北の門を守る年老いた鍛冶屋のゲンさん"; // 17 characters, 34 columns
  const line = spinnerLine(`${name} is thinking`, { frame: "⠋", seconds: 1.21, columns: 40, style: plain });
  assert.equal(line, "⠋ 北の門を守る年老いた鍛冶屋のゲ… 1.2s");
  assert.ok(displayWidth(line) < 40);
  // An emoji sequence is not cut, and counts two columns.
  assert.equal(
    spinnerLine("👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦 x", { frame: "⠋", seconds: 0.5, columns: 15, style: plain }),
    "⠋ 👨‍👩‍👧‍👦👨‍👩‍👧‍👦… 0.5s",
  );
  // A line that fits, or no terminal width known: the whole label.
  assert.equal(
    spinnerLine("ゲン is thinking", { frame: "⠋", seconds: 0.2, columns: 40, style: plain }),
    "⠋ ゲン is thinking 0.2s",
  );
  assert.equal(
    spinnerLine(name, { frame: "⠋", seconds: 0.2, columns: undefined, style: plain }),
    `⠋ ${name} 0.2s`,
  );
  // A terminal that reports no width (0 columns: some terminal emulators, a bare pseudo-terminal) is one whose
  // width is not known: the label is shown whole, not cut to "…".
  assert.equal(
    spinnerLine("Gen is thinking", { frame: "⠋", seconds: 0.2, columns: 0, style: plain }),
    "⠋ Gen is thinking 0.2s",
  );
  assert.equal(displayWidth("Grüße e\u0301 مرحبا"), 13);
  assert.equal(displayWidth("全角ＡＢ👍🏽🇯🇵"), 12);
});

Deno.test("besideQuestion: a tool question that wrapped on a narrow terminal is erased on all its rows", () => {
  const s = makeStyle(true);
  // 53 columns (5 + 5 full-width characters take 20; the colors take none): two rows at 40 columns.
  const question = `  ${s.yellow("?")} ${s.bold("金貨を渡す")} ${
    s.dim('{"count":5,"to":"プレイヤー"}')
  } output› `;
  assert.equal(displayWidth('  ? 金貨を渡す {"count":5,"to":"プレイヤー"} output› '), 53);
  assert.equal(
    besideQuestion("  ↳ ok\n", { question, columns: 40 }),
    `\r\x1b[1A\x1b[J  ↳ ok\n${question}`,
  );
  // On one row (or with no width known) its row is cleared, as before.
  assert.equal(
    besideQuestion("  ↳ ok\n", { question, columns: 80 }),
    `\r\x1b[K  ↳ ok\n${question}`,
  );
  assert.equal(besideQuestion("  ↳ ok\n", { question }), `\r\x1b[K  ↳ ok\n${question}`);
  assert.equal(
    besideQuestion("  ↳ ok\n", { question: "x".repeat(40), columns: 40 }),
    `\r\x1b[K  ↳ ok\n${"x".repeat(40)}`,
  );
  assert.equal(
    besideQuestion("  ↳ ok\n", { question: "あ".repeat(41), columns: 40 }),
    `\r\x1b[2A\x1b[J  ↳ ok\n${"あ".repeat(41)}`,
  );
});
