import assert from "node:assert/strict";
import { assertInOrder } from "../helpers/messages.ts";

Deno.test("examples/guard_client.ts (the README demo) drives the stdio bridge with a client tool and exits 0", async () => {
  const script = new URL("../../examples/guard_client.ts", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-run", "--allow-read", "--allow-env", script, "--scripted"],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000), // a hang fails the test instead of stalling the run
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const expected = [
    '[model calls open_gate {"gate":"north"}]',
    '[engine runs open_gate: {"opened":false,"reason":"the portcullis chain is jammed"}]',
    "The north gate stays shut",
    '[model calls open_gate {"gate":"south"}]',
    "The south gate is open. Move along, traveller.",
    "bridge exited with code 0",
  ];
  assertInOrder(text, expected);
});
