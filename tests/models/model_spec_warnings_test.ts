/**
 * Members of an `openai` or `llama` model parameter that the backend ignores (a misspelt `apikey`, say) are
 * reported in the `warnings` of every method that takes a `model`: after the method's own warnings, before the
 * unavailable-model warning. Through the wire, with whole results.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { WireClient } from "../helpers/wire.ts";
import { completion, json, MockServer } from "./openai_mock_server.ts";

/** An `openai` model with two members the backend does not know, at `baseURL`. */
function misspelt(baseURL = "http://127.0.0.1:9/v1"): JsonObject {
  return { type: "openai", baseURL, model: "m", apikey: "sk-1", temprature: 0.2 };
}

const MISSPELT_WARNINGS = [
  "Unknown parameter 'model.apikey' was ignored (did you mean 'apiKey'?).",
  "Unknown parameter 'model.temprature' was ignored.",
];

/** The whole response to one request on a fresh bridge. */
async function answer(method: string, params: JsonObject): Promise<JsonObject> {
  const wire = new WireClient();
  try {
    wire.send({ jsonrpc: "2.0", id: 1, method, params });
    return await wire.response(1);
  } finally {
    await wire.engine.shutdown();
  }
}

Deno.test("model warnings: session/create reports the members an openai or llama model ignores, after its own", async () => {
  assert.deepEqual(
    await answer("session/create", { session: "s", colour: "red", model: misspelt() }),
    {
      jsonrpc: "2.0",
      id: 1,
      result: { session: "s", warnings: ["Unknown parameter 'colour' was ignored.", ...MISSPELT_WARNINGS] },
    },
  );
  // A llama model: the file is only opened when a turn needs it.
  assert.deepEqual(
    await answer("session/create", {
      session: "s",
      model: { type: "llama", path: "missing.gguf", contextsize: 4096 },
    }),
    {
      jsonrpc: "2.0",
      id: 1,
      result: {
        session: "s",
        warnings: ["Unknown parameter 'model.contextsize' was ignored (did you mean 'contextSize'?)."],
      },
    },
  );
  // The system and scripted models, and well-spelt specs, warn about nothing.
  for (
    const model of ["scripted", { type: "openai", baseURL: "http://127.0.0.1:9/v1", model: "m", apiKey: "k" }]
  ) {
    assert.deepEqual(await answer("session/create", { session: "s", model }), {
      jsonrpc: "2.0",
      id: 1,
      result: { session: "s", warnings: [] },
    });
  }
});

Deno.test("model warnings: npc/create, after its unknown keys", async () => {
  assert.deepEqual(
    await answer("npc/create", {
      npc: "mira",
      persona: { name: "Mira", hair: "red" },
      options: { memoryTools: "none", sparkle: 1 },
      model: misspelt(),
    }),
    {
      jsonrpc: "2.0",
      id: 1,
      result: {
        npc: "mira",
        tools: [],
        warnings: [
          "Unknown parameter 'persona.hair' was ignored.",
          "Unknown parameter 'options.sparkle' was ignored.",
          ...MISSPELT_WARNINGS,
        ],
      },
    },
  );
});

Deno.test("model warnings: decision/decide and decision/decideMany name the model parameter's path", async () => {
  // One option is decided without a model call.
  assert.deepEqual(
    await answer("decision/decide", {
      situation: "A door.",
      options: [{ id: "open", description: "Open it." }],
      model: misspelt(),
    }),
    {
      jsonrpc: "2.0",
      id: 1,
      result: {
        optionID: "open",
        reasoning: "It is the only option.",
        confidence: 100,
        toolCalls: [],
        usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, totalTokens: 0 },
        isFallback: false,
        warnings: MISSPELT_WARNINGS,
      },
    },
  );
  const many = await answer("decision/decideMany", {
    requests: [{ situation: "A door.", options: [{ id: "open", description: "Open it." }], mood: "calm" }],
    model: misspelt(),
  });
  assert.deepEqual((many.result as JsonObject).warnings, [
    "Unknown parameter 'requests[0].mood' was ignored.",
    ...MISSPELT_WARNINGS,
  ]);
});

Deno.test("model warnings: content/generate, after the schema's own", async () => {
  // The openai model checks the format: the server answers a uuid.
  const id = "2eb8aa08-aa98-11ea-b4aa-73b441d16380";
  const server = new MockServer(() => json(completion(JSON.stringify({ id }))));
  try {
    const r = await answer("content/generate", {
      prompt: "A sword.",
      schema: {
        type: "object",
        properties: { id: { type: "string", format: "uuid" } },
        required: ["id"],
      },
      model: misspelt(server.baseURL),
    });
    const result = r.result as JsonObject;
    assert.deepEqual(result.content, { id }, JSON.stringify(r));
    const warnings = result.warnings as string[];
    assert.deepEqual(warnings.slice(-2), MISSPELT_WARNINGS);
    assert.ok(warnings.length > 2 && warnings[0].includes("format"), JSON.stringify(warnings));
  } finally {
    await server.close();
  }
});
