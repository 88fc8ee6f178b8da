/**
 * `oam stdio` started by hand at a terminal (a game engine never gives it one): a line on stderr says what it
 * waits for, and the protocol on stdout is unchanged.
 */
import assert from "node:assert/strict";
import { Fixtures, oam } from "./cli_helper.ts";
import { Terminal } from "./turn_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());

const HINT = "oam stdio: the JSON-RPC bridge for game engines, waiting for one request per line on stdin " +
  "(Ctrl-D ends it). To talk to the model yourself: 'oam chat', 'oam npc <persona.jsonc>', 'oam --help'.";

Deno.test({
  name: "stdio at a terminal: a hint on stderr says what it waits for; stdout has only the protocol",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: async () => {
    const file = fx.path("stdio.out");
    const t = new Terminal(["stdio"], { stdout: { file } });
    try {
      await t.out.until((screen) => screen.includes("'oam --help'.\r\n"));
      await t.type('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
      await t.type("\x04");
      const r = await t.exit();
      assert.equal(r.code, 0);
      assert.equal(r.stdout, `${HINT}\r\n{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n`);
      assert.equal(await Deno.readTextFile(file), '{"jsonrpc":"2.0","id":1,"result":{}}\n');
    } finally {
      await t.kill();
    }
  },
});

Deno.test("stdio from a pipe (an engine): no hint", async () => {
  const r = await oam(["stdio"], { stdin: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n' });
  assert.deepEqual([r.code, r.stdout, r.stderr], [0, '{"jsonrpc":"2.0","id":1,"result":{}}\n', ""]);
});
