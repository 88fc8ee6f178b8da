/**
 * A schema's warnings are true for the model that generates it: a llama (GGUF) model's grammar generates the
 * client's enum and const values themselves, enforces `minLength`/`maxLength` and the `date`, `time` and
 * `date-time` formats, and enforces no numeric bound but a short integer range; the on-device and scripted
 * models (and `schema/validate`, with no model) keep their wording. Through the wire: `session/respond` and
 * `content/generate` on a model of kind `llama` (a scripted model under that kind: the warnings depend on the
 * kind only).
 */
import assert from "node:assert/strict";
import { WireClient } from "../helpers/wire.ts";
import type { LanguageModel } from "../../src/models/language_model.ts";
import { parseScript, ScriptedModel } from "../../src/models/scripted.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

/** A model of kind `llama` that answers `answer` (the scripted model's step, without the schema). */
function llamaKind(answer: JsonObject, kind = "llama"): () => LanguageModel {
  const script = parseScript([{ json: answer }, { json: answer }], "script");
  return () => {
    const inner = new ScriptedModel(structuredClone(script));
    return {
      kind,
      contextSize: 8192,
      trimsHistory: false,
      availability: () => inner.availability(),
      step: (request) => inner.step({ ...request, responseSchema: null }),
    };
  };
}

const LITERALS: JsonObject = {
  type: "object",
  properties: {
    level: { enum: [1, 2, 3] },
    hostile: { enum: [true, false] },
    weight: { enum: [0.5, 1.5] },
    mood: { enum: ["calm", 2, true] },
    version: { const: 7 },
    loot: { enum: ["coin", { gem: 1 }] },
    origin: { const: { x: 0 } },
  },
  required: ["level", "hostile", "weight", "mood", "version", "loot", "origin"],
};
const LITERALS_ANSWER = {
  level: 2,
  hostile: true,
  weight: 0.5,
  mood: 2,
  version: 7,
  loot: "coin",
  origin: { x: 0 },
};

const STRINGS: JsonObject = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 3, maxLength: 20 },
    when: { type: "string", format: "date" },
    at: { type: "string", format: "time" },
    stamp: { type: ["string", "null"], format: "date-time" },
    mail: { type: "string", format: "email" },
    essay: { type: "string", maxLength: 5000 },
    code: { type: "string", format: "date", minLength: 10 },
  },
  required: ["name", "when", "at", "mail", "essay", "code"],
};
const STRINGS_ANSWER = {
  name: "Gorm",
  when: "2024-05-01",
  at: "13:45:00Z",
  mail: "gorm@example.com",
  essay: "Short.",
  code: "2024-05-01",
};

const NUMBERS: JsonObject = {
  type: "object",
  properties: {
    gold: { type: "integer", minimum: 0 },
    dice: { type: "integer", minimum: 1, maximum: 6 },
    ratio: { type: "number", minimum: 0, maximum: 1 },
    chance: { type: "number", exclusiveMinimum: 0, maximum: 1 },
    big: { type: "integer", minimum: 0, maximum: 100000 },
    huge: { type: "number", minimum: 1e300 },
    hugeCount: { type: "integer", minimum: 1e300 },
  },
  required: ["gold", "dice", "ratio", "chance", "big", "huge", "hugeCount"],
};
const NUMBERS_ANSWER = { gold: 5, dice: 3, ratio: 0.5, chance: 0.5, big: 7, huge: 2e300, hugeCount: 2e300 };

const ON_DEVICE_LITERALS = [
  "#/properties/level: integer enum is enforced as a range 1...3; exact values are described",
  `#/properties/hostile: boolean enum is generated as strings: the on-device and scripted models answer the ` +
  `string "true", not true`,
  `#/properties/weight: number enum is generated as strings: the on-device and scripted models answer the ` +
  `string "0.5", not 0.5`,
  "#/properties/mood: mixed-type enum is generated as strings",
  "#/properties/version: non-string const 7 is described instead of enforced",
  "#/properties/loot: mixed-type enum is generated as strings",
  `#/properties/origin: non-string const {"x":0} is described instead of enforced`,
];

