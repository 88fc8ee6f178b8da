import assert from "node:assert/strict";
import { defaultOamCommand } from "../../src/models/oam_hint.ts";

Deno.test("defaultOamCommand: a checkout's cli.ts run from anywhere, the JSR package's cli, else oam", () => {
  assert.equal(
    defaultOamCommand("file:///home/me/oam/src/models/oam_hint.ts"),
    "deno run -A --no-lock /home/me/oam/cli.ts",
  );
  // A path the shell would split is quoted.
  assert.equal(
    defaultOamCommand("file:///home/me/My%20Games/oam/src/models/oam_hint.ts"),
    'deno run -A --no-lock "/home/me/My Games/oam/cli.ts"',
  );
  assert.equal(
    defaultOamCommand("https://jsr.io/@open-apple-models/bridge/0.1.0/src/models/oam_hint.ts"),
    "deno run -A jsr:@open-apple-models/bridge@0.1.0/cli",
  );
  assert.equal(defaultOamCommand("https://example.com/oam/src/models/oam_hint.ts"), "oam");
});
