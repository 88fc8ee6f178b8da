/**
 * The JSON-RPC peer on a scripted transport: what it sends for each situation (bridge requests it cannot
 * answer, handler failures, cancelled handlers), how responses and notifications are routed, and what
 * aborting and closing do to pending requests.
 */
import assert from "node:assert/strict";
import { BridgeError, type JsonRpcMessage, type JsonValue, Peer, type Transport } from "../../mod.ts";

/** A transport whose other side is the test: it records what is sent and delivers what the test says. */
class ScriptedTransport implements Transport {
  onmessage?: (message: JsonValue) => void;
  onclose?: (reason?: Error) => void;
  onerror?: (error: Error) => void;
  readonly sent: JsonRpcMessage[] = [];
  #waiters: Array<() => void> = [];
  closed = false;

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JsonRpcMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error("closed"));
    this.sent.push(message);
    for (const w of this.#waiters.splice(0)) w();
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.end();
    return Promise.resolve();
  }

  /** The bridge side ends the connection. */
  end(reason?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.(reason);
  }

  deliver(message: JsonValue): void {
    this.onmessage?.(message);
  }

  /** Waits until `n` messages have been sent. */
  async sentCount(n: number): Promise<JsonRpcMessage[]> {
    while (this.sent.length < n) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.sent;
  }
}

async function started(onError?: (e: Error) => void): Promise<{ peer: Peer; t: ScriptedTransport }> {
  const t = new ScriptedTransport();
  const peer = new Peer(t, onError ? { onError } : {});
  await peer.start();
  return { peer, t };
}

Deno.test("peer: a request is answered by its id; notifications with its requestId reach it first", async () => {
  const { peer, t } = await started();
  const seen: string[] = [];
  const result = peer.request("session/respond", { session: "s" }, {
    onNotification: (method, params) => seen.push(`${method} ${JSON.stringify(params.event)}`),
  });
  assert.deepEqual(t.sent, [{ jsonrpc: "2.0", id: 1, method: "session/respond", params: { session: "s" } }]);
  t.deliver({ jsonrpc: "2.0", method: "session/event", params: { requestId: 2, event: "other request" } });
  t.deliver({ jsonrpc: "2.0", method: "session/event", params: { requestId: 1, event: "mine" } });
  t.deliver({ jsonrpc: "2.0", id: 1, result: { text: "ok" } });
  assert.deepEqual(await result, { text: "ok" });
  assert.deepEqual(seen, ['session/event "mine"']);
  await peer.close();
});

Deno.test("peer: an error response rejects with a BridgeError rebuilt from code, data.code and data", async () => {
  const { peer, t } = await started();
  const call = peer.request("npc/talk", { npc: "x" });
  t.deliver({
    jsonrpc: "2.0",
    id: 1,
    error: { code: -32050, message: "No NPC 'x'.", data: { code: "npc_not_found", npc: "x" } },
  });
  await assert.rejects(call, (e) => {
    assert.ok(e instanceof BridgeError);
    assert.deepEqual([e.code, e.dataCode, e.message, e.data], [-32050, "npc_not_found", "No NPC 'x'.", {
      npc: "x",
    }]);
    return true;
  });
  await peer.close();
});

