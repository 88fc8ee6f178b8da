import assert from "node:assert/strict";
import { assertInOrder } from "../helpers/messages.ts";
import { oam } from "./cli_helper.ts";

Deno.test("demo: the tavern scene runs against the stdio bridge and exits 0", async () => {
  // (That it takes about a second, well under 5 s, is timed in tests/slow/timing_slow.ts.)
  // The permissions the README's first command uses.
  const r = await oam(["demo"], { permissions: ["--allow-read", "--allow-env", "--allow-run"] });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const beats = [
    "The Rusty Flagon",
    // Off a Mac, the way to a real model: a cached GGUF model plays Mira, and the command that caches one.
    "(With Apple Intelligence available, the on-device model plays Mira instead, and elsewhere a cached GGUF model:",
    "'deno task models pull <url>', or --model gguf:<file.gguf>.)",
    "Aria: Evening! Something warm to eat?",
    "⚙ check_menu {} → tool/call to the engine",
    '↳ engine: {"lamb stew":8,"fresh bread":3,"apple cider":2}',
    "Mira [happy]: Evening, love! There's lamb stew for 8 gold",
    "1) The stew, please.",
    "Aria (picks 1): The stew, please.",
    '⚙ take_order {"item":"lamb stew"}',
    "◆ world player.gold 30 → 22",
    "Mira [grateful]:",
    "⚙ change_relationship",
    "Mira's regard for Aria: 0 → 5",
    "Mira decides (decision/decide): full_price — 72% sure",
    "◆ world player.gold 22 → 10",
    "Aria pays 12 gold and sleeps dry tonight. (gold left: 10)",
    // The next commands, as they run in the checkout (there is no `oam` on the PATH here).
    "Next: 'deno task oam npc <persona.jsonc>' to talk to your own character, 'deno task oam chat'",
  ];
  assertInOrder(r.stdout, beats);
  assert.ok(!r.stdout.includes("\x1b["), "no colors when stdout is not a terminal");
});

Deno.test("demo: --show-protocol prints the wire on stderr only", async () => {
  const r = await oam(["demo", "tavern", "--show-protocol"], {
    permissions: ["--allow-read", "--allow-env", "--allow-run"],
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /^→ initialize /);
  assert.match(r.stderr, /← npc\/event \{"npc":"mira","requestId":\d+,"event":\{"type":"emotion"/);
  assert.ok(!r.stdout.includes("→ initialize"));
});

Deno.test("demo: errors — unknown scene, no --allow-run", async () => {
  const unknown = await oam(["demo", "castle"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /Unknown demo 'castle'; the demo is 'tavern'\. \[usage\]/);
  const noRun = await oam(["demo"], { permissions: ["--allow-read", "--allow-env"] });
  // A missing permission is a usage error (exit 2), as for a command tool, and says what to run instead;
  // nothing was started, so no spinner or other output comes before it.
  assert.deepEqual([noRun.code, noRun.stdout], [2, ""]);
  assert.match(
    noRun.stderr,
    // (in this repository's folder the command is its task, which grants it)
    /^Error: The demo starts the bridge \('oam stdio'\) as a child process, which needs --allow-run: run 'deno task oam demo'\. \[usage\]\n$/,
  );
  const help = await oam(["demo", "--help"]);
  assert.equal(help.code, 0);
  assert.ok(help.stdout.includes("Example:"));
});

Deno.test("demo: an unavailable --model is named with its reason and detail, not as raw JSON", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await oam(["demo", "--model", "gguf:nosuch", "--fast"], {
      permissions: ["--allow-read", "--allow-env", "--allow-run"],
      env: { OAM_MODELS_DIR: dir },
    });
    assert.equal(r.code, 3, r.stderr); // exit 3: the model is unavailable
    assert.match(
      r.stderr,
      /^Error: The model named by --model \(gguf:nosuch\) is unavailable \(unknown\): The model file 'nosuch' does not exist, and no cached model is called that .*\[model_unavailable\]\n$/m,
    );
    assert.ok(!r.stderr.includes('{"available"'), r.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
