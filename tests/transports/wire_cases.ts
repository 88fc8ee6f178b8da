/**
 * The core ordering and tool-call cases of the protocol (§2, §4, §7), written once against a
 * {@link WireConnection} and run over every transport (stdio_wire_test.ts, websocket_wire_test.ts). Each case
 * asserts only what the protocol guarantees on any transport: arrival order, per-session order, every
 * notification and `tool/call` of a request before its response, replies bypassing the queues, exactly one
 * response per request, cancellation.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { scripted, type WireConnection, type WireTransport } from "../helpers/wire.ts";

const kind = (m: JsonObject) => {
  if (m.method === "session/event") return `event:${((m.params as JsonObject).event as JsonObject).type}`;
  if (typeof m.method === "string") return m.method;
  return "error" in m ? "error" : "response";
};

const TOOL = {
  name: "open_gate",
  description: "Open a gate.",
  parameters: { type: "object", properties: { gate: { type: "string" } } },
};

function responseIds(c: WireConnection): JsonValue[] {
  return c.messages.filter((m) => !("method" in m)).map((m) => m.id);
}

function assertOneResponseEach(c: WireConnection): void {
  const ids = responseIds(c).map((id) => JSON.stringify(id));
  assert.equal(new Set(ids).size, ids.length, `duplicate responses: ${ids}`);
}

function cancelledError(message: string): JsonObject {
  return { code: -32009, message, data: { code: "cancelled" } };
}

/** One shared case. */
export interface WireCase {
  /** Test title. */
  name: string;
  /** The case, on a fresh connection. */
  run(c: WireConnection): Promise<void>;
}

