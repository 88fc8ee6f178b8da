/**
 * What a client sends and the bridge logs (an unknown response id, a refused origin) reaches the operator's
 * terminal: the stderr logger prints control and bidi characters escaped, so a client cannot send terminal
 * escape sequences there.
 */
import assert from "node:assert/strict";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

Deno.test("oam stdio logs a response id with terminal escapes in it escaped", async () => {
  const id = "t-\u001b]0;owned\u0007\u001b[2J\u009b31m\u202egnp.exe\r";
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-prompt", CLI, "stdio"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = [{ jsonrpc: "2.0", id, result: {} }, { jsonrpc: "2.0", id: 1, method: "ping" }];
  await writer.write(new TextEncoder().encode(lines.map((l) => JSON.stringify(l) + "\n").join("")));
  await writer.close();
  const { stdout, stderr } = await child.output();
  // The bridge goes on serving: the ping after the reply it ignored is answered.
  assert.equal(new TextDecoder().decode(stdout), '{"jsonrpc":"2.0","id":1,"result":{}}\n');
  const text = new TextDecoder().decode(stderr);
  // Before: the ESC, BEL, CSI, RLO and CR went to the terminal as they were.
  assert.match(text, /Ignoring a response to unknown or finished request 't-\\u001b\]0;owned\\u0007/);
  // deno-lint-ignore no-control-regex -- control characters are what it looks for
  assert.doesNotMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  assert.match(text, /\\u009b31m\\u202egnp\.exe\\u000d'/);
});
