/**
 * An engine embedded without a `logger` (what docs/extending.md shows) still reports a bug: a handler that
 * throws a plain Error is answered with -32603 internal_error on the wire and its stack goes to stderr (the
 * default logger prints errors only). Before, the default logger dropped everything, so the extension author
 * saw only the message and never the stack. A real process, since the output is stderr.
 */
import assert from "node:assert/strict";

const ENGINE = new URL("../../engine.ts", import.meta.url).href;

Deno.test("an embedded engine without a logger prints an internal error's stack on stderr, only the answer on its send", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const main = `${dir}/host.ts`;
    await Deno.writeTextFile(
      main,
      `import { BridgeEngine, standardExtensions } from "${ENGINE}";
const engine = new BridgeEngine({
  extensions: [...standardExtensions(), {
    register(registry) {
      registry.register("quest/boom", () => { throw new Error("the quest log is corrupt"); });
      registry.register("quest/warn", () => ({ ok: true }));
    },
  }],
}, (line) => Deno.stdout.writeSync(new TextEncoder().encode(line + "\\n")));
engine.receive('{"jsonrpc":"2.0","id":1,"method":"quest/boom"}');
// A warning (a response to no request) stays quiet by default.
engine.receive('{"jsonrpc":"2.0","id":"t-9","result":{}}');
engine.receive('{"jsonrpc":"2.0","id":2,"method":"quest/warn"}');
await engine.idle();
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-lock", "--allow-read", main],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.equal(
      stdout,
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the quest log is corrupt","data":{"code":"internal_error"}}}\n' +
        '{"jsonrpc":"2.0","id":2,"result":{"ok":true}}\n',
    );
    assert.match(
      stderr,
      /^\[open-apple-models\] error: Internal error in 'quest\/boom' \(a bug in the host's extension that registered this method; fix it there\): Error: the quest log is corrupt\n {4}at .*host\.ts:5:/,
    );
    assert.ok(!stderr.includes("t-9"), stderr);
    assert.equal(stderr.split("\n").filter((l) => l.startsWith("[")).length, 1, stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
