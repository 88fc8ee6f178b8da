/**
 * `oam serve`'s OpenAI-compatible server on the GGUF fixture model, for the tier's serve tests.
 * @module
 */
import { createLlamaModel } from "../../../src/models/llama_model.ts";
import { closeLlamaModels } from "../../../src/models/llama_runtime.ts";
import { OpenAIServer } from "../../../src/serve/openai_server.ts";
import { fixtureConfig } from "./fixture.ts";

/** Runs `steps` with the base URL of a server on the fixture model, then stops it and frees the model. */
export async function withFixtureServer(steps: (base: string) => Promise<void>): Promise<void> {
  const model = createLlamaModel(await fixtureConfig());
  const server = new OpenAIServer({ port: 0, models: new Map([["system", model]]) });
  await server.start();
  try {
    await steps(`http://127.0.0.1:${server.port}`);
  } finally {
    await server.stop();
    await closeLlamaModels();
  }
}
