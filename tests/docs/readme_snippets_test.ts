/**
 * The README's TypeScript blocks run as a designer runs them: copied into a folder of their own, the
 * imports pointed at this checkout (`../mod.ts`, `./engine.ts`), type-checked and run with `deno run` and no
 * permission. The first block, the quickstart, is examples/quickstart.ts verbatim (tests/examples); a block
 * marked `ts ignore` (JSR imports) is not run.
 */
import assert from "node:assert/strict";
import { deno, ROOT } from "../examples/example_run.ts";

const README = await Deno.readTextFile(new URL("README.md", ROOT));

/** The README's `ts` blocks (not `ts ignore`), with the heading above each. */
function tsBlocks(markdown: string): { heading: string; code: string }[] {
  const blocks: { heading: string; code: string }[] = [];
  let heading = "";
  for (const match of markdown.matchAll(/^(#+ .*)$|^```(\S*)([^\n]*)\n([\s\S]*?)^```$/gm)) {
    if (match[1] !== undefined) heading = match[1];
    else if (match[2] === "ts" && match[3].trim() === "") blocks.push({ heading, code: match[4] });
  }
  return blocks;
}

/** `code` with its imports of the repository's modules pointed at this checkout, as from another folder. */
function pointedAtCheckout(code: string): string {
  return code.replace(
    /from "(?:\.\.?\/)((?:mod|engine|cli)\.ts)"/g,
    (_, file: string) => `from "${new URL(file, ROOT).href}"`,
  );
}

Deno.test("tsBlocks: ts blocks only, each with the heading above it", () => {
  const blocks = tsBlocks(
    "# A\n```ts\na;\n```\n## B\n```ts ignore\nb;\n```\n```sh\nc\n```\n```ts\nd;\n```\n",
  );
  assert.deepEqual(blocks, [{ heading: "# A", code: "a;\n" }, { heading: "## B", code: "d;\n" }]);
  assert.equal(
    pointedAtCheckout('import { Bridge } from "../mod.ts";\nimport { E } from "./engine.ts";'),
    `import { Bridge } from "${new URL("mod.ts", ROOT).href}";\n` +
      `import { E } from "${new URL("engine.ts", ROOT).href}";`,
  );
});

Deno.test("README: every ts block after the quickstart type-checks and runs from a folder of its own", async (t) => {
  const blocks = tsBlocks(README);
  assert.ok(blocks.length >= 3, `${blocks.length} blocks`);
  assert.match(blocks[0].heading, /^## Quickstart/); // examples/quickstart.ts verbatim: tests/examples
  const dir = await Deno.makeTempDir({ prefix: "oam-readme-snippets-" });
  try {
    for (const [i, block] of blocks.entries()) {
      if (i === 0) continue;
      await t.step(`${block.heading} (block ${i + 1})`, async () => {
        const file = `block${i + 1}.ts`;
        await Deno.writeTextFile(`${dir}/${file}`, pointedAtCheckout(block.code));
        const check = await deno(["check", "--quiet", file], dir);
        assert.equal(check.code, 0, check.stderr);
        const run = await deno(["run", "--quiet", "--no-prompt", file], dir);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.stderr, "");
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
