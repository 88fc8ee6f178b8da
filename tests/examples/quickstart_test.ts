/**
 * examples/quickstart.ts (issue 12, item 4): at most 25 lines, type-checks with no casts, runs on the
 * scripted model by default and on an OpenAI-compatible server with `--model openai:…`; the README opens
 * with it, verbatim.
 */
import assert from "node:assert/strict";
import { assertNoCasts, deno, ROOT } from "./example_run.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { chunk, completion, json, MockServer, toolCall, usageChunk } from "../models/openai_mock_server.ts";

const QUICKSTART = new URL("examples/quickstart.ts", ROOT);

Deno.test("quickstart: at most 25 lines, no casts, deno check passes", async () => {
  const source = await Deno.readTextFile(QUICKSTART);
  const lines = source.replace(/\n$/, "").split("\n");
  assert.ok(lines.length <= 25, `${lines.length} lines`);
  assertNoCasts(source);
  const check = await deno(["check", "--quiet", QUICKSTART.pathname]);
  assert.equal(check.code, 0, check.stderr);
});

Deno.test("quickstart: on the scripted model, two sales streamed, gold changes, save and restore", async () => {
  const run = await deno(["run", "--quiet", "--no-prompt", "--allow-read", QUICKSTART.pathname]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, "");
  assert.equal(
    run.stdout,
    [
      "Player: An ale, please.",
      "Mira: We have 3 ale left, 4 gold each. What'll it be?",
      "  (gold: 20 → 16)",
      "Player: Another one!",
      "Mira: We have 2 ale left, 4 gold each. What'll it be?",
      "  (gold: 16 → 12)",
      "",
    ].join("\n"),
  );
});

Deno.test("quickstart: --model openai:<baseURL>#<model> runs it on an OpenAI-compatible server", async () => {
  let replies = 0;
  const server = new MockServer((request, _index, s) => {
    const body = request.body as JsonObject;
    const messages = body.messages as JsonObject[];
    if (messages.at(-1)?.role !== "tool") {
      return json(
        completion(null, {
          toolCalls: [toolCall(`call_${messages.length}`, "check_stock", '{"item":"ale"}')],
        }),
      );
    }
    const line = ++replies === 1 ? "[happy] Ale's on tap, love." : "[amused] Thirsty, are we?";
    if (body.stream !== true) return json(completion(line));
    return s.sse([
      chunk({ role: "assistant", content: "" }),
      chunk({ content: line }, "stop"),
      usageChunk(20, 5),
    ]);
  });
  try {
    const port = new URL(server.baseURL).port;
    const run = await deno([
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-read",
      `--allow-net=127.0.0.1:${port}`,
      QUICKSTART.pathname,
      "--model",
      `openai:${server.baseURL}#mock`,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stdout,
      [
        "Player: An ale, please.",
        "Mira: Ale's on tap, love.",
        "  (gold: 20 → 16)",
        "Player: Another one!",
        "Mira: Thirsty, are we?",
        "  (gold: 16 → 12)",
        "",
      ].join("\n"),
    );
    // The grounding tool was forced on the first step (by name; every step shows the same tools), and the
    // game's answers reached the model.
    const bodies = server.chatBodies as JsonObject[];
    assert.equal(bodies.length, 4);
    assert.deepEqual(bodies[0].tool_choice, { type: "function", function: { name: "check_stock" } });
    const names = (body: JsonObject) =>
      (body.tools as JsonObject[]).map((t) => (t.function as JsonObject).name);
    assert.equal(names(bodies[0])[0], "check_stock");
    for (const body of bodies) assert.deepEqual(body.tools, bodies[0].tools);
    assert.deepEqual(bodies.map((b) => b.tool_choice === "auto" || b.tool_choice === "none"), [
      false,
      true,
      false,
      true,
    ]);
    // The last request carries both sales: the conversation survived the save and restore in between.
    const toolMessages = (bodies[3].messages as JsonObject[]).filter((m) => m.role === "tool");
    assert.deepEqual(toolMessages.map((m): JsonValue => m.content), [
      "3 ale left, 4 gold each.",
      "2 ale left, 4 gold each.",
    ]);
  } finally {
    await server.close();
  }
});

Deno.test("README opens with the quickstart, verbatim", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const firstBlock = /```(\w*)\n([\s\S]*?)```/.exec(readme);
  assert.ok(firstBlock, "a code block");
  assert.equal(firstBlock[1], "ts");
  assert.equal(firstBlock[2], await Deno.readTextFile(QUICKSTART));
  assert.ok(
    readme.indexOf(firstBlock[0]) < readme.indexOf("\n## ", readme.indexOf("\n## ") + 1),
    "near the top",
  );
});
