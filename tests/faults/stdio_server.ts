/**
 * A stdio server (the transport of `oam stdio`) over in-memory streams, for tests/faults/end_of_input_test.ts
 * and the timing checks of tests/slow/timing_slow.ts.
 */
import { BridgeEngine } from "../../src/composition.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { createStdioServer } from "../../src/transports/stdio.ts";

/**
 * A stdio server over in-memory streams; `input` lines are sent, then the input ends. `out` collects the
 * output lines; `first` resolves with the first one.
 */
export function server(
  lines: string[],
  options: { eofGraceMs?: number; flushGraceMs?: number; readOutput?: boolean },
) {
  const encoder = new TextEncoder();
  const out: string[] = [];
  let gotFirst!: () => void;
  const first = new Promise<void>((r) => gotFirst = r);
  let text = "";
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  if (options.readOutput !== false) release();
  const output = new WritableStream<Uint8Array>({
    async write(chunk) {
      await gate;
      text += new TextDecoder().decode(chunk);
      const parts = text.split("\n");
      text = parts.pop()!;
      out.push(...parts);
      if (out.length > 0) gotFirst();
    },
  });
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const l of lines) controller.enqueue(encoder.encode(l + "\n"));
      controller.close();
    },
  });
  const s = createStdioServer((send, onShutdown) => new BridgeEngine({ onShutdown }, send), {
    input,
    output,
    ...options,
  });
  return { server: s, out, release, first };
}

/** A request line. */
export const req = (id: number, method: string, params: JsonObject) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params });
