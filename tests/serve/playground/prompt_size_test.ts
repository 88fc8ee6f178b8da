/**
 * The playground's estimate of a persona's prompt before Start: the scripted model's context size it assumes
 * is the bridge's, its count is a lower bound of the bridge's own estimate (so a warning before Start is
 * never one the bridge would not give), and the warning names the part to shorten.
 */
import assert from "node:assert/strict";
import { Bridge } from "../../../mod.ts";
import { SCRIPTED_CONTEXT_SIZE } from "../../../src/models/scripted.ts";
import type { JsonObject } from "../../../src/protocol/json.ts";
import {
  contextWarning,
  promptSize,
  SCRIPT_CONTEXT_SIZE,
} from "../../../src/serve/playground/page/prompt_size.ts";

const BIG: JsonObject = {
  persona: {
    name: "Mira",
    role: "the innkeeper",
    backstory: "Born in the mill town of Harrow, she learned the trade of her father. ".repeat(520),
    goals: ["Sell ale", "Keep the peace"],
    secrets: ["x".repeat(50_000)], // left out: secrets stay out of the prompt until they unlock
  },
  options: { extraInstructions: "Never give credit." },
  memory: { facts: ["Aria drinks ale."] },
  tools: [{ name: "check_stock", description: "Stock.", parameters: { type: "object" } }],
};

Deno.test("the page's context size of its script is the scripted model's", () => {
  assert.equal(SCRIPT_CONTEXT_SIZE, SCRIPTED_CONTEXT_SIZE);
});

Deno.test("the page's estimate is at most the bridge's: the bridge warns about every persona the page warns about", async () => {
  const page = promptSize(BIG);
  assert.equal(page.largest.path, "persona.backstory");
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const npc = await bridge.createNpc(BIG.persona as never, {
    options: BIG.options as never,
    memory: BIG.memory as never,
    tools: [bridge.tool((BIG.tools as JsonObject[])[0] as never, () => Promise.resolve(1))],
    model: { type: "scripted", steps: [] },
  });
  const warning = npc.warnings.find((w) => w.includes("more than the model's"));
  assert.ok(warning, `the bridge warns too: ${npc.warnings.join(" | ")}`);
  const bridgeTokens = Number(/takes about (\d+) tokens/.exec(warning)?.[1]);
  assert.ok(page.tokens <= bridgeTokens, `page ${page.tokens} <= bridge ${bridgeTokens}`);
  assert.ok(page.tokens > SCRIPTED_CONTEXT_SIZE);
});

Deno.test("the warning says how many tokens, the context, and the part to shorten; none when it fits or the size is unknown", () => {
  assert.deepEqual(contextWarning(BIG, 8192), {
    warning: `The persona takes at least about ${
      promptSize(BIG).tokens.toLocaleString("en-US")
    } tokens (estimated), more than the model's 8192-token context: its turns will not fit. Shorten the backstory.`,
    path: "persona.backstory",
  });
  assert.equal(contextWarning(BIG, null), null);
  assert.equal(contextWarning({ persona: { name: "Gorm" } }, 8192), null);
  const tools = { persona: { name: "Gorm" }, tools: [{ name: "t", description: "d".repeat(40_000) }] };
  assert.equal(contextWarning(tools, 8192)?.path, "tools");
  assert.match(contextWarning(tools, 8192)?.warning ?? "", /Shorten the tools\.$/);
});