async function respondWarnings(
  client: WireClient,
  schema: JsonObject,
  session: string,
): Promise<unknown> {
  await client.call("session/create", { session });
  const result = await client.call("session/respond", { session, prompt: "Go.", schema }) as JsonObject;
  return result.warnings ?? [];
}

Deno.test("model warnings: a llama model is not told its number, boolean and const values become strings", async () => {
  const c = new WireClient({ systemModel: llamaKind(LITERALS_ANSWER) });
  try {
    // Its grammar generates every value, objects and arrays too (written as JSON).
    assert.deepEqual(await respondWarnings(c, LITERALS, "s"), []);
  } finally {
    await c.close();
  }
});

Deno.test("model warnings: the on-device and scripted models keep the literal warnings", async () => {
  const c = new WireClient();
  try {
    await c.call("session/create", {
      session: "s",
      // The scripted model follows the generation schema: the values as strings, the range, the described type.
      model: {
        type: "scripted",
        steps: [{
          json: {
            level: 2,
            hostile: "true",
            weight: "0.5",
            mood: "2",
            version: 7,
            loot: "coin",
            origin: "x",
          },
        }],
      },
    });
    const result = await c.call("session/respond", { session: "s", prompt: "Go.", schema: LITERALS });
    assert.deepEqual((result as JsonObject).warnings, ON_DEVICE_LITERALS);
    const validated = await c.call("schema/validate", { schema: LITERALS }) as JsonObject;
    assert.deepEqual(validated.warnings, ON_DEVICE_LITERALS);
  } finally {
    await c.close();
  }
});

Deno.test("model warnings: a llama model is warned only about the string constraints its grammar leaves out", async () => {
  const c = new WireClient({ systemModel: llamaKind(STRINGS_ANSWER) });
  try {
    assert.deepEqual(await respondWarnings(c, STRINGS, "s"), [
      `#/properties/mail: 'format' "email" is not enforced on a llama model (its grammar enforces the formats ` +
      "date, time, date-time, uuid, ipv4): an answer that is not a valid email fails validation and is generated once more",
      "#/properties/essay: 'maxLength' 5000 is not enforced on a llama model (its grammar enforces lengths up " +
      "to 500 characters, and none beside a format): an answer that breaks it fails validation and is generated " +
      "once more",
      "#/properties/code: 'minLength' 10 is not enforced on a llama model (its grammar enforces lengths up " +
      "to 500 characters, and none beside a format): an answer that breaks it fails validation and is generated " +
      "once more",
    ]);
  } finally {
    await c.close();
  }
});

Deno.test("model warnings: a llama model is told a format neither its grammar nor validation knows is not checked", async () => {
  const c = new WireClient({ systemModel: llamaKind({ hue: "teal" }) });
  const schema = {
    type: "object",
    properties: { hue: { type: "string", format: "color" } },
    required: ["hue"],
  };
  try {
    assert.deepEqual(await respondWarnings(c, schema, "s"), [
      `#/properties/hue: 'format' "color" is not enforced on a llama model (its grammar enforces the formats ` +
      "date, time, date-time, uuid, ipv4, and validation checks email, hostname, ipv6, uri; other formats are " +
      "not checked)",
    ]);
  } finally {
    await c.close();
  }
});

