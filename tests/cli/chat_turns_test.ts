/**
 * How `oam chat` shows one turn, the way a user meets it: the command runs as a process with piped stdin and
 * stdout (and, for the terminal-only parts, on a pseudo-terminal), talking to a scripted model or to a mock
 * OpenAI-compatible server whose streams the test holds open or cuts off. A scripted step arrives in one go,
 * so what only a streaming model does (text on screen before the turn ends, text before a tool call, a
 * retried answer) uses the mock server. tests/cli/chat_test.ts has the command's flags, files and commands.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { withDeadline } from "../helpers/deadline.ts";
import { Fixtures, oam } from "./cli_helper.ts";
import {
  Conversation,
  gate,
  gatedSse,
  makeFifo,
  modelServer,
  slowLookupTool,
  Terminal,
  text,
  toolCallChunk,
  withoutSpinner,
} from "./turn_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());

const GET_WEATHER: JsonObject = {
  name: "get_weather",
  description: "Weather for a city.",
  parameters: { type: "object", properties: { city: { type: "string" } } },
};
const tools = await fx.write("tools.json", [GET_WEATHER]);

/** The context error an OpenAI-compatible server sends inside a stream. */
const CONTEXT_ERROR = {
  error: {
    code: 400,
    message: "the request exceeds the available context size",
    type: "exceed_context_size_error",
  },
};

Deno.test("chat: the answer is shown as it streams in, while the model is still answering", async () => {
  const more = gate();
  const server = modelServer([() => gatedSse([text("Hello")], more.opened, [text(", world.", "stop")])]);
  const c = new Conversation(["chat", "--model", `openai:${server.baseURL}#m`]);
  try {
    await c.say("Hi");
    await c.until("Hello");
    // The model server holds the rest of the answer back until the first piece is on screen.
    assert.equal(c.out.text, "Hello");
    more.open();
    const r = await c.end();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "Hello, world.\n");
    assert.equal(r.stderr, "");
  } finally {
    more.open();
    await c.kill();
    await server.close();
  }
});

