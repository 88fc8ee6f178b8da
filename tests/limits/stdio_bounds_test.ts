/**
 * Bounds of the stdio transport, in-process: the write batch size, the per-line read pause above the
 * output high-water mark, and resynchronisation after an over-long line (split across chunks).
 */
import assert from "node:assert/strict";
import { BridgeEngine } from "../../src/composition.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { createStdioServer } from "../../src/transports/stdio.ts";
import { LineSplitter, LineWriter } from "../../src/transports/line_io.ts";

const encoder = new TextEncoder();

/** An output stream whose writes block until `release()`; records every chunk. */
function gatedOutput() {
  const chunks: Uint8Array[] = [];
  let open!: () => void;
  let gate = new Promise<void>((r) => open = r);
  let wrote!: () => void;
  /** Resolves when the server first writes (it has read and answered what it could before blocking). */
  const firstWrite = new Promise<void>((r) => wrote = r);
  const stream = new WritableStream<Uint8Array>({
    async write(chunk) {
      wrote();
      await gate;
      chunks.push(chunk);
    },
  });
  return {
    stream,
    chunks,
    firstWrite,
    release: () => open(),
    close: () => {
      gate = new Promise<void>((r) => open = r);
    },
    lines: () => new TextDecoder().decode(concat(chunks)).split("\n").filter((l) => l !== ""),
  };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

Deno.test("LineWriter: 300 MB queued in one tick is written in bounded batches (no 'Invalid string length')", async () => {
  const sizes: number[] = [];
  let total = 0;
  const writer = new LineWriter(
    new WritableStream<Uint8Array>({
      write(chunk) {
        sizes.push(chunk.length);
        total += chunk.length;
      },
    }),
  );
  const line = "x".repeat(1_000_000);
  for (let i = 0; i < 300; i++) writer.send(line);
  writer.send("tail");
  await writer.flush();
  assert.equal(total, 300 * 1_000_001 + 5);
  assert.ok(Math.max(...sizes) <= 2_000_002, `largest write ${Math.max(...sizes)}`);
  assert.equal(writer.buffered, 0);
  await writer.close();
});

Deno.test("stdio server: reading pauses per line above the high-water mark, then every line is answered in order", async () => {
  const out = gatedOutput();
  const received: string[] = [];
  let text = "";
  for (let i = 0; i < 2000; i++) text += `{"jsonrpc":"2.0","id":${i},"method":"ping"}\n`;
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(text)); // one chunk with 2000 requests
      controller.close();
    },
  });
  const server = createStdioServer((send, onShutdown) => {
    const engine = new BridgeEngine({ onShutdown }, send);
    const receive = engine.receive.bind(engine);
    engine.receive = (line: string) => {
      received.push(line);
      receive(line);
    };
    return engine;
  }, { input, output: out.stream, maxBufferedOutput: 4096 });
  const run = server.run();
  // The chunk is split in one go; its first write comes after: by then reading has paused on the output.
  await out.firstWrite;
  // Output is blocked: only about 4 KB of responses (~130 pings) may have been taken from the chunk.
  assert.ok(received.length > 0 && received.length < 300, `${received.length} lines read while blocked`);
  out.release();
  assert.equal(await run, 0);
  const lines = out.lines();
  assert.equal(lines.length, 2000);
  lines.forEach((l, i) => assert.equal(l, `{"jsonrpc":"2.0","id":${i},"result":{}}`));
});

Deno.test("stdio server: an over-long line split over chunks is answered once with -32600 and the next line works", async () => {
  const out = gatedOutput();
  out.release();
  const long = `{"jsonrpc":"2.0","id":"long","method":"ping","params":{"x":"${"z".repeat(5000)}"}}\n`;
  const bytes = encoder.encode(
    `{"jsonrpc":"2.0","id":1,"method":"ping"}\n` + long + `{"jsonrpc":"2.0","id":2,"method":"ping"}\n` +
      `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"${"é".repeat(450)}"}}\n`,
  );
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 333) controller.enqueue(bytes.slice(i, i + 333));
      controller.close();
    },
  });
  const server = createStdioServer(
    (send, onShutdown) => new BridgeEngine({ onShutdown }, send),
    { input, output: out.stream, maxLineBytes: 1024 },
  );
  assert.equal(await server.run(), 0);
  assert.deepEqual(out.lines().map((l) => JSON.parse(l) as JsonObject), [
    { jsonrpc: "2.0", id: 1, result: {} },
    {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: "The message is longer than the limit of 1024 bytes.",
        data: { code: "invalid_message", limit: 1024 },
      },
    },
    { jsonrpc: "2.0", id: 2, result: {} },
    { jsonrpc: "2.0", id: 3, result: {} },
  ]);
});

Deno.test("LineSplitter: a line of exactly the limit passes, one byte more is rejected; CRLF and bad UTF-8", () => {
  const lines: string[] = [];
  const errors: string[] = [];
  const s = new LineSplitter(10, (l) => lines.push(l), (e) => errors.push(`${e.code} ${e.message}`));
  s.push(encoder.encode("0123456789\n0123456789A\nok\r\n"));
  s.push(new Uint8Array([0x61, 0xff, 0x0a, 0x62, 0x0a]));
  s.push(encoder.encode("0123456"));
  s.push(encoder.encode("789\n"));
  s.push(encoder.encode("01234567"));
  s.push(encoder.encode("89AB\nlast"));
  s.end();
  assert.deepEqual(lines, ["0123456789", "ok", "b", "0123456789", "last"]);
  assert.deepEqual(errors, [
    "-32600 The message is longer than the limit of 10 bytes.",
    "-32700 Invalid UTF-8 in the message.",
    "-32600 The message is longer than the limit of 10 bytes.",
  ]);
});