Deno.test("model warnings: an openai model is told the formats its validation checks", async () => {
  const c = new WireClient({ systemModel: llamaKind({ ...STRINGS_ANSWER, hue: "teal" }, "openai") });
  const schema = {
    ...STRINGS,
    properties: { ...STRINGS.properties as JsonObject, hue: { type: "string", format: "color" } },
  };
  const checked = (path: string, format: string) =>
    `#/properties/${path}: 'format' "${format}" is described to the model but not enforced: an answer that is ` +
    `not a valid ${format} fails validation and is generated once more`;
  const described = (path: string, key: string) =>
    `#/properties/${path}: '${key}' is described to the model but not enforced`;
  const validated = (path: string, key: string) =>
    `${described(path, key)}: an answer that breaks it fails validation and is generated once more`;
  try {
    assert.deepEqual(await respondWarnings(c, schema, "s"), [
      validated("name", "minLength"),
      validated("name", "maxLength"),
      checked("when", "date"),
      checked("at", "time"),
      checked("stamp", "date-time"),
      checked("mail", "email"),
      validated("essay", "maxLength"),
      checked("code", "date"),
      validated("code", "minLength"),
      described("hue", "format"),
    ]);
  } finally {
    await c.close();
  }
});

Deno.test("model warnings: the scripted model is still told minLength and format are only described", async () => {
  const c = new WireClient();
  try {
    await c.call("session/create", {
      session: "s",
      model: { type: "scripted", steps: [{ json: STRINGS_ANSWER }] },
    });
    const result = await c.call("session/respond", { session: "s", prompt: "Go.", schema: STRINGS });
    const described = (path: string, key: string) =>
      `#/properties/${path}: '${key}' is described to the model but not enforced`;
    assert.deepEqual((result as JsonObject).warnings, [
      described("name", "minLength"),
      described("name", "maxLength"),
      described("when", "format"),
      described("at", "format"),
      described("stamp", "format"),
      described("mail", "format"),
      described("essay", "maxLength"),
      described("code", "format"),
      described("code", "minLength"),
    ]);
  } finally {
    await c.close();
  }
});

Deno.test("model warnings: a llama model is told which numeric bounds its grammar does not enforce", async () => {
  const c = new WireClient({ systemModel: llamaKind(NUMBERS_ANSWER) });
  try {
    // Its grammar enforces ranges of any size and one-sided bounds, numbers with a fraction and exclusive
    // bounds included; not a bound past the 16 integer digits it writes.
    const outside =
      "is not enforced on a llama model (its grammar writes numbers of up to 16 integer digits " +
      "and no exponent): an answer outside it fails validation and is generated once more";
    const expected = [
      `#/properties/huge: number minimum 1e+300 ${outside}`,
      // Every model is told an integer bound past the safe range is clamped (convert_test.ts).
      "#/properties/hugeCount: integer lower bound 1e+300 is clamped to 9007199254740991, the largest safe " +
      "integer (2^53-1)",
      `#/properties/hugeCount: integer minimum 1e+300 ${outside}`,
    ];
    assert.deepEqual(await respondWarnings(c, NUMBERS, "s"), expected);
    // content/generate on the host's default llama model says the same.
    const content = await c.call("content/generate", { prompt: "Loot.", schema: NUMBERS }) as JsonObject;
    assert.deepEqual(content.warnings, expected);
  } finally {
    await c.close();
  }
  // The on-device wording: bounds are enforced there; the exclusive one is changed, the huge integer one clamped.
  const s = new WireClient();
  try {
    const validated = await s.call("schema/validate", { schema: NUMBERS }) as JsonObject;
    assert.deepEqual(validated.warnings, [
      "#/properties/chance: exclusive number bounds are enforced as inclusive",
      "#/properties/hugeCount: integer lower bound 1e+300 is clamped to 9007199254740991, the largest safe " +
      "integer (2^53-1)",
    ]);
  } finally {
    await s.close();
  }
});

Deno.test("model warnings: content/generate on a llama model words the literal and string warnings for it", async () => {
  const c = new WireClient({ systemModel: llamaKind({ level: 2, name: "Gorm" }) });
  try {
    const schema: JsonObject = {
      type: "object",
      properties: { level: { enum: [1, 2, 3] }, name: { type: "string", minLength: 3 } },
      required: ["level", "name"],
    };
    const content = await c.call("content/generate", { prompt: "Loot.", schema }) as JsonObject;
    assert.deepEqual(content, { content: { level: 2, name: "Gorm" } });
  } finally {
    await c.close();
  }
});

