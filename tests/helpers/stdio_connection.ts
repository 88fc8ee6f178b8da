/**
 * A {@link WireConnection} through the stdio transport's byte framing: `createStdioServer` on byte streams,
 * as `oam stdio` runs it, in-process (no child process).
 * @module
 */
import { BridgeEngine } from "../../src/composition.ts";
import { createStdioServer } from "../../src/transports/stdio.ts";
import { WireConnection } from "./wire.ts";

/** A connection to a fresh bridge through the stdio transport's line framing on byte streams. */
export function stdioConnection(): WireConnection {
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
  return connection;
}