Deno.test("chat: an answer the model gives again (a retry after a broken stream) is shown under '(rewritten)'", async () => {
  const server = modelServer([
    (s) => s.sse([text("Hello wor")], { done: false }), // ends early: generation_failed, retried
    (s) => s.sse([text("Hello world.", "stop")]),
  ]);
  try {
    const r = await oam(["chat", "--model", `openai:${server.baseURL}#m`], { stdin: "Hi\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "Hello wor\n(rewritten)\nHello world.\n");
    assert.equal(r.stderr, "");
    assert.equal(server.chatBodies.length, 2);
  } finally {
    await server.close();
  }
});

Deno.test("chat: text before a tool call ends before the call; the answer after it is shown whole", async () => {
  // Turn 1: the answer after the tool replaces what was said before it (a reset); turn 2: it continues it,
  // in two pieces (the second waits until the first is on screen).
  const more = gate();
  const server = modelServer([
    (s) => s.sse([text("Let me look."), toolCallChunk("get_weather", { city: "Oslo" })]),
    (s) => s.sse([text("It is sunny.", "stop")]),
    (s) => s.sse([text("In Rome"), toolCallChunk("get_weather", { city: "Rome" })]),
    () => gatedSse([text("In Rome it")], more.opened, [text(" rains.", "stop")]),
  ]);
  const c = new Conversation(["chat", "--tools", tools, "--model", `openai:${server.baseURL}#m`]);
  try {
    for (const line of ["Oslo?", "sunny", "Rome?", "rain"]) await c.say(line);
    await c.until("↳ rain\nIn Rome it");
    more.open();
    const r = await c.end();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      [
        "Let me look.",
        '  ⚙ get_weather {"city":"Oslo"}',
        "  ↳ sunny",
        "(rewritten)",
        "It is sunny.",
        "In Rome",
        '  ⚙ get_weather {"city":"Rome"}',
        "  ↳ rain",
        // The continuation is a delta (" it"): the answer is shown again whole, then continued (" rains.").
        "In Rome it rains.",
        "",
      ].join("\n"),
    );
    assert.equal(r.stderr, "");
  } finally {
    more.open();
    await c.kill();
    await server.close();
  }
});

Deno.test("chat: a failure after streamed text ends the line; the error goes to stderr; the chat goes on", async () => {
  const fail = gate();
  const server = modelServer([
    () => gatedSse([text("Let me th")], fail.opened, [CONTEXT_ERROR]),
    (s) => s.sse([text("Fine.", "stop")]),
  ]);
  const c = new Conversation(["chat", "--model", `openai:${server.baseURL}#m`]);
  try {
    await c.say("Think.");
    await c.until("Let me th");
    fail.open();
    await c.say("Again.");
    const r = await c.end();
    assert.equal(r.code, 5, r.stderr); // the failed turn's (context_size_exceeded)
    assert.equal(r.stdout, "Let me th\nFine.\n");
    assert.equal(
      r.stderr,
      "Error: The conversation exceeds the model's context size: the request exceeds the available context " +
        "size [context_size_exceeded]\n",
    );
  } finally {
    fail.open();
    await c.kill();
    await server.close();
  }
});

Deno.test("chat: failed and model-cancelled turns, a tool error and a budget error; the prompt goes as typed", async () => {
  const script = await fx.write("failures.json", [
    { error: "context_size_exceeded", message: "Too much talk." },
    { error: "cancelled" },
    { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
    { template: "Said: {toolOutput}" },
    {
      toolCalls: [
        { name: "get_weather", arguments: { city: "Rome" } },
        { name: "get_weather", arguments: { city: "Bern" } },
      ],
    },
    { template: "Both: {toolOutputs}" },
    { template: "[{prompt}]" },
  ]);
  const r = await oam(["chat", "--script", script, "--tools", tools, "--max-tool-calls", "1"], {
    stdin: "Tell me everything.\nWell?\nOslo?\n/error station offline\nRome and Bern?\nrain\n  as typed  \n",
  });
  assert.equal(r.code, 5, r.stderr); // the failed turn's (context_size_exceeded); (stopped) is none
  assert.equal(
    r.stdout,
    [
      "(stopped)",
      '  ⚙ get_weather {"city":"Oslo"}',
      "  ↳ error: station offline",
      "Said: Error: station offline",
      // The second call is over the budget (--max-tool-calls 1): the bridge answers it, the first is asked.
      '  ⚙ get_weather {"city":"Rome"}',
      '  ⚙ get_weather {"city":"Bern"}',
      "  ↳ error: The tool budget for this turn is used up. Answer with the information you already have.",
      "  ↳ rain",
      "Both: rain",
      "Error: The tool budget for this turn is used up. Answer with the information you already have.",
      "[  as typed  ]",
      "",
    ].join("\n"),
  );
  assert.equal(r.stderr, "Error: Too much talk. [context_size_exceeded]\n");
});

Deno.test("chat: Ctrl-C (SIGINT) while text streams stops the model's answer; the next line is a new turn", async () => {
  const server = modelServer([
    (s) => s.sse([text("Let me think")], { done: false, hang: true }),
    (s) => s.sse([text("Yes.", "stop")]),
  ]);
  const c = new Conversation(["chat", "--model", `openai:${server.baseURL}#m`]);
  try {
    await c.say("Well?");
    await c.until("Let me think");
    c.child.kill("SIGINT");
    await c.until("(stopped)");
    await withDeadline(server.cancelled, "the model's answer to be cancelled");
    await c.say("Still there?");
    const r = await c.end();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "Let me think\n(stopped)\nYes.\n");
    assert.equal(r.stderr, "");
  } finally {
    await c.kill();
    await server.close();
  }
});

Deno.test("chat: Ctrl-C (SIGINT) between turns with piped input and output changes nothing; the chat goes on", async () => {
  const script = await fx.write("sigint_idle.json", [{ text: "One." }, { text: "Two." }]);
  const c = new Conversation(["chat", "--script", script]);
  try {
    await c.say("first");
    await c.until("One.\n");
    c.child.kill("SIGINT");
    await c.say("second");
    const r = await c.end();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "One.\nTwo.\n");
    assert.equal(r.stderr, "");
  } finally {
    await c.kill();
  }
});

