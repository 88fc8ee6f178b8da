/**
 * `oam serve` on the in-process GGUF backend with the fixture model: `response_format: json_object` gives a
 * JSON object (the model answers this question in prose otherwise), and a json_schema answer streams as it is
 * generated. Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import { GGUF_ENABLED } from "./fixture.ts";
import { withFixtureServer } from "./serve_fixture.ts";
import { checkJsonObject, checkSchemaStreams } from "../serve_cut_checks.ts";

Deno.test({
  name: "gguf serve: json_object gives a JSON object; json_schema streams as it is generated",
  ignore: !GGUF_ENABLED,
  // node-llama-cpp's native addon keeps async work Deno's sanitizers cannot attribute to a test.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await withFixtureServer(async (base) => {
      await t.step("json_object, not streamed and streamed", () => checkJsonObject(base));
      await t.step("json_schema streamed in deltas", () => checkSchemaStreams(base));
    });
  },
});
