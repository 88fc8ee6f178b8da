/**
 * The answer steps docs/PROTOCOL.md §10 gives for the game methods' scripts play as written: each row's
 * `{"json": …}` step (with its placeholders filled in) answers its method through the wire.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { scripted, WireClient } from "../helpers/wire.ts";

const PROTOCOL = await Deno.readTextFile(new URL("../../docs/PROTOCOL.md", import.meta.url));

/** The first `{"json": …}` code span of the §10 table row that starts with `| \`method\``, placeholders filled. */
function documentedStep(method: string, fill: Record<string, string>): JsonObject {
  const section = PROTOCOL.slice(PROTOCOL.indexOf("## 10. Scripted model"), PROTOCOL.indexOf("## 11."));
  const row = section.split("\n").find((line) => line.startsWith(`| \`${method}\``));
  assert.ok(row, `§10 has no answer-step row for ${method}`);
  let code = row.match(/`(\{"json": .*?\}\})`/)?.[1];
  assert.ok(code, `the ${method} row has no {"json": …} step`);
  for (const [placeholder, value] of Object.entries(fill)) code = code.replaceAll(placeholder, value);
  return JSON.parse(code) as JsonObject;
}

Deno.test("PROTOCOL.md §10: the documented npc/talk answer step is a valid structured reply", async () => {
  const step = documentedStep("npc/talk", {});
  const c = new WireClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: { name: "Gorm" },
    options: { replyFormat: "structured", compactAfterTurns: 0 },
    model: scripted(step),
  });
  const reply = await c.call("npc/talk", { npc: "gorm", line: "Swords?" });
  const json = step.json as JsonObject;
  assert.equal(reply.emotion, json.emotion);
  assert.equal(reply.line, json.line);
  assert.deepEqual(reply.playerOptions, json.player_options);
  assert.equal(reply.endsConversation, false);
  assert.equal(reply.isFallback, false);
  await c.close();
});

Deno.test("PROTOCOL.md §10: the documented decision answer step picks the option", async () => {
  const step = documentedStep("decision/decide", { '"…"': '"Snik is timid."', "<option id>": "flee" });
  const c = new WireClient();
  const decision = await c.call("decision/decide", {
    situation: "A wolf blocks the path.",
    options: ["fight", "flee"],
    model: scripted(step),
  });
  const json = step.json as JsonObject;
  assert.deepEqual(
    [decision.optionID, decision.reasoning, decision.confidence, decision.isFallback] as JsonValue[],
    ["flee", "Snik is timid.", json.confidence, false],
  );
  await c.close();
});
