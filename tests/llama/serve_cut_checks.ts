/**
 * The checks both real-model tiers make of `oam serve` (llama.cpp server and in-process GGUF): a json_schema
 * answer or a tool call cut by `max_completion_tokens` is a 200 with `finish_reason: "length"` and the JSON or
 * the call's arguments cut, streamed or not.
 */
import assert from "node:assert/strict";

/** A json_schema response format the fixture model needs more than a few tokens to answer. */
export const SCHEMA_FORMAT = {
  type: "json_schema",
  json_schema: {
    name: "place",
    schema: {
      type: "object",
      properties: { city: { type: "string" }, country: { type: "string" } },
      required: ["city", "country"],
      additionalProperties: false,
    },
  },
};

/** A tool the fixture model calls when asked about the weather. */
export const WEATHER = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the current weather for a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

/** POSTs a chat completion (model "system", temperature 0 unless `body` says otherwise). */
export async function post(base: string, body: Record<string, unknown>): Promise<Response> {
  return await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "system", temperature: 0, ...body }),
  });
}

/** A streamed chunk, as far as these tests read it. */
interface Chunk {
  choices: Array<{
    delta: { content?: string; tool_calls?: Array<{ function: { name?: string; arguments?: string } }> };
    finish_reason: string | null;
  }>;
}

/** The `data:` payloads of a streamed answer, parsed (without `[DONE]`). */
async function chunks(response: Response): Promise<Chunk[]> {
  const text = await response.text();
  return text.split("\n\n").filter((e) => e.startsWith("data: ") && e !== "data: [DONE]")
    .map((e) => JSON.parse(e.slice(6)));
}

/** `text` (JSON, possibly cut) without the whitespace between its tokens. */
export function withoutJsonSpace(text: string): string {
  let out = "";
  let inString = false;
  let escape = false;
  for (const ch of text) {
    if (inString) {
      if (escape) escape = false;
      else if (ch === "\\") escape = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (/\s/.test(ch)) continue;
    out += ch;
  }
  return out;
}

/**
 * A json_schema answer cut at `maxTokens`: 200, "length", cut JSON; streamed, deltas in the compact form of
 * the answer (JSON is streamed as the finished answer is written), up to where the cut JSON's last complete
 * part ends.
 */
export async function checkCutJson(base: string, maxTokens: number): Promise<void> {
  const request = {
    messages: [{ role: "user", content: "What is the capital of France?" }],
    max_completion_tokens: maxTokens,
    response_format: SCHEMA_FORMAT,
  };
  const response = await post(base, request);
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  assert.equal(body.choices[0].finish_reason, "length");
  const content: string = body.choices[0].message.content;
  assert.ok(content.startsWith("{"), content);
  assert.throws(() => JSON.parse(content));
  assert.equal(body.usage.completion_tokens, maxTokens);

  const streamed = await post(base, { ...request, stream: true });
  assert.equal(streamed.status, 200);
  const events = await chunks(streamed);
  const text = events.map((c) => c.choices[0]?.delta.content ?? "").join("");
  assert.ok(text.startsWith("{") && withoutJsonSpace(content).startsWith(text), `${text} | ${content}`);
  assert.equal(events.at(-1)!.choices[0].finish_reason, "length");
}

/**
 * A call of {@link WEATHER} cut in its arguments (`request` adds the limit and any tool choice): 200, "length",
 * one call with arguments that are not JSON; streamed, the call's name in the deltas and "length".
 */
export async function checkCutToolCall(base: string, request: Record<string, unknown>): Promise<void> {
  const full = {
    messages: [{ role: "user", content: "What is the weather in Oslo?" }],
    tools: [WEATHER],
    ...request,
  };
  const response = await post(base, full);
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  assert.equal(body.choices[0].finish_reason, "length");
  const calls = body.choices[0].message.tool_calls;
  assert.equal(calls?.length, 1, JSON.stringify(body));
  assert.equal(calls[0].function.name, "get_weather");
  const args: string = calls[0].function.arguments;
  assert.throws(() => JSON.parse(args), `cut arguments: ${args}`);

  const streamed = await post(base, { ...full, stream: true });
  assert.equal(streamed.status, 200);
  const events = await chunks(streamed);
  const deltas = events.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
  assert.equal(deltas[0]?.function.name, "get_weather", JSON.stringify(events));
  assert.equal(events.at(-1)!.choices[0].finish_reason, "length");
}

/**
 * `response_format: json_object` with a model that answers this question in prose ("Paris."): a 200 whose
 * content is a JSON object, streamed or not (the streamed deltas make the same text; cut by the limit, their
 * compact form).
 */
export async function checkJsonObject(base: string): Promise<void> {
  const request = {
    messages: [{ role: "user", content: "What is the capital of France?" }],
    response_format: { type: "json_object" },
    max_completion_tokens: 48,
  };
  const response = await post(base, request);
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  const content: string = body.choices[0].message.content;
  if (body.choices[0].finish_reason === "stop") {
    const value = JSON.parse(content);
    assert.ok(value !== null && typeof value === "object" && !Array.isArray(value), content);
  } else {
    // The tiny model may run on inside the object: cut JSON, as OpenAI sends it.
    assert.equal(body.choices[0].finish_reason, "length");
    assert.ok(content.startsWith("{"), content);
  }

  const streamed = await post(base, { ...request, stream: true });
  assert.equal(streamed.status, 200);
  const events = await chunks(streamed);
  const text = events.map((c) => c.choices[0]?.delta.content ?? "").join("");
  if (body.choices[0].finish_reason === "stop") assert.equal(text, content);
  else assert.ok(text.startsWith("{") && withoutJsonSpace(content).startsWith(text), `${text} | ${content}`);
  assert.equal(events.at(-1)!.choices[0].finish_reason, body.choices[0].finish_reason);
}

/**
 * A streamed json_schema answer arrives in several content deltas as it is generated, and they make the same
 * text as the answer not streamed: JSON valid for the schema.
 */
export async function checkSchemaStreams(base: string): Promise<void> {
  const request = {
    messages: [{ role: "user", content: "What is the capital of France?" }],
    response_format: SCHEMA_FORMAT,
    max_completion_tokens: 200,
  };
  const body = await (await post(base, request)).json();
  assert.equal(body.choices[0].finish_reason, "stop", JSON.stringify(body));
  const content: string = body.choices[0].message.content;
  const value = JSON.parse(content);
  assert.deepEqual(Object.keys(value), ["city", "country"]);

  const streamed = await post(base, { ...request, stream: true });
  assert.equal(streamed.status, 200);
  const events = await chunks(streamed);
  const deltas = events.map((c) => c.choices[0]?.delta.content ?? "").filter((d) => d !== "");
  assert.equal(deltas.join(""), content);
  assert.ok(deltas.length >= 3, `streamed in ${deltas.length} deltas: ${JSON.stringify(deltas)}`);
  assert.equal(events.at(-1)!.choices[0].finish_reason, "stop");
}
