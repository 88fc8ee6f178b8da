import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { statusWithin } from "../helpers/deadline.ts";
import { Fixtures, oam, oamCommand, StreamWatcher } from "./cli_helper.ts";

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
  assert.equal(r.code, 0, r.stderr);
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
  assert.equal(r.stderr, "Error: unknown command '/bogus'; type /help. [usage]\n");
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
  assert.match(r.stderr, /^Error: The model .* is unavailable .*\[model_unavailable\]\n$/);
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
