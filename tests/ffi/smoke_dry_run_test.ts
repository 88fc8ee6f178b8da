/**
 * Runs swift/smoke.sh (the Mac smoke test of the plugin) against the C test double on any OS, so the
 * driver itself — and the whole stdio path: cli.ts → engine → system model → plugin ABI — stays working.
 * The script gets the running Deno (SMOKE_DENO), so no `deno` on PATH is needed.
 */
import assert from "node:assert/strict";
import { DOUBLE_PATH, requireDouble } from "./double.ts";

const SCRIPT = decodeURIComponent(new URL("../../swift/smoke.sh", import.meta.url).pathname);
/** bash itself is found before the environment is cleared. */
const BASH = ["/bin/bash", "/usr/bin/bash"].find((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
}) ?? "bash";

/** Where the running Deno keeps its cache, so the child finds the same one. */
function denoCache(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

const STEPS = [
  { result: { kind: "text", text: "Hello, traveller." } },
  { result: { kind: "toolCalls", calls: [{ name: "open_gate", arguments: { gate: "north" } }] } },
  { result: { kind: "text", text: "The gate stays shut." } },
  { result: { kind: "structured", value: { reasoning: "Goblins bite.", choice: "flee" } } },
  { events: [{ type: "text", text: "Once upon a time" }], hang: true },
  // Parallel calls: both in one step, then the answer.
  {
    result: {
      kind: "toolCalls",
      calls: [{ name: "look_left", arguments: {} }, { name: "look_right", arguments: {} }],
    },
  },
  { result: { kind: "text", text: "A quiet road and a wagon." } },
  // A tool call left outstanding by the cancellation, then a plain answer on the same session.
  { result: { kind: "toolCalls", calls: [{ name: "open_gate", arguments: { gate: "south" } }] } },
  { result: { kind: "text", text: "Still here." } },
];

Deno.test("smoke: swift/smoke.sh passes against the C double through cli.ts stdio", async () => {
  requireDouble();
  const { code, stdout, stderr } = await new Deno.Command(BASH, {
    args: [SCRIPT],
    env: {
      // No PATH: the script must not need a `deno` there (it gets the running one).
      ...denoCache(),
      SMOKE_DENO: Deno.execPath(),
      SMOKE_ANY_OS: "1",
      SMOKE_TIMEOUT: "30",
      SMOKE_LOG_LEVEL: "warning",
      OAM_FM_LIBRARY: DOUBLE_PATH,
      OAM_FM_DOUBLE: JSON.stringify({ steps: STEPS }),
      NO_COLOR: "1",
    },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(90_000),
  }).output();
  const out = new TextDecoder().decode(stdout);
  const err = new TextDecoder().decode(stderr);
  assert.equal(code, 0, `${out}\n${err}`);
  assert.match(out, /smoke: all checks passed/);
  assert.equal(out.match(/ {3}ok: /g)?.length, 13);
});
