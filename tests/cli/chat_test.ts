import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { statusWithin } from "../helpers/deadline.ts";
import { Fixtures, oam, oamCommand, StreamWatcher } from "./cli_helper.ts";
import { modelServer, text } from "./turn_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());
const tools = await fx.write("tools.json", [
  {
    name: "get_weather",
    description: "Weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  },
  { name: "now", description: "The time", "x-oam": { command: ["echo", "noon"] } },
]);

function entries(saved: JsonObject): JsonObject[] {
  return ((saved.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
}

Deno.test("chat: a piped session with a tool answered at the prompt and slash commands", async () => {
  const script = await fx.write("session.json", [
    { text: "Hi! How can I help?" },
    { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
    { template: "It is {toolOutput} in Oslo." },
    { toolCalls: [{ name: "now", arguments: {} }] },
    { template: "It is {toolOutput}." },
  ]);
  const save = fx.path("chat.json");
  const input = [
    "hello",
    "weather in oslo?",
    "snowy",
    "/usage",
    "",
    "what time is it?",
    "/tools",
    `/save ${save}`,
    "/bogus",
    "/exit",
    "never read",
  ].join("\n");
  const r = await oam(["chat", "--script", script, "--tools", tools], { stdin: `${input}\n` });
  // The session goes on after the unknown /bogus, and the exit code says a line was refused, as in oam npc.
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stdout,
    [
      "Hi! How can I help?",
      '  ⚙ get_weather {"city":"Oslo"}',
      "  ↳ snowy",
      "It is snowy in Oslo.",
      "last turn: in 18 · out 13 · total 31 tokens",
      "this chat: 2 turns · in 20 · out 18 · total 38 tokens",
      "  ⚙ now {}",
      "  ↳ noon",
      "It is noon.",
      "  get_weather (you answer) Weather for a city",
      "  now (command) The time",
      `(saved to ${save})`,
      "",
    ].join("\n"),
  );
  assert.equal(
    r.stderr,
    "Error: unknown command '/bogus'; type /help, or start the line with // to say it. [usage]\n",
  );
  const saved = await fx.read("chat.json") as JsonObject;
  assert.equal(entries(saved).filter((e) => e.role === "user").length, 3);
  assert.deepEqual(((saved.oam as JsonObject).tools as JsonObject[]).map((t) => t.name), [
    "get_weather",
    "now",
  ]);
});

Deno.test("chat: /error answers a tool with an error; end of input exits 0", async () => {
  const script = await fx.write("error.json", [
    { toolCalls: [{ name: "get_weather", arguments: {} }] },
    { template: "Tool said: {toolOutput}" },
  ]);
  const r = await oam(["chat", "--script", script, "--tools", tools], {
    stdin: "weather?\n/error station offline\n",
  });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.includes("  ↳ error: station offline\n"), r.stdout);
  assert.ok(r.stdout.endsWith("Tool said: Error: station offline\n"), r.stdout);
});

Deno.test("chat: --resume continues a saved conversation and --save-transcript saves each turn", async () => {
  const first = await fx.write("first.json", [{ text: "One." }]);
  const second = await fx.write("second.json", [{ text: "Two." }]);
  const save = fx.path("resume.json");
  const a = await oam(["chat", "--script", first, "-i", "Count.", "--save-transcript", save], {
    stdin: "go\n",
  });
  assert.equal(a.stdout, "One.\n");
  const b = await oam(["chat", "--script", second, "--resume", save, "--save-transcript", save], {
    stdin: "more\n/reset\n",
  });
  assert.equal(b.stdout, "Two.\n(conversation cleared)\n");
  // The save after "more" had both turns; /reset then saved an empty conversation.
  const saved = await fx.read("resume.json") as JsonObject;
  assert.deepEqual(entries(saved).map((e) => e.role), ["instructions"]);
  const c = await oam(["chat", "--script", second, "--resume", save], { stdin: "" });
  assert.equal(c.code, 0);
});

Deno.test("chat: --resume brings the saved tools (command paths relative to their file); --tools replaces them", async () => {
  const kit = fx.path("kit");
  await Deno.mkdir(kit, { recursive: true });
  await Deno.writeTextFile(`${kit}/now.sh`, "#!/bin/sh\necho noon\n");
  await Deno.chmod(`${kit}/now.sh`, 0o755);
  const kitTools = await fx.write("kit/tools.json", [
    { name: "now", description: "The time", "x-oam": { command: ["./now.sh"] } },
  ]);
  const script = await fx.write("now.json", [
    { toolCalls: [{ name: "now", arguments: {} }] },
    { template: "It is {toolOutput}." },
  ]);
  const save = fx.path("kit_chat.json");
  const first = await oam(["chat", "--script", script, "--tools", kitTools], { stdin: `/save ${save}\n` });
  assert.equal(first.stdout, `(saved to ${save})\n`);
  // Started elsewhere: ./now.sh is found next to the tools file the conversation was saved with.
  const elsewhere = await Deno.makeTempDir({ dir: fx.dir });
  const resumed = await oam(["chat", "--script", script, "--resume", save], {
    stdin: "time?\n",
    cwd: elsewhere,
  });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(resumed.stdout, "  ⚙ now {}\n  ↳ noon\nIt is noon.\n");
  assert.equal(resumed.stderr, "");
  // A tools file given with --resume wins: here `now` is a tool the user answers.
  const asked = await fx.write("now_asked.json", [{ name: "now", description: "The time" }]);
  const replaced = await oam(["chat", "--script", script, "--resume", save, "--tools", asked], {
    stdin: "time?\nfive\n",
  });
  assert.equal(replaced.code, 0, replaced.stderr);
  assert.equal(replaced.stdout, "  ⚙ now {}\n  ↳ five\nIt is five.\n");
  assert.equal(replaced.stderr, "");
});

Deno.test("chat: --resume gives the model the saved conversation before the new prompt", async () => {
  const server = modelServer([(s) => s.sse([text("One.", "stop")]), (s) => s.sse([text("Two.", "stop")])]);
  const model = `openai:${server.baseURL}#m`;
  const save = fx.path("history.json");
  try {
    const first = await oam(["chat", "--model", model, "-i", "Count.", "--save-transcript", save], {
      stdin: "go\n",
    });
    assert.equal(first.stdout, "One.\n", first.stderr);
    const resumed = await oam(["chat", "--model", model, "--resume", save], { stdin: "more\n" });
    assert.equal(resumed.stdout, "Two.\n", resumed.stderr);
    assert.deepEqual((server.chatBodies[1] as JsonObject).messages, [
      { role: "system", content: "Count." },
      { role: "user", content: "go" },
      { role: "assistant", content: "One." },
      { role: "user", content: "more" },
    ]);
  } finally {
    await server.close();
  }
});

Deno.test("chat: --resume of a conversation waiting for tool outputs exits 2 and says how to finish it", async () => {
  const script = await fx.write("pending.json", [{ toolCalls: [{ name: "get_weather", arguments: {} }] }]);
  const save = fx.path("pending_chat.json");
  const paused = await oam([
    "respond",
    "--script",
    script,
    "--tools",
    tools,
    "--save-transcript",
    save,
    "Hi",
  ]);
  assert.equal(paused.code, 10, paused.stderr);
  const r = await oam(["chat", "--script", script, "--resume", save], { stdin: "hi\n" });
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    `Error: ${save} is waiting for tool outputs; finish that turn with 'deno run -A cli.ts respond --resume ${save} ` +
      "--tool-output …' first. [usage]\n",
  );
});

Deno.test("chat: the tool and sampling flags and the instructions reach the model", async () => {
  const server = modelServer([(s) => s.sse([text("Ok.", "stop")])]);
  /** The model's request (without its messages) and system message for one chat with `flags`. */
  const request = async (flags: string[]) => {
    const r = await oam(["chat", "--tools", tools, "--model", `openai:${server.baseURL}#m`, ...flags], {
      stdin: "Hi\n",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "Ok.\n");
    const { messages, tools: offered, ...rest } = server.chatBodies.at(-1) as JsonObject;
    assert.deepEqual((offered as JsonObject[]).map((t) => (t.function as JsonObject).name), [
      "get_weather",
      "now",
    ]);
    const system = (messages as JsonObject[]).find((m) => m.role === "system");
    return { ...rest, system: system?.content ?? null };
  };
  const stream = { stream: true, stream_options: { include_usage: true } };
  try {
    assert.deepEqual(await request([]), { model: "m", tool_choice: "auto", ...stream, system: null });
    assert.deepEqual(
      await request([
        "-i",
        "Be brief.",
        "--tool-choice",
        "none",
        "--temperature",
        "0.5",
        "--max-tokens",
        "20",
      ]),
      { model: "m", tool_choice: "none", temperature: 0.5, max_tokens: 20, ...stream, system: "Be brief." },
    );
    assert.deepEqual(await request(["--greedy", "--max-tool-rounds", "0"]), {
      model: "m",
      tool_choice: "none",
      temperature: 0,
      ...stream,
      system: null,
    });
    assert.deepEqual(await request(["--max-tool-calls", "0"]), {
      model: "m",
      tool_choice: "none",
      ...stream,
      system: null,
    });
  } finally {
    await server.close();
  }
});

Deno.test("chat: warnings about the tools go to stderr", async () => {
  const strict = await fx.write("strict_tools.json", [{
    name: "get_weather",
    description: "Weather for a city",
    parameters: { type: "object", properties: { city: { type: "string", pattern: "^[A-Z]" } } },
  }]);
  const script = await fx.write("two.json", [{ text: "One." }, { text: "Two." }]);
  const r = await oam(["chat", "--script", script, "--tools", strict], { stdin: "first\nsecond\n" });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "One.\nTwo.\n");
  assert.equal(
    r.stderr,
    "warning: get_weather: #/properties/city: pattern '^[A-Z]' is described to the model but not enforced\n",
  );
});

Deno.test("chat: a transcript that cannot be saved is an error before the first turn", async () => {
  const script = await fx.write("two.json", [{ text: "One." }, { text: "Two." }]);
  const save = fx.path("no-such-dir/chat.json");
  const r = await oam(["chat", "--script", script, "--save-transcript", save], { stdin: "first\nsecond\n" });
  assert.equal(r.code, 1, r.stderr); // io_error
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    `Error: Cannot write '${save}': the folder '${fx.path("no-such-dir")}' does not exist. [io_error]\n`,
  );
});

