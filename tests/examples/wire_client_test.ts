import assert from "node:assert/strict";
import { assertInOrder } from "../helpers/messages.ts";
import { onPath } from "../bindings/toolchain.ts";

const hasPython = onPath("python3");

Deno.test({
  name: hasPython
    ? "examples/wire_client.py speaks the stdio protocol by hand: client tools, an error reply, a cancel, shutdown"
    : "examples/wire_client.py: SKIPPED (python3 missing)",
  ignore: !hasPython,
  async fn() {
    const script = new URL("../../examples/wire_client.py", import.meta.url).pathname;
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
    const expected = [
      "initialize: 1.0",
      '[engine runs open_gate {"gate": "north"}]',
      '[engine runs open_gate {"gate": "south"}]',
      'guard: The gates answered:\nError: the portcullis chain is jammed\n{"opened":true}\n',
      "[engine runs wait_forever {}]",
      '"reason": "Error: The turn was cancelled."',
      "cancelled: 1 turn; its error: cancelled",
      "bridge exited with code 0",
    ];
    assertInOrder(text, expected);
  },
});
