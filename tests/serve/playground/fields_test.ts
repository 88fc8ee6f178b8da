/**
 * The playground form's field table against the bridge: it has every persona field, NPC option and memory
 * key (no more, no fewer), shows the bridge's defaults, and its checks agree with the bridge's own answer to
 * `npc/create` for a table of good and bad values of every field (an error in the page is an error from the
 * bridge, and the other way round).
 */
import assert from "node:assert/strict";
import { Bridge } from "../../../mod.ts";
import { PERSONA_KEYS } from "../../../src/game/npc/persona.ts";
import { defaultOptions, OPTION_KEYS } from "../../../src/game/npc/npc_options.ts";
import { MEMORY_KEYS } from "../../../src/game/npc/npc_memory.ts";
import type { JsonObject, JsonValue } from "../../../src/protocol/json.ts";
import { BridgeError } from "../../../src/protocol/errors.ts";
import {
  checkField,
  fieldHint,
  fieldOf,
  FIELDS,
  FILE_KEYS,
  keysOf,
} from "../../../src/serve/playground/page/fields.ts";

Deno.test("the form has exactly the persona fields, NPC options and memory keys of the bridge, in its order", () => {
  assert.deepEqual(keysOf("persona"), [...PERSONA_KEYS]);
  assert.deepEqual(keysOf("options"), [...OPTION_KEYS]);
  assert.deepEqual(keysOf("memory"), [...MEMORY_KEYS]);
  assert.deepEqual(keysOf("file"), ["npc", "greeting"]);
  for (const key of keysOf("file")) assert.ok((FILE_KEYS as readonly string[]).includes(key));
});

Deno.test("every option shows the bridge's default (numbers, booleans and names as the bridge sets them)", () => {
  const defaults = defaultOptions(120_000) as unknown as Record<string, JsonValue>;
  const shown = new Map(FIELDS.filter((f) => f.section === "options").map((f) => [f.key, f.defaultText]));
  const expected: Record<string, string> = {
    toolTimeoutSeconds: "120",
    groundingTool: "none",
    toolChoice: "explicit",
    memoryTools: "none",
    emotions: "all",
    extraInstructions: "none",
    fallbackLines: "neutral lines",
    temperature: "model default",
    maximumResponseTokens: "model default",
    worldReadable: '[""] (everything)',
    worldWritable: "[] (no write tool)",
    worldContextPaths: "[]",
  };
  for (const key of OPTION_KEYS) {
    const want = expected[key] ?? String(defaults[key]);
    assert.equal(shown.get(key), want, `options.${key}`);
  }
  assert.equal(FIELDS.find((f) => f.key === "maxSentences")?.defaultText, "2");
  assert.equal(FIELDS.find((f) => f.key === "defaultEmotion")?.defaultText, "neutral");
});

/** Values tried on every field: the page and the bridge must agree which are errors. */
const SAMPLES: JsonValue[] = [
  "",
  "abc",
  "😀".repeat(100), // 100 characters in 200 UTF-16 units: an id the bridge takes
  "鍛".repeat(129), // one character too many
  "ゲン\u0085", // a C1 control character
  "happy",
  "banana",
  "automatic",
  "text",
  "all",
  "none",
  "explicit",
  "required",
  -101,
  -1,
  0,
  1,
  2.5,
  4,
  5,
  100,
  201,
  1000,
  1001,
  86400,
  86401,
  // The safe integers end at 2^53-1: the bridge refuses an integer past them (JSON no longer keeps it exact).
  9007199254740991,
  9007199254740992,
  1e20,
  -1e20,
  true,
  false,
  [],
  ["a", "b"],
  ["happy", "sad"],
  ["rememberFact"],
  ["player.gold", "inn"],
  ["a..b"],
  [1],
  { tool: "check_stock" },
  { tool: "nope" },
  {},
];

const TOOL = {
  name: "check_stock",
  description: "Stock of an item.",
  parameters: { type: "object", properties: { item: { type: "string" } } },
};

Deno.test("the page's checks agree with the bridge's npc/create for every field and sample value", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  await bridge.createWorld({ player: { gold: 1 } }, { world: "w" });
  const tools = ["check_stock", "read_world_state"];
  const disagreements: string[] = [];
  let n = 0;
  let rejected = 0;
  for (const spec of FIELDS) {
    if (spec.section === "file" && spec.key === "greeting") continue; // not an npc/create param
    for (const value of SAMPLES) {
      const params: JsonObject = {
        npc: `n${++n}`,
        persona: { name: "Mira" },
        tools: [TOOL],
        world: "w",
        model: "scripted",
      };
      if (spec.section === "file") params[spec.key] = value;
      else if (spec.section === "persona") (params.persona as JsonObject)[spec.key] = value;
      else params[spec.section] = { [spec.key]: value };
      let bridgeError: string | null = null;
      try {
        const created = await bridge.request<{ npc: string }>("npc/create", params);
        await bridge.request("npc/delete", { npc: created.npc });
      } catch (error) {
        if (!(error instanceof BridgeError)) throw error;
        bridgeError = error.message;
        rejected++;
      }
      const page = checkField(spec, { value, tools }).error ?? null;
      if ((page === null) !== (bridgeError === null)) {
        disagreements.push(
          `${spec.section}.${spec.key} = ${JSON.stringify(value)}: page ${page ?? "ok"}; bridge ${
            bridgeError ?? "ok"
          }`,
        );
      }
    }
  }
  assert.deepEqual(disagreements, []);
  // Both sides of the table are exercised: many values are rejected, many accepted.
  assert.ok(rejected > 300 && n - rejected > 200, `${rejected} of ${n} rejected`);
});

