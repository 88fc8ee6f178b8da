/**
 * What `deno check` says of a designer's script that calls the typed client wrong: the type error names the
 * mistake in the client's terms, not only TypeScript's (`'string' is not assignable to 'object'`).
 */
import assert from "node:assert/strict";
import type { Bridge, World } from "../../mod.ts";
import { deno } from "../examples/example_run.ts";

const MOD = new URL("../../mod.ts", import.meta.url).href;

/** `deno check` of `body` (after an import of the client's `Bridge`) in a folder of its own: its errors. */
async function checkErrors(body: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "oam-type-messages-" });
  try {
    await Deno.writeTextFile(`${dir}/game.ts`, `import { Bridge } from "${MOD}";\n${body}\n`);
    const r = await deno(["check", "--quiet", `${dir}/game.ts`]);
    return r.stderr;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("deno check: world.merge given the path before the patch says the patch comes first", async () => {
  const errors = await checkErrors(
    "await using bridge = await Bridge.open();\n" +
      "const world = await bridge.createWorld({ player: { gold: 5 } });\n" +
      'await world.merge("player", { gold: 12 });\n' +
      'await world.merge({ gold: 12 }, "player");\n' +
      "await world.merge({ gold: 12 });\n",
  );
  assert.match(errors, /world\.merge takes the patch first: merge\(patch, path\)/, errors);
  assert.equal(errors.match(/TS\d+/g)?.length, 1, errors); // the right orders compile
});

Deno.test("deno check: createWorld given the world's id says the state comes first, the id in the options", async () => {
  const errors = await checkErrors(
    "await using bridge = await Bridge.open();\n" +
      'await bridge.createWorld("village");\n' +
      'await bridge.createWorld({ gate: "open" }, { world: "village" });\n' +
      "await bridge.createWorld();\n",
  );
  assert.match(
    errors,
    /createWorld takes the state first, the id in its options: createWorld\(state, \{ world: id \}\)/,
    errors,
  );
  assert.equal(errors.match(/TS\d+/g)?.length, 1, errors); // the right calls compile
});

Deno.test("deno check: a generate schema kept in a variable without 'as const' names the fix where its result is used", async () => {
  const errors = await checkErrors(
    "await using bridge = await Bridge.open();\n" +
      'const questSchema = { type: "object", properties: { title: { type: "string" } }, required: ["title"] };\n' +
      'const quest = await bridge.generate(questSchema, "A side quest.");\n' +
      "console.log(quest.title);\n" +
      'const fixed = await bridge.generate({ ...questSchema, type: "object" } as const, "A side quest.");\n' +
      "console.log(fixed);\n",
  );
  assert.match(
    errors,
    /Property 'title' does not exist on type '\{ readonly "generate's schema has widened types: write it inline, add 'as const' to its variable, or name the result's type: generate<Quest>\(schema, prompt\)": never; \}'/,
    errors,
  );
  assert.equal(errors.match(/TS\d+/g)?.length, 1, errors);
});

/**
 * Type-level: never called, but `deno test` checks it. The words a type error shows are not a value the
 * parameter takes: the message itself, passed where the patch (or the state) goes, does not compile either (it
 * compiled, then was the same TypeError at run time).
 */
async function _theMessageItselfDoesNotCompile(bridge: Bridge, world: World): Promise<void> {
  // @ts-expect-error: the path (here the message's words) where the patch goes
  await world.merge("world.merge takes the patch first: merge(patch, path)", "player");
  await bridge.createWorld(
    // @ts-expect-error: the id (here the message's words) where the state goes
    "createWorld takes the state first, the id in its options: createWorld(state, { world: id })",
  );
}
void _theMessageItselfDoesNotCompile;
