/** The JSDoc example extraction that tests/docs/examples_test.ts runs on: which blocks count and how they import. */
import assert from "node:assert/strict";
import {
  docValueMatches,
  exampleModule,
  extractExamples,
  moduleUrl,
  splitImports,
  VALUE_CHECK,
  withValueChecks,
} from "../helpers/doc_examples.ts";

const SOURCE = [
  "/** One line: no example. */",
  "/**",
  " * Adds.",
  " *",
  " * ```ts",
  ' * import { add } from "./math.ts";',
  " *",
  " * add(1, 2);",
  " * ```",
  " * ```sh",
  " * deno run x.ts",
  " * ```",
  " * ```ts ignore",
  " * broken(",
  " * ```",
  " * ```",
  " * const untagged = 1;",
  " * ```",
  " */",
  "export const add = (a: number, b: number) => a + b;",
  "// ```ts",
  "// not a JSDoc comment",
  "// ```",
  "/* ```ts",
  "also not one",
  "``` */",
].join("\n");

Deno.test("runnable blocks of JSDoc comments only: ignore, other languages and other comments are skipped", () => {
  assert.deepEqual(extractExamples(SOURCE), [
    { startLine: 5, endLine: 9, code: 'import { add } from "./math.ts";\n\nadd(1, 2);' },
    { startLine: 16, endLine: 18, code: "const untagged = 1;" },
  ]);
});

Deno.test("a code block left open when its comment ends is an error, not a silently lost example", () => {
  assert.throws(() => extractExamples("/**\n * ```ts\n * x;\n */"), /line 2: code block not closed/);
});

Deno.test("leading imports split off with the names they bind, in every import form", () => {
  const split = splitImports([
    "// a comment first",
    'import { Bridge, type Persona, loadPersona as load } from "../../mod.ts";',
    "import {",
    "  a,",
    "  b,",
    '} from "./multi.ts";',
    'import type { T } from "./types.ts";',
    'import * as ns from "npm:ajv";',
    "import Def, { named } from './def.ts'",
    'import "./side_effect.ts";',
    "",
    "const x = 1;",
    'import("./later.ts");',
  ].join("\n"));
  assert.deepEqual(split.imports.map((i) => [i.specifier, i.names]), [
    ["../../mod.ts", ["Bridge", "Persona", "load"]],
    ["./multi.ts", ["a", "b"]],
    ["./types.ts", ["T"]],
    ["npm:ajv", ["ns"]],
    ["./def.ts", ["named", "Def"]],
    ["./side_effect.ts", []],
  ]);
  assert.equal(split.body, 'const x = 1;\nimport("./later.ts");');
});

Deno.test("the module resolves relative imports and import.meta against the documented file, and imports its other exports", () => {
  const code = exampleModule(
    {
      startLine: 1,
      endLine: 3,
      code: 'import { add } from "./math.ts";\nconst u = new URL("x.json", import.meta.url);',
    },
    "file:///repo/src/math.ts",
    ["add", "sub", "default"],
  );
  assert.equal(
    code,
    [
      'import { add } from "file:///repo/src/math.ts";',
      'import { sub } from "file:///repo/src/math.ts";',
      'const __docMeta = { url: "file:///repo/src/math.ts", main: false, resolve: (s: string) => ' +
      '/^(\\.{0,2}\\/|[a-z][a-z0-9+.-]*:)/i.test(s) ? new URL(s, "file:///repo/src/math.ts").href : import.meta.resolve(s) };',
      "export default async function example(): Promise<void> {",
      'const u = new URL("x.json", __docMeta.url);',
      "}",
      "",
    ].join("\n"),
  );
});

Deno.test("an example module runs from its data: URL, and a throwing example rejects", async () => {
  const here = new URL("../helpers/doc_examples.ts", import.meta.url).href;
  const ok = await import(moduleUrl(exampleModule(
    {
      startLine: 1,
      endLine: 2,
      code: 'if (splitImports("import \'./a.ts\';").imports.length !== 1) throw new Error("—");',
    },
    here,
    ["splitImports"],
  )));
  await ok.default();
  const bad = await import(
    moduleUrl(exampleModule({ startLine: 1, endLine: 2, code: 'throw new Error("ünïcode");' }, here, []))
  );
  await assert.rejects(bad.default(), /ünïcode/);
});

Deno.test("import.meta.resolve in an example resolves the package's name as Deno does, relative paths beside the file", async () => {
  const file = new URL("../../src/client/persona_file.ts", import.meta.url).href;
  const example = await import(moduleUrl(exampleModule(
    {
      startLine: 1,
      endLine: 3,
      code: 'return [import.meta.resolve("@open-apple-models/bridge"), import.meta.resolve("./x.ts")];',
    },
    file,
    [],
  )));
  assert.deepEqual(await example.default(), [
    new URL("../../mod.ts", import.meta.url).href,
    new URL("../../src/client/x.ts", import.meta.url).href,
  ]);
});

Deno.test("an example's `expr; // value` lines become checks when the comment is a literal, not words", () => {
  const code = [
    "add(1, 2); // 3",
    'greet("Ann"); // "Hi, Ann."',
    "  list(); // [1, { a: null }]",
    "say(); // prints it",
    "await talk; // null: it was cancelled",
    "const x = add(1, 2); // 3",
    "}); // { done: true }",
    "ring(); // e.g. 3",
  ].join("\n");
  const checked = withValueChecks(code, (line) => `x.ts:${line + 10}`);
  assert.equal(checked.checks, 3);
  assert.deepEqual(checked.code.split("\n").slice(0, 4), [
    `(globalThis as Record<string, any>).${VALUE_CHECK}(add(1, 2), 3, "x.ts:10");`,
    `(globalThis as Record<string, any>).${VALUE_CHECK}(greet("Ann"), "Hi, Ann.", "x.ts:11");`,
    `  (globalThis as Record<string, any>).${VALUE_CHECK}(list(), [1, { a: null }], "x.ts:12");`,
    "say(); // prints it",
  ]);
  assert.deepEqual(checked.code.split("\n").slice(4), code.split("\n").slice(4));
});

Deno.test("docValueMatches: deep equality, and a string's … or <word> stands for any text", () => {
  assert.ok(docValueMatches([1, { a: "x" }], [1, { a: "x" }]));
  assert.ok(!docValueMatches(["a", "b"], ["a", "b", "c"]));
  assert.ok(docValueMatches("personas/x.json: #/a (line 2)", "<path>: #/a (line 2)"));
  assert.ok(
    docValueMatches("npc.update(): the memory's 'hp' is NaN; pass a number.", "npc.update(): … is NaN; …"),
  );
  assert.ok(!docValueMatches("npc.update(): the memory's 'hp' is NaN.", "npc.talk(): … is NaN."));
  assert.ok(!docValueMatches("allowed", "disallowed"));
});
