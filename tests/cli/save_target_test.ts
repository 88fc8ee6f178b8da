/**
 * A `--save-transcript` path that cannot be written (its folder is missing, or it is a folder) is refused
 * before the turn runs, so no model time is spent on an answer whose conversation would be lost.
 */
import assert from "node:assert/strict";
import { Fixtures, oam } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());

Deno.test("respond: --save-transcript into a missing folder fails before the turn", async () => {
  const script = await fx.write("s.json", [{ text: "Hello there." }]);
  const r = await oam(["respond", "--script", script, "--save-transcript", "nodir/t.json", "hi"], {
    cwd: fx.dir,
  });
  assert.deepEqual([r.code, r.stdout, r.stderr], [
    1,
    "",
    "Error: Cannot write 'nodir/t.json': the folder 'nodir' does not exist. [io_error]\n",
  ]);
});

Deno.test("respond: --save-transcript naming a folder fails before the turn", async () => {
  const script = await fx.write("s.json", [{ text: "Hello there." }]);
  const r = await oam(["respond", "--script", script, "--save-transcript", fx.dir, "hi"]);
  assert.deepEqual([r.code, r.stdout, r.stderr], [
    1,
    "",
    `Error: Cannot write '${fx.dir}': it is a folder. [io_error]\n`,
  ]);
});

Deno.test("chat: --save-transcript into a missing folder fails before the first turn", async () => {
  const script = await fx.write("s.json", [{ text: "Hello there." }]);
  const r = await oam(["chat", "--script", script, "--save-transcript", "nodir/t.json"], {
    cwd: fx.dir,
    stdin: "hi\n",
  });
  assert.deepEqual([r.code, r.stdout, r.stderr], [
    1,
    "",
    "Error: Cannot write 'nodir/t.json': the folder 'nodir' does not exist. [io_error]\n",
  ]);
});
