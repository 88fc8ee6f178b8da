/**
 * The playground's raw log sees the wire: wrapped around a transport, it records every message in both
 * directions, in order, exactly as sent and received (here: a talk whose client tool the page answers).
 */
import assert from "node:assert/strict";
import { Connection } from "../../../src/client/connection.ts";
import { InProcessTransport } from "../../../src/client/in_process.ts";
import { Npc } from "../../../src/client/npc.ts";
import type { JsonObject } from "../../../src/protocol/json.ts";
import type { Transport } from "../../../src/client/transport.ts";
import { LoggingTransport, type RpcEntry } from "../../../src/serve/playground/page/rpc_log.ts";

Deno.test("every message of a talk with a client tool call, in wire order, both directions", async () => {
  const entries: RpcEntry[] = [];
  const connection = new Connection(new LoggingTransport(new InProcessTransport(), (e) => entries.push(e)), {
    onWarning: () => {},
  });
  connection.tools.add({ name: "check_stock", description: "Stock." }, () => ({ stock: 3 }));
  await connection.peer.start();
  const created = await connection.request("npc/create", {
    npc: "mira",
    persona: { name: "Mira" },
    tools: [{ name: "check_stock", description: "Stock." }],
    options: { replyFormat: "text" },
    model: {
      type: "scripted",
      steps: [
        { toolCalls: [{ name: "check_stock", arguments: {}, id: "c1" }] },
        { text: "[happy] Three.", chunks: 1 },
      ],
    },
  });
  const reply = await new Npc(connection, created.npc).talk("Stock?", { stream: true });
  assert.equal(reply.line, "Three.");
  await connection.peer.close();
  const wire = entries.map((e) => {
    const m = e.message as JsonObject;
    const params = m.params as JsonObject | undefined;
    const event = params?.event as JsonObject | undefined;
    return `${e.direction} ${m.method ?? (m.error ? "error" : "result")}${event ? ` ${event.type}` : ""} ${
      JSON.stringify(m.id ?? null)
    }`;
  });
  assert.deepEqual(wire, [
    "out npc/create 1",
    "in result 1",
    "out npc/talk 2",
    "in npc/event toolCallStarted null",
    'in tool/call "t-1"',
    'out result "t-1"',
    "in npc/event toolCallCompleted null",
    "in npc/event emotion null",
    "in npc/event lineDelta null",
    "in result 2",
  ]);
  assert.deepEqual(entries[5].message, { jsonrpc: "2.0", id: "t-1", result: { output: { stock: 3 } } });
  assert.ok(entries.every((e, i) => i === 0 || e.at >= entries[i - 1].at), "times never go back");
});

Deno.test("the close code of the wrapped transport reaches the peer (1001: the server is stopping)", async () => {
  const inner: Transport = {
    start: () => Promise.resolve(),
    send: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  const logging = new LoggingTransport(inner, () => {});
  const seen: unknown[] = [];
  logging.onclose = (_reason, close) => seen.push(close);
  await logging.start();
  const close = { code: 1001, reason: "The server is stopping.", network: false };
  inner.onclose?.(undefined, close);
  assert.deepEqual(seen, [close]);
});
