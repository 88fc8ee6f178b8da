/**
 * Error messages that quote a designer's value cut it short; in Japanese, Chinese or with emoji the cut must
 * not leave half a surrogate pair (a lone surrogate is not Unicode: strict JSON decoders, Rust's serde_json or
 * Swift's JSONDecoder among them, reject the whole line, and a terminal prints a replacement character).
 */
import assert from "node:assert/strict";
import { WireClient } from "../helpers/wire.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import type { BridgeError } from "../../src/protocol/errors.ts";
import { serverErrorInfo } from "../../src/models/openai_errors.ts";
import { parseJsonText } from "../../src/models/openai_completion.ts";
import { shown } from "../../src/client/checks.ts";
import { ask, postChat, RecordingModel, script, serve } from "../serve/serve_fixture.ts";

Deno.test("a value quoted in a -32602 message is cut between characters, not inside an emoji", async () => {
  const c = new WireClient();
  // compactJson gives `["` + 74 letters + the emoji: its first half is the 77th code unit, where the cut falls.
  for (const filler of ["a".repeat(74), "鍛".repeat(74), "مرحبا".repeat(15).slice(0, 74)]) {
    const id = c.request("npc/create", { persona: { name: [`${filler}😀😀`] }, model: "scripted" });
    const error = (await c.response(id)).error as JsonObject;
    const message = error.message as string;
    assert.ok(message.isWellFormed(), JSON.stringify(message));
    assert.equal(message, `Parameter 'persona.name' must be a string; got ["${filler}....`);
  }
  await c.close();
});

// In each case below the cut falls right after the first half of an emoji; the quote ends before it.

Deno.test("a model server's long error message is cut before an emoji, not inside it", () => {
  const info = serverErrorInfo({ error: `${"エ".repeat(996)}😀😀😀` });
  assert.equal(info.message, `${"エ".repeat(996)}...`);
});

Deno.test("a model's malformed answer quoted in the error's serverMessage keeps whole emoji", () => {
  let data: JsonObject | undefined;
  try {
    parseJsonText(`${"{".repeat(196)}🐉🐉🐉`, "The answer");
  } catch (error) {
    data = (error as BridgeError).data as JsonObject;
  }
  assert.equal(data?.serverMessage, `${"{".repeat(196)}...`);
});

Deno.test("the typed client's TypeError quotes a value without half an emoji", () => {
  assert.equal(shown(`${"竜".repeat(55)}🐉🐉`), `"${"竜".repeat(55)}...`);
});

Deno.test("oam serve: arguments that are not a JSON object are quoted without half an emoji", async () => {
  const model = new RecordingModel(script({ text: "never" }));
  await using s = await serve(model);
  const args = JSON.stringify([`${"門".repeat(77)}🚪🚪`]); // the 80-unit cut falls inside the first door
  const response = await postChat(s.base, {
    messages: [
      { role: "user", content: "門を開けて" },
      {
        role: "assistant",
        tool_calls: [{ id: "call_a", type: "function", function: { name: "open_gate", arguments: args } }],
      },
      { role: "tool", tool_call_id: "call_a", content: "開いた" },
    ],
  });
  assert.equal(response.status, 400);
  const message = (((await response.json()) as JsonObject).error as JsonObject).message as string;
  assert.ok(message.isWellFormed(), JSON.stringify(message));
  assert.equal(message, `'arguments' must be a JSON-encoded object, got: ["${"門".repeat(77)}`);
});

Deno.test("oam serve: a json_object answer that is no JSON is quoted in the 500 without half an emoji", async () => {
  await using s = await serve(script({ text: `${"竜".repeat(199)}🐉🐉` }));
  const bad = await postChat(s.base, { messages: ask("竜は？"), response_format: { type: "json_object" } });
  assert.equal(bad.status, 500);
  const message = (((await bad.json()) as JsonObject).error as JsonObject).message as string;
  assert.ok(message.isWellFormed(), JSON.stringify(message));
  assert.ok(message.endsWith(`Output was: ${"竜".repeat(199)}`), message);
});
