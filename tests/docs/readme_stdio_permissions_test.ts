/**
 * The README's `oam stdio` permissions table narrows `--allow-env` to exactly the variables the `stdio` task
 * grants: a variable the narrowed grant leaves out is read as unset, so following an incomplete line made
 * `OAM_MODEL` do nothing without a word.
 */
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);
const README = await Deno.readTextFile(new URL("README.md", root));
const TASKS = JSON.parse(await Deno.readTextFile(new URL("deno.json", root))).tasks as Record<string, string>;

/** The variables of the first `--allow-env=<list>` in `text`, sorted. */
function allowEnv(text: string): string[] {
  const list = text.match(/--allow-env=([A-Z_,]+)/)?.[1];
  assert.ok(list, `no --allow-env=<list> in: ${text}`);
  return list.split(",").sort();
}

Deno.test("README: the stdio permissions row narrows --allow-env to the stdio task's variables", () => {
  const section = README.slice(
    README.indexOf("## `oam stdio`"),
    README.indexOf("### Compiling the executable"),
  );
  const row = section.split("\n").find((line) => line.startsWith("| `--allow-env` |"));
  assert.ok(row, "the stdio permissions table has an --allow-env row");
  assert.deepEqual(allowEnv(row), allowEnv(TASKS.stdio));
  for (const name of allowEnv(TASKS.stdio)) assert.match(row, new RegExp(`read .*\`${name}\``));
});
