/**
 * A spawned bridge that stops answering (a stopped or wedged process): once the client gives up on its calls
 * (a turn's abort or timeout, after the wait for the cancel's answer), the child no longer keeps a script
 * alive; and `close()` ends a stopped (SIGSTOP) child by letting it read the end of its input.
 */
import assert from "node:assert/strict";
import { Bridge, Peer, StdioTransport } from "../../mod.ts";
import { withDeadline } from "../helpers/deadline.ts";

/** A bridge that reads every line and never answers; it exits at the end of its input. */
const SILENT = ["sh", "-c", "while read line; do :; done"];

/** Runs `body` as a script that never closes its transport; returns its exit code, signal and output. */
async function runScript(body: string): Promise<{ code: number; signal: string | null; out: string }> {
  const dir = await Deno.makeTempDir();
  try {
    const script = `${dir}/gives_up.ts`;
    const mod = new URL("../../mod.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { Peer, StdioTransport } from "${mod}";\n` +
        `const peer = new Peer(new StdioTransport({ command: ${JSON.stringify(SILENT)} }));\n` +
        "await peer.start();\n" + body,
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-prompt", "--allow-all", script],
      env: { NO_COLOR: "1" },
      stdin: "null",
      signal: AbortSignal.timeout(60_000), // a bound for a hang, not a speed target
    }).output();
    const out = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
    return { code: output.code, signal: output.signal, out };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("stdio: a script whose call was aborted (no cancel hook) exits although the bridge never answers", async () => {
  const { code, signal, out } = await runScript(
    "const controller = new AbortController();\n" +
      "const talk = peer.request('npc/talk', { npc: 'gorm', line: 'Hello.' }, { signal: controller.signal });\n" +
      "controller.abort();\n" +
      "console.log(await talk.catch((e) => e.dataCode));\n",
  );
  assert.equal(signal, null, `killed: it hung (${out})`);
  assert.equal(code, 0, out);
  assert.equal(out, "cancelled\n");
});

Deno.test("stdio: a script whose turn timed out exits once the client gives up waiting for the cancel", async () => {
  // The typed client's turns have a cancel hook: the request waits 5 s for the bridge's answer, then rejects.
  const { code, signal, out } = await runScript(
    "const talk = peer.request('npc/talk', { npc: 'gorm', line: 'Hello.' }, {\n" +
      "  timeoutMs: 0, onAbort: () => peer.notify('npc/cancel', { npc: 'gorm' }),\n" +
      "});\n" +
      "console.log(await talk.catch((e) => e.dataCode));\n",
  );
  assert.equal(signal, null, `killed: it hung (${out})`);
  assert.equal(code, 0, out);
  assert.equal(out, "timeout\n");
});

Deno.test("stdio: close() ends a stopped (SIGSTOP) bridge: it reads the end of its input and exits", async () => {
  const transport = new StdioTransport({ command: SILENT });
  const peer = new Peer(transport);
  await peer.start();
  Deno.kill(transport.pid!, "SIGSTOP");
  await withDeadline(peer.close(), "close() of a stopped child");
  // Not SIGTERM or SIGKILL: it went on and read the end of its input.
  assert.deepEqual(
    { code: transport.exitStatus?.code, signal: transport.exitStatus?.signal },
    { code: 0, signal: null },
  );
});

/**
 * A bridge that answers `initialize`, reads `shutdown` without answering it (as a stopped or busy bridge
 * does), and answers it only once its input ends, with a warning saying so.
 */
const ANSWERS_AT_END = [
  Deno.execPath(),
  "eval",
  `const out = (m) => Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(m) + "\\n"));
  let shutdown = null, buffer = "";
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf("\\n")) >= 0) {
      const message = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      if (message.method === "initialize") {
        out({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: "1.0", capabilities: { methods: [] } } });
      } else if (message.method === "shutdown") shutdown = message.id;
    }
  }
  if (shutdown !== null) out({ jsonrpc: "2.0", id: shutdown, result: { warnings: ["answered at the end of its input"] } });`,
];

Deno.test("stdio: Bridge.close() ends the bridge's input right after 'shutdown', not after waiting for its answer", async () => {
  // A stopped or busy bridge cannot answer `shutdown`: close() used to wait 5 s for the answer before it
  // ended the input (and continued a stopped child). The end of the input comes right after it now, so
  // this bridge's answer, written when its input ends, still finds the request waiting.
  const warnings: string[] = [];
  const transport = new StdioTransport({ command: ANSWERS_AT_END });
  const bridge = await Bridge.connect(transport, {
    onWarning: (warning, method) => warnings.push(`${method}: ${warning}`),
  });
  await withDeadline(bridge.close(), "close()");
  assert.deepEqual(warnings, ["shutdown: answered at the end of its input"]);
  assert.equal(transport.exitStatus?.code, 0);
});
