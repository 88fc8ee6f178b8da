/**
 * Every JSDoc example of mod.ts, engine.ts, cli.ts, src/ and ffi/ runs, one test each, all in this isolate
 * (see tests/helpers/doc_examples.ts for why and for the extraction rules). The test and check tasks
 * type-check the same examples with `deno test --doc --no-run`; `deno task test:doc` runs them through Deno's
 * own runner, one isolate each. What an example prints is shown only when it fails.
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import {
  docValueMatches,
  exampleModule,
  extractExamples,
  moduleUrl,
  quietly,
  VALUE_CHECK,
  withValueChecks,
} from "../helpers/doc_examples.ts";

const ROOT = new URL("../../", import.meta.url);
/** The files and folders whose examples run: the same list the tasks give `deno test --doc`. */
const DOC_ROOTS = ["mod.ts", "engine.ts", "cli.ts", "src/", "ffi/"];

function* sourceFiles(url: URL): Generator<URL> {
  if (!url.pathname.endsWith("/")) {
    yield url;
    return;
  }
  const entries = [...Deno.readDirSync(url)].sort((a, b) => a.name < b.name ? -1 : 1);
  for (const entry of entries) {
    if (entry.isDirectory) yield* sourceFiles(new URL(`${entry.name}/`, url));
    else if (/\.(ts|tsx|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
      yield new URL(entry.name, url);
    }
  }
}

// An example's `expr; // value` line checks that `expr` gives `value` (see withValueChecks).
Object.assign(globalThis, {
  [VALUE_CHECK]: (got: unknown, want: unknown, where: string) => {
    if (!docValueMatches(got, want)) {
      assert.fail(
        `${where}: the example's comment says ${Deno.inspect(want)}; it gives ${Deno.inspect(got)}`,
      );
    }
  },
});

let count = 0;
let checked = 0;
for (const root of DOC_ROOTS) {
  for (const file of sourceFiles(new URL(root, ROOT))) {
    const name = relative(ROOT.pathname, file.pathname);
    for (const found of extractExamples(Deno.readTextFileSync(file))) {
      count++;
      const checks = withValueChecks(found.code, (line) => `${name}:${found.startLine + 1 + line}`);
      checked += checks.checks;
      const example = { ...found, code: checks.code };
      // Named as `deno test --doc` names them.
      Deno.test(`${name}#${example.startLine}-${example.endLine + 1}.ts`, async () => {
        const exports = Object.keys(await import(file.href));
        const module = await import(moduleUrl(exampleModule(example, file.href, exports)));
        await quietly(() => module.default()); // its output only when it fails
      });
    }
  }
}

Deno.test("the examples are found, and the tasks give deno test --doc the same files", () => {
  // More than 200 public symbols carry an example; finding few would mean the extraction broke.
  assert.ok(count >= 200, `only ${count} examples found`);
  // And so many of their lines show the value they give; finding few would mean the checks broke.
  assert.ok(checked >= 250, `only ${checked} example lines checked`);
  const tasks = JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT))).tasks as Record<string, string>;
  for (const task of ["check", "test", "test:doc"]) {
    assert.ok(tasks[task].includes(`--config deno.doctest.json ${DOC_ROOTS.join(" ")}`), task);
  }
});
