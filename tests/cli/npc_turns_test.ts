/**
 * How `oam npc` shows one turn, the way a player meets it: the command runs as a process with piped stdin and
 * stdout (and, for the terminal-only parts, on a pseudo-terminal), talking to a scripted model or to a mock
 * OpenAI-compatible server whose streams the test holds open or cuts off. A scripted step arrives in one go,
 * so what only a streaming model does (text on screen before the turn ends, a shown line retracted) uses the
 * mock server.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
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

const ASK_COOK: JsonObject = {
  name: "ask_cook",
  description: "Ask the cook.",
  parameters: { type: "object", properties: { q: { type: "string" } } },
};

/** Writes a persona file for Mira (no suggested replies unless `options` asks) and returns its path. */
function mira(name: string, options: JsonObject = {}, tools: JsonValue[] = [ASK_COOK]): Promise<string> {
  return fx.write(name, {
    npc: "mira",
    persona: { name: "Mira" },
    options: { playerOptionCount: 0, ...options },
    tools,
  });
}

Deno.test("npc: the line is shown as it streams in, while the model is still answering", async () => {
  const more = gate();
  const server = modelServer([
    () => gatedSse([text("[happy] Come in")], more.opened, [text(", quick!", "stop")]),
  ]);
  const persona = await mira("streaming.json", { replyFormat: "text", toolChoice: "none" });
  const c = new Conversation(["npc", persona, "--model", `openai:${server.baseURL}#m`]);
  try {
    await c.say("Hello?");
    await c.until("Come in");
    // The model server holds the rest of the answer back until the first piece is on screen.
    assert.equal(c.out.text, "Mira [happy]: Come in");
    more.open();
    const r = await c.end();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "Mira [happy]: Come in, quick!\n");
    assert.equal(r.stderr, "");
  } finally {
    more.open();
    await c.kill();
    await server.close();
  }
});

Deno.test("npc: a shown line the bridge rewrites is printed again under a new header", async () => {
  // The line is shown without its opening quote while it streams (it might be quotes around the whole
  // line, which are dropped); the final line keeps both quotes, so it replaces the shown one.
  const script = await fx.write("rewrite.json", [
    { json: { emotion: "amused", line: '"Aye," she laughs, "the stew."', ends_conversation: false } },
  ]);
  const r = await oam(["npc", await mira("rewrite.jsonc"), "--script", script], { stdin: "Food?\n" });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    'Mira [amused]: Aye," she laughs, "the stew.\nMira [amused]: "Aye," she laughs, "the stew."\n',
  );
  assert.equal(r.stderr, "");
});

