/**
 * `oam serve` on the in-process GGUF backend with the fixture model: a json_schema answer or a tool call cut
 * by `max_completion_tokens` comes back as OpenAI sends it (200, `finish_reason: "length"`, the JSON or the
 * call's arguments cut), streamed or not; each request's prompt shows its own tools only, and a conversation's
 * next request still reuses the cached prompt. Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { GGUF_ENABLED } from "./fixture.ts";
import { withFixtureServer } from "./serve_fixture.ts";
import { checkCutJson, checkCutToolCall, post, WEATHER } from "../serve_cut_checks.ts";

Deno.test({
  name: "gguf serve: JSON and tool calls cut by max_completion_tokens are 200s with finish_reason length",
  ignore: !GGUF_ENABLED,
  // node-llama-cpp's native addon keeps async work Deno's sanitizers cannot attribute to a test.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await withFixtureServer(async (base) => {
      await t.step(
        "the next request of a conversation reuses the prompt the last one left in the cache",
        async () => {
          const first = [{ role: "user", content: "Hello" }];
          const answer = (await (await post(base, { messages: first, max_completion_tokens: 12 })).json())
            .choices[0].message;
          const next = [...first, { role: "assistant", content: answer.content }, {
            role: "user",
            content: "Count to five.",
          }];
          const body = await (await post(base, { messages: next, max_completion_tokens: 4 })).json();
          assert.ok(body.usage.prompt_tokens_details.cached_tokens > 0, JSON.stringify(body.usage));
        },
      );

      await t.step("a request without tools is not shown the tools of an earlier request", async () => {
        const plain = { messages: [{ role: "user", content: "Hello" }], max_completion_tokens: 4 };
        const before = await (await post(base, plain)).json();
        const withTools = await post(base, { ...plain, tools: [WEATHER] });
        assert.equal(withTools.status, 200);
        const toolsPrompt = (await withTools.json()).usage.prompt_tokens;
        assert.ok(toolsPrompt > before.usage.prompt_tokens, "the tool list is in the prompt");
        const after = await (await post(base, plain)).json();
        assert.equal(after.usage.prompt_tokens, before.usage.prompt_tokens, "the same prompt as before");
      });

      await t.step("json_schema, not streamed and streamed", () => checkCutJson(base, 4));

      await t.step(
        "a required tool call, not streamed and streamed",
        () => checkCutToolCall(base, { max_completion_tokens: 4, tool_choice: "required" }),
      );
    });
  },
});
