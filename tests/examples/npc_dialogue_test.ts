/** examples/npc_dialogue.ts (the README's NPC example) runs on the scripted model and prints the scene. */
import assert from "node:assert/strict";

Deno.test("examples/npc_dialogue.ts: tools, streamed lines, world changes, a guardrail retry, save and restore", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      new URL("../../examples/npc_dialogue.ts", import.meta.url).pathname,
      "--scripted",
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const lines = stdout.split("\n").filter((l) => !l.startsWith("Saved: "));
  assert.deepEqual(lines, [
    "Created gorm with tools: check_inventory, read_world_state, update_world_state, remember_fact",
    "",
    "Player: Got any iron swords?",
    '  · check_inventory {"item":"iron sword"} (client)',
    "  Gorm [proud]: Aye, three iron swords on the rack. Forty-five gold apiece.",
    '  (you could say: "I\'ll take one." / "Too pricey." / "Anything stronger?")',
    "",
    "Player: I'll take one.",
    '  · check_inventory {"item":"iron sword"} (client)',
    '  · update_world_state {"path":"shop.iron_sword_stock","value":"2"} (local)',
    "  ~ world: shop.iron_sword_stock 3 → 2",
    '  · update_world_state {"path":"player.gold","value":"15"} (local)',
    "  ~ world: player.gold 60 → 15",
    '  · remember_fact {"fact":"Aria bought an iron sword."} (local)',
    "  Gorm [happy]: A fine choice, Aria. Keep the edge oiled and it will serve you well.",
    "",
    "Restored gorm",
    "",
    "Player: Hello again, Gorm.",
    '  · check_inventory {"item":"iron sword"} (client)',
    "  Gorm [amused]: Back already, Aria? Two swords left, if the first one broke.",
    '  (you could say: "It\'s fine." / "Just browsing." / "Goodbye.")',
    "",
    "Aria has 15 gold left.",
    "",
  ]);
  assert.match(stdout, /^Saved: \{"facts":\["Aria bought an iron sword\."\],"relationship":0\}, \d+ bytes$/m);
});