Deno.test("model warnings: a tool's parameters are worded for the llama model that calls it, in their place", async () => {
  const tool = {
    name: "give",
    description: "Gives an item.",
    parameters: {
      type: "object",
      properties: {
        count: { enum: [1, 2, 3] },
        item: { type: "string", minLength: 3 },
        ratio: { type: "number", minimum: 0, maximum: 1 },
        loot: { enum: ["coin", { gem: 1 }] },
      },
      required: ["count", "item"],
    },
  };
  const c = new WireClient({ systemModel: llamaKind({ level: 2 }) });
  const s = new WireClient();
  try {
    const created = await c.call("session/create", {
      session: "s",
      tools: [tool, { name: "look" }],
    }) as JsonObject;
    assert.deepEqual(created.warnings, [
      "give: #/properties/ratio: number range 0...1 is not enforced in a llama model's tool arguments (its " +
      "grammar there enforces only integer ranges of up to 257 values): arguments outside it fail validation " +
      "and are generated once more",
      "give: #/properties/loot: mixed-type enum is generated as strings",
      "look: no description; the model may not know when to call it.",
    ]);
    // The scripted model keeps the on-device wording.
    const scripted = await s.call("session/create", {
      session: "s",
      tools: [tool],
      model: { type: "scripted", steps: [] },
    }) as JsonObject;
    assert.deepEqual(scripted.warnings, [
      "give: #/properties/count: integer enum is enforced as a range 1...3; exact values are described",
      "give: #/properties/item: 'minLength' is described to the model but not enforced",
      "give: #/properties/loot: mixed-type enum is generated as strings",
    ]);
  } finally {
    await c.close();
    await s.close();
  }
});

/** Keywords described to every model that the llama and openai backends' validation (ajv) still checks. */
const VALIDATED: JsonObject = {
  type: "object",
  properties: {
    tag: { type: "string", pattern: "^[a-z]+$" },
    bag: { type: "array", items: { type: "string" }, uniqueItems: true },
    step: { type: "integer", multipleOf: 5 },
    extra: { type: "object", properties: { a: { type: "string" } }, minProperties: 1 },
    blob: { type: "string", contentEncoding: "base64" },
  },
  required: ["tag", "bag", "step", "extra", "blob"],
};
const VALIDATED_ANSWER = { tag: "abc", bag: ["x"], step: 10, extra: { a: "y" }, blob: "QQ==" };

Deno.test("model warnings: an openai model is told validation refuses what breaks a keyword it checks", async () => {
  const c = new WireClient({ systemModel: llamaKind({ ...VALIDATED_ANSWER, name: "Gorm" }, "openai") });
  const schema = {
    ...VALIDATED,
    properties: {
      ...VALIDATED.properties as JsonObject,
      name: { type: "string", minLength: 3, maxLength: 9 },
    },
  };
  const checked = (path: string, key: string) =>
    `#/properties/${path}: '${key}' is described to the model but not enforced: an answer that breaks it ` +
    "fails validation and is generated once more";
  try {
    assert.deepEqual(await respondWarnings(c, schema, "s"), [
      `#/properties/tag: pattern '^[a-z]+$' is described to the model but not enforced: an answer that does ` +
      "not match it fails validation and is generated once more",
      checked("bag", "uniqueItems"),
      checked("step", "multipleOf"),
      checked("extra", "minProperties"),
      // ajv does not check content keywords: only described.
      "#/properties/blob: 'contentEncoding' is described to the model but not enforced",
      checked("name", "minLength"),
      checked("name", "maxLength"),
    ]);
  } finally {
    await c.close();
  }
});

