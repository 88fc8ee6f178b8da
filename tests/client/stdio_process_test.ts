/**
 * The stdio transport against the real `cli.ts stdio` process: when the process dies, every pending call
 * rejects at once with a clear error (and later calls too); a command that cannot start is a clear error;
 * the command comes from the environment the way the other bindings read it; the bridge gets
 * OAM_EXIT_WITH_PARENT=1 unless the caller set the variable.
 */
import assert from "node:assert/strict";
import { Bridge, bridgeCommand, BridgeError, Peer, StdioTransport } from "../../mod.ts";
import { bridgeEnvironment } from "../../src/client/bridge_command.ts";
import { withDeadline } from "../helpers/deadline.ts";
import { stdioCommand } from "./transports.ts";

const quiet = { onWarning: () => {} };

Deno.test("stdio: when the bridge process dies, every pending call rejects at once with -32023", async () => {
  const transport = new StdioTransport({ command: stdioCommand(), stderr: "piped" });
  const bridge = await Bridge.connect(transport, quiet);
  const slow = { type: "scripted" as const, steps: [{ text: "Zzz.", delayMs: 60_000 }] };
  const a = await bridge.createSession({ model: slow });
  const b = await bridge.createNpc({ name: "Gorm" }, { model: slow });
  const pending = [a.respond("One."), b.talk("Two.")].map((p) => p.then(() => null, (e: unknown) => e));
  // Both requests have been read by the bridge once the list shows them busy.
  assert.deepEqual((await bridge.listSessions()).map((s) => s.busy), [true]);
  Deno.kill(transport.pid!, "SIGKILL");
  const [first, second] = await Promise.all(pending);
  for (const [error, method] of [[first, "session/respond"], [second, "npc/talk"]] as const) {
    assert.ok(error instanceof BridgeError, String(error));
    assert.equal(error.code, -32023);
    assert.equal(error.dataCode, "shut_down");
    assert.equal(
      error.message,
      `The bridge stopped before answering '${method}': The bridge process exited (signal SIGKILL).`,
    );
  }
  assert.equal(bridge.closed, true);
  await assert.rejects(bridge.ping(), /The bridge is closed; 'ping' was not sent\./);
  await bridge.close();
});

Deno.test("stdio: a tool handler's signal says the bridge process ended, and how, when it dies", async () => {
  const transport = new StdioTransport({ command: stdioCommand() });
  const bridge = await Bridge.connect(transport, quiet);
  const reason = Promise.withResolvers<unknown>();
  bridge.tool({ name: "wait", description: "Waits.", parameters: { type: "object" } }, (_args, ctx) => {
    ctx.signal.addEventListener("abort", () => reason.resolve(ctx.signal.reason));
    Deno.kill(transport.pid!, "SIGKILL"); // the bridge dies while the handler runs
    return new Promise(() => {});
  });
  const npc = await bridge.createNpc({ name: "Gorm" }, {
    tools: ["wait"],
    model: { type: "scripted", steps: [{ toolCalls: [{ name: "wait", arguments: {} }] }, { text: "Done." }] },
  });
  const talk = npc.talk("Hello.").then(() => null, (e: unknown) => e);
  const error = await reason.promise;
  assert.ok(error instanceof BridgeError, String(error));
  assert.equal(error.dataCode, "shut_down");
  assert.equal(
    error.message,
    "The bridge stopped before the tool call was answered: The bridge process exited (signal SIGKILL).",
  );
  assert.match(String(await talk), /The bridge process exited \(signal SIGKILL\)/);
  await bridge.close();
});

