/**
 * `oam respond` paused by a client tool and resumed with a scripted model: the printed hint is a command that
 * works (it chooses the same script again), the resumed run continues the script where the paused one
 * stopped (the saved file records the position), and a temporary file is reused by a new pause and removed
 * once the turn completes.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { Fixtures, oam, OAM_TASK_PERMISSIONS } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());
const tools = await fx.write("tools.json", [{
  name: "get_weather",
  description: "Weather for a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
}]);
const weather = await fx.write("weather.json", [
  { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
  { template: "Weather: {toolOutput}" },
]);

/** The hint's command line (second stderr line), split into words. */
function hint(stderr: string): string[] {
  const lines = stderr.split("\n");
  assert.equal(lines[0], "Waiting for 1 tool call. Answer and continue with:", stderr);
  return lines[1].trim().split(" ");
}

/** The paused run's printed `{status, calls, transcript}`. */
function paused(stdout: string): { id: string; transcript: string } {
  const line = JSON.parse(stdout) as JsonObject;
  assert.equal(line.status, "tool_calls");
  return { id: (line.calls as JsonObject[])[0].id as string, transcript: line.transcript as string };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

Deno.test("respond --script: the hint resumes the same script where it stopped; the temp file goes", async () => {
  const first = await oam(["respond", "--script", weather, "--tools", tools, "Weather?"], {
    permissions: OAM_TASK_PERMISSIONS,
  });
  assert.equal(first.code, 10, first.stderr);
  const { id, transcript } = paused(first.stdout);
  const words = hint(first.stderr);
  assert.deepEqual(words, [
    "deno",
    "task",
    "oam",
    "respond",
    "--resume",
    transcript,
    "--script",
    weather,
    "--tool-output",
    `${id}=<output>`,
  ]);
  const saved = JSON.parse(await Deno.readTextFile(transcript)) as JsonObject;
  assert.deepEqual((saved.oam as JsonObject).script, {
    digest: ((saved.oam as JsonObject).script as JsonObject).digest,
    played: 1,
  });
  assert.equal((saved.oam as JsonObject).temporary, true);
  // Run the hint (after `deno task oam`), with the output filled in.
  const args = words.slice(3).map((w) => w === `${id}=<output>` ? `${id}=sunny` : w);
  const resumed = await oam(args);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(resumed.stdout, "Weather: sunny\n");
  assert.equal(await exists(transcript), false, "the temporary file is removed once the turn completes");
});

Deno.test("respond with OAM_SCRIPT: the hint sets OAM_SCRIPT again; a second pause reuses the temp file", async () => {
  const twice = await fx.write("twice.json", [
    { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
    { toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] },
    { template: "Last: {toolOutput}" },
  ]);
  const env = { OAM_SCRIPT: twice };
  const first = await oam(["respond", "--tools", tools, "Weather?"], {
    env,
    permissions: OAM_TASK_PERMISSIONS,
  });
  assert.equal(first.code, 10, first.stderr);
  const a = paused(first.stdout);
  assert.deepEqual(hint(first.stderr), [
    `OAM_SCRIPT=${twice}`,
    "deno",
    "task",
    "oam",
    "respond",
    "--resume",
    a.transcript,
    "--tool-output",
    `${a.id}=<output>`,
  ]);
  const second = await oam(["respond", "--resume", a.transcript, "--tool-output", `${a.id}=rain`], { env });
  assert.equal(second.code, 10, second.stderr);
  const b = paused(second.stdout);
  assert.equal(b.transcript, a.transcript, "the new pause rewrites the same temporary file");
  assert.notEqual(b.id, a.id);
  const saved = JSON.parse(await Deno.readTextFile(b.transcript)) as JsonObject;
  assert.equal(((saved.oam as JsonObject).script as JsonObject).played, 2);
  const done = await oam(["respond", "--resume", b.transcript, "--tool-output", `${b.id}=sun`], { env });
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.stdout, "Last: sun\n");
  assert.equal(await exists(b.transcript), false);
});

Deno.test("respond --save-transcript: a resumed conversation continues the same script, not another", async () => {
  const script = await fx.write("one_two.json", [{ text: "One." }, { text: "Two." }]);
  const save = fx.path("conversation.json");
  const first = await oam(["respond", "--script", script, "--save-transcript", save, "Hi"]);
  assert.equal(first.stdout, "One.\n", first.stderr);
  const second = await oam([
    "respond",
    "--script",
    script,
    "--resume",
    save,
    "--save-transcript",
    save,
    "Again",
  ]);
  assert.equal(second.stdout, "Two.\n", second.stderr);
  assert.equal(await exists(save), true, "a --save-transcript file is kept");
  // Another script starts at its first step.
  const other = await fx.write("other.json", [{ text: "Other." }]);
  const third = await oam(["respond", "--script", other, "--resume", save, "Once more"]);
  assert.equal(third.stdout, "Other.\n", third.stderr);
});

Deno.test("respond: a prompt for a conversation waiting for tool outputs is refused first, with or without them", async () => {
  const path = fx.path("prompted.json");
  const paused = await oam([
    "respond",
    "--tools",
    tools,
    "--script",
    weather,
    "--save-transcript",
    path,
    "Hi",
  ]);
  assert.equal(paused.code, 10, paused.stderr);
  const id = ((JSON.parse(paused.stdout) as JsonObject).calls as JsonObject[])[0].id;
  const refused = "Error: The saved conversation is waiting for tool outputs; continue it without a prompt " +
    "(just --tool-output). [usage]\n";
  for (const outputs of [[], ["--tool-output", `${id}=sunny`]]) {
    const r = await oam(["respond", "--resume", path, "--script", weather, ...outputs, "And tomorrow?"]);
    assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", refused], outputs.join(" "));
  }
});