Deno.test({
  name: "chat: Ctrl-C between turns with piped input and a terminal to see: a hint, and the chat goes on",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: async () => {
    const script = await fx.write("sigint_piped.json", [{ text: "One." }, { text: "Two." }]);
    const fifo = await makeFifo(fx.path("sigint_piped.fifo"));
    const t = new Terminal(["chat", "--script", script], { stdin: fifo });
    let input: Deno.FsFile | null = null;
    try {
      input = await withDeadline(Deno.open(fifo, { write: true }), "oam chat to open its input");
      await input.write(new TextEncoder().encode("first\n"));
      await t.out.until((screen) => screen.includes("One.\r\n"));
      await t.type("\x03"); // Ctrl-C: the terminal sends SIGINT; the turn before is over
      await t.out.until((screen) => screen.includes("quits when it ends)\r\n"));
      await input.write(new TextEncoder().encode("second\n"));
      input.close();
      input = null;
      const r = await t.exit();
      assert.equal(r.code, 0);
      assert.equal(
        withoutSpinner(r.stdout),
        "One.\r\n^C\r\n(Ctrl-C stops a turn; the input is not a terminal: oam quits when it ends)\r\nTwo.\r\n",
      );
    } finally {
      input?.close();
      await t.kill();
    }
  },
});

Deno.test("chat: piped input ending while a tool waits for its output stops the turn, and the command fails (exit 2)", async () => {
  const script = await fx.write("eof_tool.json", [
    { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
    { text: "Never said." },
  ]);
  const r = await oam(["chat", "--script", script, "--tools", tools], { stdin: "Weather?\n" });
  // It exited 0: a piped script one answer short looked like a finished conversation.
  assert.equal(r.code, 2, r.stderr);
  // The cancelled call's completion (an error record) is part of the unwinding: not shown.
  assert.equal(r.stdout, '  ⚙ get_weather {"city":"Oslo"}\n(stopped)\n');
  assert.equal(
    r.stderr,
    'Error: The input ended while get_weather {"city":"Oslo"} waited for its output: the turn was stopped. ' +
      "[missing_tool_output]\n",
  );
  // "/exit" as the answer quits on purpose: no failure.
  const quit = await oam(["chat", "--script", script, "--tools", tools], { stdin: "Weather?\n/exit\n" });
  assert.deepEqual([quit.code, quit.stdout, quit.stderr], [
    0,
    '  ⚙ get_weather {"city":"Oslo"}\n(stopped)\n',
    "",
  ]);
});

Deno.test({
  name: "chat: a command tool the bridge gives up on (its timeout) is stopped while the turn goes on",
  ignore: Deno.build.os === "windows", // the command is a POSIX shell script
  fn: async () => {
    const fifo = await makeFifo(fx.path("stopped.fifo"));
    const script = await fx.write("tool_timeout.json", [
      { toolCalls: [{ name: "slow_lookup", arguments: {} }] },
      { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
      { template: "Found: {toolOutputs}" },
    ]);
    const both = await fx.write("tool_timeout_tools.json", [slowLookupTool(fifo), GET_WEATHER]);
    const c = new Conversation(["chat", "--script", script, "--tools", both]);
    try {
      await c.say("Look it up.");
      // The turn now waits for get_weather's output from stdin: only the bridge's tool/cancel stops the command.
      await c.until("⚙ get_weather");
      assert.equal(await withDeadline(Deno.readTextFile(fifo), "the command to be stopped"), "stopped\n");
      await c.say("sunny");
      const r = await c.end();
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        [
          "  ⚙ slow_lookup {}",
          "  ↳ error: Tool 'slow_lookup' timed out after 1s.",
          '  ⚙ get_weather {"city":"Oslo"}',
          "  ↳ sunny",
          "Found: Error: Tool 'slow_lookup' timed out after 1s.",
          "sunny",
          "",
        ].join("\n"),
      );
      assert.equal(r.stderr, "");
    } finally {
      await c.kill();
    }
  },
});

Deno.test({
  name:
    "chat on a terminal: the banner, the tool question and its answer; Ctrl-C between turns, Ctrl-C and Ctrl-D at a tool question",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: async () => {
    const script = await fx.write("terminal.json", [
      { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
      { template: "It is {toolOutput}." },
      { toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] },
      { toolCalls: [{ name: "get_weather", arguments: { city: "Bern" } }] },
      { text: "Never said." },
    ]);
    const t = new Terminal(["chat", "--script", script, "--tools", tools], {
      stderr: fx.path("terminal.err"),
    });
    try {
      await t.prompt("you› ");
      await t.type("Weather?\n");
      await t.prompt("output› ");
      await t.type("sunny\n");
      await t.prompt("you› ");
      await t.type("\x03"); // Ctrl-C between turns: only a hint (the turn before is over)
      await t.prompt("quit)\r\nyou› ");
      await t.type("Rome?\n");
      await t.prompt("output› ");
      await t.type("\x03"); // Ctrl-C: the terminal sends SIGINT
      await t.prompt("you› ");
      await t.type("Bern?\n");
      await t.prompt("output› ");
      await t.type("\x04"); // Ctrl-D: the input ends while the tool waits; no new prompt
      const r = await t.exit();
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        [
          `oam chat · scripted (${script}) · tools: get_weather · /help for commands · Ctrl-D to quit`,
          "you› Weather?",
          '  ⚙ get_weather {"city":"Oslo"}',
          '  ? get_weather {"city":"Oslo"} output› sunny',
          "  ↳ sunny",
          "It is sunny.",
          "you› ^C",
          "(Ctrl-D or /exit to quit)",
          "you› Rome?",
          '  ⚙ get_weather {"city":"Rome"}',
          '  ? get_weather {"city":"Rome"} output› ^C',
          "(stopped)",
          "you› Bern?",
          '  ⚙ get_weather {"city":"Bern"}',
          '  ? get_weather {"city":"Bern"} output› ',
          "(stopped)",
          "",
        ].join("\r\n"),
      );
      assert.equal(r.stderr, "");
    } finally {
      await t.kill();
    }
  },
});

