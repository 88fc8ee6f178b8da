/**
 * The README's picture of the NPC playground (docs/playground.png) can be made again: a task runs the browser
 * test that writes it, from the state its alt text describes, and the README's development notes name that task.
 * (Before, it was copied by hand from the browser tier's screenshots and fell behind the page.)
 */
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);
const README = await Deno.readTextFile(new URL("README.md", root));
const TASKS = JSON.parse(await Deno.readTextFile(new URL("deno.json", root))).tasks as Record<string, string>;

Deno.test("README: the playground's screenshot is written by a documented task, in the browser test's state", async () => {
  const image = README.match(/!\[The NPC playground: ([^\]]+)\]\((docs\/playground\.png)\)/);
  assert.ok(image, "the README shows docs/playground.png");
  const task = TASKS["screenshot:playground"];
  assert.ok(task, "deno.json has a screenshot:playground task");
  const run = task.match(
    /^OAM_README_SCREENSHOT=1 deno test --allow-all (tests\/browser\/\w+\.ts) --filter "([^"]+)"$/,
  );
  assert.ok(run, task);
  const [, file, filter] = run;
  const test = await Deno.readTextFile(new URL(file, root));
  const body = test.slice(test.indexOf(filter));
  assert.ok(body.length < test.length, `${file} has the test "${filter}"`);
  // The test's step that writes it, in the state the alt text says: a call answered by hand, the world changed.
  const step = body.slice(0, body.indexOf("await readmeScreenshot(page);"));
  assert.ok(step.length < body.length, "the test writes the README's screenshot");
  assert.match(step, /Send answer/);
  assert.match(step, /the NPC, during a turn/);
  assert.match(image[1], /a tool call answered by hand/);
  assert.match(image[1], /the NPC's world changing live/);
  assert.match(README, /`deno task screenshot:playground`/);
});

Deno.test("docs/playground.png is a PNG the size of the browser test's window (1440×900)", async () => {
  const png = await Deno.readFile(new URL("docs/playground.png", root));
  assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]);
  const view = new DataView(png.buffer, png.byteOffset);
  assert.deepEqual([view.getUint32(16), view.getUint32(20)], [1440, 900]);
});