Deno.test("peer: bridge requests: handler result, unknown method -32601, a throw -32603, a BridgeError its code", async () => {
  const { peer, t } = await started();
  peer.setRequestHandler("tool/call", (params) => {
    if (params.mode === "ok") return { output: "fine" };
    if (params.mode === "bridge") throw BridgeError.of("busy", "Later.");
    // The spec's own example of a tool's error reply: any code is the client's to choose.
    if (params.mode === "gate") throw new BridgeError(-32000, "gate_offline", "Gate subsystem offline");
    throw new TypeError("broken handler");
  });
  t.deliver({ jsonrpc: "2.0", id: "t-1", method: "tool/call", params: { mode: "ok" } });
  t.deliver({ jsonrpc: "2.0", id: "t-2", method: "tool/call", params: { mode: "bridge" } });
  t.deliver({ jsonrpc: "2.0", id: "t-3", method: "tool/call", params: { mode: "type" } });
  t.deliver({ jsonrpc: "2.0", id: "t-4", method: "debug/eval", params: {} });
  t.deliver({ jsonrpc: "2.0", id: "t-5", method: "tool/call", params: { mode: "gate" } });
  const sent = await t.sentCount(5);
  const byId = Object.fromEntries(sent.map((m) => ["id" in m ? String(m.id) : "", m]));
  assert.deepEqual(byId["t-1"], { jsonrpc: "2.0", id: "t-1", result: { output: "fine" } });
  assert.deepEqual(byId["t-2"], {
    jsonrpc: "2.0",
    id: "t-2",
    error: { code: -32010, message: "Later.", data: { code: "busy" } },
  });
  assert.deepEqual(byId["t-3"], {
    jsonrpc: "2.0",
    id: "t-3",
    error: { code: -32603, message: "broken handler", data: { code: "internal_error" } },
  });
  assert.deepEqual(byId["t-4"], {
    jsonrpc: "2.0",
    id: "t-4",
    error: { code: -32601, message: "This client does not handle 'debug/eval'." },
  });
  assert.deepEqual(byId["t-5"], {
    jsonrpc: "2.0",
    id: "t-5",
    error: { code: -32000, message: "Gate subsystem offline", data: { code: "gate_offline" } },
  });
  await peer.close();
});

Deno.test("peer: cancelIncoming aborts a handler's signal and its reply is never sent", async () => {
  const { peer, t } = await started();
  let reason: unknown;
  const finished = Promise.withResolvers<void>();
  peer.setRequestHandler("tool/call", (_params, request) =>
    new Promise((resolve) => {
      request.signal.addEventListener("abort", () => {
        reason = request.signal.reason;
        resolve("late output");
        finished.resolve();
      });
    }));
  t.deliver({ jsonrpc: "2.0", id: "t-1", method: "tool/call", params: {} });
  assert.equal(peer.cancelIncoming("t-1", "Tool 'x' timed out."), true);
  assert.equal(peer.cancelIncoming("t-1"), false);
  await finished.promise;
  // One more message: a late reply would have been sent before it.
  const ping = peer.request("ping");
  t.deliver({ jsonrpc: "2.0", id: 1, result: {} });
  await ping;
  assert.ok(reason instanceof BridgeError && reason.message === "Tool 'x' timed out.");
  assert.deepEqual(t.sent.map((m) => "method" in m ? m.method : m.id), ["ping"]);
  await peer.close();
});

Deno.test("peer: an aborted request without onAbort rejects at once; its late response is ignored", async () => {
  const errors: Error[] = [];
  const { peer, t } = await started((e) => errors.push(e));
  const controller = new AbortController();
  const call = peer.request("world/get", { world: "w" }, { signal: controller.signal });
  controller.abort();
  await assert.rejects(call, (e) => e instanceof BridgeError && e.dataCode === "cancelled");
  t.deliver({ jsonrpc: "2.0", id: 1, result: {} });
  assert.equal(peer.pendingRequests, 0);
  assert.deepEqual(errors, []);
  await assert.rejects(
    peer.request("ping", {}, { signal: controller.signal }),
    /'ping' was not sent: its signal was already aborted/,
  );
  await peer.close();
});

Deno.test("peer: a timed-out request without onAbort says the bridge was not asked to stop, not that it was cancelled", async () => {
  // `decision/decide` has no cancel method: the bridge goes on deciding, and a message saying the decision
  // "was cancelled" let a game loop believe the model was free for the next one.
  const { peer, t } = await started();
  const call = peer.request("decision/decide", {}, { timeoutMs: 1 });
  await assert.rejects(call, (e) => {
    assert.ok(e instanceof BridgeError);
    assert.equal(e.dataCode, "timeout");
    assert.equal(
      e.message,
      "'decision/decide' did not finish within 1 ms; its response will be ignored (the bridge was not asked to stop it).",
    );
    return true;
  });
  t.deliver({ jsonrpc: "2.0", id: 1, result: {} });
  assert.equal(peer.pendingRequests, 0);
  await peer.close();
});

