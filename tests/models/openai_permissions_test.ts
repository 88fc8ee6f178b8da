/**
 * The backend needs network access to its configured host only: a subprocess with nothing but
 * `--allow-net=127.0.0.1:<port>` runs a step, and a second host is refused (mapped to model_unavailable).
 */
import assert from "node:assert/strict";
import { completion, json, MockServer } from "./openai_mock_server.ts";

const REPO = new URL("../../", import.meta.url);

const SCRIPT = (modelUrl: string) => `
import { createOpenAIModel } from ${JSON.stringify(modelUrl)};
const [allowed, other] = Deno.args;
const request = (baseURL) => createOpenAIModel({ baseURL, model: "m" }).step({
  instructions: null, tools: [], toolCallingMode: "allowed", history: [], prompt: "Hi", responseSchema: null,
  options: {}, stream: false, signal: new AbortController().signal,
});
const ok = await request(allowed);
const denied = await request(other).then(() => null, (e) => ({ code: e.dataCode, message: e.message }));
Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify({ ok, denied })));
`;

Deno.test("openai permissions: --allow-net=<host:port> is enough, other hosts are refused", async () => {
  const server = new MockServer(() => json(completion("hello")));
  const dir = await Deno.makeTempDir();
  try {
    const script = `${dir}/run.js`;
    await Deno.writeTextFile(script, SCRIPT(new URL("src/models/openai_model.ts", REPO).href));
    const port = new URL(server.baseURL).port;
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-check",
        "--quiet",
        `--config=${new URL("deno.json", REPO).pathname}`,
        `--allow-net=127.0.0.1:${port}`,
        script,
        server.baseURL,
        "http://127.0.0.2:8089/v1",
      ],
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(60_000), // a hang fails the test instead of stalling the run
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    const result = JSON.parse(new TextDecoder().decode(output.stdout));
    assert.equal(result.ok.text, "hello");
    assert.equal(result.denied.code, "model_unavailable");
    assert.match(result.denied.message, /net access|NotCapable|permission/i);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await server.close();
  }
});