/**
 * Two rounds of parallel tool calls on a terminal: two client calls, then a command tool with a client call.
 * The command prints what the test writes to `fifo`, so it finishes once the client call's question is up.
 */
async function parallelRounds(): Promise<void> {
  const fifo = await makeFifo(fx.path(`clock_tty.fifo`));
  const clock = { name: "clock", description: "The time.", "x-oam": { command: `cat "${fifo}"` } };
  const both = await fx.write("parallel_tools.json", [GET_WEATHER, clock]);
  const script = await fx.write("parallel.json", [
    {
      toolCalls: [
        { name: "get_weather", arguments: { city: "Oslo" } },
        { name: "get_weather", arguments: { city: "Rome" } },
      ],
    },
    { template: "{toolOutputs}" },
    { toolCalls: [{ name: "clock", arguments: {} }, { name: "get_weather", arguments: { city: "Bern" } }] },
    { template: "{toolOutputs}" },
  ]);
  // Each question names its call: Oslo's is asked again below Rome's line, and answered first.
  const question = (city: string) => `  ? get_weather {"city":"${city}"} output› `;
  const t = new Terminal(["chat", "--script", script, "--tools", both], {
    stderr: fx.path("parallel.err"),
  });
  try {
    await t.prompt("you› ");
    await t.type("Both?\n");
    // Rome's call starts while Oslo's question is up: the question is asked again below it.
    await t.prompt(`{"city":"Rome"}\r\n${question("Oslo")}`);
    await t.type("sunny\n");
    // Rome's question is up when Oslo's call completes.
    await t.prompt(`↳ sunny\r\n${question("Rome")}`);
    await t.type("rain\n");
    await t.prompt("you› ");
    await t.type("Time?\n");
    await t.prompt(`{"city":"Bern"}\r\n${question("Bern")}`);
    await withDeadline(Deno.writeTextFile(fifo, "noon\n"), "the command tool to read its output");
    await t.prompt(`↳ noon\r\n${question("Bern")}`);
    await t.type("windy\n");
    await t.prompt("you› ");
    await t.type("\x04");
    const r = await t.exit();
    assert.equal(r.code, 0, r.stderr);
    // The question's line is cleared.
    const off = "\r\x1b[K";
    assert.equal(
      r.stdout,
      [
        `oam chat · scripted (${script}) · tools: get_weather, clock · /help for commands · Ctrl-D to quit`,
        "you› Both?",
        '  ⚙ get_weather {"city":"Oslo"}',
        `${question("Oslo")}${off}  ⚙ get_weather {"city":"Rome"}`,
        `${question("Oslo")}sunny`,
        `${question("Rome")}${off}  ↳ sunny`,
        `${question("Rome")}rain`,
        "  ↳ rain",
        "sunny",
        "rain",
        "you› Time?",
        "  ⚙ clock {}",
        '  ⚙ get_weather {"city":"Bern"}',
        `${question("Bern")}${off}  ↳ noon`,
        `${question("Bern")}windy`,
        "  ↳ windy",
        "noon",
        "windy",
        "you› ",
        "",
      ].join("\r\n"),
    );
    assert.equal(r.stderr, "");
  } finally {
    await t.kill();
  }
}

