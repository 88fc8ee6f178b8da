/**
 * What the model backend is asked, observed with a recording system model: session options (temperature,
 * maxResponseTokens, sampling), instructions with the context note, tools and mode per step, history, and
 * history trimming (trimHistory, reservedResponseTokens).
 */
import assert from "node:assert/strict";
import { WireClient } from "../helpers/wire.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import type { LanguageModel, StepRequest, StepResult } from "../../src/models/language_model.ts";
import { segmentsText } from "../../src/protocol/transcript.ts";

/** A system model that records every step request and answers from a queue of results. */
class RecordingModel implements LanguageModel {
  readonly kind = "system";
  readonly trimsHistory = true;
  readonly requests: StepRequest[] = [];
  constructor(readonly contextSize = 8192, readonly answers: StepResult[] = []) {}
  availability() {
    return Promise.resolve({ available: true, contextSize: this.contextSize, supportedLanguages: ["en"] });
  }
  step(request: StepRequest): Promise<StepResult> {
    // The history array of step 0 is the session's live array (appended to when the turn commits): copy it.
    this.requests.push({ ...request, history: [...request.history] });
    return Promise.resolve(this.answers.shift() ?? { kind: "text", text: "ok", usage: null });
  }
}

function historyTexts(request: StepRequest): string[] {
  return request.history.map((e) =>
    "toolCalls" in e
      ? `calls:${e.toolCalls.map((c) => c.name).join(",")}`
      : `${e.role}:${segmentsText(e.contents)}`
  );
}

Deno.test("session options reach the model: temperature, maxResponseTokens, sampling", async () => {
  const model = new RecordingModel();
  const c = new WireClient({ systemModel: () => model });
  const cases: Array<[JsonObject, JsonObject]> = [
    [{}, {}],
    [{ temperature: 0.5, maxResponseTokens: 100 }, { temperature: 0.5, maximumResponseTokens: 100 }],
    [{ sampling: "greedy" }, { sampling: { mode: "greedy" } }],
    [{ sampling: { topK: 5, seed: 7 } }, { sampling: { mode: "topK", k: 5, seed: 7 } }],
    [{ sampling: { topP: 0.9 } }, { sampling: { mode: "topP", p: 0.9 } }],
  ];
  for (const [options, expected] of cases) {
    const id = (await c.call("session/create", { options })).session as string;
    await c.call("session/respond", { session: id, prompt: "x" });
    assert.deepEqual(model.requests.at(-1)!.options, expected, JSON.stringify(options));
  }
  await c.close();
});

Deno.test("instructions stay as set; the context note enters the next prompt when it changed; setters apply from the next turn", async () => {
  const model = new RecordingModel();
  const c = new WireClient({ systemModel: () => model });
  await c.call("session/create", { session: "s", instructions: "Be a guard." });
  await c.call("session/respond", { session: "s", prompt: "one" });
  assert.equal(model.requests[0].instructions, "Be a guard.");
  assert.equal(model.requests[0].prompt, "one");
  assert.deepEqual(model.requests[0].history, []);
  await c.call("session/setContextNote", { session: "s", note: "The gate is north." });
  await c.call("session/respond", { session: "s", prompt: "two" });
  // The note enters late (ahead of the next prompt), never into the instructions: the prompt prefix stays.
  assert.equal(model.requests[1].instructions, "Be a guard.");
  assert.equal(model.requests[1].prompt, "Context:\nThe gate is north.\n\ntwo");
  assert.deepEqual(historyTexts(model.requests[1]), ["user:one", "response:ok"]);
  await c.call("session/setInstructions", { session: "s", instructions: null });
  await c.call("session/respond", { session: "s", prompt: "three" });
  // The history still carries the note: it is not sent again.
  assert.equal(model.requests[2].instructions, null);
  assert.equal(model.requests[2].prompt, "three");
  await c.call("session/setContextNote", { session: "s", note: null });
  await c.call("session/respond", { session: "s", prompt: "three and a half" });
  assert.equal(
    model.requests[3].prompt,
    "Context: (none now; the earlier context no longer applies.)\n\nthree and a half",
  );
  await c.call("session/setContextNote", { session: "s", note: "The gate is north." });
  await c.call("session/reset", { session: "s" });
  await c.call("session/setInstructions", { session: "s", instructions: "" });
  await c.call("session/respond", { session: "s", prompt: "four" });
  assert.equal(model.requests[4].instructions, null);
  assert.deepEqual(model.requests[4].history, []);
  // A reset cleared the note with the history: nothing to carry.
  assert.equal(model.requests[4].prompt, "four");
  await c.close();
});

Deno.test("each step gets its tools and mode; continuation steps see the turn so far", async () => {
  const model = new RecordingModel(8192, [
    { kind: "toolCalls", calls: [{ name: "look", arguments: { at: "door" } }], usage: null },
    { kind: "text", text: "A door.", usage: { inputTokens: 10, cachedInputTokens: 4, outputTokens: 3 } },
  ]);
  const c = new WireClient({ systemModel: () => model });
  await c.call("session/create", {
    session: "t",
    tools: [{
      name: "look",
      description: "Look.",
      parameters: { type: "object", properties: { at: { type: "string" } } },
    }],
    options: { toolChoice: "required" },
  });
  const id = c.request("session/respond", { session: "t", prompt: "What is there?" });
  c.reply((await c.toolCall(1)).id, { output: "a door" });
  const r = (await c.response(id)).result as JsonObject;
  const [first, second] = model.requests;
  assert.equal(first.toolCallingMode, "required");
  assert.deepEqual(first.tools.map((t) => t.name), ["look"]);
  assert.deepEqual(first.tools[0].jsonSchema, { type: "object", properties: { at: { type: "string" } } });
  assert.equal((first.tools[0].parameters as JsonObject).title, "LookArguments");
  assert.equal(first.prompt, "What is there?");
  assert.equal(second.toolCallingMode, "allowed");
  assert.equal(second.prompt, "");
  assert.deepEqual(historyTexts(second), ["user:What is there?", "calls:look", "tool:a door"]);
  // usage: reported numbers are summed; estimates fill in when a step reports none
  const usage = r.usage as Record<string, number>;
  assert.ok(usage.inputTokens >= 10 && usage.outputTokens >= 3);
  assert.ok(usage.cachedInputTokens === 4);
  assert.equal(usage.totalTokens, usage.inputTokens + usage.outputTokens);
  await c.close();
});

Deno.test("history trimming hides the oldest turns from the model (not from the transcript); trimHistory false keeps all", async () => {
  const long = "word ".repeat(300); // ~1500 characters per prompt
  for (const trim of [true, false]) {
    const model = new RecordingModel(1024);
    const c = new WireClient({ systemModel: () => model });
    await c.call("session/create", {
      session: "h",
      options: { trimHistory: trim, reservedResponseTokens: 0 },
    });
    for (let i = 0; i < 4; i++) await c.call("session/respond", { session: "h", prompt: `${i} ${long}` });
    const r = await c.call("session/respond", { session: "h", prompt: "last" });
    const steps = r.steps as JsonObject[];
    const last = model.requests.at(-1)!;
    if (trim) {
      assert.ok((steps[0].trimmedEntries as number) > 0, JSON.stringify(steps));
      assert.equal(last.history.length, 8 - (steps[0].trimmedEntries as number));
      assert.equal(last.history[0].role, "user");
    } else {
      assert.equal(steps[0].trimmedEntries, 0);
      assert.equal(last.history.length, 8);
    }
    const list = await c.call("session/list");
    assert.equal((list.sessions as JsonObject[])[0].entries, 10);
    await c.close();
  }
});