Deno.test("a tool name is checked against the NPC's tools, none when they are not given", () => {
  const grounding = FIELDS.find((f) => f.key === "groundingTool")!;
  assert.deepEqual(checkField(grounding, { value: "check_stock", tools: ["check_stock"] }), {});
  assert.equal(
    checkField(grounding, { value: "check_stock" }).error,
    "The NPC has no tool 'check_stock' (it has: none).",
  );
});

Deno.test("a required field, an empty name and null are told apart", () => {
  const name = FIELDS.find((f) => f.key === "name")!;
  assert.equal(checkField(name, { value: undefined }).error, "Name is required.");
  assert.equal(checkField(name, { value: "  " }).error, "Name must not be empty.");
  const unlock = FIELDS.find((f) => f.key === "secretsUnlockAtRelationship")!;
  assert.deepEqual(checkField(unlock, { value: null }), {}, "null means always, guarded");
  const count = FIELDS.find((f) => f.key === "playerOptionCount")!;
  assert.deepEqual(checkField(count, { value: null }), {}, "null is the default");
  assert.equal(checkField(count, { value: 7 }).error, "Must be a whole number from 0 to 4; got 7.");
  const emotion = FIELDS.find((f) => f.key === "defaultEmotion")!;
  assert.match(checkField(emotion, { value: "banana" }).warning ?? "", /not a known emotion/);
});

Deno.test("an integer past 2^53-1 is refused by its field, which the message names as the bridge does", () => {
  const field = (key: string) => FIELDS.find((f) => f.key === key)!;
  // Before: no error, and the bridge then refused "Parameter 'options.maxToolRounds' must be an integer; …".
  assert.equal(
    checkField(field("maxToolRounds"), { value: 1e20 }).error,
    "'options.maxToolRounds' must be a whole number from 0 to 9007199254740991 (2^53-1, the largest integer " +
      "JSON keeps exact); got 100000000000000000000.",
  );
  assert.equal(
    checkField(field("secretsUnlockAtRelationship"), { value: -1e20 }).error,
    "'options.secretsUnlockAtRelationship' must be a whole number from -9007199254740991 to 9007199254740991 " +
      '(2^53-1, the largest integer JSON keeps exact), or "always" (null); got -100000000000000000000.',
  );
  assert.deepEqual(checkField(field("maxToolRounds"), { value: 9007199254740991 }), {});
  // A field with a smaller bound says that bound, as before.
  assert.equal(
    checkField(field("maxSentences"), { value: 1e20 }).error,
    "Must be a whole number from 1 to 1000; got 100000000000000000000.",
  );
});

Deno.test("a value of the wrong kind that is easy to fix says what to write: a text for a list, a number or true in quotes", () => {
  const field = (key: string) => FIELDS.find((f) => f.key === key)!;
  assert.equal(
    checkField(field("goals"), { value: "get rich" }).error,
    'Must be a list of texts, e.g. ["get rich"]; got "get rich".',
  );
  assert.equal(
    checkField(field("worldReadable"), { value: "player.gold" }).error,
    'Must be a list of world paths, e.g. ["player.gold"]; got "player.gold".',
  );
  assert.equal(
    checkField(field("maxSentences"), { value: "3" }).error,
    'Must be a whole number from 1 to 1000; got "3", a text: write 3 without quotes.',
  );
  assert.equal(
    checkField(field("canEndConversation"), { value: "false" }).error,
    'Must be true or false; got "false", a text: write false without quotes.',
  );
  // Others as before.
  assert.equal(checkField(field("goals"), { value: 3 }).error, "Must be a list of texts; got 3.");
  assert.equal(
    checkField(field("maxSentences"), { value: "many" }).error,
    'Must be a whole number from 1 to 1000; got "many".',
  );
});

Deno.test("the hint under a field: an optional text or list says 'Optional' (not the JSON of its default, \"\" or [])", () => {
  const hint = (key: string) => fieldHint(FIELDS.find((f) => f.key === key)!);
  assert.equal(hint("role"), "Optional. e.g. “the village blacksmith”.");
  assert.equal(hint("goals"), "Optional. What the NPC wants; one per line.");
  assert.equal(hint("name"), "Required. Only required field, e.g. “Gorm”.");
  assert.equal(hint("maxSentences"), "Default: 2 · 1–1000. Reply length limit.");
  assert.equal(hint("greeting"), "Default: none. An opening situation: the default situation of a bark.");
});

Deno.test("a name far longer than a name (a paste into the wrong field) is a warning before Start; the bridge takes it", () => {
  const name = fieldOf("persona", "name")!;
  const long = "G".repeat(5000);
  assert.deepEqual(checkField(name, { value: long }), {
    warning: "The name is 5,000 characters long: the NPC's name goes into every prompt, and the game shows " +
      "it where the NPC speaks. Keep it to a few words; the rest belongs in Role, Personality or Backstory.",
  });
  assert.deepEqual(checkField(name, { value: "Gorm Ironhand, the smith of Oakridge" }), {});
  assert.deepEqual(checkField(name, { value: "Ж".repeat(64) }), {});
});
