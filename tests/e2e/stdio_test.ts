/**
 * End-to-end: `deno run --allow-read --allow-env --allow-ffi cli.ts stdio` as a real process. A guard session
 * with a client tool, EOF handling, shutdown, invalid UTF-8, over-long lines, CLI flags and a client that
 * disconnects mid-turn.
 */
import assert from "node:assert/strict";
import { BridgeProcess } from "../helpers/process.ts";

const ROOT = new URL("../../", import.meta.url);
const PERMISSIONS = ["--allow-read", "--allow-env", "--allow-ffi"];
const ENV = { OAM_SCRIPT: "", OAM_FM_LIBRARY: "/nonexistent/libFM.so" };

type Msg = Record<string, unknown>;

async function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, "cli.ts", ...args],
    cwd: ROOT,
    stdin: "null",
    env: { NO_COLOR: "1" },
    signal: AbortSignal.timeout(30_000), // a hang ends in a failed test, not a stalled run
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

const GUARD_TOOL = {
  name: "open_gate",
  description: "Ask the game engine to open a named gate.",
  parameters: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
};

Deno.test("stdio: guard session with a client tool; bad UTF-8 and over-long lines; EOF answers everything, exit 0", async () => {
  const p = new BridgeProcess(["--max-line-bytes", "2048", "--log-level", "debug"], { env: ENV });
  try {
    await p.send({
      id: 1,
      method: "initialize",
      params: { client: { name: "e2e" }, protocolVersion: "1.0" },
    });
    await p.send({
      id: 2,
      method: "session/create",
      params: {
        session: "guard",
        instructions: "You are a castle guard.",
        tools: [GUARD_TOOL],
        options: { toolChoice: "required" },
        model: {
          type: "scripted",
          steps: [{ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, {
            template: "Gate says: {toolOutput}",
          }, { text: "slow answer", delayMs: 300 }],
        },
      },
    });
    await p.send({
      id: 3,
      method: "session/respond",
      params: { session: "guard", prompt: "Open it.", stream: true },
    });
    const call = await p.waitFor((m) => m.method === "tool/call");
    assert.equal(call.id, "t-1");
    assert.deepEqual((call.params as Msg).requestId, 3);
    await p.send({ id: "t-1", result: { output: { opened: false, reason: "jammed" } } });
    const r3 = await p.response(3);
    assert.equal((r3.result as Msg).text, 'Gate says: {"opened":false,"reason":"jammed"}');
    assert.deepEqual(
      p.messages.filter((m) => m.method === "session/event").map((m) =>
        ((m.params as Msg).event as Msg).type
      ),
      ["modelStep", "toolCallStarted", "toolCallCompleted", "modelStep", "text", "text", "text"],
    );

    // a stray response is ignored (logged on stderr only)
    await p.send({ id: "t-99", result: { output: "stray" } });

    // invalid UTF-8 → -32700 id null, then the bridge keeps serving
    await p.write(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a]));
    await p.send({ id: 4, method: "ping" });
    await p.response(4);
    const utf8 = p.messages.at(-2)!;
    assert.deepEqual(utf8.id, null);
    assert.equal((utf8.error as Msg).code, -32700);

    // an over-long line → an error, then resynchronised at the next newline (also when split across writes)
    const long = JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping", params: { pad: "x".repeat(5000) } });
    await p.write(long.slice(0, 1500));
    await p.write(long.slice(1500, 3000));
    await p.write(long.slice(3000) + "\n");
    await p.send({ id: 6, method: "ping" });
    await p.response(6);
    const tooLong = p.messages.at(-2)!;
    assert.deepEqual(tooLong, {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: "The message is longer than the limit of 2048 bytes.",
        data: { code: "invalid_message", limit: 2048 },
      },
    });
    assert.ok(!p.messages.some((m) => m.id === 5), "the over-long request is not executed");

    // a slow request, then EOF: it is still answered and the process exits 0
    await p.send({ id: 7, method: "session/respond", params: { session: "guard", prompt: "And now?" } });
    await p.write('{"jsonrpc":"2.0","id":8,"method":"ping"}'); // the last line has no newline
    await p.closeInput();
    assert.equal(await p.exit(), 0, p.stderr);
    assert.equal(p.trailing, "", "stdout ended with a partial line");
    assert.match(
      p.stderr,
      /\[oam stdio\] warning: Ignoring a response to unknown or finished request 't-99'\./,
    );
    assert.equal((p.messages.find((m) => m.id === 7)!.result as Msg).text, "slow answer");
    assert.deepEqual(p.messages.find((m) => m.id === 8), { jsonrpc: "2.0", id: 8, result: {} });
    const ids = p.messages.filter((m) => !("method" in m) && m.id !== null).map((m) => m.id);
    assert.deepEqual(ids.sort(), [1, 2, 3, 4, 6, 7, 8]);
  } finally {
    await p.kill();
  }
});

Deno.test("stdio: a shutdown request exits 0 right after its response", async () => {
  const p = new BridgeProcess([], { env: ENV });
  try {
    await p.send({
      id: 1,
      method: "session/create",
      params: { session: "a", model: { type: "scripted", steps: [{ text: "x", delayMs: 60_000 }] } },
    });
    await p.send({ id: 2, method: "session/respond", params: { session: "a", prompt: "wait" } });
    await p.response(1);
    await p.send({ id: 3, method: "shutdown" });
    // stdin stays open: the shutdown alone ends the process (the 60 s turn is cancelled)
    assert.equal(await p.exit(), 0, p.stderr);
    assert.deepEqual(p.messages.map((m) => m.id), [1, 2, 3]);
    assert.equal((p.messages[1].error as Msg).code, -32009);
    assert.deepEqual(p.messages[2], { jsonrpc: "2.0", id: 3, result: {} });
  } finally {
    await p.kill();
  }
});