Deno.test("stdio: a tool answer the dying bridge can no longer read is no uncaught error (the game went on)", async () => {
  // A bridge that stops reading (killed, crashed) while a tool handler runs: the answer's write fails with a
  // broken pipe. It was passed to onError, by default reportError, which ends a Deno program: the bridge's
  // death crashed the game instead of rejecting its calls.
  const sends: Promise<void>[] = [];
  class Watched extends StdioTransport {
    override send(message: Parameters<StdioTransport["send"]>[0]): Promise<void> {
      const sent = super.send(message);
      if (!("method" in message)) sends.push(sent); // the answers
      return sent;
    }
  }
  const call = {
    jsonrpc: "2.0",
    id: "t-1",
    method: "tool/call",
    params: { call: { id: "c1", name: "look", arguments: {} } },
  };
  // Reads a request (left unanswered), closes its stdin, then asks for a tool: the answer meets a pipe
  // nobody reads.
  const transport = new Watched({
    command: ["sh", "-c", `read line; exec 0<&-; printf '%s\\n' '${JSON.stringify(call)}'; exec sleep 30`],
    exitTimeoutMs: 0,
  });
  const errors: Error[] = [];
  const peer = new Peer(transport, { onError: (e) => errors.push(e) });
  const answered = Promise.withResolvers<void>();
  peer.setRequestHandler("tool/call", () => {
    answered.resolve();
    return { output: "a door" };
  });
  await peer.start();
  const talk = peer.request("npc/talk", { npc: "mira", line: "Hello." }).catch((e: unknown) => e);
  await answered.promise;
  while (sends.length === 0) await Promise.resolve(); // the reply's send, after the handler's promise
  const [reply] = await Promise.allSettled(sends);
  assert.equal(reply.status, "rejected");
  assert.deepEqual(errors.map((e) => e.message), []);
  assert.ok(
    reply.reason instanceof BridgeError && reply.reason.dataCode === "shut_down",
    String(reply.reason),
  );
  await peer.close();
  assert.ok(await talk instanceof BridgeError);
});

Deno.test("stdio: a bridge that exits with an error reports its status and its last stderr lines", async () => {
  const transport = new StdioTransport({
    command: stdioCommand(["--max-sessions", "zero"]),
    stderr: "piped",
  });
  const error = await Bridge.connect(transport, quiet).then(() => null, (e: unknown) => e);
  assert.ok(error instanceof BridgeError, String(error));
  assert.equal(error.code, -32023);
  assert.match(
    error.message,
    /^The bridge stopped before answering 'initialize': The bridge process exited \(exit code 2\); its last output: .*--max-sessions/s,
  );
});

Deno.test("stdio: a command that cannot be started is a clear error", async () => {
  const missing = `${await Deno.makeTempDir()}/no-such-oam`;
  try {
    await Bridge.spawn({ command: [missing, "stdio"] });
    assert.fail("expected an error");
  } catch (error) {
    assert.ok(error instanceof BridgeError, String(error));
    assert.equal(error.dataCode, "shut_down");
    assert.match(error.message, new RegExp(`^Cannot start the bridge '${missing} stdio': `));
    assert.ok(error.message.endsWith(`. '${missing}' was not found.`), error.message);
  } finally {
    await Deno.remove(missing.slice(0, missing.lastIndexOf("/")), { recursive: true });
  }
});