Deno.test("npc: a line cut off by a tool call ends before the call; the reply after it gets a header", async () => {
  // Turn 1: the answer after the tool replaces what was said before it (a reset); turn 2: it continues it.
  const server = modelServer([
    (s) => s.sse([text("[happy] Let me ask."), toolCallChunk("ask_cook", { q: "hot?" })]),
    (s) => s.sse([text("[happy] It is hot.", "stop")]),
    (s) => s.sse([text("[curious] Let me"), toolCallChunk("ask_cook", { q: "salt?" })]),
    (s) => s.sse([text("[curious] Let me see: salty.", "stop")]),
  ]);
  try {
    const persona = await mira("tool_text.json", { replyFormat: "text", toolChoice: "auto" });
    const r = await oam(["npc", persona, "--model", `openai:${server.baseURL}#m`], {
      stdin: "Hot?\nboiling\nSalt?\nlots\n",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      [
        "Mira [happy]: Let me ask.",
        '  ⚙ ask_cook {"q":"hot?"}',
        "  ↳ boiling",
        "Mira [happy]: It is hot.",
        "Mira [curious]: Let me",
        '  ⚙ ask_cook {"q":"salt?"}',
        "  ↳ lots",
        // The continuation is a delta (" see: salty."): the line is shown again whole, then continued.
        "Mira [curious]: Let me see: salty.",
        "",
      ].join("\n"),
    );
    assert.equal(r.stderr, "");
  } finally {
    await server.close();
  }
});

Deno.test("npc: a blocked reply is retracted: the retry's line replaces it, with the retry's emotion", async () => {
  const server = modelServer([
    (s) => s.sse([text('{"emotion":"angry","line":"You fool, I will'), text("", "content_filter")]),
    (s) => s.sse([text("[worried] Let us"), text(" talk.", "stop")]),
  ]);
  try {
    const r = await oam(["npc", await mira("retry.json", {}, []), "--model", `openai:${server.baseURL}#m`], {
      stdin: "Hi\n",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "Mira [angry]: You fool, I will\nMira [worried]: Let us talk.\n");
    assert.equal(r.stderr, "");
    assert.equal(server.chatBodies.length, 2);
  } finally {
    await server.close();
  }
});

Deno.test("npc: an emotion that changes under a shown line is noted; a fallback line is marked", async () => {
  // Blocked after "[angry] Hmm.": the fallback line is the same text, so only the emotion changes.
  const server = modelServer([(s) => s.sse([text("[angry] Hmm."), text("", "content_filter")])]);
  try {
    const persona = await mira("now.json", {
      replyFormat: "text",
      toolChoice: "none",
      fallbackLines: ["Hmm."],
    });
    const r = await oam(["npc", persona, "--model", `openai:${server.baseURL}#m`], { stdin: "Hi\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      "Mira [angry]: Hmm.\n  (now neutral)\n  (a fallback line: the model's reply was blocked)\n",
    );
    assert.equal(r.stderr, "");
  } finally {
    await server.close();
  }
});

Deno.test("npc: blocked, failed and model-cancelled turns, and a tool error; the conversation goes on, the exit code is the failure's", async () => {
  const script = await fx.write("failures.json", [
    { error: "guardrail_violation" },
    { error: "context_size_exceeded", message: "Too much talk." },
    { error: "cancelled" },
    { toolCalls: [{ name: "ask_cook", arguments: { q: "stew?" } }] },
    { json: { emotion: "sad", line: "No stew today.", ends_conversation: false } },
  ]);
  const persona = await mira("failures.jsonc", { replyFormat: "structured" });
  const r = await oam(["npc", persona, "--script", script], {
    stdin: "Hi\nTell me everything.\nWell?\nStew?\n/error out of stew\n",
  });
  assert.equal(r.code, 5, r.stderr); // the failed turn's (context_size_exceeded); a fallback line or (stopped) is none
  assert.equal(
    r.stdout,
    [
      "Mira [neutral]: Let's talk about something else.",
      "  (a fallback line: the model's reply was blocked)",
      "(stopped)",
      '  ⚙ ask_cook {"q":"stew?"}',
      "  ↳ error: out of stew",
      "Mira [sad]: No stew today.",
      "",
    ].join("\n"),
  );
  assert.equal(r.stderr, "Error: Too much talk. [context_size_exceeded]\n");
});

Deno.test("npc: Ctrl-C (SIGINT) stops a turn waiting for a tool; the next line is a new turn", async () => {
  const script = await fx.write("sigint_tool.json", [
    { toolCalls: [{ name: "ask_cook", arguments: { q: "hot?" } }] },
    { json: { emotion: "happy", line: "Still here.", ends_conversation: false } },
  ]);
  const c = new Conversation(["npc", await mira("sigint_tool.jsonc"), "--script", script]);
  try {
    await c.say("Is it hot?");
    await c.until("⚙ ask_cook");
    c.child.kill("SIGINT");
    await c.until("(stopped)");
    // The withdrawn tool question does not take this line as the tool's output.
    await c.say("Still there?");
    const r = await c.end();
    assert.equal(r.code, 0, r.stderr);
    // The cancelled call's completion (an error record) is part of the unwinding: not shown.
    assert.equal(r.stdout, '  ⚙ ask_cook {"q":"hot?"}\n(stopped)\nMira [happy]: Still here.\n');
    assert.equal(r.stderr, "");
  } finally {
    await c.kill();
  }
});

Deno.test("npc: Ctrl-C (SIGINT) while a line streams stops the model's answer; the next line is a new turn", async () => {
  const server = modelServer([
    (s) => s.sse([text("[worried] Let me think")], { done: false, hang: true }),
    (s) => s.sse([text("[happy] Yes.", "stop")]),
  ]);
  const persona = await mira("sigint_stream.json", { replyFormat: "text", toolChoice: "none" });
  const c = new Conversation(["npc", persona, "--model", `openai:${server.baseURL}#m`]);
  try {
    await c.say("Well?");
    await c.until("Let me think");
    c.child.kill("SIGINT");
    await c.until("(stopped)");
    await withDeadline(server.cancelled, "the model's answer to be cancelled");
    await c.say("Still there?");
    const r = await c.end();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "Mira [worried]: Let me think\n(stopped)\nMira [happy]: Yes.\n");
    assert.equal(r.stderr, "");
  } finally {
    await c.kill();
    await server.close();
  }
});

Deno.test("npc: Ctrl-C (SIGINT) stops a /bark waiting for the model; the next line is a new turn", async () => {
  const barking = gate();
  const server = modelServer([
    (s) => {
      barking.open(); // the bark reached the model, which never answers it
      return s.sse([], { done: false, hang: true });
    },
    (s) => s.sse([text("[happy] Yes.", "stop")]),
  ]);
  const persona = await mira("sigint_bark.json", { replyFormat: "text", toolChoice: "none" });
  const c = new Conversation(["npc", persona, "--model", `openai:${server.baseURL}#m`]);
  try {
    await c.say("/bark rain");
    await withDeadline(barking.opened, "the bark to reach the model");
    c.child.kill("SIGINT");
    await c.until("(stopped)");
    await c.say("Still there?");
    const r = await c.end();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "(stopped)\nMira [happy]: Yes.\n");
    assert.equal(r.stderr, "");
  } finally {
    barking.open();
    await c.kill();
    await server.close();
  }
});

Deno.test("npc: Ctrl-C (SIGINT) stops the greeting waiting for the model; the first line is a turn", async () => {
  const greeting = gate();
  const server = modelServer([
    (s) => {
      greeting.open(); // the greeting reached the model, which never answers it
      return s.sse([], { done: false, hang: true });
    },
    (s) => s.sse([text("[happy] Welcome.", "stop")]),
  ]);
  const persona = await fx.write("sigint_greeting.json", {
    persona: { name: "Mira" },
    options: { playerOptionCount: 0, replyFormat: "text" },
    greeting: "The player walks in.",
  });
  const c = new Conversation(["npc", persona, "--model", `openai:${server.baseURL}#m`]);
  try {
    await withDeadline(greeting.opened, "the greeting to reach the model");
    c.child.kill("SIGINT");
    await c.until("(stopped)");
    await c.say("Hello?");
    const r = await c.end();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "(stopped)\nMira [happy]: Welcome.\n");
    assert.equal(r.stderr, "");
  } finally {
    greeting.open();
    await c.kill();
    await server.close();
  }
});

Deno.test("npc: piped input ending while a tool waits for its output stops the turn, and the command fails (exit 2)", async () => {
  const script = await fx.write("eof_tool.json", [
    { toolCalls: [{ name: "ask_cook", arguments: { q: "hot?" } }] },
    { json: { emotion: "happy", line: "Never said.", ends_conversation: false } },
  ]);
  const r = await oam(["npc", await mira("eof_tool.jsonc"), "--script", script], { stdin: "Is it hot?\n" });
  // Piped input one answer short is a failure a CI job sees (it exited 0).
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '  ⚙ ask_cook {"q":"hot?"}\n(stopped)\n');
  assert.equal(
    r.stderr,
    'Error: The input ended while ask_cook {"q":"hot?"} waited for its output: the turn was stopped. ' +
      "[missing_tool_output]\n",
  );
});

