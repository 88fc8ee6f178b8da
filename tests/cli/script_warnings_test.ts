/**
 * A script file the CLI reads (`OAM_SCRIPT=<file>`, `--script <file>`) with members nothing reads: each is a
 * warning on stderr, worded as in the bridge's `warnings` ("Unknown parameter '<path>' was ignored.") under the
 * variable's or the flag's name, after the file it came from; the script still plays. `oam stdio` logs them
 * as its other warnings. Spawned processes, whole stdout and stderr.
 */
import assert from "node:assert/strict";
import { Fixtures, oam } from "./cli_helper.ts";

Deno.test("OAM_SCRIPT and --script: unknown members of the script file are warnings on stderr, and it plays", async () => {
  const fx = await Fixtures.create();
  try {
    const typos = await fx.write("typos.json", {
      steps: [{ text: "Hi.", delay: 5 }, { toolCalls: [{ name: "x", args: {} }] }],
      fallbak: { text: "Done." },
    });
    const r = await oam(["respond", "Hello"], { env: { OAM_SCRIPT: typos } });
    assert.deepEqual([r.code, r.stdout, r.stderr], [
      0,
      "Hi.\n",
      `warning: OAM_SCRIPT=${typos}: step 1: unknown key 'delay' was ignored (did you mean 'delayMs'?).\n` +
      `warning: OAM_SCRIPT=${typos}: step 2: unknown key 'toolCalls[0].args' was ignored.\n` +
      `warning: OAM_SCRIPT=${typos}: unknown key 'fallbak' was ignored (did you mean 'fallback'?).\n`,
    ]);
    // A file that is no script at all ({"a": 1}) is an empty script: it says why it answers as it does.
    const empty = await fx.write("empty.json", { a: 1 });
    const flag = await oam(["respond", "--script", empty, "Hello"]);
    assert.deepEqual([flag.code, flag.stdout, flag.stderr], [
      0,
      "(script exhausted)\n",
      `warning: ${empty}: unknown key 'a' was ignored.\n`,
    ]);
    // A step that plays nothing is an error worded the same way: the file, then the step counted from 1.
    const bad = await fx.write("bad.json", [{ text: "Hi." }, { txt: "Bye." }]);
    const refused = await oam(["respond", "--script", bad, "Hello"]);
    assert.deepEqual([refused.code, refused.stdout, refused.stderr], [
      2,
      "",
      `Error: ${bad}: step 2 must contain one of 'text', 'toolCalls', 'json', 'template' or 'error'. [invalid_input]\n`,
    ]);
    const badCall = await fx.write("call.json", { steps: [{ toolCalls: [{ name: "" }] }] });
    const env = await oam(["respond", "Hello"], { env: { OAM_SCRIPT: badCall } });
    assert.deepEqual([env.code, env.stderr], [
      2,
      `Error: OAM_SCRIPT=${badCall}: step 1: 'toolCalls[0].name' must be a non-empty string. [invalid_input]\n`,
    ]);
    // A bare list of steps: the steps are counted the same way.
    const list = await fx.write("list.json", [{ text: "Hi.", chunk: 2 }]);
    const bare = await oam(["respond", "Hello"], { env: { OAM_SCRIPT: list } });
    assert.deepEqual([bare.code, bare.stdout, bare.stderr], [
      0,
      "Hi.\n",
      `warning: OAM_SCRIPT=${list}: step 1: unknown key 'chunk' was ignored (did you mean 'chunks'?).\n`,
    ]);
    // 'chunks' on a json step: the line comes whole, and the warning says so.
    const json = await fx.write("json.json", [{ json: { a: 1 }, chunks: 3 }]);
    const whole = await oam(["respond", "Hello"], { env: { OAM_SCRIPT: json } });
    assert.deepEqual([whole.code, whole.stdout, whole.stderr], [
      0,
      '{"a":1}\n',
      `warning: OAM_SCRIPT=${json}: step 1: 'chunks' has no effect: only a 'text' step streams in pieces; ` +
      "a 'json' step's answer comes whole.\n",
    ]);
  } finally {
    await fx.remove();
  }
});

Deno.test("oam stdio with OAM_SCRIPT: the script's unknown members are logged on stderr, stdout stays the protocol", async () => {
  const fx = await Fixtures.create();
  try {
    const script = await fx.write("steps.json", {
      step: [{ text: "Never." }],
      fallback: { text: "Hi.", chunk: 1 },
    });
    const requests = [
      { jsonrpc: "2.0", id: 1, method: "session/create", params: { session: "s" } },
      { jsonrpc: "2.0", id: 2, method: "session/respond", params: { session: "s", prompt: "Hello" } },
    ];
    const r = await oam(["stdio"], {
      env: { OAM_SCRIPT: script },
      stdin: requests.map((m) => `${JSON.stringify(m)}\n`).join(""),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stderr,
      `[oam stdio] warning: OAM_SCRIPT=${script}: unknown key 'step' was ignored (did you mean 'steps'?).\n` +
        `[oam stdio] warning: OAM_SCRIPT=${script}: fallback: unknown key 'chunk' was ignored (did you mean 'chunks'?).\n`,
    );
    const lines = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    // The script's warnings are the host's: session/create on "system" does not repeat them.
    assert.deepEqual(lines[0], { jsonrpc: "2.0", id: 1, result: { session: "s", warnings: [] } });
    const answer = lines.find((m) => m.id === 2);
    assert.equal(answer?.result?.text, "Hi.", r.stdout);
  } finally {
    await fx.remove();
  }
});
