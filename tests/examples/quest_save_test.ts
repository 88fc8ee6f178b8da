import assert from "node:assert/strict";
import { assertInOrder } from "../helpers/messages.ts";
import { onPath } from "../bindings/toolchain.ts";

const hasPython = onPath("python3");

Deno.test({
  name: hasPython
    ? "examples/quest_save.py: a quest driven by world events, saved to a file and loaded in a new bridge process"
    : "examples/quest_save.py: SKIPPED (python3 missing)",
  ignore: !hasPython,
  async fn() {
    const script = new URL("../../examples/quest_save.py", import.meta.url).pathname;
    const cli = new URL("../../cli.ts", import.meta.url).pathname;
    const out = await new Deno.Command("python3", {
      args: ["-B", script],
      // the example's own flags, with this Deno (`deno` need not be on PATH)
      env: {
        OAM_BRIDGE_COMMAND: `${Deno.execPath()} run --no-prompt --allow-env --allow-read ${cli} stdio`,
      },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(60_000), // a hang fails the test instead of stalling the run
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr) + text);
    assertInOrder(text, [
      "subscribed before the quest exists: 'path' names 'quests.wolves.stage', which does not exist in world 'village' (yet)",
      "(quest log: wolves offered)", // written above the subscribed path: the example reads the stage
      "(quest log: wolves accepted)",
      "Bram: Good. Bring me their pelts.",
      "tactic: torches",
      'saved: {"stage": "accepted", "reward": 50, "tactic": "torches"}',
      "-- the game quits; the bridge process exits --",
      "restored: bram warnings: []",
      "(quest log: wolves done)",
      "Bram: You did it. Here is your reward.",
      "gold: 60 | remembers the talk: True",
    ]);
    assert.equal(new TextDecoder().decode(out.stderr), "", "no warning or traceback on stderr");
  },
});