Deno.test("chat: Ctrl-C stops the answer and the chat goes on", async () => {
  const script = await fx.write("cancel.json", [
    { toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] },
    { text: "Answer to again." },
  ]);
  const child = oamCommand(["chat", "--script", script, "--tools", tools], {}).spawn();
  const writer = child.stdin.getWriter();
  const watcher = new StreamWatcher(child.stdout);
  await writer.write(new TextEncoder().encode("weather?\n"));
  await watcher.until((t) => t.includes("⚙ get_weather"));
  child.kill("SIGINT");
  await watcher.until((t) => t.includes("(stopped)"));
  await writer.write(new TextEncoder().encode("again\n"));
  await writer.close();
  const [status, stderr, stdout] = await Promise.all([
    statusWithin(child, "oam chat to exit at the end of its input"),
    new Response(child.stderr).text(),
    watcher.rest(),
  ]);
  assert.equal(status.code, 0, stderr);
  // The cancelled turn stopped at the tool; the next line got the next script step.
  assert.equal(stdout, '  ⚙ get_weather {"city":"Rome"}\n(stopped)\nAnswer to again.\n');
});

Deno.test("chat: an unavailable model exits 3; bad flags exit 2", async () => {
  const r = await oam(["chat", "--model", "openai:http://127.0.0.1:9/v1#m"], { stdin: "hi\n" });
  assert.equal(r.code, 3);
  assert.match(r.stderr, /^Error: The model .* is unavailable: .*\[model_unavailable\]\n$/);
  const ambiguous = await oam(["chat", "--max-tool-rounds", "-1"]);
  assert.equal(ambiguous.code, 2);
  assert.match(ambiguous.stderr, /--max-tool-rounds needs a value \(write --max-tool-rounds=<value>/);
  const bad = await oam(["chat", "--max-tool-rounds=-1"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--max-tool-rounds must be an integer from 0 to 1000; got '-1'\. \[usage\]/);
  const help = await oam(["chat", "--help"]);
  assert.equal(help.code, 0);
  assert.ok(help.stdout.includes("/save <file>") && help.stdout.includes("Examples:"));
});

Deno.test("chat: --tool-choice naming no tool of the chat, or required without tools, is a usage error before the model is looked at", async () => {
  // The model does not exist: the flag is checked first.
  const gone = `gguf:${fx.path("none.gguf")}`;
  const named = await oam(["chat", "--tools", tools, "--tool-choice", "bogus", "--model", gone], {
    stdin: "hi\n",
  });
  assert.deepEqual(
    [named.code, named.stdout, named.stderr],
    [2, "", "Error: --tool-choice names 'bogus', which is not one of the tools: get_weather, now. [usage]\n"],
  );
  // Without tools, a named tool and "required" are refused the way oam respond refuses them.
  const none = await oam(["chat", "--tool-choice", "get_weather", "--model", gone], { stdin: "hi\n" });
  assert.deepEqual(
    [none.code, none.stdout, none.stderr],
    [2, "", "Error: --tool-choice get_weather needs tools (--tools). [usage]\n"],
  );
  const required = await oam(["chat", "--tool-choice", "required", "--model", gone], { stdin: "hi\n" });
  assert.deepEqual(
    [required.code, required.stdout, required.stderr],
    [2, "", "Error: --tool-choice required needs tools (--tools). [usage]\n"],
  );
  const empty = await oam([
    "chat",
    "--tools",
    await fx.write("no_tools.json", []),
    "--tool-choice",
    "required",
  ], {
    stdin: "hi\n",
  });
  assert.deepEqual(
    [empty.code, empty.stdout, empty.stderr],
    [2, "", "Error: --tool-choice required needs tools (--tools). [usage]\n"],
  );
  // A tool the chat has is fine.
  const script = await fx.write("named_choice.json", [{ text: "Hi." }]);
  const ok = await oam(["chat", "--tools", tools, "--tool-choice", "now", "--script", script], {
    stdin: "hi\n",
  });
  assert.deepEqual([ok.code, ok.stdout, ok.stderr], [0, "Hi.\n", ""]);
});

Deno.test("chat: a failed turn ends a piped session with its exit code; the lines after it still run", async () => {
  const script = await fx.write("failing.json", [
    { text: "Hi." },
    { error: "guardrail_violation" },
    { text: "Still here." },
  ]);
  const r = await oam(["chat", "--script", script], { stdin: "hello\nsomething bad\nagain\n" });
  assert.deepEqual([r.code, r.stdout, r.stderr], [
    4, // guardrail_violation: CI tells the failed turn from a clean run
    "Hi.\nStill here.\n",
    "Error: Scripted guardrail_violation. [guardrail_violation]\n",
  ]);
  const clean = await oam(["chat", "--script", script], { stdin: "hello\n" });
  assert.equal(clean.code, 0, clean.stderr);
});

Deno.test("chat: a scripted error step fails its turn only; the next line plays the next step", async () => {
  const script = await fx.write("error_once.json", [
    { error: "generation_failed", message: "The forge is cold." },
    { text: "Second answer." },
  ]);
  const r = await oam(["chat", "--script", script], { stdin: "first\nsecond\n" });
  assert.deepEqual([r.code, r.stdout, r.stderr], [
    1,
    "Second answer.\n",
    "Error: The forge is cold. [generation_failed]\n",
  ]);
});

Deno.test("chat: a saved conversation holds its toolsDir relative to the file; resumed after the folder moved", async () => {
  const home = await Deno.makeTempDir({ dir: fx.dir, prefix: "checkout-" });
  await Deno.mkdir(`${home}/tools`);
  await Deno.mkdir(`${home}/golden`);
  await Deno.writeTextFile(`${home}/tools/menu.txt`, "stew 8");
  await Deno.writeTextFile(
    `${home}/tools/tools.json`,
    JSON.stringify([{
      name: "menu",
      description: "The menu.",
      "x-oam": { command: ["cat", "menu.txt"], cwd: "." },
    }]),
  );
  const script = await fx.write("hello_only.json", [{ text: "Hello." }]);
  const a = await oam(["chat", "--script", script, "--tools", "tools/tools.json"], {
    stdin: "hi\n/save golden/chat.json\n",
    cwd: home,
  });
  assert.equal(a.code, 0, a.stderr);
  const saved = JSON.parse(await Deno.readTextFile(`${home}/golden/chat.json`));
  assert.equal(saved.oam.toolsDir, "../tools");
  const moved = `${home}-moved`;
  await Deno.rename(home, moved);
  const steps = await fx.write("menu_steps.json", [
    { toolCalls: [{ name: "menu", arguments: {} }] },
    { template: "We have {toolOutput}." },
  ]);
  const r = await oam([
    "respond",
    "--resume",
    `${moved}/golden/chat.json`,
    "--script",
    steps,
    "--no-stdin",
    "Food?",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "We have stew 8.\n");
});