Deno.test({
  name:
    "chat on a terminal: a tool question stays the last line while the other calls of its round start and end",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: parallelRounds,
});

/**
 * `oam chat` typed at a terminal with stdout going to a file (`pipe`: through a pipe): what is asked of the
 * person typing — the banner, the prompt, the tool questions, the Ctrl-C hint — is on the terminal (stderr);
 * the file gets the conversation only.
 */
async function stdoutElsewhere(pipe: boolean): Promise<void> {
  const name = pipe ? "piped" : "redirected";
  const script = await fx.write(`${name}.json`, [
    { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
    { template: "It is {toolOutput}." },
    { toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] },
    { toolCalls: [{ name: "get_weather", arguments: { city: "Bern" } }] },
    { text: "Never said." },
  ]);
  const file = fx.path(`${name}.out`);
  const t = new Terminal(["chat", "--script", script, "--tools", tools], { stdout: { file, pipe } });
  const question = (city: string) => `  ? get_weather {"city":"${city}"} output› `;
  try {
    await t.prompt("you› ");
    await t.type("Weather?\n");
    await t.prompt(question("Oslo"));
    await t.type("sunny\n");
    await t.prompt("you› ");
    await t.type("\x03"); // Ctrl-C between turns: the hint
    await t.prompt("quit)\r\nyou› ");
    await t.type("Rome?\n");
    await t.prompt(question("Rome"));
    await t.type("\x03"); // Ctrl-C at the question: its line ends, the prompt is on a line of its own
    await t.prompt("^C\r\nyou› ");
    await t.type("Bern?\n");
    await t.prompt(question("Bern"));
    await t.type("\x04"); // Ctrl-D at the question: its line ends, the chat ends
    const r = await t.exit();
    if (!pipe) assert.equal(r.code, 0); // through a pipe, the code is the one of cat
    assert.equal(
      withoutSpinner(r.stdout),
      [
        `oam chat · scripted (${script}) · tools: get_weather · /help for commands · Ctrl-D to quit`,
        "you› Weather?",
        `${question("Oslo")}sunny`,
        "you› ^C",
        "(Ctrl-D or /exit to quit)",
        "you› Rome?",
        `${question("Rome")}^C`,
        "you› Bern?",
        question("Bern"),
        "",
      ].join("\r\n"),
    );
    assert.equal(
      await Deno.readTextFile(file),
      [
        '  ⚙ get_weather {"city":"Oslo"}',
        "  ↳ sunny",
        "It is sunny.",
        '  ⚙ get_weather {"city":"Rome"}',
        "(stopped)",
        '  ⚙ get_weather {"city":"Bern"}',
        "(stopped)",
        "",
      ].join("\n"),
    );
  } finally {
    await t.kill();
  }
}

Deno.test({
  name:
    "chat on a terminal with stdout to a file: prompts and tool questions on the terminal, not in the file",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: () => stdoutElsewhere(false),
});

Deno.test({
  name:
    "chat on a terminal with stdout to a pipe: prompts and tool questions on the terminal, not in the pipe",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: () => stdoutElsewhere(true),
});

Deno.test({
  name:
    "chat on a terminal without tools: the banner says none; Ctrl-D at the prompt ends the line and the chat",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: async () => {
    const script = await fx.write("terminal_plain.json", [{ text: "Hi." }]);
    const t = new Terminal(["chat", "--script", script], { stderr: fx.path("terminal_plain.err") });
    try {
      await t.prompt("you› ");
      await t.type("Hello\n");
      await t.prompt("Hi.\r\nyou› ");
      await t.type("\x04");
      const r = await t.exit();
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        [
          `oam chat · scripted (${script}) · /help for commands · Ctrl-D to quit`,
          "you› Hello",
          "Hi.",
          "you› ",
          "",
        ].join("\r\n"),
      );
      assert.equal(r.stderr, "");
    } finally {
      await t.kill();
    }
  },
});