/** The cases every transport runs. */
export const WIRE_CASES: WireCase[] = [
  {
    name: "pipelined create and respond without waiting: responses in arrival order",
    async run(c) {
      c.request("session/create", { session: "p", model: scripted({ text: "Hmph." }) }, 1);
      c.request("session/respond", { session: "p", prompt: "Hello" }, 2);
      c.request("session/respond", { session: "p", prompt: "Again" }, 3);
      await c.response(3);
      assert.deepEqual(c.messages.map((m) => [kind(m), m.id]), [["response", 1], ["response", 2], [
        "response",
        3,
      ]]);
      assert.deepEqual(c.messages[0], { jsonrpc: "2.0", id: 1, result: { session: "p", warnings: [] } });
      assert.equal((c.messages[1].result as JsonObject).text, "Hmph.");
      assert.equal((c.messages[2].result as JsonObject).text, "(script exhausted)");
    },
  },
  {
    name: "a streamed tool turn: whole tool/call, every event and the call before the response",
    async run(c) {
      c.request("session/create", {
        session: "guard",
        tools: [TOOL],
        options: { toolChoice: "required" },
        model: scripted({ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, {
          template: "Gate says: {toolOutput}",
        }),
      }, 1);
      c.request("session/respond", { session: "guard", prompt: "Open the north gate.", stream: true }, 2);
      const call = await c.toolCall(1);
      const callParams = call.params as JsonObject;
      const callInfo = callParams.call as JsonObject;
      assert.match(callInfo.id as string, /^call_[A-Za-z0-9]{24}$/);
      assert.deepEqual(call, {
        jsonrpc: "2.0",
        id: "t-1",
        method: "tool/call",
        params: {
          session: "guard",
          requestId: 2,
          call: { id: callInfo.id, name: "open_gate", arguments: { gate: "north" } },
        },
      });
      c.reply("t-1", { output: { opened: true } });
      const response = await c.response(2);
      assert.deepEqual(c.related(2).map(kind), [
        "event:modelStep",
        "event:toolCallStarted",
        "tool/call",
        "event:toolCallCompleted",
        "event:modelStep",
        "event:text",
        "event:text",
        "event:text",
        "response",
      ]);
      const result = response.result as JsonObject;
      assert.equal(result.text, 'Gate says: {"opened":true}');
      const events = c.related(2).filter((m) => m.method === "session/event").map((m) =>
        (m.params as JsonObject).event as JsonObject
      );
      assert.equal(events.filter((e) => e.type === "text").map((e) => e.delta).join(""), result.text);
      const record = (result.toolCalls as JsonObject[])[0];
      assert.deepEqual([record.call, record.output, record.isError], [callInfo, { opened: true }, false]);
      assert.deepEqual(events[1], { type: "toolCallStarted", call: callInfo, execution: "client" });
    },
  },
  {
    name: "a turn waiting on its client tool holds back neither another session nor a ping",
    async run(c) {
      await c.call("session/create", {
        session: "A",
        tools: [TOOL],
        model: scripted({ toolCalls: [{ name: "open_gate" }] }, { text: "A done" }),
      });
      await c.call("session/create", { session: "B", model: scripted({ text: "B done" }) });
      c.request("session/respond", { session: "A", prompt: "x" }, "a");
      await c.toolCall(1);
      c.request("session/respond", { session: "B", prompt: "x" }, "b");
      c.request("ping", {}, "ping");
      await c.response("ping");
      assert.equal(((await c.response("b")).result as JsonObject).text, "B done");
      assert.equal(c.messages.some((m) => m.id === "a" && !("method" in m)), false);
      c.reply("t-1", { output: "opened" });
      assert.equal(((await c.response("a")).result as JsonObject).text, "A done");
      assert.deepEqual(responseIds(c).slice(-3), ["b", "ping", "a"]);
    },
  },
  {
    name: "per-session order: operations pipelined behind a turn wait for it; list answers at once",
    async run(c) {
      await c.call("session/create", {
        session: "s",
        instructions: "old",
        tools: [TOOL],
        model: scripted({ toolCalls: [{ name: "open_gate" }] }, { template: "one:{toolOutput}" }, {
          text: "two",
        }),
      });
      c.request("session/respond", { session: "s", prompt: "first" }, 1);
      c.request("session/setInstructions", { session: "s", instructions: "new" }, 2);
      c.request("session/respond", { session: "s", prompt: "second" }, 3);
      await c.toolCall(1);
      const list = await c.call("session/list");
      const entry = (list.sessions as JsonObject[])[0];
      assert.deepEqual([entry.instructions, entry.busy, entry.pendingOperations], ["old", true, 3]);
      assert.deepEqual(responseIds(c).filter((id) => id === 1 || id === 2 || id === 3), []);
      c.reply("t-1", { output: "ok" });
      await c.response(3);
      assert.deepEqual(responseIds(c).slice(-3), [1, 2, 3]);
      assert.equal(((await c.response(1)).result as JsonObject).text, "one:ok");
      assert.equal(((await c.response(3)).result as JsonObject).text, "two");
      const after = ((await c.call("session/list")).sessions as JsonObject[])[0];
      assert.deepEqual([after.instructions, after.busy, after.entries], ["new", false, 6]);
    },
  },
  {
    name: "tool/call replies bypass the queues: the turn whose call is answered finishes first",
    async run(c) {
      await c.call("session/create", {
        session: "a",
        tools: [TOOL],
        model: scripted(
          { toolCalls: [{ name: "open_gate", arguments: { gate: "west" } }] },
          { template: "A:{toolOutput}" },
          { template: "A2:{prompt}" },
        ),
      });
      await c.call("session/create", {
        session: "b",
        tools: [TOOL],
        model: scripted({ toolCalls: [{ name: "open_gate", arguments: { gate: "east" } }] }, {
          template: "B:{toolOutput}",
        }),
      });
      c.request("session/respond", { session: "a", prompt: "one" }, 1);
      c.request("session/respond", { session: "a", prompt: "two" }, 2); // queued behind 1
      await c.toolCall(1);
      c.request("session/respond", { session: "b", prompt: "one" }, 3);
      const tb = await c.toolCall(2);
      assert.deepEqual([(tb.params as JsonObject).session, tb.id], ["b", "t-2"]);
      c.reply("t-2", { output: "east open" });
      assert.equal(((await c.response(3)).result as JsonObject).text, "B:east open");
      c.reply("t-1", { output: "west open" });
      assert.equal(((await c.response(1)).result as JsonObject).text, "A:west open");
      assert.equal(((await c.response(2)).result as JsonObject).text, "A2:two");
      assert.deepEqual(responseIds(c).slice(-3), [3, 1, 2]);
    },
  },
  {
    name:
      "cancel: tool/cancel for the pending call, -32009 for the turn and everything queued, late reply ignored",
    async run(c) {
      await c.call("session/create", {
        session: "g",
        instructions: "keep",
        tools: [TOOL],
        model: scripted({ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, {
          text: "late",
        }),
      });
      const before = c.messages.length;
      c.request("session/respond", { session: "g", prompt: "open", stream: true }, 1);
      c.request("session/respond", { session: "g", prompt: "queued" }, 2);
      c.request("session/reset", { session: "g" }, 3);
      const call = await c.toolCall(1);
      c.request("session/cancel", { session: "g" }, 6);
      await c.response(3);
      assert.deepEqual(c.messages.slice(before).map((m) => `${kind(m)}:${m.id ?? ""}`), [
        "event:modelStep:",
        "event:toolCallStarted:",
        "tool/call:t-1",
        "tool/cancel:",
        "response:6",
        "event:toolCallCompleted:",
        "error:1",
        "error:2",
        "error:3",
      ]);
      const cancel = c.messages.find((m) => m.method === "tool/cancel")!;
      assert.deepEqual(cancel, {
        jsonrpc: "2.0",
        method: "tool/cancel",
        params: {
          session: "g",
          requestId: 1,
          id: "t-1",
          callId: ((call.params as JsonObject).call as JsonObject).id,
          reason: "Error: The turn was cancelled.",
        },
      });
      assert.deepEqual((await c.response(6)).result, { session: "g", cancelled: 3 });
      assert.deepEqual((await c.response(1)).error, cancelledError("The turn was cancelled."));
      for (const id of [2, 3]) {
        assert.deepEqual(
          (await c.response(id)).error,
          cancelledError("The request was cancelled before it started."),
        );
      }
      // A late reply changes nothing; the next request is answered normally.
      c.reply("t-1", { output: "opened" });
      const entry = ((await c.call("session/list")).sessions as JsonObject[])[0];
      assert.deepEqual([entry.entries, entry.instructions, entry.busy], [0, "keep", false]);
      assertOneResponseEach(c);
    },
  },
  {
    name: "client tool errors reach the model as error outputs; tool/call ids count up and are never reused",
    async run(c) {
      await c.call("session/create", {
        session: "e",
        tools: [TOOL],
        model: scripted(
          { toolCalls: [{ name: "open_gate" }] },
          { template: "saw {toolOutput}" },
          { toolCalls: [{ name: "open_gate" }] },
          { template: "then {toolOutput}" },
        ),
      });
      c.request("session/respond", { session: "e", prompt: "one" }, 1);
      const first = await c.toolCall(1);
      c.send({ id: first.id as string, error: { code: -32000, message: "The chain is jammed." } });
      const r1 = (await c.response(1)).result as JsonObject;
      assert.equal(r1.text, "saw Error: The chain is jammed.");
      const record = (r1.toolCalls as JsonObject[])[0];
      assert.deepEqual([record.output, record.isError], ["The chain is jammed.", true]);
      c.request("session/respond", { session: "e", prompt: "two" }, 2);
      const second = await c.toolCall(2);
      assert.deepEqual([first.id, second.id], ["t-1", "t-2"]);
      c.reply("t-2", { output: "open", isError: false });
      assert.equal(((await c.response(2)).result as JsonObject).text, "then open");
    },
  },
  {
    name: "every event and tool/call of a request comes before its response; concurrent turns stay apart",
    async run(c) {
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) {
        c.request("session/create", {
          session: `x${i}`,
          tools: [TOOL],
          model: scripted(
            { toolCalls: [{ name: "open_gate", arguments: { gate: `g${i}` } }, { name: "open_gate" }] },
            { text: `done ${i}` },
          ),
        }, 100 + i);
        c.request("session/respond", { session: `x${i}`, prompt: "go", stream: true }, i);
        ids.push(i);
      }
      for (let n = 1; n <= 6; n++) {
        const call = await c.toolCall(n);
        c.reply(call.id, { output: `ok ${n}` });
      }
      for (const id of ids) await c.response(id);
      for (const id of ids) {
        assert.deepEqual(c.related(id).map(kind), [
          "event:modelStep",
          "event:toolCallStarted",
          "tool/call",
          "event:toolCallStarted",
          "tool/call",
          "event:toolCallCompleted",
          "event:toolCallCompleted",
          "event:modelStep",
          "event:text",
          "event:text",
          "event:text",
          "response",
        ]);
      }
      assertOneResponseEach(c);
    },
  },
  {
    name: "bad input is answered with id null and the connection keeps serving",
    async run(c) {
      c.sendLine("this is not json");
      c.sendLine('{"jsonrpc":"2.0","id":7,"method":"no/such"}');
      c.request("ping", {}, 8);
      await c.response(8);
      const parseMessage = String(((c.messages[0] as JsonObject).error as JsonObject)?.message);
      assert.match(parseMessage, /^Invalid JSON at byte \d+: /);
      assert.deepEqual(c.messages, [
        {
          jsonrpc: "2.0",
          id: null,
          error: { code: -32700, message: parseMessage, data: { code: "parse_error" } },
        },
        {
          jsonrpc: "2.0",
          id: 7,
          error: {
            code: -32601,
            message: "Unknown method 'no/such'.",
            data: { code: "method_not_found", method: "no/such" },
          },
        },
        { jsonrpc: "2.0", id: 8, result: {} },
      ]);
    },
  },
  {
    name: "shutdown: cancels the running turn, answers, then the connection ends",
    async run(c) {
      await c.call("session/create", {
        session: "w",
        tools: [TOOL],
        model: scripted({ toolCalls: [{ name: "open_gate" }] }, { text: "never" }),
      });
      c.request("session/respond", { session: "w", prompt: "x" }, 1);
      await c.toolCall(1);
      c.request("shutdown", {}, 2);
      await c.ended;
      assert.deepEqual(c.messages.slice(-3).map((m) => `${kind(m)}:${m.id ?? ""}`), [
        "tool/cancel:",
        "error:1",
        "response:2",
      ]);
      assert.deepEqual((await c.response(2)).result, {});
    },
  },
];

/** Registers every case as a test over `transport`. */
export function runWireCases(transport: WireTransport): void {
  for (const wireCase of WIRE_CASES) {
    Deno.test(`${transport.name}: ${wireCase.name}`, async () => {
      const c = await transport.open();
      try {
        await wireCase.run(c);
      } finally {
        await c.close();
      }
    });
  }
}
