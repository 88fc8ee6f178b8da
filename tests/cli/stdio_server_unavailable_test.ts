/**
 * `oam stdio --model openai:…` with a server it cannot reach: the `session/create` warning carries what the
 * availability check tried and found (its `detail`), as the turn's error does, so an engine that shows the
 * create's warnings can tell the player why before the first turn fails; it names the model configured (not
 * "the system model", which the `openai:` model stands in for).
 */
import assert from "node:assert/strict";
import { jsonLines, oam } from "./cli_helper.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

const LINES = [
  { jsonrpc: "2.0", id: 1, method: "session/create", params: { session: "s" } },
  { jsonrpc: "2.0", id: 2, method: "session/respond", params: { session: "s", prompt: "Hello" } },
].map((m) => JSON.stringify(m)).join("\n") + "\n";

/** The create's warnings and the turn's error message of one run of `oam stdio` (the lines by id). */
async function createAndTurn(
  model: string,
  permissions?: string[],
): Promise<{ warnings: string[]; turnError: string }> {
  const r = await oam(["stdio", "--model", model], { stdin: LINES, ...(permissions ? { permissions } : {}) });
  assert.equal(r.code, 0, r.stderr);
  const byId = new Map(jsonLines(r.stdout).map((l) => [(l as JsonObject).id, l as JsonObject]));
  const create = byId.get(1)?.result as JsonObject;
  const turn = byId.get(2)?.error as JsonObject;
  assert.ok(create && turn, r.stdout);
  return { warnings: create.warnings as string[], turnError: turn.message as string };
}

/** A port nothing listens on (one that was free a moment ago). */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

Deno.test("oam stdio --model openai: at a closed port: the create warning says which server it could not reach", async () => {
  const port = closedPort();
  const { warnings, turnError } = await createAndTurn(`openai:http://127.0.0.1:${port}/v1#tiny`);
  assert.match(turnError, new RegExp(`^Cannot reach the model server at http://127\\.0\\.0\\.1:${port}/v1/`));
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.match(
    warnings[0],
    new RegExp(
      `^The model openai:http://127\\.0\\.0\\.1:${port}/v1#tiny is unavailable \\(unknown\\); turns will fail with ` +
        "model_unavailable until it is " +
        `ready\\. Cannot reach the model server at http://127\\.0\\.0\\.1:${port}/v1/models: .+\\.$`,
    ),
  );
});

Deno.test("oam stdio --model openai: with the stdio task's grants (no --allow-net), in the repository: the create warning and the turn's error name 'deno task stdio:local'", async () => {
  const port = closedPort();
  const { warnings, turnError } = await createAndTurn(`openai:http://127.0.0.1:${port}/v1#tiny`, [
    "--no-prompt",
    "--allow-env=OAM_FM_LIBRARY,OAM_SCRIPT,OAM_MODEL,OAM_EXIT_WITH_PARENT",
    "--allow-read",
    "--allow-ffi",
  ]);
  // Not Deno's "run again with the --allow-net flag": the task that grants this machine's hosts.
  const advice =
    `This bridge has no network access to 127.0.0.1:${port}: for a model server on this machine ` +
    "run it with 'deno task stdio:local'.";
  assert.equal(
    turnError,
    `Cannot reach the model server at http://127.0.0.1:${port}/v1/chat/completions: ${advice}`,
  );
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.equal(
    warnings[0],
    `The model openai:http://127.0.0.1:${port}/v1#tiny is unavailable (unknown); turns will fail with ` +
      "model_unavailable until it is ready. " +
      `Cannot reach the model server at http://127.0.0.1:${port}/v1/models: ${advice}`,
  );
});