Deno.test("peer: with onAbort, an aborted or timed-out request waits for the bridge's answer", async () => {
  const { peer, t } = await started();
  const controller = new AbortController();
  const aborts: string[] = [];
  const call = peer.request("npc/talk", {}, {
    signal: controller.signal,
    onAbort: (reason) => aborts.push(reason.dataCode),
  });
  controller.abort();
  assert.deepEqual(aborts, ["cancelled"]);
  assert.equal(peer.pendingRequests, 1);
  t.deliver({
    jsonrpc: "2.0",
    id: 1,
    error: { code: -32009, message: "Cancelled.", data: { code: "cancelled" } },
  });
  await assert.rejects(call, (e) => e instanceof BridgeError && e.dataCode === "cancelled");

  const timedOut = Promise.withResolvers<void>();
  const slow = peer.request("npc/talk", {}, {
    timeoutMs: 1,
    onAbort: (reason) => {
      aborts.push(reason.dataCode);
      timedOut.resolve();
    },
  });
  await timedOut.promise;
  assert.deepEqual(aborts, ["cancelled", "timeout"]);
  t.deliver({
    jsonrpc: "2.0",
    id: 2,
    error: { code: -32009, message: "Cancelled.", data: { code: "cancelled" } },
  });
  await assert.rejects(slow, (e) => {
    assert.ok(e instanceof BridgeError);
    assert.equal(e.dataCode, "timeout");
    assert.equal(e.message, "'npc/talk' did not finish within 1 ms; it was cancelled.");
    assert.ok(e.cause instanceof BridgeError && e.cause.dataCode === "cancelled");
    return true;
  });
  await peer.close();
});

Deno.test("peer: with onAbort, a request whose cancel the bridge never answers (a frozen bridge) still settles", async () => {
  // A bridge process stopped (SIGSTOP, a debugger) or wedged answers nothing, not even the cancel: a turn's
  // timeoutMs must still give the game loop its control back.
  const { peer, t } = await started();
  const controller = new AbortController();
  const walkedAway = peer.request("npc/talk", {}, { signal: controller.signal, onAbort: () => {} });
  const timedOut = peer.request("session/respond", {}, { timeoutMs: 1, onAbort: () => {} });
  controller.abort();
  await assert.rejects(walkedAway, (e) => {
    assert.ok(e instanceof BridgeError);
    assert.equal(e.dataCode, "cancelled");
    assert.match(
      e.message,
      /^'npc\/talk' was aborted, and the bridge did not answer within 5000 ms after it was asked to cancel it/,
    );
    return true;
  });
  await assert.rejects(timedOut, (e) => {
    assert.ok(e instanceof BridgeError);
    assert.equal(e.dataCode, "timeout");
    assert.match(
      e.message,
      /^'session\/respond' did not finish within 1 ms, and the bridge did not answer within 5000 ms/,
    );
    return true;
  });
  assert.equal(peer.pendingRequests, 0);
  // A late answer is ignored.
  t.deliver({
    jsonrpc: "2.0",
    id: 1,
    error: { code: -32009, message: "Cancelled.", data: { code: "cancelled" } },
  });
  await peer.close();
});

Deno.test("peer: a callback that throws fails its request; listener errors and junk go to onError", async () => {
  const errors: string[] = [];
  const { peer, t } = await started((e) => errors.push(e.message));
  const call = peer.request("session/respond", {}, {
    onNotification: () => {
      throw new Error("bad callback");
    },
  });
  peer.onNotification("world/changed", () => {
    throw new Error("bad listener");
  });
  t.deliver({ jsonrpc: "2.0", method: "session/event", params: { requestId: 1 } });
  t.deliver({ jsonrpc: "2.0", method: "world/changed", params: {} });
  t.deliver({ hello: "world" });
  t.deliver({ jsonrpc: "2.0", id: 1, result: {} });
  await assert.rejects(call, /bad callback/);
  assert.deepEqual(errors, [
    "bad listener",
    "Ignoring a message from the bridge: not a JSON-RPC 2.0 object.",
  ]);
  await peer.close();
});

