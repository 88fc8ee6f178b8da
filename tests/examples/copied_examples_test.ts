/**
 * A designer copies an example into a folder of their own and points its `../mod.ts` (or `../engine.ts`) at
 * the checkout's: it must still type-check, so no example imports anything but the public modules.
 */
import assert from "node:assert/strict";
import { deno, ROOT } from "./example_run.ts";

const PUBLIC = ["../mod.ts", "../engine.ts"];

function tsExamples(): string[] {
  return [...Deno.readDirSync(new URL("examples/", ROOT))]
    .filter((e) => e.isFile && e.name.endsWith(".ts"))
    .map((e) => e.name)
    .sort();
}

Deno.test("every example imports only mod.ts, engine.ts or a package", () => {
  for (const name of tsExamples()) {
    const source = Deno.readTextFileSync(new URL(`examples/${name}`, ROOT));
    const specifiers = [...source.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*"([^"]+)"/g)].map((m) => m[1]);
    for (const specifier of specifiers) {
      assert.ok(
        PUBLIC.includes(specifier) || /^(npm|node|jsr):/.test(specifier),
        `examples/${name} imports '${specifier}', which a copy in another folder cannot`,
      );
    }
  }
});

Deno.test("every example, copied into another folder with its imports pointed at the checkout, type-checks", async () => {
  const dir = await Deno.makeTempDir({ prefix: "oam-copied-examples-" });
  try {
    const files: string[] = [];
    for (const name of tsExamples()) {
      let source = Deno.readTextFileSync(new URL(`examples/${name}`, ROOT));
      for (const specifier of PUBLIC) {
        source = source.replaceAll(`"${specifier}"`, `"${new URL(specifier.slice(3), ROOT).href}"`);
      }
      const copy = `${dir}/${name}`;
      await Deno.writeTextFile(copy, source);
      files.push(copy);
    }
    const run = await deno(["check", "--quiet", "--config", new URL("deno.json", ROOT).pathname, ...files]);
    assert.equal(run.code, 0, run.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
