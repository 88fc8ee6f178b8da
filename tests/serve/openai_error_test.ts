/** OpenAIError.timeout: the 504 body of `oam serve --timeout <s>`, in words that fit the number. */
import assert from "node:assert/strict";
import { OpenAIError } from "../../src/serve/openai_error.ts";

function timeoutBody(seconds: number) {
  const error = OpenAIError.timeout(seconds);
  return { status: error.status, body: error.toJson() };
}

Deno.test("timeout: '1 second' for --timeout 1, 'seconds' for every other number", () => {
  const body = (message: string) => ({
    status: 504,
    body: { error: { message, type: "server_error", param: null, code: "timeout" } },
  });
  assert.deepEqual(timeoutBody(1), body("The request did not finish within 1 second."));
  assert.deepEqual(timeoutBody(2), body("The request did not finish within 2 seconds."));
  assert.deepEqual(timeoutBody(0.5), body("The request did not finish within 0.5 seconds."));
  assert.deepEqual(timeoutBody(1.5), body("The request did not finish within 1.5 seconds."));
  assert.deepEqual(timeoutBody(120), body("The request did not finish within 120 seconds."));
});
