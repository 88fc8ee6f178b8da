/**
 * What the playground adds to a turn that failed on a script's reply step, from the errors the bridge really
 * sends: a text step where the NPC answers in JSON (the shopkeeper's script under the page's sample persona),
 * a reply of the wrong shape (the guard's two options where three are due), and nothing for other failures
 * or for an NPC on a real model; and what it adds to a bark that played a turn's json step.
 */
import assert from "node:assert/strict";
import { Bridge, BridgeError } from "../../../mod.ts";
import type { ScriptStep } from "../../../src/models/scripted.ts";
import {
  barkHint,
  scriptFileOf,
  scriptHint,
  withoutBridgeHint,
} from "../../../src/serve/playground/page/script_hint.ts";

/** The error of Mira's first turn on `steps` (her one tool answers "3 left"). */
async function failure(steps: ScriptStep[], options: Record<string, unknown> = {}): Promise<BridgeError> {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const stock = bridge.tool({ name: "check_stock", description: "Stock." }, () => "3 left");
  const npc = await bridge.createNpc({ name: "Mira" }, {
    tools: [stock],
    options,
    model: { type: "scripted", steps },
  });
  const error = await npc.talk("An ale, please.").then(() => null, (e) => e);
  assert.ok(error instanceof BridgeError, "the turn fails");
  return error;
}

async function personaSteps(name: string): Promise<ScriptStep[]> {
  return JSON.parse(
    await Deno.readTextFile(new URL(`../../../personas/${name}.steps.json`, import.meta.url)),
  );
}

Deno.test("the shopkeeper's text script under a JSON persona: the hint says so, and names the persona the bridge's script is for", async () => {
  const error = await failure(await personaSteps("shopkeeper"));
  assert.match(error.message, /the answer is not valid JSON/);
  // The bridge says it in the wire's terms; the page shows its message without that, and its own hint.
  assert.match(
    error.message,
    /A text step played where the NPC replies in JSON \(reply format 'automatic'\)/,
  );
  assert.equal(
    withoutBridgeHint(error.message),
    "The model gave an invalid answer: the answer is not valid JSON: [happy] We have 3 left What'll it be? " +
      "It was step 2 of 2, after a tool call: a turn is not retried once it called a tool, so fix that step.",
  );
  const run = {
    name: "Mira",
    replyFormat: undefined,
    bridgeLabel: "scripted (personas/shopkeeper.steps.json)",
  };
  assert.equal(
    scriptHint(error, run),
    "A text step played where Mira answers in JSON (reply format “automatic”): set Options → Reply format to " +
      "“text”, or make the step a json step. The bridge's model plays personas/shopkeeper.steps.json, " +
      "written for its own persona (likely personas/shopkeeper.jsonc): load that one (Load file…), " +
      "or run this persona on the Model tab's script.",
  );
  // On the Model tab's script: only the first sentence.
  assert.equal(
    scriptHint(error, { ...run, replyFormat: "structured", bridgeLabel: null }),
    "A text step played where Mira answers in JSON (reply format “structured”): set Options → Reply format " +
      "to “text”, or make the step a json step.",
  );
  // On a real model the same failure is the model's, not a script's: nothing to add.
  assert.equal(scriptHint(error, null), null);
});

Deno.test("a reply step of the wrong shape (the guard's two options for Mira's three) gets the general hint; other failures none", async () => {
  const error = await failure(await personaSteps("guard"));
  assert.match(error.message, /must NOT have fewer than 3 items/);
  assert.equal(
    scriptHint(error, {
      name: "Mira",
      replyFormat: "automatic",
      bridgeLabel: "scripted (OAM_SCRIPT=guard.steps.json)",
    }),
    "A reply step of the script does not fit Mira (docs/scripting.md, “The reply step”). The bridge's model " +
      "plays guard.steps.json, written for its own persona (likely guard.jsonc): load that one (Load " +
      "file…), or run this persona on the Model tab's script.",
  );
  const exhausted = await failure([]);
  assert.match(exhausted.message, /Script exhausted/);
  assert.equal(scriptHint(exhausted, { name: "Mira", replyFormat: undefined, bridgeLabel: null }), null);
});

Deno.test("the script file in the bridge's model label: --script and OAM_SCRIPT, nothing for other labels", () => {
  assert.equal(scriptFileOf("scripted (personas/shopkeeper.steps.json)"), "personas/shopkeeper.steps.json");
  assert.equal(scriptFileOf("scripted (OAM_SCRIPT=scripts/a b.json)"), "scripts/a b.json");
  assert.equal(scriptFileOf("scripted (test)"), null);
  assert.equal(scriptFileOf("openai: http://127.0.0.1:8080/v1#qwen"), null);
});

Deno.test("a bark that played a turn's json step gets a hint naming the script to fix; a text bark, or a real model, none", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const reply = {
    emotion: "happy",
    line: "Ale's on tap.",
    player_options: ["A", "B", "C"],
    ends_conversation: false,
  };
  const npc = await bridge.createNpc({ name: "Mira" }, {
    model: { type: "scripted", steps: [{ json: reply }, { text: "Rain again." }] },
  });
  const line = await npc.bark();
  assert.deepEqual(JSON.parse(line), reply, "the bridge gives the step's text back as the line");
  const page = { name: "Mira", replyFormat: undefined, bridgeLabel: null };
  assert.equal(
    barkHint(line, page),
    "This bark played the script's next step, a json reply written for a turn (that reply is used up): a " +
      'bark takes a text step, e.g. {"text": "Rain again."}. Put one in the Model tab\'s script where the bark ' +
      "comes.",
  );
  assert.match(
    barkHint(line, { ...page, bridgeLabel: "scripted (personas/guard.steps.json)" }) ?? "",
    /Put one in the script the bridge plays \(personas\/guard\.steps\.json\) where the bark comes\.$/,
  );
  assert.equal(barkHint(await npc.bark(), page), null, "a text step");
  assert.equal(barkHint(line, null), null, "not a script");
});
