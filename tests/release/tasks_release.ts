/**
 * The README's `deno task <name> -- <flags>` form works for every task that takes flags: Deno passes the
 * `--` through to the program, which must not take it for the end of its options.
 */
import assert from "node:assert/strict";
import { denoTask } from "../helpers/process.ts";

Deno.test("deno task stdio -- <flags>: the flags reach oam stdio", async () => {
  const r = await denoTask(
    ["stdio", "--", "--log-level", "debug", "--max-sessions", "1"],
    '{"jsonrpc":"2.0","id":1,"method":"session/create","params":{"model":"scripted"}}\n' +
      '{"jsonrpc":"2.0","id":2,"method":"session/create","params":{"model":"scripted"}}\n',
  );
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[0].result.session, "s1");
  assert.equal(lines[1].error.data.code, "session_limit", "--max-sessions 1 applied");
  assert.doesNotMatch(r.stderr, /Unexpected argument/);
});

Deno.test("deno task stdio -- <bad flag>: one usage line with the help hint, exit 2", async () => {
  const r = await denoTask(["stdio", "--", "--bogus"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, "Error: Unknown option '--bogus'. Run 'deno task oam stdio --help'. [usage]\n");
});

Deno.test("deno task oam -- <command> <flags>, deno task serve -- <flags> and deno task demo -- <flags>", async () => {
  const version = await denoTask(["oam", "--", "--version"]);
  assert.equal(version.code, 0, version.stderr);
  assert.equal(version.stdout, "oam 0.1.0\n");
  const tools = await denoTask(
    ["oam", "--", "tools", "validate", "--json", "-"],
    '[{"name": "look", "description": "Look around."}]',
  );
  assert.equal(tools.code, 0, tools.stderr);
  assert.equal(JSON.parse(tools.stdout).tools[0].name, "look");
  const serve = await denoTask(["serve", "--", "--help"]);
  assert.equal(serve.code, 0, serve.stderr);
  assert.match(serve.stdout, /oam serve/);
  const demo = await denoTask(["demo", "--", "--fast"]);
  assert.equal(demo.code, 0, demo.stderr);
  assert.match(demo.stdout, /Mira/);
});

Deno.test("deno task fuzz / soak / bench -- <flags>: the flags override the task's defaults", async () => {
  const fuzz = await denoTask(["fuzz", "--", "--lines", "50", "--seed", "3"]);
  assert.equal(fuzz.code, 0, fuzz.stderr);
  assert.equal(JSON.parse(fuzz.stdout).lines, 50);
  const soak = await denoTask([
    "soak",
    "--",
    "--seconds",
    "1",
    "--sessions",
    "2",
    "--npcs",
    "2",
    "--sample",
    "1",
  ]);
  assert.equal(soak.code, 0, soak.stderr);
  assert.deepEqual(JSON.parse(soak.stdout).failures, []);
  const bench = await denoTask([
    "bench",
    "--",
    "--n",
    "200",
    "--repeat",
    "1",
    "--warm",
    "0",
    "--window",
    "50",
  ]);
  assert.equal(bench.code, 0, bench.stderr);
  assert.match(bench.stdout, /200 pings/);
  // The second floor answers turns with the bridge's own result, parsed from a real turn.
  assert.match(bench.stdout, /same bytes .*\(errors 0\)/);
});
