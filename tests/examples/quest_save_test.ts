import assert from "node:assert/strict";
import { assertInOrder } from "../helpers/messages.ts";
import { hasPython, runPythonExample } from "./python_example.ts";

Deno.test({
  name: hasPython
    ? "examples/quest_save.py: a quest driven by world events, saved to a file and loaded in a new bridge process"
    : "examples/quest_save.py: SKIPPED (python3 missing)",
  ignore: !hasPython,
  async fn() {
    const { stdout: text, stderr } = await runPythonExample("quest_save.py");
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
    assert.equal(stderr, "", "no warning or traceback on stderr");
  },
});
