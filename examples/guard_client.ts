/**
 * A tiny "game engine" that spawns the stdio bridge and drives a castle guard with a client tool, at the
 * protocol level: the typed client's two lower layers (a `StdioTransport` that moves JSON-RPC lines, a `Peer`
 * that keeps the requests), the method names and params of PROTOCOL.md, no handles.
 *
 * The engine owns the world: when the model calls `open_gate`, the bridge sends a `tool/call` request, this
 * script plays the "animation" and replies, and the model continues with the result. Lines are streamed.
 *
 *   deno run --allow-run --allow-read --allow-env examples/guard_client.ts            # system model if available, else a cached GGUF model, else scripted
 *   deno run --allow-run --allow-read --allow-env examples/guard_client.ts --scripted # always the scripted model
 */
import { firstCachedModel, type JsonObject, type JsonValue, Peer, StdioTransport } from "../mod.ts";

const forceScripted = Deno.args.includes("--scripted");
const cliPath = new URL("../cli.ts", import.meta.url).pathname;
// A GGUF model from `oam models pull` plays the guard when the on-device model is unavailable.
const cached = forceScripted ? null : await firstCachedModel();
// node-llama-cpp needs --allow-sys and --allow-run too; --no-lock keeps it out of the repository's lock file.
const ggufFlags = cached ? ["--allow-sys", "--allow-run", "--no-lock"] : [];

const encoder = new TextEncoder();
const out = (text: string) => Deno.stdout.writeSync(encoder.encode(text));
const gates: Record<string, { opened: boolean; reason?: string }> = {
  north: { opened: false, reason: "the portcullis chain is jammed" },
  south: { opened: true },
};

const transport = new StdioTransport({
  command: [
    Deno.execPath(),
    "run",
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    "--allow-ffi",
    ...ggufFlags,
    cliPath,
    "stdio",
  ],
});
const bridge = new Peer(transport);

// The bridge's messages: streamed events, and tool calls the engine executes.
bridge.onNotification("session/event", (params) => {
  const event = params.event as JsonObject;
  const call = event.call as JsonObject;
  if (event.type === "text") out(event.isReset ? `\r${event.text}` : String(event.delta));
  else if (event.type === "toolCallStarted") {
    out(`  [model calls ${call.name} ${JSON.stringify(call.arguments)}]\n`);
  }
});
bridge.setRequestHandler("tool/call", (params) => {
  const { name, arguments: args } = params.call as { name: string; arguments: JsonObject };
  const gate = gates[String(args.gate)] ?? { opened: false, reason: "there is no such gate" };
  out(`  [engine runs ${name}: ${JSON.stringify(gate)}]\n`);
  return { output: gate };
});
await bridge.start();

const scriptedModel: JsonObject = {
  type: "scripted",
  steps: [
    { toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] },
    { template: "The north gate stays shut: {toolOutput}. Try the south gate." },
    { toolCalls: [{ name: "open_gate", arguments: { gate: "south" } }] },
    { text: "The south gate is open. Move along, traveller.", chunks: 4 },
  ],
};

const init = await bridge.request("initialize", {
  client: { name: "guard-demo", version: "1.0" },
  protocolVersion: "1.0",
}) as { model: { available: boolean; reason?: string } };
// The default model: the on-device one where it is available, else a cached GGUF model, else a script.
const model: JsonValue = forceScripted
  ? scriptedModel
  : init.model.available
  ? "system"
  : cached
  ? { type: "llama", path: cached.path }
  : scriptedModel;
out(
  `🛡  Guard at the gate: an engine-side client driving 'oam stdio' (${
    model === "system"
      ? "on-device model"
      : model === scriptedModel
      ? `scripted model; system model unavailable: ${init.model.reason}`
      : `local GGUF model ${cached?.name}`
  })\n`,
);

await bridge.request("session/create", {
  session: "guard",
  instructions: "You are a castle guard in a game. Use tools to act. Reply in one sentence.",
  tools: [{
    name: "open_gate",
    description: "Ask the game engine to open a named gate. Returns whether it opened.",
    parameters: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
  }],
  options: { toolChoice: "required" },
  model,
});

for (const prompt of ["Please open the north gate.", "Then open the south gate."]) {
  out(`\nplayer> ${prompt}\nguard> `);
  try {
    const result = await bridge.request("session/respond", { session: "guard", prompt, stream: true }) as {
      toolCalls: unknown[];
      usage: { totalTokens: number };
    };
    out(`\n  (${result.toolCalls.length} tool call(s), ${result.usage.totalTokens} tokens)\n`);
  } catch (error) {
    out(`\n(error: ${error instanceof Error ? error.message : String(error)})\n`);
  }
}

// `shutdown` answers once everything is done; closing the transport then waits for the process to exit.
await bridge.request("shutdown");
await bridge.close();
const code = transport.exitStatus?.code ?? 1;
out(`\nbridge exited with code ${code}\n`);
Deno.exit(code);
