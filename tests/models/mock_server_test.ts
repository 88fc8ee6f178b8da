/**
 * The mock OpenAI server keeps errors a test makes on purpose out of the output of a passing run (no stack
 * trace that reads like a failure) and still reports unexpected ones.
 */
import assert from "node:assert/strict";
import { IntendedFailure, MockServer } from "./openai_mock_server.ts";
import { runSubtests } from "../helpers/subtests.ts";

/** A server whose one response streams a chunk, then fails its body with `error`. */
function breakingServer(error: Error, reported: unknown[]): MockServer {
  return new MockServer(
    () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode("data: {}\n\n"));
          },
          // Asked for more once the first chunk was taken: the body fails mid-stream.
          pull(controller) {
            controller.error(error);
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      ),
    (e) => reported.push(e),
  );
}

async function readBrokenBody(server: MockServer): Promise<void> {
  const response = await fetch(`${server.baseURL}/chat/completions`, { method: "POST", body: "{}" });
  await assert.rejects(response.text());
}

Deno.test("mock server: an intended failure is not reported; an unexpected one is", async () => {
  const quiet: unknown[] = [];
  const intended = breakingServer(new IntendedFailure("dropping the connection on purpose"), quiet);
  try {
    await readBrokenBody(intended);
  } finally {
    await intended.close();
  }
  assert.deepEqual(quiet, []);
  const loud: unknown[] = [];
  const unexpected = breakingServer(new Error("a real bug"), loud);
  try {
    await readBrokenBody(unexpected);
  } finally {
    await unexpected.close();
  }
  assert.equal(loud.length, 1);
  assert.equal((loud[0] as Error).message, "a real bug");
});

Deno.test("the passing suite's dropped-connection test prints no stack trace", async () => {
  const text = await runSubtests(new URL("./openai_model_test.ts", import.meta.url), {
    filter: "a connection dropped mid-stream",
    passed: 1,
  });
  assert.doesNotMatch(text, /dropping the connection on purpose|\n\s+at /, text);
});
