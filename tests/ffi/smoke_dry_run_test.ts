/**
 * Runs swift/smoke.sh (the Mac smoke test of the plugin) against the C test double on any OS, so the
 * driver itself — and the whole stdio path: cli.ts → engine → system model → plugin ABI — stays working.
 */
import assert from "node:assert/strict";
import { DOUBLE_PATH, requireDouble } from "./double.ts";

const SCRIPT = decodeURIComponent(new URL("../../swift/smoke.sh", import.meta.url).pathname);

const STEPS = [
  { result: { kind: "text", text: "Hello, traveller." } },
  { result: { kind: "toolCalls", calls: [{ name: "open_gate", arguments: { gate: "north" } }] } },
  { result: { kind: "text", text: "The gate stays shut." } },
  { result: { kind: "structured", value: { reasoning: "Goblins bite.", choice: "flee" } } },
  { events: [{ type: "text", text: "Once upon a time" }], hang: true },
];

Deno.test("smoke: swift/smoke.sh passes against the C double through cli.ts stdio", async () => {
  requireDouble();
  const { code, stdout, stderr } = await new Deno.Command("bash", {
    args: [SCRIPT],
    env: {
      SMOKE_ANY_OS: "1",
      SMOKE_TIMEOUT: "30",
      SMOKE_LOG_LEVEL: "warning",
      OAM_FM_LIBRARY: DOUBLE_PATH,
      OAM_FM_DOUBLE: JSON.stringify({ steps: STEPS }),
      NO_COLOR: "1",
    },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(90_000),
  }).output();
  const out = new TextDecoder().decode(stdout);
  const err = new TextDecoder().decode(stderr);
  assert.equal(code, 0, `${out}\n${err}`);
  assert.match(out, /smoke: all checks passed/);
  assert.equal(out.match(/ {3}ok: /g)?.length, 8);
});
