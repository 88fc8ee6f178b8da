/**
 * The page's copy of the bridge's persona and option defaults (npc_defaults.ts) against the bridge's own, and
 * settings with and without them compared as a restored NPC's are with the editor's.
 */
import assert from "node:assert/strict";
import { optionsJson, parseNpcOptions } from "../../../src/game/npc/npc_options.ts";
import { parsePersona, personaJson } from "../../../src/game/npc/persona.ts";
import {
  OPTION_DEFAULTS,
  PERSONA_DEFAULTS,
  withoutDefaults,
} from "../../../src/serve/playground/page/npc_defaults.ts";

Deno.test("the page's persona and option defaults are the bridge's, as a saved state writes them", () => {
  const persona = personaJson(parsePersona({ name: "Mira" }, "persona").value);
  assert.deepEqual({ name: "Mira", ...PERSONA_DEFAULTS }, persona);
  const options = optionsJson(parseNpcOptions({}, { path: "options", defaultTimeoutMs: 120_000 }).value);
  assert.deepEqual(OPTION_DEFAULTS, options);
});

Deno.test("withoutDefaults: a saved state's settings and the editor's sparse ones come out the same", () => {
  const written = { memoryTools: "all", worldWritable: ["player.gold"], secretsUnlockAtRelationship: null };
  const saved = optionsJson(parseNpcOptions(written, { path: "options", defaultTimeoutMs: 120_000 }).value);
  assert.deepEqual(withoutDefaults(saved, OPTION_DEFAULTS), withoutDefaults(written, OPTION_DEFAULTS));
  assert.deepEqual(withoutDefaults(written, OPTION_DEFAULTS), {
    memoryTools: ["rememberFact", "changeRelationship"],
    worldWritable: ["player.gold"],
    secretsUnlockAtRelationship: null,
  });
  const persona = { name: " Mira ", role: "", goals: ["Sell ale"], maxSentences: 2 };
  assert.deepEqual(
    withoutDefaults(personaJson(parsePersona(persona, "persona").value), PERSONA_DEFAULTS),
    withoutDefaults(persona, PERSONA_DEFAULTS),
  );
});
