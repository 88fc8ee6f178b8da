/**
 * The page's copy of the bridge's persona and option defaults (npc_defaults.ts) against the bridge's own, and
 * settings with and without them compared as a restored NPC's are with the editor's.
 */
import assert from "node:assert/strict";
import { optionsJson, parseNpcOptions } from "../../../src/game/npc/npc_options.ts";
import { parsePersona, personaJson } from "../../../src/game/npc/persona.ts";
import { parseMemory } from "../../../src/game/npc/npc_memory.ts";
import { OPTION_BOUNDS, PERSONA_BOUNDS, RELATIONSHIP_BOUNDS } from "../../../src/protocol/npc_defaults.ts";
import { reviewDocument } from "../../../src/serve/playground/page/document.ts";
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

Deno.test("the page flags before Start each bounded number the bridge refuses, at the bridge's own bound", () => {
  const cases: [section: "persona" | "options" | "memory", key: string, max: number][] = [
    ["persona", "maxSentences", PERSONA_BOUNDS.maxSentences.max],
    ["options", "maxRelationshipChange", OPTION_BOUNDS.maxRelationshipChange.max],
    ["options", "playerOptionCount", OPTION_BOUNDS.playerOptionCount.max],
    ["options", "toolTimeoutSeconds", OPTION_BOUNDS.toolTimeoutSeconds.max],
    ["memory", "relationship", RELATIONSHIP_BOUNDS.max],
  ];
  /** The bridge's refusal of `value` at `section.key`, or null when it takes it. */
  const bridge = (section: string, key: string, value: number): string | null => {
    try {
      if (section === "persona") parsePersona({ name: "Gorm", [key]: value }, "persona");
      if (section === "options") {
        parseNpcOptions({ [key]: value }, { path: "options", defaultTimeoutMs: null });
      }
      if (section === "memory") parseMemory({ [key]: value }, "memory");
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };
  const page = (section: string, key: string, value: number) =>
    reviewDocument({
      persona: { name: "Gorm" },
      [section]: { ...(section === "persona" ? { name: "Gorm" } : {}), [key]: value },
    })
      .fields.get(`${section}.${key}`)?.error ?? null;
  for (const [section, key, max] of cases) {
    assert.equal(bridge(section, key, max), null, `the bridge takes ${section}.${key} = ${max}`);
    assert.equal(page(section, key, max), null, `the page takes ${section}.${key} = ${max}`);
    assert.notEqual(bridge(section, key, max + 1), null, `the bridge refuses ${section}.${key} = ${max + 1}`);
    assert.notEqual(page(section, key, max + 1), null, `the page flags ${section}.${key} = ${max + 1}`);
  }
});
