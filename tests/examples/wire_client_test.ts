import assert from "node:assert/strict";
import { assertInOrder } from "../helpers/messages.ts";
import { hasPython, runPythonExample } from "./python_example.ts";

Deno.test({
  name: hasPython
    ? "examples/wire_client.py speaks the stdio protocol by hand: client tools, an error reply, a cancel, shutdown"
    : "examples/wire_client.py: SKIPPED (python3 missing)",
  ignore: !hasPython,
  async fn() {
    const { stdout: text } = await runPythonExample("wire_client.py");
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

Deno.test({
  name: hasPython
    ? "examples/wire_client.py copied into a folder of its own says how to name the bridge instead of a Deno stack"
    : "examples/wire_client.py copied: SKIPPED (python3 missing)",
  ignore: !hasPython,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const script = `${dir}/wire_client.py`;
      await Deno.copyFile(new URL("../../examples/wire_client.py", import.meta.url), script);
      const env = { ...Deno.env.toObject() };
      delete env.OAM_BRIDGE_COMMAND;
      const out = await new Deno.Command("python3", {
        args: ["-B", script],
        cwd: dir,
        env,
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(60_000),
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.notEqual(out.code, 0);
      // the variable to set and a command for it, and no bridge started only to fail on a missing module
      assert.match(stderr, /^No bridge at .*cli\.ts \(this file is not in a checkout's examples\/\)/, stderr);
      assert.match(stderr, /OAM_BRIDGE_COMMAND="deno run .*cli\.ts stdio" python3 /, stderr);
      assert.ok(!stderr.includes("Module not found"), stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