Deno.test("peer: when the transport ends, pending requests reject with -32023 naming the method and reason", async () => {
  const { peer, t } = await started();
  const aborted = Promise.withResolvers<unknown>();
  peer.setRequestHandler(
    "tool/call",
    (_p, request) =>
      new Promise(() =>
        request.signal.addEventListener("abort", () => aborted.resolve(request.signal.reason))
      ),
  );
  t.deliver({ jsonrpc: "2.0", id: "t-1", method: "tool/call", params: {} });
  const call = peer.request("npc/talk", {});
  let closedWith: Error | undefined;
  peer.onclose = (reason) => closedWith = reason;
  t.end(new Error("The bridge process exited (exit code 3)."));
  await assert.rejects(call, (e) => {
    assert.ok(e instanceof BridgeError);
    assert.equal(e.code, -32023);
    assert.equal(
      e.message,
      "The bridge stopped before answering 'npc/talk': The bridge process exited (exit code 3).",
    );
    return true;
  });
  assert.equal(
    String(await aborted.promise),
    "BridgeError: The bridge stopped before the tool call was answered: The bridge process exited (exit code 3).",
  );
  assert.equal(closedWith?.message, "The bridge process exited (exit code 3).");
  await assert.rejects(peer.request("ping"), /The bridge is closed; 'ping' was not sent\./);
  await assert.rejects(peer.notify("session/cancel", {}), /closed/);
  await peer.close();
});

Deno.test("peer: a request before start is refused", async () => {
  const peer = new Peer(new ScriptedTransport());
  await assert.rejects(peer.request("ping"), /not started; 'ping' was not sent/);
  await peer.close();
  assert.equal(peer.closed, true);
});

Deno.test("peer: a bridge request naming a pending request's id goes to that request's onRequest; others to the method's handler", async () => {
  const { peer, t } = await started();
  peer.setRequestHandler("tool/call", () => ({ output: "global" }));
  const turn = peer.request("session/respond", { session: "s" }, {
    onRequest: (params, request) => ({ output: `mine: ${JSON.stringify(params.call)} as ${request.id}` }),
  });
  t.deliver({ jsonrpc: "2.0", id: "t-1", method: "tool/call", params: { requestId: 1, call: "a" } });
  t.deliver({ jsonrpc: "2.0", id: "t-2", method: "tool/call", params: { requestId: 7, call: "b" } });
  t.deliver({ jsonrpc: "2.0", id: "t-3", method: "tool/call", params: { call: "c" } });
  const sent = await t.sentCount(4);
  const byId = (m: JsonRpcMessage) => "id" in m ? String(m.id) : "";
  assert.deepEqual(sent.slice(1).sort((a, b) => byId(a).localeCompare(byId(b))), [
    { jsonrpc: "2.0", id: "t-1", result: { output: 'mine: "a" as t-1' } },
    { jsonrpc: "2.0", id: "t-2", result: { output: "global" } },
    { jsonrpc: "2.0", id: "t-3", result: { output: "global" } },
  ]);
  t.deliver({ jsonrpc: "2.0", id: 1, result: {} });
  await turn;
  // Once the request has settled, its onRequest is gone: a late tool/call goes to the method's handler.
  t.deliver({ jsonrpc: "2.0", id: "t-4", method: "tool/call", params: { requestId: 1, call: "d" } });
  assert.deepEqual((await t.sentCount(5))[4], { jsonrpc: "2.0", id: "t-4", result: { output: "global" } });
  await peer.close();
});