Deno.test("stdio: shutdown sent as a notification exits 0 as well", async () => {
  const p = new BridgeProcess([], { env: ENV });
  try {
    await p.send({ id: 1, method: "ping" });
    await p.response(1);
    await p.send({ method: "shutdown" });
    assert.equal(await p.exit(), 0, p.stderr);
    assert.deepEqual(p.messages, [{ jsonrpc: "2.0", id: 1, result: {} }]);
  } finally {
    await p.kill();
  }
});

Deno.test("stdio: a client that closes stdin while a tool/call is pending → the turn is answered, exit 0", async () => {
  const p = new BridgeProcess([], { env: ENV });
  try {
    await p.send({
      id: 1,
      method: "session/create",
      params: {
        session: "g",
        tools: [GUARD_TOOL],
        model: {
          type: "scripted",
          steps: [{ toolCalls: [{ name: "open_gate", arguments: { gate: "west" } }] }, {
            template: "{toolOutput}",
          }],
        },
      },
    });
    await p.send({ id: 2, method: "session/respond", params: { session: "g", prompt: "Open." } });
    await p.toolCall(1);
    await p.closeInput();
    // the 120 s tool timeout is not waited for: the deadline fails the test if it were
    assert.equal(await p.exit(), 0, p.stderr);
    const r = p.messages.find((m) => m.id === 2)!;
    assert.ok(r, "the turn is still answered");
    assert.match(String((r.result as Msg).text), /^Error: /);
  } finally {
    await p.kill();
  }
});

Deno.test("stdio: a client that goes away entirely (stdin and stdout closed) mid-turn → exit 0", async () => {
  const p = new BridgeProcess([], { env: ENV });
  try {
    await p.send({
      id: 1,
      method: "session/create",
      params: {
        session: "g",
        tools: [GUARD_TOOL],
        model: {
          type: "scripted",
          steps: [{ toolCalls: [{ name: "open_gate", arguments: { gate: "x" } }] }, {
            text: "y".repeat(200_000),
          }],
        },
      },
    });
    await p.send({ id: 2, method: "session/respond", params: { session: "g", prompt: "x", stream: true } });
    await p.toolCall(1);
    await p.stopReading();
    await p.closeInput();
    assert.equal(await p.exit(), 0, p.stderr);
  } finally {
    await p.kill();
  }
});

Deno.test("stdio: --no-scripted-models and --tool-timeout", async () => {
  const p = new BridgeProcess(["--no-scripted-models", "--tool-timeout", "0.05", "--max-sessions", "3"], {
    env: ENV,
  });
  await p.send({ id: 1, method: "initialize" });
  const caps = ((await p.response(1)).result as Msg).capabilities as Msg;
  assert.deepEqual(caps.models, ["system"]);
  assert.equal(caps.maxSessions, 3);
  await p.send({ id: 2, method: "session/create", params: { model: "scripted" } });
  assert.deepEqual((await p.response(2)).error, {
    code: -32602,
    message: "Scripted models are disabled on this bridge.",
    data: { code: "invalid_params" },
  });
  await p.closeInput();
  assert.equal(await p.exit(), 0);

  // --tool-timeout is the default for client tools
  const q = new BridgeProcess(["--tool-timeout", "0.05"], { env: ENV });
  await q.send({
    id: 1,
    method: "session/create",
    params: {
      session: "t",
      tools: [GUARD_TOOL],
      model: {
        type: "scripted",
        steps: [{ toolCalls: [{ name: "open_gate", arguments: { gate: "x" } }] }, {
          template: "{toolOutput}",
        }],
      },
    },
  });
  await q.send({ id: 2, method: "session/respond", params: { session: "t", prompt: "Open." } });
  const r = await q.response(2);
  assert.equal((r.result as Msg).text, "Error: Tool 'open_gate' timed out after 50ms.");
  const cancel = q.messages.find((m) => m.method === "tool/cancel")!;
  assert.equal((cancel.params as Msg).reason, "Error: Tool 'open_gate' timed out after 50ms.");
  await q.closeInput();
  assert.equal(await q.exit(), 0);
});

Deno.test("stdio CLI: --help, --version, bad flags exit 2", async () => {
  const help = await runCli(["stdio", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage: oam stdio/);
  const version = await runCli(["stdio", "--version"]);
  assert.equal(version.code, 0);
  assert.equal(version.stdout, "oam 0.1.0\n");
  for (
    const args of [
      ["stdio", "--bogus"],
      ["stdio", "--tool-timeout", "-1"],
      ["stdio", "--tool-timeout", "86401"],
      ["stdio", "--max-sessions", "0"],
      ["stdio", "--max-line-bytes", "abc"],
      ["stdio", "--log-level", "loud"],
      ["stdio", "extra"],
      ["frobnicate"],
    ]
  ) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "", args.join(" "));
    assert.match(r.stderr, /^Error: /, args.join(" "));
    // Usage errors of `oam stdio` carry the code and the help hint like the other commands.
    if (args[0] === "stdio") {
      assert.match(
        r.stderr,
        /^Error: [^\n]*\. Run 'deno task oam stdio --help'\. \[usage\]\n$/,
        args.join(" "),
      );
    }
  }
});
