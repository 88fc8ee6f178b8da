/**
 * The shared wire cases (wire_cases.ts) over the stdio transport: `createStdioServer` with the bridge's line
 * framing on byte streams, as `oam stdio` runs it (in-process, so the cases need no child process).
 */
import { BridgeEngine } from "../../src/composition.ts";
import { createStdioServer } from "../../src/transports/stdio.ts";
import { runWireCases } from "./wire_cases.ts";
import { WireConnection } from "../helpers/wire.ts";

runWireCases({
  name: "stdio",
  open() {
    const input = new TransformStream<Uint8Array, Uint8Array>();
    const decoder = new TextDecoder();
    let partial = "";
    const output = new WritableStream<Uint8Array>({
      write(chunk) {
        const text = partial + decoder.decode(chunk, { stream: true });
        const lines = text.split("\n");
        partial = lines.pop()!;
        for (const line of lines) connection.deliver(line);
      },
    });
    const server = createStdioServer(
      (send, onShutdown) => new BridgeEngine({ onShutdown }, send),
      { input: input.readable, output },
    );
    const ended = server.run().then(() => {});
    const writer = input.writable.getWriter();
    const encoder = new TextEncoder();
    const connection: WireConnection = new WireConnection(
      (line) => void writer.write(encoder.encode(`${line}\n`)).catch(() => {}),
      async () => {
        await writer.close().catch(() => {});
        await ended;
      },
      ended,
    );
    return Promise.resolve(connection);
  },
});
