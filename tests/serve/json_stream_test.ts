/**
 * A streamed JSON answer (`json_schema`) is sent as the model writes it: content deltas that always make a
 * start of the finished answer and together the same text as the answer not streamed. A member the schema
 * orders in front of one already written holds the rest back until the end; an answer that changes after it
 * was sent (a retried attempt) fails the stream instead of sending invalid JSON.
 */
import assert from "node:assert/strict";
import type { LanguageModel, StepRequest, StepResult } from "../../src/models/language_model.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { JsonAnswerStream } from "../../src/serve/json_stream.ts";
import { ask, postChat, serve, sseData } from "./serve_fixture.ts";

const PLACE: JsonObject = {
  type: "object",
  properties: {
    city: { type: "string" },
    population: { type: "integer" },
    tags: { type: "array", items: { type: "string" } },
    mayor: { type: "object", properties: { name: { type: "string" } } },
  },
  required: ["city", "population", "tags"],
};
const FORMAT = { type: "json_schema", json_schema: { name: "place", schema: PLACE } };
const FINAL = { city: "Paris", population: 2100000, tags: ["capital", "river"], mayor: { name: "Anne" } };

/** The partial values a backend reports while writing {@link FINAL} token by token, in schema order. */
const PARTIALS: JsonValue[] = [
  {},
  { city: "Pa" },
  { city: "Paris" },
  { city: "Paris", population: 21 },
  { city: "Paris", population: 2100000 },
  { city: "Paris", population: 2100000, tags: [] },
  { city: "Paris", population: 2100000, tags: ["cap"] },
  { city: "Paris", population: 2100000, tags: ["capital", "ri"] },
  { city: "Paris", population: 2100000, tags: ["capital", "river"], mayor: {} },
  { city: "Paris", population: 2100000, tags: ["capital", "river"], mayor: { name: "An" } },
  FINAL,
];

/** A backend that streams `partials` (when asked to) and then answers `value`, as the real ones do. */
class PartialsModel implements LanguageModel {
  readonly kind = "partials";
  readonly contextSize = 4096;
  readonly trimsHistory = false;
  constructor(readonly partials: JsonValue[], readonly value: JsonValue) {}
  step(request: StepRequest): Promise<StepResult> {
    if (request.stream) { for (const partial of this.partials) request.onPartial?.(partial); }
    return Promise.resolve({
      kind: "structured",
      value: this.value,
      text: JSON.stringify(this.value),
      usage: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 20 },
    });
  }
  availability() {
    return Promise.resolve({ available: true, contextSize: 4096, supportedLanguages: [] });
  }
}

Deno.test("JsonAnswerStream sends what can no longer change: members written, the open one's start", () => {
  const stream = new JsonAnswerStream(PLACE);
  const deltas = PARTIALS.map((p) => stream.update(p));
  assert.deepEqual(deltas, [
    "{",
    '"city":"Pa',
    "ris",
    '","population":',
    "",
    '2100000,"tags":[',
    '"cap',
    'ital","ri',
    'ver"],"mayor":{',
    '"name":"An',
    "ne",
  ]);
  assert.equal(stream.finish(JSON.stringify(FINAL)), '"}}');
  assert.equal(stream.sent, JSON.stringify(FINAL));
});

Deno.test("JsonAnswerStream holds back members written out of the schema's order, and fails an answer that changed", () => {
  const unordered = new JsonAnswerStream(PLACE);
  assert.equal(unordered.update({ city: "Paris" }), '{"city":"Paris');
  // population and tags skipped (or still to come in front of mayor): nothing more until the end.
  assert.equal(unordered.update({ city: "Paris", mayor: { name: "Anne" } }), "");
  assert.equal(unordered.update({ city: "Paris", population: 3, tags: [], mayor: { name: "Anne" } }), "");
  assert.equal(
    unordered.finish('{"city":"Paris","population":3,"tags":[],"mayor":{"name":"Anne"}}'),
    '","population":3,"tags":[],"mayor":{"name":"Anne"}}',
  );

  const changed = new JsonAnswerStream(PLACE);
  changed.update({ city: "Paris" });
  assert.equal(changed.update({ city: "Lyon" }), "", "a retried attempt's partial that does not continue");
  assert.equal(changed.finish('{"city":"Lyon","population":1,"tags":[]}'), null);

  const any = new JsonAnswerStream({ type: "object" });
  assert.equal(any.update({ b: 1, a: "x" }), '{"b":1,"a":"x');
  assert.equal(any.cut('{"b": 1, "a": "xy'), "y", "a cut answer ends as the model's text did, compact");
});

Deno.test("a streamed json_schema answer arrives in deltas as it is written, the same text as not streamed", async () => {
  await using s = await serve(new PartialsModel(PARTIALS, FINAL));
  const request = { messages: ask("Paris?"), response_format: FORMAT };
  const whole = await (await postChat(s.base, request)).json();
  const content = whole.choices[0].message.content;
  assert.equal(content, JSON.stringify(FINAL));

  const streamed = await postChat(s.base, { ...request, stream: true });
  assert.equal(streamed.status, 200);
  const chunks = (await sseData(streamed)).slice(0, -1).map((d) => JSON.parse(d));
  const deltas = chunks.map((c) => c.choices[0].delta.content).filter((d) => d !== undefined && d !== "");
  assert.equal(deltas.join(""), content);
  assert.ok(deltas.length >= 10, `streamed as it was written: ${JSON.stringify(deltas)}`);
  assert.equal(chunks.at(-1).choices[0].finish_reason, "stop");
});

Deno.test("a streamed answer that is not the start it sent ends the stream with an error, never with invalid JSON", async () => {
  await using s = await serve(
    new PartialsModel([{ city: "Paris" }], { city: "Lyon", population: 1, tags: [] }),
  );
  const streamed = await postChat(s.base, { messages: ask("Paris?"), response_format: FORMAT, stream: true });
  const data = (await sseData(streamed)).slice(0, -1).map((d) => JSON.parse(d));
  assert.equal(data.at(-1).error.code, "generation_restarted");
  assert.ok(!data.some((d) => d.choices?.[0]?.finish_reason === "stop"));
});
