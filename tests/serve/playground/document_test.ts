/**
 * The persona document the playground's form and JSONC view share: form edits are minimal text edits
 * (comments and layout survive, new keys go where the spec orders them), a syntax error keeps the last
 * valid value and says where it is, and the review finds unknown fields and tool problems.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import {
  DESCRIPTION_PLACEHOLDER,
  errorCount,
  npcToolNames,
  parseJsonc,
  PersonaDocument,
  reviewDocument,
  unknownFieldsText,
} from "../../../src/serve/playground/page/document.ts";
import { nearestName } from "../../../src/protocol/edit_distance.ts";

const TEXT = `// Gorm, the blacksmith.
{
  "persona": {
    "name": "Gorm", // his name
    "maxSentences": 2
  },
  /* options */
  "options": { "replyFormat": "text" }
}
`;

Deno.test("a form edit changes only its value: comments stay, a new key goes in spec order", () => {
  const doc = new PersonaDocument(TEXT);
  doc.set(["persona", "role"], "the village blacksmith");
  assert.equal(
    doc.text,
    `// Gorm, the blacksmith.
{
  "persona": {
    "name": "Gorm", // his name
    "role": "the village blacksmith",
    "maxSentences": 2
  },
  /* options */
  "options": { "replyFormat": "text" }
}
`,
  );
  doc.set(["persona", "maxSentences"], 3);
  assert.match(doc.text, /"maxSentences": 3\n/);
  doc.set(["persona", "role"], undefined);
  assert.equal(doc.text.includes("role"), false);
  assert.deepEqual(doc.value.persona, { name: "Gorm", maxSentences: 3 });
  doc.set(["npc"], "gorm");
  assert.ok(doc.text.startsWith('// Gorm, the blacksmith.\n{\n  "npc": "gorm",\n  "persona"'), doc.text);
});

Deno.test("removing and appending keep every comment beside its own property, and the commas right", () => {
  const text = `{
  "persona": {
    "name": "Gorm", // his name
    "role": "smith", // his job
    "maxSentences": 2 // short
  }
}
`;
  const doc = new PersonaDocument(text);
  doc.set(["persona", "maxSentences"], undefined);
  assert.equal(
    doc.text,
    '{\n  "persona": {\n    "name": "Gorm", // his name\n    "role": "smith" // his job\n  }\n}\n',
  );
  doc.set(["persona", "goals"], ["Sell swords", "Forge"]);
  assert.equal(
    doc.text,
    '{\n  "persona": {\n    "name": "Gorm", // his name\n    "role": "smith", // his job\n    "goals": [\n      "Sell swords",\n      "Forge"\n    ]\n  }\n}\n',
  );
  doc.set(["persona", "role"], undefined);
  assert.equal(
    doc.text,
    '{\n  "persona": {\n    "name": "Gorm", // his name\n    "goals": [\n      "Sell swords",\n      "Forge"\n    ]\n  }\n}\n',
  );
  // Still strict JSON once the comments are gone (no comma left dangling).
  const final: string = doc.text as string;
  assert.deepEqual(JSON.parse(final.replace(/\/\/.*$/gm, "")), doc.value);
  // A one-line object is edited by the JSONC library.
  const inline = new PersonaDocument('{"persona": {"name": "Gorm"}}');
  inline.set(["persona", "role"], "smith");
  assert.deepEqual(inline.value, { persona: { name: "Gorm", role: "smith" } });
});

Deno.test("removing an absent key changes nothing", () => {
  const doc = new PersonaDocument(TEXT);
  doc.set(["options", "emotions"], undefined);
  assert.equal(doc.text, TEXT);
});

Deno.test("a syntax error keeps the last valid value, names the line and column, and blocks form edits", () => {
  const doc = new PersonaDocument(TEXT);
  const broken = TEXT.replace('"name": "Gorm",', '"name": "Gorm"');
  assert.equal(doc.setText(broken), false);
  assert.equal(doc.text, broken, "the text is kept as typed");
  assert.deepEqual(doc.value.persona, { name: "Gorm", maxSentences: 2 });
  assert.equal(
    doc.problem?.message,
    "The persona file is not valid JSON: a comma was expected on line 5, column 5.",
  );
  assert.throws(() => doc.set(["persona", "role"], "x"), /syntax problem/);
  assert.equal(doc.setText(TEXT), true);
  assert.equal(doc.problem, null);
});

Deno.test("a text that is not an object, or empty, is a problem", () => {
  const doc = new PersonaDocument("[1, 2]");
  assert.equal(doc.problem?.message, "The persona file must be a JSON object ({…}); got a list.");
  doc.setText("  ");
  assert.equal(doc.problem?.message, "The persona file is empty.");
  assert.deepEqual(parseJsonc('{"a": 1,}'), { value: { a: 1 }, problem: null });
});

Deno.test("the review lists unknown fields at every level and counts errors, not warnings", () => {
  const review = reviewDocument({
    persona: { name: "Mira", mood: "fine" },
    options: { replyFormat: "text", playerOptionCount: 9, colour: "red" },
    tools: [{ name: "a", description: "x", parameters: {}, when: 1 }],
    memory: { relationship: 5, trust: 1 },
    extra: true,
  });
  assert.deepEqual(review.unknown, [
    "extra",
    "persona.mood",
    "options.colour",
    "memory.trust",
    "tools[0].when",
  ]);
  assert.deepEqual([...review.fields.keys()], ["options.playerOptionCount"]);
  assert.equal(errorCount(review), 1);
});

Deno.test("tool problems: names, duplicates, schemas, timeouts; a missing description is a warning", () => {
  const review = reviewDocument({
    persona: { name: "Mira" },
    tools: [
      { name: "bad name", description: "x" },
      { name: "ok" },
      { name: "ok", description: "again", parameters: "object", timeoutSeconds: 90000 },
    ],
  });
  assert.deepEqual(review.tools, [
    [{ error: 'Name must be 1–64 of A–Z a–z 0–9 _ - . ; got "bad name" (e.g. "bad_name").' }],
    [{ warning: "No description: the model decides from it (the bridge warns)." }],
    [
      { error: "Two tools are named 'ok'; names are unique per NPC." },
      { error: 'Parameters must be a JSON Schema object, e.g. {"type": "object", …}.' },
      { error: "The timeout must be a number of seconds from 0 to 86400 (0 means no limit)." },
    ],
  ]);
  assert.equal(errorCount(review), 4);
  // No persona: one problem (typing a name fixes it), said by the Name field, with what the file needs.
  const empty = reviewDocument({});
  assert.deepEqual(empty.file, []);
  assert.deepEqual(Object.fromEntries(empty.fields), {
    "persona.name": {
      error: 'Name is required: type one here, or write "persona": {"name": "Gorm"} in the JSONC text.',
    },
  });
  assert.equal(errorCount(empty), 1);
});

Deno.test("a tool description of only spaces or line breaks is warned about as missing, like an empty one", () => {
  const review = reviewDocument({
    persona: { name: "Mira" },
    tools: [{ name: "a", description: "   " }, { name: "b", description: "\n\t" }, {
      name: "c",
      description: " x ",
    }],
  });
  const missing = { warning: "No description: the model decides from it (the bridge warns)." };
  assert.deepEqual(review.tools, [[missing], [missing], []]);
  assert.equal(errorCount(review), 0);
});

Deno.test("a tool description still the box's placeholder text (as Add a tool once wrote it) is warned about", () => {
  const review = reviewDocument({
    persona: { name: "Mira" },
    tools: [
      { name: "a", description: DESCRIPTION_PLACEHOLDER },
      { name: "b", description: ` ${DESCRIPTION_PLACEHOLDER}\n` },
      { name: "c", description: `${DESCRIPTION_PLACEHOLDER} Opens the gate.` },
    ],
  });
  const placeholder = {
    warning: `The description is still the placeholder "${DESCRIPTION_PLACEHOLDER}": ` +
      "write what this tool does, since the model decides from it.",
  };
  assert.deepEqual(review.tools, [[placeholder], [placeholder], []]);
  assert.equal(errorCount(review), 0);
});

Deno.test("the NPC's tools: client tools plus the built-in ones its world and memory options add", () => {
  assert.deepEqual(npcToolNames({ tools: [{ name: "a" }] }), ["a"]);
  assert.deepEqual(npcToolNames({ world: {}, options: {} }), ["read_world_state"]);
  assert.deepEqual(
    npcToolNames({ world: {}, options: { worldReadable: [], worldWritable: ["x"], memoryTools: "all" } }),
    ["update_world_state", "remember_fact", "change_relationship"],
  );
  assert.deepEqual(npcToolNames({ options: { memoryTools: ["change_relationship"] } }), [
    "change_relationship",
  ]);
});

Deno.test("a misspelt field gets a 'did you mean' hint when one known name is clearly close, at every level", () => {
  const review = reviewDocument({
    persnoa: { name: "Mira" },
    persona: { nmae: "Mira", mood: "fine", Role: "x", speechStyle: "curt" },
    options: { replyFormt: "text", maxTokns: 3 },
    tools: [{ name: "a", descripton: "x" }],
    memory: { relationshp: 5 },
  });
  assert.deepEqual(Object.fromEntries(review.hints), {
    "persnoa": "persona",
    "persona.nmae": "name",
    "persona.Role": "role",
    "persona.speechStyle": "speakingStyle",
    "options.replyFormt": "replyFormat",
    "tools[0].descripton": "description",
    "memory.relationshp": "relationship",
  });
  // No hint for a name far from every field, or between two equally close ones.
  assert.equal(review.hints.has("persona.mood"), false);
  assert.equal(nearestName("goal", ["goals", "goad"]), undefined);
  assert.equal(nearestName("goal", ["goals", "role"]), "goals");
  assert.equal(nearestName("xy", ["npc"]), undefined);
});

Deno.test("a known key in the wrong section: the review says where it belongs (not to check its spelling)", () => {
  const review = reviewDocument({
    name: "Gorm",
    role: "smith",
    persona: { name: "G", replyFormat: "text" },
    options: { facts: [] },
  });
  assert.deepEqual(Object.fromEntries(review.moves), {
    name: "persona",
    role: "persona",
    "persona.replyFormat": "options",
    "options.facts": "memory",
  });
  assert.equal(review.hints.size, 0, "a key that is right elsewhere is not a misspelling");
});

Deno.test("JSON's usual slips from a designer: single quotes, names and texts without quotes say what to write", () => {
  assert.equal(
    parseJsonc("{'persona': {}}", "The persona file").problem?.message,
    "The persona file is not valid JSON: single quotes on line 1, column 2. " +
      "JSON takes double quotes: \"persona\", not 'persona'.",
  );
  assert.equal(
    parseJsonc("{\n  persona: {}}", "The persona file").problem?.message,
    "The persona file is not valid JSON: a name without quotes on line 2, column 3. " +
      'Put names and texts in double quotes: "persona", not persona.',
  );
  assert.equal(
    parseJsonc('{"name": Gorm}', "The persona file").problem?.message,
    "The persona file is not valid JSON: a text without quotes on line 1, column 10. " +
      'Put names and texts in double quotes: "Gorm", not Gorm.',
  );
});

Deno.test("a file without a persona (in the test above), and a tool name with spaces, say what to write", () => {
  assert.deepEqual(
    reviewDocument({ persona: { name: "G" }, tools: [{ name: "open door", description: "x" }] }).tools,
    [
      [{ error: 'Name must be 1–64 of A–Z a–z 0–9 _ - . ; got "open door" (e.g. "open_door").' }],
    ],
  );
});

Deno.test("a tool parameter written as its type ('door': 'string') is a problem that says how to write it", () => {
  const tool = (properties: JsonObject, name = Object.keys(properties)[0]) => ({
    name,
    description: "Opens a door.",
    parameters: { type: "object", properties },
  });
  const review = reviewDocument({
    persona: { name: "G" },
    tools: [
      tool({ door: "string", count: { type: "integer" } }),
      tool({ where: 3 }),
      tool({ ok: { type: "string" }, any: true }),
    ],
  });
  assert.deepEqual(review.tools, [
    [{ error: `Parameter 'door' must be a schema object: write "door": {"type": "string"}; got "string".` }],
    [{ error: `Parameter 'where' must be a schema object, e.g. "where": {"type": "string"}; got 3.` }],
    [],
  ]);
});

Deno.test("the unknown fields' line says 'it' for one field and 'them' for more", () => {
  assert.equal(
    unknownFieldsText(reviewDocument({ persona: { name: "Gorm", mood: "grim" } })),
    "Unknown field: persona.mood. The bridge ignores it (with a warning); check the spelling.",
  );
  assert.equal(
    unknownFieldsText(reviewDocument({ persona: { name: "Gorm", replyFormat: "text" } })),
    "Unknown field: persona.replyFormat (belongs in 'options'). The bridge ignores it (with a warning); " +
      "move it into the section it belongs in.",
  );
  assert.equal(
    unknownFieldsText(reviewDocument({ persona: { nmae: "Gorm" }, role: "the smith" })),
    "Unknown fields: role (belongs in 'persona'), persona.nmae (did you mean 'name'?). " +
      "The bridge ignores them (with a warning); check the spelling, and move the ones that belong elsewhere.",
  );
  assert.equal(
    unknownFieldsText(reviewDocument({ name: "Gorm", role: "the smith" })),
    "Unknown fields: name (belongs in 'persona'), role (belongs in 'persona'). " +
      "The bridge ignores them (with a warning); move each into the section it belongs in.",
  );
  assert.equal(unknownFieldsText(reviewDocument({ persona: { name: "Gorm" } })), "");
});