Deno.test("LineSplitter: a real U+FFFD is text, not an error; invalid bytes next to it still are", () => {
  const lines: string[] = [];
  const errors: string[] = [];
  const s = new LineSplitter(1000, (l) => lines.push(l), (e) => errors.push(`${e.code} ${e.message}`));
  s.push(encoder.encode('{"prompt":"\uFFFD?"}\nnext\n')); // whole lines (one decode for the chunk)
  s.push(encoder.encode("tail \uFFFD"));
  s.push(encoder.encode(" end\n")); // a line split across chunks
  s.push(new Uint8Array([...encoder.encode("\uFFFD"), 0xc3, 0x0a, 0x6f, 0x6b, 0x0a])); // U+FFFD then a cut 2-byte char
  assert.deepEqual(lines, ['{"prompt":"\uFFFD?"}', "next", "tail \uFFFD end", "ok"]);
  assert.deepEqual(errors, ["-32700 Invalid UTF-8 in the message."]);
});

Deno.test("LineWriter: a batch of ASCII and wide lines (2-, 3- and 4-byte characters) arrives byte for byte", async () => {
  const chunks: Uint8Array[] = [];
  const writer = new LineWriter(new WritableStream({ write: (c) => void chunks.push(c.slice()) }));
  const lines = [
    "plain",
    "",
    "é".repeat(1000), // twice as many bytes as UTF-16 units
    "ascii again",
    "龍".repeat(3000) + "🐉".repeat(500), // three and two bytes per unit
    "\u2028 tail",
  ];
  for (const line of lines) writer.send(line);
  await writer.flush();
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    bytes.set(c, o);
    o += c.length;
  }
  assert.equal(new TextDecoder("utf-8", { fatal: true }).decode(bytes), lines.join("\n") + "\n");
  assert.equal(writer.buffered, 0);
});

Deno.test("LineSplitter: the same lines and errors wherever the reads end (a chunk that starts inside a line)", () => {
  const stream = [
    ...Array.from({ length: 30 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"ping"}`),
    "x".repeat(40), // over the limit
    "é".repeat(8) + "\r",
    "",
    "last\uFFFD",
  ].join("\n") + "\n";
  const bytes = new Uint8Array([...encoder.encode(stream), 0xff, 0x0a, ...encoder.encode("ok\n")]);
  const split = (cuts: number[]) => {
    const out: string[] = [];
    const s = new LineSplitter(32, (l) => out.push(l), (e) => out.push(`error ${e.code}`));
    let from = 0;
    for (const to of [...cuts, bytes.length]) {
      s.push(bytes.subarray(from, to));
      from = to;
    }
    s.end();
    return out;
  };
  const whole = split([]);
  assert.equal(whole.length, 36);
  assert.deepEqual(whole.slice(30), ["error -32600", "é".repeat(8), "", "last\uFFFD", "error -32700", "ok"]);
  let seed = 7;
  for (let round = 0; round < 300; round++) {
    const cuts: number[] = [];
    for (let at = 0;;) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      at += 1 + seed % 120;
      if (at >= bytes.length) break;
      cuts.push(at);
    }
    assert.deepEqual(split(cuts), whole, `cut at ${cuts.join(",")}`);
  }
});

Deno.test("LineWriter with reuseChunks: every batch is encoded into one reused byte array, byte for byte", async () => {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let text = "";
  const buffers: ArrayBufferLike[] = [];
  const writer = new LineWriter(
    new WritableStream<Uint8Array>({
      // Read at write time: the writer may reuse the bytes once this write has resolved.
      write(chunk) {
        buffers.push(chunk.buffer);
        text += decoder.decode(chunk);
      },
    }),
    { reuseChunks: true },
  );
  const batches = [
    ['{"jsonrpc":"2.0","id":1,"result":{}}', "ascii"],
    ["é".repeat(1000), "龍".repeat(3000) + "🐉".repeat(500), "\u2028 tail"], // 2, 3 and 4 bytes a character
    Array.from({ length: 600 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"result":{"text":"Hmph."}}`), // a larger batch
    ["short again"],
    ["é".repeat(100)],
  ];
  for (const batch of batches) {
    for (const line of batch) writer.send(line);
    await writer.flush(); // one write per batch
  }
  assert.equal(text, batches.flat().join("\n") + "\n");
  assert.equal(buffers.length, batches.length);
  assert.ok(buffers.slice(2).every((b) => b === buffers[2]), "once grown, one byte array serves every write");
  // A line too long for the reused array (over a million UTF-16 units) gets a byte array of its own.
  const long = "x".repeat(1_100_000);
  writer.send(long);
  await writer.flush();
  assert.equal(text.length, batches.flat().join("\n").length + 1 + long.length + 1);
  assert.ok(text.endsWith(long + "\n"));
  assert.notEqual(buffers.at(-1), buffers[2]);
  await writer.close();
});