Deno.test("model warnings: a llama model is told validation refuses what breaks a keyword its grammar leaves", async () => {
  const c = new WireClient({ systemModel: llamaKind(VALIDATED_ANSWER) });
  const checked = (path: string, key: string) =>
    `#/properties/${path}: '${key}' is not enforced on a llama model: an answer that breaks it fails ` +
    "validation and is generated once more";
  try {
    assert.deepEqual(await respondWarnings(c, VALIDATED, "s"), [
      `#/properties/tag: pattern '^[a-z]+$' is not enforced on a llama model: an answer that does not match ` +
      "it fails validation and is generated once more",
      checked("bag", "uniqueItems"),
      checked("step", "multipleOf"),
      checked("extra", "minProperties"),
      "#/properties/blob: 'contentEncoding' is not enforced on a llama model",
    ]);
  } finally {
    await c.close();
  }
  // The scripted model keeps the described wording, the pattern's included.
  const s = new WireClient();
  try {
    const validated = await s.call("schema/validate", { schema: VALIDATED }) as JsonObject;
    assert.deepEqual(validated.warnings, [
      "#/properties/tag: pattern '^[a-z]+$' is described to the model but not enforced",
      "#/properties/bag: 'uniqueItems' is described to the model but not enforced",
      "#/properties/step: 'multipleOf' is described to the model but not enforced",
      "#/properties/extra: 'minProperties' is described to the model but not enforced",
      "#/properties/blob: 'contentEncoding' is described to the model but not enforced",
    ]);
  } finally {
    await s.close();
  }
});

Deno.test("model warnings: a llama model's tool arguments are told their dates are held to the calendar by validation", async () => {
  const c = new WireClient({ systemModel: llamaKind({}) });
  try {
    const created = await c.call("session/create", {
      session: "s",
      tools: [{
        name: "meet",
        description: "Sets a meeting.",
        parameters: {
          type: "object",
          properties: {
            day: { type: "string", format: "date" },
            at: { type: "string", format: "date-time" },
            clock: { type: "string", format: "time" },
          },
          required: ["day", "at", "clock"],
        },
      }],
    }) as JsonObject;
    const dated = (path: string, format: string) =>
      `meet: #/properties/${path}: 'format' "${format}" is only shaped by a llama model's grammar in tool ` +
      "arguments (any day up to 31 in any month, such as 2024-02-30): arguments with a day the calendar " +
      "lacks fail validation and are generated once more";
    assert.deepEqual(created.warnings, [dated("day", "date"), dated("at", "date-time")]);
  } finally {
    await c.close();
  }
});

Deno.test("model warnings: a llama model's answer grammar generates uuid and ipv4; its tool arguments do not", async () => {
  const schema: JsonObject = {
    type: "object",
    properties: {
      id: { type: "string", format: "uuid" },
      host: { type: "string", format: "ipv4" },
      name: { type: "string", format: "hostname" },
    },
    required: ["id", "host", "name"],
  };
  const c = new WireClient({
    systemModel: llamaKind({ id: "2eb8aa08-aa98-11ea-b4aa-73b441d16380", host: "10.0.0.1", name: "gate" }),
  });
  try {
    assert.deepEqual(await respondWarnings(c, schema, "s"), [
      `#/properties/name: 'format' "hostname" is not enforced on a llama model (its grammar enforces the ` +
      "formats date, time, date-time, uuid, ipv4): an answer that is not a valid hostname fails validation " +
      "and is generated once more",
    ]);
    const created = await c.call("session/create", {
      session: "t",
      tools: [{ name: "ping", description: "Pings a host.", parameters: schema }],
    }) as JsonObject;
    const unshaped = (path: string, format: string) =>
      `ping: #/properties/${path}: 'format' "${format}" is not enforced in a llama model's tool arguments ` +
      `(its grammar there enforces the formats date, time, date-time): arguments that are not a valid ` +
      `${format} fail validation and are generated once more`;
    assert.deepEqual(created.warnings, [
      unshaped("id", "uuid"),
      unshaped("host", "ipv4"),
      unshaped("name", "hostname"),
    ]);
  } finally {
    await c.close();
  }
});