Deno.test("stdio: Bridge.spawn() with no oam on PATH and no command says how to name the bridge", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const script = `${dir}/spawn.ts`;
    const mod = new URL("../../mod.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { Bridge } from "${mod}";\n` +
        "await Bridge.spawn().then(() => console.log('started'), (e) => console.log(e.dataCode, e.message));\n",
    );
    // What a designer runs: no --allow-env, so OAM_BRIDGE_* are not read; no oam on PATH.
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-prompt", "--allow-run=oam", "--allow-read", script],
      clearEnv: true,
      env: { PATH: dir, NO_COLOR: "1", OAM_BRIDGE_PATH: `${dir}/ignored` },
      stdin: "null",
    }).output();
    const text = new TextDecoder().decode(output.stdout).trim();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    assert.match(
      text,
      /^shut_down Cannot start the bridge 'oam stdio': .*\. 'oam' was not found: install it \(deno install -g -n oam --allow-read --allow-env --allow-ffi jsr:@open-apple-models\/bridge\/cli\), give the command, /,
    );
    assert.ok(
      text.endsWith(
        // The client was imported from this checkout: the command names its cli.ts, ready to paste, with
        // --no-lock (a GGUF model run through it would otherwise pin node-llama-cpp in the checkout's lock).
        `Bridge.spawn({ command: [...] }) (from this checkout: ["deno", "run", "-A", "--no-lock", ${
          JSON.stringify(new URL("../../cli.ts", import.meta.url).pathname)
        }, "stdio"]), ` +
          "or set OAM_BRIDGE_PATH (a compiled oam) or OAM_BRIDGE_COMMAND and grant --allow-env to read them.",
      ),
      text,
    );
    // Named by the environment (read with --allow-env): the error says which variable named it.
    const named = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-prompt", "--allow-run", "--allow-env", "--allow-read", script],
      clearEnv: true,
      env: { PATH: dir, NO_COLOR: "1", OAM_BRIDGE_PATH: `${dir}/missing-oam` },
      stdin: "null",
    }).output();
    const namedText = new TextDecoder().decode(named.stdout).trim();
    assert.ok(namedText.endsWith(`. '${dir}/missing-oam' (from OAM_BRIDGE_PATH) was not found.`), namedText);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("stdio: a script that never closes its spawned bridge exits when its last answer is in (it hung), and waits for answers still due", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const script = `${dir}/forgets_close.ts`;
    const mod = new URL("../../mod.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { Bridge } from "${mod}";\n` +
        `const bridge = await Bridge.spawn({ command: ${
          JSON.stringify(stdioCommand())
        }, onWarning: () => {} });\n` +
        "const npc = await bridge.createNpc({ name: 'Gorm' }, { options: { replyFormat: 'text' }, model: {\n" +
        "  type: 'scripted', steps: [{ text: '[proud] Slow steel.', delayMs: 300 }] } });\n" +
        // Nothing on this side keeps the process alive during the delay but the answer it waits for.
        "console.log((await npc.talk('Hello.')).line);\n",
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-prompt", "--allow-all", script],
      env: { NO_COLOR: "1" },
      stdin: "null",
      signal: AbortSignal.timeout(60_000), // a bound for a hang, not a speed target
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.signal, null, `killed: it hung (${stderr})`);
    assert.equal(output.code, 0, stderr);
    assert.equal(new TextDecoder().decode(output.stdout), "Slow steel.\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bridgeCommand: argument, OAM_BRIDGE_COMMAND, OAM_BRIDGE_PATH (+ OAM_BRIDGE_LOG), then oam stdio", () => {
  const from = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.deepEqual(bridgeCommand(undefined, from({})), ["oam", "stdio"]);
  assert.deepEqual(bridgeCommand(undefined, from({ OAM_BRIDGE_LOG: "debug" })), [
    "oam",
    "stdio",
    "--log-level",
    "debug",
  ]);
  const path = { OAM_BRIDGE_PATH: " /opt/oam ", OAM_BRIDGE_LOG: "debug" };
  assert.deepEqual(bridgeCommand(undefined, from(path)), ["/opt/oam", "stdio", "--log-level", "debug"]);
  const line = { ...path, OAM_BRIDGE_COMMAND: "deno run -A  cli.ts stdio" };
  assert.deepEqual(bridgeCommand(undefined, from(line)), ["deno", "run", "-A", "cli.ts", "stdio"]);
  assert.deepEqual(bridgeCommand(["my-oam", "stdio"], from(line)), ["my-oam", "stdio"]);
  assert.deepEqual(bridgeCommand([], from({ OAM_BRIDGE_COMMAND: "  " })), ["oam", "stdio"]);
});

Deno.test("Bridge.spawn() finds the bridge through the environment, as the other bindings do", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { Bridge } from ${JSON.stringify(new URL("../../mod.ts", import.meta.url).href)};
       await using bridge = await Bridge.spawn({ stderr: "null" });
       console.log(bridge.server.server.name, (await bridge.availability()).available);`,
    ],
    env: { OAM_BRIDGE_COMMAND: stdioCommand().join(" ") },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.equal(new TextDecoder().decode(out.stdout), "open-apple-models false\n");
});

Deno.test("stdio: a line longer than the bridge's --max-line-bytes is refused before sending; a tool result too", async () => {
  for (const flag of [["--max-line-bytes", "2048"], ["--max-line-bytes=2048"]]) {
    const errors: Error[] = [];
    const transport = new StdioTransport({ command: stdioCommand(flag), stderr: "piped" });
    await using bridge = await Bridge.connect(transport, { ...quiet, onError: (e) => errors.push(e) });
    bridge.tool({ name: "read_book", description: "Reads the whole book." }, () => "word ".repeat(1000));
    const session = await bridge.createSession({
      tools: ["read_book"],
      model: {
        type: "scripted",
        steps: [{ toolCalls: [{ name: "read_book", arguments: {} }] }, { text: "Done." }],
      },
    });
    const refused = (error: unknown) => {
      assert.ok(error instanceof BridgeError, String(error));
      assert.equal(error.code, -32600);
      assert.match(
        error.message,
        /^The message is \d+ bytes, longer than the 2048 bytes the bridge reads; it was not sent/,
      );
      return true;
    };
    await assert.rejects(session.respond("Tell me ".repeat(400)), refused);
    const result = await session.respond("Read it.");
    assert.equal(result.toolCalls[0].isError, true, flag.join(" "));
    assert.match(
      String(result.toolCalls[0].output),
      /result could not be sent: The message is \d+ bytes, longer than the 2048/,
    );
    assert.equal(result.text, "Done.");
    assert.deepEqual(errors, []);
  }
  // The option wins over the command.
  const transport = new StdioTransport({
    command: stdioCommand(["--max-line-bytes", "2048"]),
    maxLineBytes: 1024,
  });
  await using bridge = await Bridge.connect(transport, quiet);
  await assert.rejects(
    bridge.request("session/create", { instructions: "x".repeat(1500), model: "scripted" }),
    /longer than the 1024 bytes/,
  );
});

/** The OAM_EXIT_WITH_PARENT a process started by a StdioTransport with `options` sees (null when unset). */
async function exitWithParentSeen(options: { env?: Record<string, string>; clearEnv?: boolean }) {
  const code = 'console.log(JSON.stringify({ jsonrpc: "2.0", method: "env", params: ' +
    '{ value: Deno.env.get("OAM_EXIT_WITH_PARENT") ?? null } }))';
  const transport = new StdioTransport({
    command: [Deno.execPath(), "eval", code],
    stderr: "piped",
    ...options,
  });
  const seen: unknown[] = [];
  transport.onmessage = (m) => seen.push(m);
  const closed = new Promise<void>((r) => transport.onclose = () => r());
  await transport.start();
  // The transport does not keep this process alive without a request: the deadline's timer does.
  await withDeadline(closed, "the child to end");
  assert.equal(seen.length, 1);
  return (seen[0] as { params: { value: string | null } }).params.value;
}

Deno.test("stdio: the spawned bridge gets OAM_EXIT_WITH_PARENT=1 unless the caller set it", async () => {
  assert.equal(await exitWithParentSeen({}), "1");
  assert.equal(await exitWithParentSeen({ env: { NO_COLOR: "1" } }), "1");
  assert.equal(await exitWithParentSeen({ env: { OAM_EXIT_WITH_PARENT: "0" } }), "0");
  const path = Deno.env.get("PATH") ?? "";
  assert.equal(await exitWithParentSeen({ clearEnv: true, env: { PATH: path } }), "1");
  // Set in this process's environment (readable): the child inherits it as it is.
  assert.equal(
    bridgeEnvironment(undefined, (name) => name === "OAM_EXIT_WITH_PARENT" ? "0" : undefined),
    undefined,
  );
  assert.deepEqual(bridgeEnvironment({ A: "b" }, () => undefined), { A: "b", OAM_EXIT_WITH_PARENT: "1" });
});

Deno.test("stdio: a saved world too large for one line is refused with how to load it in parts", async () => {
  await using bridge = await Bridge.connect(
    new StdioTransport({ command: stdioCommand(["--max-line-bytes", "4096"]), stderr: "piped" }),
    quiet,
  );
  const save = {
    lore: Object.fromEntries([...Array(6).keys()].map((i) => [`book${i}`, "word ".repeat(200)])),
  };
  const inParts = (error: unknown) => {
    assert.ok(error instanceof BridgeError, String(error));
    assert.equal(error.dataCode, "invalid_message");
    assert.match(
      error.message,
      /A world's state this large loads in parts: world\/create with part of it, then world\/merge the rest/,
    );
    return true;
  };
  await assert.rejects(bridge.createWorld(save, { world: "big" }), inParts);
  await bridge.createWorld({}, { world: "big" });
  await assert.rejects(bridge.world("big").set("", save), inParts);
  await assert.rejects(bridge.world("big").merge(save), inParts);
  await assert.rejects(bridge.createSession({ instructions: "x".repeat(5000) }), (error: unknown) => {
    assert.ok(error instanceof BridgeError && !error.message.includes("in parts"), String(error));
    return true;
  });
});
