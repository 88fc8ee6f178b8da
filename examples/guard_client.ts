/**
 * A tiny "game engine" that spawns the stdio bridge and drives a castle guard with a client tool.
 *
 * The engine owns the world: when the model calls `open_gate`, the bridge sends a `tool/call` request, this
 * script plays the "animation" and replies, and the model continues with the result. Lines are streamed.
 *
 *   deno run --allow-run --allow-read --allow-env examples/guard_client.ts            # system model if available, else a cached GGUF model, else scripted
 *   deno run --allow-run --allow-read --allow-env examples/guard_client.ts --scripted # always the scripted model
 */
import { firstCachedModel } from "../src/cli/models_cache.ts";
import { TextLineStream } from "./support/text_line_stream.ts";

const forceScripted = Deno.args.includes("--scripted");
const cliPath = new URL("../cli.ts", import.meta.url).pathname;
// A GGUF model from `oam models pull` plays the guard when the on-device model is unavailable.
const cached = forceScripted ? null : await firstCachedModel();
// node-llama-cpp needs --allow-sys and --allow-run too; --no-lock keeps it out of the repository's lock file.
const ggufFlags = cached ? ["--allow-sys", "--allow-run", "--no-lock"] : [];

const child = new Deno.Command(Deno.execPath(), {
  args: ["run", "--no-prompt", "--allow-read", "--allow-env", "--allow-ffi", ...ggufFlags, cliPath, "stdio"],
  stdin: "piped",
  stdout: "piped",
  stderr: "inherit",
}).spawn();

const writer = child.stdin.getWriter();
const encoder = new TextEncoder();
let nextId = 1;
const pending = new Map<number, (message: Record<string, unknown>) => void>();

function send(message: Record<string, unknown>): Promise<void> {
  return writer.write(encoder.encode(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n"));
}

function request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const id = nextId++;
  const done = new Promise<Record<string, unknown>>((resolve) => pending.set(id, resolve));
  send({ id, method, params });
  return done;
}

const out = (text: string) => Deno.stdout.writeSync(encoder.encode(text));
const gates: Record<string, { opened: boolean; reason?: string }> = {
  north: { opened: false, reason: "the portcullis chain is jammed" },
  south: { opened: true },
};

// Read the bridge's messages: responses, streamed events and tool calls.
const reader = (async () => {
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(new TextLineStream());
  for await (const line of lines) {
    if (line.trim() === "") continue;
    const msg = JSON.parse(line);
    if (msg.method === "session/event") {
      const event = msg.params.event;
      if (event.type === "text") out(event.isReset ? `\r${event.text}` : event.delta);
      else if (event.type === "toolCallStarted") {
        out(`  [model calls ${event.call.name} ${JSON.stringify(event.call.arguments)}]\n`);
      }
    } else if (msg.method === "tool/call") {
      const { name, arguments: args } = msg.params.call;
      const gate = gates[String(args.gate)] ?? { opened: false, reason: "there is no such gate" };
      out(`  [engine runs ${name}: ${JSON.stringify(gate)}]\n`);
      await send({ id: msg.id, result: { output: gate } });
    } else if ("id" in msg && pending.has(msg.id)) {
      pending.get(msg.id)!(msg);
      pending.delete(msg.id);
    }
  }
})();

const scriptedModel = {
  type: "scripted",
  steps: [
    { toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] },
    { template: "The north gate stays shut: {toolOutput}. Try the south gate." },
    { toolCalls: [{ name: "open_gate", arguments: { gate: "south" } }] },
    { text: "The south gate is open. Move along, traveller.", chunks: 4 },
  ],
};

const init = await request("initialize", {
  client: { name: "guard-demo", version: "1.0" },
  protocolVersion: "1.0",
});
const info = init.result as { model: { available: boolean; reason?: string } };
// The default model: the on-device one where it is available, else a cached GGUF model, else a script.
const model = forceScripted
  ? scriptedModel
  : info.model.available
  ? "system"
  : cached
  ? { type: "llama", path: cached.path }
  : scriptedModel;
out(
  `🛡  Guard at the gate: an engine-side client driving 'oam stdio' (${
    model === "system"
      ? "on-device model"
      : model === scriptedModel
      ? `scripted model; system model unavailable: ${info.model.reason}`
      : `local GGUF model ${cached?.name}`
  })\n`,
);

const created = await request("session/create", {
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
if (created.error) throw new Error(JSON.stringify(created.error));

for (const prompt of ["Please open the north gate.", "Then open the south gate."]) {
  out(`\nplayer> ${prompt}\nguard> `);
  const r = await request("session/respond", { session: "guard", prompt, stream: true });
  if (r.error) out(`\n(error: ${JSON.stringify(r.error)})\n`);
  else {
    const result = r.result as { toolCalls: unknown[]; usage: { totalTokens: number } };
    out(`\n  (${result.toolCalls.length} tool call(s), ${result.usage.totalTokens} tokens)\n`);
  }
}

await request("shutdown", {});
await writer.close().catch(() => {});
await reader;
const status = await child.status;
out(`\nbridge exited with code ${status.code}\n`);
Deno.exit(status.code);
