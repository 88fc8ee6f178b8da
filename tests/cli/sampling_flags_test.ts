/** `-g/--greedy` and `--temperature` together: refused with a message that says why, not silently one of them. */
import assert from "node:assert/strict";
import { Fixtures, oam } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());
const hello = await fx.write("hello.json", [{ text: "Hello." }]);
const message = "Error: -g/--greedy and --temperature do not go together: greedy sampling always takes the " +
  "likeliest token, so a temperature would be ignored. Give one of them. [usage]\n";

for (const flags of [["-g", "--temperature", "0.7"], ["--temperature=1", "--greedy"]]) {
  Deno.test(`respond ${flags.join(" ")}: refused before the turn, exit 2`, async () => {
    const r = await oam(["respond", "--script", hello, ...flags, "Hi"]);
    assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", message]);
  });
}

Deno.test("chat -g --temperature: refused before the first line is read, exit 2", async () => {
  const r = await oam(["chat", "--script", hello, "-g", "--temperature", "0.2"], { stdin: "Hi\n" });
  assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", message]);
});

Deno.test("respond: -g alone and --temperature alone still run", async () => {
  for (const flags of [["-g"], ["--temperature", "0"]]) {
    const r = await oam(["respond", "--script", hello, ...flags, "Hi"]);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, "Hello.\n", ""]);
  }
});
