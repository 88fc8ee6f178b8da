/**
 * A tools file the bridge refuses (a misspelt type in a tool's parameters, a bad or repeated name) is named in
 * the error, with the place in it, in every command that reads one: `oam tools validate`, `respond --tools`,
 * `chat --tools`, a persona file's "tools" (`oam npc`) and `serve --tools`. They used to say only the wire's
 * "tools[0].parameters: unsupported type 'strin' … (at #/properties/dir)", naming no file.
 */
import assert from "node:assert/strict";
import { Fixtures, oam } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());
const script = await fx.write("script.json", [{ text: "hi" }]);

/** A tools file whose second tool has a misspelt type in its parameters (at line 5, column 41). */
const TOOLS = `[
  {"name": "wave", "description": "Wave."},
  {"name": "look", "description": "Look around.",
   "parameters": {"type": "object",
                  "properties": {"dir": {"type": "strin"}}}}
]`;
const MISSPELT = "unsupported type 'strin' (did you mean 'string'?)";

Deno.test("a tool's bad parameters name the tools file, the place and its line in every command", async () => {
  const tools = await fx.write("tools.json", TOOLS);
  const where = `${tools}: #/1/parameters/properties/dir (line 5, column 41)`;
  const expected = `Error: ${where}: ${MISSPELT} [invalid_schema]\n`;
  const validate = await oam(["tools", "validate", tools]);
  assert.deepEqual([validate.code, validate.stderr], [2, expected]);
  const respond = await oam(["respond", "--script", script, "--tools", tools, "--no-stdin", "hi"]);
  assert.deepEqual([respond.code, respond.stderr], [2, expected]);
  const chat = await oam(["chat", "--script", script, "--tools", tools], { stdin: "hi\n" });
  assert.deepEqual([chat.code, chat.stderr], [2, expected]);
  // {"tools": [...]} and the OpenAI form: the pointer is the file's own.
  const wrapped = await fx.write(
    "wrapped.json",
    `{"tools": [\n  {"type": "function", "function": {"name": "look", "description": "Look.",\n` +
      `   "parameters": {"type": "strin"}}}\n]}`,
  );
  const openai = await oam(["tools", "validate", wrapped]);
  assert.deepEqual([openai.code, openai.stderr], [
    2,
    `Error: ${wrapped}: #/tools/0/function/parameters (line 3, column 18): ${MISSPELT} [invalid_schema]\n`,
  ]);
  // stdin is named <stdin>; the --json form carries the same message.
  const piped = await oam(["tools", "validate", "-", "--json"], { stdin: TOOLS });
  assert.equal(piped.code, 2);
  assert.deepEqual(JSON.parse(piped.stderr), {
    error: {
      code: "invalid_schema",
      message: `<stdin>: #/1/parameters/properties/dir (line 5, column 41): ${MISSPELT}`,
    },
  });
});

Deno.test("a persona file's tools and a server's tools file are named too", async () => {
  const persona = await fx.write(
    "mira.jsonc",
    `{
  "persona": {"name": "Mira", "role": "the innkeeper"},
  "tools": [
    {"name": "look", "description": "Look.", "parameters": {"type": "strin"}}
  ]
}`,
  );
  const npc = await oam(["npc", persona, "--script", script], { stdin: "hi\n" });
  assert.deepEqual([npc.code, npc.stderr], [
    2,
    `Error: ${persona}: #/tools/0/parameters (line 4, column 60): ${MISSPELT} [invalid_schema]\n`,
  ]);
  // A server's command tools: refused before it listens (invalid input, as its other tools-file problems).
  const server = await fx.write(
    "server-tools.json",
    `[\n  {"name": "roll", "description": "Roll.", "x-oam": {"command": ["true"]},\n` +
      `   "parameters": {"type": "strin"}}\n]`,
  );
  const serve = await oam(["serve", "--port", "0", "--tools", server, "--script", script]);
  assert.deepEqual([serve.code, serve.stderr], [
    2,
    `Error: ${server}: #/0/parameters (line 3, column 18): ${MISSPELT} [invalid_input]\n`,
  ]);
});

Deno.test("a bad or repeated tool name names the file and the tool's place (its own index)", async () => {
  const tools = await fx.write(
    "names.json",
    `[\n  {"name": "look", "description": "Look."},\n  {"name": "look", "description": "Again."}\n]`,
  );
  const repeated = await oam(["tools", "validate", tools]);
  assert.deepEqual([repeated.code, repeated.stderr], [
    2,
    `Error: ${tools}: #/1 (line 3, column 3): 'tools[1].name' must be unique: 'look' is also the name of ` +
    "'tools[0]'. [invalid_params]\n",
  ]);
  // An inline definition after a file's: named by its flag, at its own index.
  const file = await fx.write("one.json", [{ name: "wave", description: "Wave." }]);
  const inline = await oam([
    "respond",
    "--script",
    script,
    "--no-stdin",
    "--tools",
    file,
    "--tool-json",
    '{"name": "bad name", "description": "x"}',
    "hi",
  ]);
  assert.equal(inline.code, 2, inline.stderr);
  assert.match(
    inline.stderr,
    /^Error: --tool-json #1: # \(line 1, column 1\): 'tools\[0\]\.name' must be 1-64 /,
  );
});

Deno.test("tools validate: a schema warning under a tool's name names the file's place and line too", async () => {
  const tools = await fx.write(
    "warned.json",
    `{"tools": [
  {"name": "wave", "description": "Wave."},
  {"type": "function", "function": {"name": "look", "description": "Look.",
   "parameters": {"type": "object",
                  "properties": {"code": {"type": "string", "pattern": "^a"}}}}},
  {"name": "quiet"}
]}`,
  );
  const r = await oam(["tools", "validate", tools]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    "✓ wave client (answered by you or your engine)\n" +
      "✓ look client (answered by you or your engine)\n" +
      // Before: "    warning: #/properties/code: pattern '^a' …", the schema's pointer alone.
      `    warning: ${tools}: #/tools/1/function/parameters/properties/code (line 5, column 42): ` +
      "pattern '^a' is described to the model but not enforced\n" +
      "✓ quiet client (answered by you or your engine)\n" +
      // A warning about the tool itself has no place in its schema: it stays as it was.
      "    warning: no description; the model may not know when to call it.\n" +
      "3 tools OK.\n",
  );
  // The --json form keeps the bridge's warnings as they are.
  const json = JSON.parse((await oam(["tools", "validate", tools, "--json"])).stdout);
  assert.deepEqual(json.tools[1].warnings, [
    "#/properties/code: pattern '^a' is described to the model but not enforced",
  ]);
});
