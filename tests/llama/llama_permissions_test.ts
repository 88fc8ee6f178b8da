/**
 * The GGUF backend without the permissions node-llama-cpp needs: the bridge answers with the missing flags
 * instead of loading the package (so this runs in the main tier: node-llama-cpp is never imported). Without
 * `--allow-run`, node-llama-cpp's test of its native binary threw where no caller could catch it, and the
 * whole `oam stdio` process died without an answer.
 */
import assert from "node:assert/strict";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/** `oam stdio --model gguf:<file>` with `permissions`, fed `requests`; its exit code and stdout lines. */
async function stdio(permissions: string[], model: string, requests: object[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-lock", "--no-prompt", ...permissions, CLI, "stdio", "--model", model],
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(requests.map((r) => JSON.stringify(r) + "\n").join("")));
  await writer.close();
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stderr: decoder.decode(output.stderr),
    lines: decoder.decode(output.stdout).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)),
  };
}

/** A file that passes the GGUF magic check (the permissions are checked before it is loaded). */
async function ggufLookalike(dir: string): Promise<string> {
  const path = `${dir}/model.gguf`;
  await Deno.writeFile(path, new Uint8Array([...new TextEncoder().encode("GGUF"), 3, 0, 0, 0]));
  return path;
}

const HINT = "It needs --allow-read --allow-env --allow-sys --allow-ffi --allow-run (a script: deno run " +
  "--allow-read --allow-env --allow-sys --allow-ffi --allow-run --no-lock your_script.ts; deno task oam and " +
  "oam:local pass them, e.g. deno task oam:local serve --model gguf:…; an oam from deno install: install it " +
  "again with them, deno install -g -f -n oam --allow-read --allow-env --allow-sys --allow-ffi --allow-run " +
  "--allow-write jsr:@open-apple-models/bridge/cli).";

for (
  const [missing, permissions] of [
    ["--allow-run", ["--allow-read", "--allow-env", "--allow-sys", "--allow-ffi"]],
    ["--allow-ffi", ["--allow-read", "--allow-env", "--allow-sys", "--allow-run"]],
    ["--allow-env --allow-sys --allow-run", ["--allow-read", "--allow-env=OAM_MODEL", "--allow-ffi"]],
  ] as const
) {
  Deno.test(`oam stdio --model gguf: without ${missing}: availability and turns name it, the bridge stays up`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      const model = await ggufLookalike(dir);
      const detail = `node-llama-cpp cannot run without ${missing}. ${HINT}`;
      const r = await stdio([...permissions], `gguf:${model}`, [
        { jsonrpc: "2.0", id: 1, method: "model/availability" },
        { jsonrpc: "2.0", id: 2, method: "session/create", params: { session: "s" } },
        { jsonrpc: "2.0", id: 3, method: "session/respond", params: { session: "s", prompt: "Hello" } },
        { jsonrpc: "2.0", id: 4, method: "ping" },
      ]);
      assert.equal(r.code, 0, r.stderr);
      // Requests of different sessions and methods may be answered in any order: looked at by id.
      assert.deepEqual(r.lines.sort((a, b) => a.id - b.id), [
        {
          jsonrpc: "2.0",
          id: 1,
          result: { available: false, reason: "unknown", contextSize: 4096, supportedLanguages: [], detail },
        },
        {
          jsonrpc: "2.0",
          id: 2,
          result: {
            session: "s",
            warnings: [
              // The model configured, by its name (the host's model stands in for the system model).
              `The model gguf:${model} is unavailable (unknown); turns will fail with model_unavailable until it is ` +
              `ready. ${detail}`,
            ],
          },
        },
        {
          jsonrpc: "2.0",
          id: 3,
          error: { code: -32001, message: detail, data: { code: "model_unavailable" } },
        },
        { jsonrpc: "2.0", id: 4, result: {} },
      ]);
      assert.equal(r.stderr, "");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