Deno.test({
  name: "npc: a command tool the bridge gives up on (its timeout) is stopped while the turn goes on",
  ignore: Deno.build.os === "windows", // the command is a POSIX shell script
  fn: async () => {
    const fifo = await makeFifo(fx.path("stopped.fifo"));
    const slow = slowLookupTool(fifo);
    const script = await fx.write("tool_timeout.json", [
      { toolCalls: [{ name: "slow_lookup", arguments: {} }] },
      { toolCalls: [{ name: "ask_cook", arguments: { q: "hot?" } }] },
      { json: { emotion: "happy", line: "Found it.", ends_conversation: false } },
    ]);
    const persona = await mira("tool_timeout.jsonc", {}, [slow, ASK_COOK]);
    const c = new Conversation(["npc", persona, "--script", script]);
    try {
      await c.say("Look it up.");
      // The turn now waits for ask_cook's output from stdin: only the bridge's tool/cancel stops the command.
      await c.until("⚙ ask_cook");
      assert.equal(await withDeadline(Deno.readTextFile(fifo), "the command to be stopped"), "stopped\n");
      await c.say("boiling");
      const r = await c.end();
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        [
          "  ⚙ slow_lookup {}",
          "  ↳ error: Tool 'slow_lookup' timed out after 1s.",
          '  ⚙ ask_cook {"q":"hot?"}',
          "  ↳ boiling",
          "Mira [happy]: Found it.",
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
    "npc on a terminal: the tool question and its answer; Ctrl-C between turns, Ctrl-C and Ctrl-D at a tool question",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: async () => {
    const script = await fx.write("terminal.json", [
      { toolCalls: [{ name: "ask_cook", arguments: { q: "hot?" } }] },
      { json: { emotion: "happy", line: "Boiling, she says.", ends_conversation: false } },
      { toolCalls: [{ name: "ask_cook", arguments: { q: "cold?" } }] },
      { toolCalls: [{ name: "ask_cook", arguments: { q: "salty?" } }] },
      { json: { emotion: "sad", line: "Never said.", ends_conversation: false } },
    ]);
    const t = new Terminal(
      ["npc", await mira("terminal.jsonc"), "--script", script],
      { stderr: fx.path("terminal.err") },
    );
    try {
      await t.prompt("you› ");
      await t.type("Is it hot?\n");
      await t.prompt("output› ");
      await t.type("boiling\n");
      await t.prompt("you› ");
      await t.type("\x03"); // Ctrl-C between turns: only a hint (the turn before is over)
      await t.prompt("quit)\r\nyou› ");
      await t.type("Cold?\n");
      await t.prompt("output› ");
      await t.type("\x03"); // Ctrl-C: the terminal sends SIGINT
      await t.prompt("you› ");
      await t.type("Salty?\n");
      await t.prompt("output› ");
      await t.type("\x04"); // Ctrl-D: the input ends while the tool waits
      const r = await t.exit();
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        [
          `Talking to Mira (scripted (${script})). Type what you say, or a number to pick a reply. /help for ` +
          "commands, Ctrl-D to quit.",
          "you› Is it hot?",
          '  ⚙ ask_cook {"q":"hot?"}',
          '  ? ask_cook {"q":"hot?"} output› boiling',
          "  ↳ boiling",
          "Mira [happy]: Boiling, she says.",
          "you› ^C",
          "(Ctrl-D or /exit to quit)",
          "you› Cold?",
          '  ⚙ ask_cook {"q":"cold?"}',
          '  ? ask_cook {"q":"cold?"} output› ^C',
          "(stopped)",
          "you› Salty?",
          '  ⚙ ask_cook {"q":"salty?"}',
          '  ? ask_cook {"q":"salty?"} output› ',
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
  const fifo = await makeFifo(fx.path(`npc_clock_tty.fifo`));
  const clock = { name: "clock", description: "The time.", "x-oam": { command: `cat "${fifo}"` } };
  const script = await fx.write(`npc_parallel.json`, [
    {
      toolCalls: [
        { name: "ask_cook", arguments: { q: "hot?" } },
        { name: "ask_cook", arguments: { q: "salty?" } },
      ],
    },
    { json: { emotion: "happy", line: "Hot and salty.", ends_conversation: false } },
    { toolCalls: [{ name: "clock", arguments: {} }, { name: "ask_cook", arguments: { q: "done?" } }] },
    { json: { emotion: "happy", line: "Dinner at noon.", ends_conversation: false } },
  ]);
  // Each question names its call: the first one's is asked again below the second call's line.
  const question = (q: string) => `  ? ask_cook {"q":"${q}"} output› `;
  const t = new Terminal(
    ["npc", await mira(`npc_parallel.jsonc`, {}, [ASK_COOK, clock]), "--script", script],
    { stderr: fx.path("npc_parallel.err") },
  );
  try {
    await t.prompt("you› ");
    await t.type("Dinner?\n");
    // The second call starts while the first one's question is up: the question is asked again below it.
    await t.prompt(`{"q":"salty?"}\r\n${question("hot?")}`);
    await t.type("boiling\n");
    // The second question is up when the first call completes.
    await t.prompt(`↳ boiling\r\n${question("salty?")}`);
    await t.type("very\n");
    await t.prompt("you› ");
    await t.type("When?\n");
    await t.prompt(`{"q":"done?"}\r\n${question("done?")}`);
    await withDeadline(Deno.writeTextFile(fifo, "noon\n"), "the command tool to read its output");
    await t.prompt(`↳ noon\r\n${question("done?")}`);
    await t.type("soon\n");
    await t.prompt("you› ");
    await t.type("\x04");
    const r = await t.exit();
    assert.equal(r.code, 0, r.stderr);
    // The question's line is cleared.
    const off = "\r\x1b[K";
    assert.equal(
      r.stdout,
      [
        `Talking to Mira (scripted (${script})). Type what you say, or a number to pick a reply. /help for ` +
        "commands, Ctrl-D to quit.",
        "you› Dinner?",
        '  ⚙ ask_cook {"q":"hot?"}',
        `${question("hot?")}${off}  ⚙ ask_cook {"q":"salty?"}`,
        `${question("hot?")}boiling`,
        `${question("salty?")}${off}  ↳ boiling`,
        `${question("salty?")}very`,
        "  ↳ very",
        "Mira [happy]: Hot and salty.",
        "you› When?",
        "  ⚙ clock {}",
        '  ⚙ ask_cook {"q":"done?"}',
        `${question("done?")}${off}  ↳ noon`,
        `${question("done?")}soon`,
        "  ↳ soon",
        "Mira [happy]: Dinner at noon.",
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
    "npc on a terminal: a tool question stays the last line while the other calls of its round start and end",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: parallelRounds,
});

/**
 * `oam npc` typed at a terminal with stdout going to a file (`pipe`: through a pipe): the banner, the prompt,
 * the tool questions and the Ctrl-C hint are on the terminal (stderr); the file gets the conversation only.
 */
async function stdoutElsewhere(pipe: boolean): Promise<void> {
  const name = pipe ? "npc_piped" : "npc_redirected";
  const script = await fx.write(`${name}.json`, [
    { toolCalls: [{ name: "ask_cook", arguments: { q: "hot?" } }] },
    { json: { emotion: "happy", line: "Boiling, she says.", ends_conversation: false } },
    { toolCalls: [{ name: "ask_cook", arguments: { q: "cold?" } }] },
  ]);
  const file = fx.path(`${name}.out`);
  const t = new Terminal(["npc", await mira(`${name}.jsonc`), "--script", script], {
    stdout: { file, pipe },
  });
  const question = (q: string) => `  ? ask_cook {"q":"${q}"} output› `;
  try {
    await t.prompt("you› ");
    await t.type("Is it hot?\n");
    await t.prompt(question("hot?"));
    await t.type("boiling\n");
    await t.prompt("you› ");
    await t.type("\x03"); // Ctrl-C between turns: the hint
    await t.prompt("quit)\r\nyou› ");
    await t.type("Cold?\n");
    await t.prompt(question("cold?"));
    await t.type("\x03"); // Ctrl-C at the question: its line ends, the prompt is on a line of its own
    await t.prompt("^C\r\nyou› ");
    await t.type("\x04");
    const r = await t.exit();
    if (!pipe) assert.equal(r.code, 0); // through a pipe, the code is the one of cat
    assert.equal(
      withoutSpinner(r.stdout),
      [
        `Talking to Mira (scripted (${script})). Type what you say, or a number to pick a reply. /help for ` +
        "commands, Ctrl-D to quit.",
        "you› Is it hot?",
        `${question("hot?")}boiling`,
        "you› ^C",
        "(Ctrl-D or /exit to quit)",
        "you› Cold?",
        `${question("cold?")}^C`,
        "you› ",
        "",
      ].join("\r\n"),
    );
    assert.equal(
      await Deno.readTextFile(file),
      [
        '  ⚙ ask_cook {"q":"hot?"}',
        "  ↳ boiling",
        "Mira [happy]: Boiling, she says.",
        '  ⚙ ask_cook {"q":"cold?"}',
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
    "npc on a terminal with stdout to a file: prompts and tool questions on the terminal, not in the file",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: () => stdoutElsewhere(false),
});

Deno.test({
  name:
    "npc on a terminal with stdout to a pipe: prompts and tool questions on the terminal, not in the pipe",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: () => stdoutElsewhere(true),
});

Deno.test("npc: a scripted call of a tool the NPC does not have is not shown as built-in", async () => {
  // The shopkeeper's script calls check_stock; a persona without that tool got "⚙ check_stock … (built-in)"
  // and then "There is no tool named 'check_stock'", as if the bridge had such a tool of its own.
  const script = await fx.write("stranger_steps.json", [
    { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
    { text: "[happy] Welcome." },
  ]);
  const persona = await mira("stranger.jsonc", { replyFormat: "text" }, []);
  const r = await oam(["npc", persona, "--script", script], { stdin: "Ale?\n" });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    '  ⚙ check_stock {"item":"ale"} (not one of its tools)\n' +
      "  ↳ error: There is no tool named 'check_stock'.\n" +
      "Mira [happy]: Welcome.\n",
  );
});
