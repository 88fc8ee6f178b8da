/**
 * examples/village.ts: the game methods besides dialogue from a script (a world two NPCs change while the
 * game reacts, a decision as an NPC, decideMany, a generated quest, a save loaded in a new bridge) type-check
 * with no casts and run on the scripted model with no permission; the README's game methods point to it.
 */
import assert from "node:assert/strict";
import { assertNoCasts, deno, ROOT } from "./example_run.ts";

const VILLAGE = new URL("examples/village.ts", ROOT);

Deno.test("village: no casts, deno check passes", async () => {
  const source = await Deno.readTextFile(VILLAGE);
  assertNoCasts(source);
  const check = await deno(["check", "--quiet", VILLAGE.pathname]);
  assert.equal(check.code, 0, check.stderr);
});

Deno.test("village: on the scripted model, with no permission, the game reacts to both NPCs, decides, generates, saves and loads", async () => {
  const run = await deno(["run", "--quiet", "--no-prompt", VILLAGE.pathname]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, "");
  assert.equal(
    run.stdout,
    [
      "  (the game rings the bell)",
      "Edda: Wolves at the treeline!",
      "  (the game shuts the gate: closed)",
      "Bram: Gate's shut till dawn.",
      "Bram decides to refuse (80%): Wolves first.",
      "Villagers: hide, help",
      "Quest: Teeth in the Dark (40 gold): Find the den → Drive the pack off",
      // The world comes back as it was saved: the alarm Edda raised still rings, the player's gold is there.
      "Bram: Dawn. Off you go, miller's friend. (remembers 1 fact; alarm: true, gate: closed, gold: 20)",
      "",
    ].join("\n"),
  );
});

Deno.test("README: the game methods point to examples/village.ts", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const section = readme.slice(
    readme.indexOf("## Game methods"),
    readme.indexOf("\n## ", readme.indexOf("## Game methods") + 1),
  );
  assert.match(section, /`examples\/village\.ts` \(in the repository\)/);
  assert.match(section, /deno run examples\/village\.ts/);
});
