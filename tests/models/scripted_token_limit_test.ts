/**
 * Token limits and the scripted model. Over the bridge protocol a script plays its steps whole whatever
 * `maxResponseTokens` says, as the reference's scripted model does (a game's test that scripts a line longer
 * than its limit gets that line). `oam serve` plays it through `ScriptedModel.tokenLimited()`, which holds each
 * answer to the request's limit as OpenAI's are, at four characters a token (tests/serve/scripted_serve_test.ts
 * has the HTTP side).
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { tool } from "../helpers/messages.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { CutOffAnswer, ScriptedModel } from "../../src/models/scripted.ts";
import type { StepRequest, StepResult } from "../../src/models/language_model.ts";

const LONG = "The quick brown fox jumps over the lazy dog."; // 44 characters, 11 tokens

Deno.test("over the protocol, scripted text longer than maxResponseTokens is played whole, streamed or not", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    model: scripted({ text: LONG }, { text: LONG }),
    options: { maxResponseTokens: 3 },
  });
  const whole = await c.call("session/respond", { session: "s", prompt: "go" });
  assert.equal(whole.text, LONG);
  assert.equal((whole.usage as JsonObject).outputTokens, 11);
  const streamed = await c.call("session/respond", { session: "s", prompt: "go", stream: true });
  assert.equal(streamed.text, LONG);
  await c.close();
});

Deno.test("over the protocol, a scripted structured answer or tool call longer than the limit is played whole", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    tools: [tool("look")],
    model: scripted(
      { json: { line: "A long line that does not fit." } },
      { toolCalls: [{ name: "look", arguments: { at: "the far northern gate of the city" } }] },
      { text: "Done." },
    ),
    options: { maxResponseTokens: 4, maxAttempts: 1 },
  });
  const schema = { type: "object", properties: { line: { type: "string" } }, required: ["line"] };
  const structured = await c.call("session/respond", { session: "s", prompt: "go", schema });
  assert.deepEqual(structured.structured, { line: "A long line that does not fit." });
  const turn = c.request("session/respond", { session: "s", prompt: "go" });
  const call = await c.toolCall();
  const sent = (call.params as JsonObject).call as JsonObject;
  assert.deepEqual([sent.name, sent.arguments], ["look", { at: "the far northern gate of the city" }]);
  c.reply(call.id!, { output: "A gate." });
  assert.equal(((await c.response(turn)).result as JsonObject).text, "Done.");
  await c.close();
});

/** A step request with `maximumResponseTokens: limit`, streaming into `seen`. */
function request(limit: number, seen: string[] = []): StepRequest {
  return {
    instructions: null,
    tools: [],
    toolCallingMode: "allowed",
    history: [],
    prompt: "go",
    responseSchema: null,
    options: { maximumResponseTokens: limit },
    stream: true,
    onText: (text: string) => seen.push(text),
    signal: new AbortController().signal,
  } as unknown as StepRequest;
}

Deno.test("tokenLimited(): text is cut at four characters a token, streamed cut too, never inside a surrogate pair", async () => {
  const model = new ScriptedModel({ steps: [{ text: LONG }, { text: "abc👍 done" }, { text: "Short." }] });
  const served = model.tokenLimited();
  const seen: string[] = [];
  const cut = await served.step(request(3, seen)) as StepResult & { text: string };
  assert.equal(cut.text, "The quick br");
  assert.equal(seen.at(-1), "The quick br");
  assert.equal((await served.step(request(1)) as StepResult & { text: string }).text, "abc");
  assert.equal((await served.step(request(3)) as StepResult & { text: string }).text, "Short.");
  assert.equal(model.played, 3, "the view plays the model's own script, from the same place");
});

Deno.test("tokenLimited(): a tool call that does not fit fails with what was written", async () => {
  const model = new ScriptedModel({
    steps: [{ toolCalls: [{ name: "look", arguments: { at: "the far northern gate of the city" } }] }],
  });
  const error = await model.tokenLimited().step(request(5)).then(() => null, (e) => e);
  assert.ok(error instanceof CutOffAnswer);
  assert.equal(error.dataCode, "generation_failed");
  assert.match(
    error.message,
    /did not complete its tool call: it was cut off at the token limit \(5 tokens\)/,
  );
  assert.deepEqual(error.written, { toolCalls: [{ name: "look", argumentsText: '{"at":"the far n' }] });
});
