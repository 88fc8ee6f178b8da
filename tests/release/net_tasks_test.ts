/**
 * The human tasks reach a model server on this machine: `deno task oam:local` and `deno task stdio:local`
 * grant network access to 127.0.0.1, localhost and [::1] only, tested against the mock OpenAI-compatible
 * server. `deno task oam` (no network) says how to get it.
 */
import assert from "node:assert/strict";
import { denoTask } from "../helpers/process.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { completion, json, MockServer } from "../models/openai_mock_server.ts";

/** A mock server that lists model `mock` and answers every chat completion with `text`. */
function server(text: string): MockServer {
  return new MockServer((request) =>
    request.path.endsWith("/models")
      ? json({ object: "list", data: [{ id: "mock", object: "model", owned_by: "test" }] })
      : json(completion(text))
  );
}

Deno.test("deno task oam:local reaches a model server on this machine", async () => {
  const mock = server("Rain in Oslo.");
  try {
    const r = await denoTask(["oam:local", "respond", "--model", `openai:${mock.baseURL}#mock`, "Weather?"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "Rain in Oslo.\n");
    const chat = mock.chatBodies[0] as JsonObject;
    assert.equal(chat.model, "mock");
  } finally {
    await mock.close();
  }
});

Deno.test("deno task stdio:local -- --model openai:…: system sessions run on the model server", async () => {
  const mock = server("Halt!");
  try {
    const r = await denoTask(
      ["stdio:local", "--", "--model", `openai:${mock.baseURL}#mock`],
      '{"jsonrpc":"2.0","id":1,"method":"session/create","params":{"session":"g"}}\n' +
        '{"jsonrpc":"2.0","id":2,"method":"session/respond","params":{"session":"g","prompt":"Who?"}}\n',
    );
    assert.equal(r.code, 0, r.stderr);
    const [created, answered] = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(created, { jsonrpc: "2.0", id: 1, result: { session: "g", warnings: [] } });
    assert.equal(answered.result.text, "Halt!");
  } finally {
    await mock.close();
  }
});

Deno.test("deno task oam without network access: exit 3 with how to grant it", async () => {
  const mock = server("unused");
  try {
    const host = new URL(mock.baseURL).host;
    const r = await denoTask(["oam", "respond", "--model", `openai:${mock.baseURL}#mock`, "Weather?"]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, "");
    assert.ok(
      r.stderr.includes(
        `This oam has no network access to ${host}. For a model server on this machine use ` +
          `'deno task oam:local <command> …'; for another host run 'deno run --allow-read --allow-env ` +
          `--allow-ffi --allow-run --allow-write --allow-net=${host} cli.ts <command> …'`,
      ),
      r.stderr,
    );
    assert.match(r.stderr, /\[model_unavailable\]\n$/);
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
  }
});
