/**
 * The in-process transport moves messages as values, not text: each side gets objects of its own, equal to
 * what the JSON line would give. These cases pin that neither side can change what the other holds (a host
 * value passed in, a result, a notification, what the NPC methods hand over without a copy), that every
 * message is what its JSON text parses to, and that a message the fast path cannot copy goes as its line.
 * Each corruption check also runs over a transport that shares objects, and must see the corruption there.
 */
import assert from "node:assert/strict";
import {
  Bridge,
  type BridgeOptions,
  InProcessTransport,
  type JsonObject,
  type JsonRpcMessage,
  type JsonValue,
  type ScriptStep,
  type Transport,
} from "../../mod.ts";
import { BridgeEngine, type BridgeExtension, standardExtensions } from "../../engine.ts";
import type { EngineFactory } from "../../src/client/in_process.ts";

const quiet: BridgeOptions = { onWarning: () => {} };

/** Keeps the value it is given (as extensions may), returns it and notifies it: sharing would show. */
function boxExtension(): BridgeExtension {
  let kept: JsonValue = null;
  return {
    notificationMethods: ["box/changed"],
    register(registry) {
      registry.register("box/put", (ctx) => {
        kept = ctx.params.raw.value ?? null;
        ctx.notify("box/changed", { value: kept });
        return {};
      });
      registry.register("box/get", () => ({ value: kept }));
    },
  };
}

const withBox: EngineFactory = (send, onShutdown) =>
  new BridgeEngine({ extensions: [...standardExtensions(), boxExtension()], onShutdown }, send);

/**
 * The negative control: an in-process transport that hands every message over as it is, both ways (what
 * the transport must not do). The checks below must find the corruption through it.
 */
class SharingTransport implements Transport {
  onmessage?: (message: JsonValue) => void;
  onclose?: (reason?: Error) => void;
  onerror?: (error: Error) => void;
  readonly #factory: EngineFactory;
  #engine: BridgeEngine | null = null;
  #receive: ((message: JsonObject) => void) | null = null;
  #closed = false;

  constructor(factory: EngineFactory) {
    this.#factory = factory;
  }

  start(): Promise<void> {
    const send = (line: string) => this.#deliver(JSON.parse(line));
    const engine = this.#factory(send, () => queueMicrotask(() => this.close())) as BridgeEngine;
    this.#engine = engine;
    this.#receive = engine.connectInProcess(send, (message) => this.#deliver(message));
    return Promise.resolve();
  }

  send(message: JsonRpcMessage): Promise<void> {
    this.#receive!(message as unknown as JsonObject);
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#engine?.close();
      this.onclose?.();
    }
    return Promise.resolve();
  }

  #deliver(message: JsonValue): void {
    queueMicrotask(() => {
      if (!this.#closed) this.onmessage?.(message);
    });
  }
}

/** What the host could corrupt through the box: the value it passed, a result, a notification's params. */
async function corruptions(bridge: Bridge): Promise<string[]> {
  type Box = { value: { gold: number; bag: string[] } };
  const notified: Box["value"][] = [];
  bridge.onNotification("box/changed", (params) => notified.push((params as Box).value));
  const found: string[] = [];
  const intact = async () => {
    const { value } = await bridge.request<Box>("box/get");
    return value.gold === 60 && value.bag.length === 1;
  };
  const value = { gold: 60, bag: ["rope"] };
  await bridge.request("box/put", { value });
  value.gold = 1;
  value.bag.push("stolen");
  if (!await intact()) found.push("the value the host passed");
  const got = await bridge.request<Box>("box/get");
  got.value.gold = 2;
  if (!await intact()) found.push("a result");
  assert.equal(notified.length, 1);
  notified[0].gold = 3;
  if (!await intact()) found.push("a notification's params");
  return found;
}

Deno.test("in-process: the host cannot change what the engine holds, nor the engine what the host got", async () => {
  {
    await using bridge = await Bridge.open({ ...quiet, engine: withBox });
    assert.deepStrictEqual(await corruptions(bridge), []);
  }
  await using sharing = await Bridge.connect(new SharingTransport(withBox), quiet);
  assert.deepStrictEqual(await corruptions(sharing), [
    "the value the host passed",
    "a result",
    "a notification's params",
  ]);
});

Deno.test("in-process: what the fast path cannot copy goes as its line (toJSON, NaN, undefined, holes; BigInt throws)", async () => {
  await using bridge = await Bridge.open({ ...quiet, engine: withBox });
  const value = {
    at: new Date(0),
    n: NaN,
    skipped: undefined,
    list: [undefined, -0],
    nested: { inf: -Infinity },
  };
  await bridge.request("box/put", { value });
  const { value: kept } = await bridge.request<{ value: JsonValue }>("box/get");
  assert.deepStrictEqual(kept, {
    at: "1970-01-01T00:00:00.000Z",
    n: null,
    list: [null, 0],
    nested: { inf: null },
  });
  assert.deepStrictEqual(kept, JSON.parse(JSON.stringify(value)));
  await assert.rejects(bridge.request("box/put", { value: 1n }), TypeError);
});

/** Every object and array reachable from `value`. */
function containers(value: unknown, out: object[] = []): object[] {
  if (typeof value === "object" && value !== null) {
    out.push(value);
    for (const item of Object.values(value)) containers(item, out);
  }
  return out;
}

/**
 * Records every message as the client gets it (its JSON text at that moment) and checks that it is what
 * its JSON text parses to; with `vandalize`, then changes every object and array in it, as a careless host
 * could once it has them.
 */
class Recording implements Transport {
  onmessage?: (message: JsonValue) => void;
  onclose?: (reason?: Error) => void;
  onerror?: (error: Error) => void;
  readonly lines: string[] = [];
  readonly #inner: Transport;
  readonly #vandalize: boolean;

  constructor(inner: Transport, vandalize: boolean) {
    this.#inner = inner;
    this.#vandalize = vandalize;
    inner.onclose = (reason) => this.onclose?.(reason);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message) => {
      const line = JSON.stringify(message);
      this.lines.push(line);
      assert.deepStrictEqual(message, JSON.parse(line), `not what its JSON text parses to: ${line}`);
      this.onmessage?.(message);
      if (!this.#vandalize) return;
      for (const c of containers(message)) {
        if (Array.isArray(c)) c.push("vandal");
        else (c as Record<string, unknown>).vandal = true;
      }
    };
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  send(message: JsonRpcMessage): Promise<void> {
    return this.#inner.send(message);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/**
 * Two NPC turns (the second streamed) with a world write of an object seen by two subscriptions and a
 * client tool, then the save and the world: the lines the client got, made comparable.
 */
async function npcRun(transport: Recording): Promise<string[]> {
  {
    await using bridge = await Bridge.connect(transport, quiet);
    const world = await bridge.createWorld({ stats: { hp: 10 } }, { world: "town" });
    await world.subscribe("stats", () => {});
    await world.subscribe("", () => {});
    const look = bridge.tool({
      name: "look",
      description: "What the NPC sees.",
      parameters: { type: "object", properties: { at: { type: "array", items: { type: "string" } } } },
    }, ({ at }) => ({ seen: [...(at ?? [])] })); // its own array: the host's to give
    const reply = (line: string): ScriptStep => ({
      json: { emotion: "neutral", line, player_options: ["Yes.", "No.", "Maybe."], ends_conversation: false },
    });
    const npc = await bridge.createNpc({ name: "Gorm" }, {
      npc: "gorm",
      world,
      tools: [look],
      options: { worldWritable: ["stats"] },
      model: {
        type: "scripted",
        steps: [
          {
            toolCalls: [
              {
                name: "update_world_state",
                arguments: { path: "stats", value: '{"hp": 9, "tags": ["hurt"]}' },
              },
              { name: "look", arguments: { at: ["door"] } },
            ],
          },
          reply("Ouch."),
          { toolCalls: [{ name: "update_world_state", arguments: { path: "stats.hp", value: "8" } }] },
          reply("Again?"),
        ],
      },
    });
    await npc.talk("Hello.");
    await npc.talk("Hello again.", { onLine: () => {} });
    await npc.state();
    await world.snapshot();
  }
  // Call ids, transcript entry ids and durations differ from run to run.
  return transport.lines.map((line) =>
    line.replace(/"(call|scripted_call)_[A-Za-z0-9_]+"/g, '"call"')
      .replace(/"id":"[0-9a-f]+-[0-9]+"/g, '"id":"entry"')
      .replace(/"durationSeconds":[0-9.e-]+/g, '"durationSeconds":0')
  );
}

Deno.test("in-process: what the NPC and world methods hand over without a copy is plain JSON and shares nothing", async () => {
  const clean = await npcRun(new Recording(new InProcessTransport(), false));
  assert.ok(clean.some((line) => line.includes('"method":"npc/event"')), "the streamed turn sent events");
  assert.equal(
    clean.filter((line) => line.includes('"newValue":{"hp":9')).length,
    2,
    "one change, two subscriptions",
  );
  assert.deepStrictEqual(await npcRun(new Recording(new InProcessTransport(), true)), clean);
});

Deno.test("in-process: a handed-over value that is also kept shows through the same check", async () => {
  // The negative control of the case above: a method that hands over what it keeps (what handOver forbids).
  const leaky: EngineFactory = (send, onShutdown) =>
    new BridgeEngine({
      onShutdown,
      extensions: [...standardExtensions(), {
        register(registry) {
          const kept = { gold: 60, bag: ["rope"] };
          registry.register("leak/get", (ctx) => ctx.handOver({ value: kept }));
        },
      }],
    }, send);
  const run = async (vandalize: boolean) => {
    const transport = new Recording(new InProcessTransport(leaky), vandalize);
    {
      await using bridge = await Bridge.connect(transport, quiet);
      await bridge.request("leak/get");
      await bridge.request("leak/get");
    }
    return transport.lines;
  };
  const clean = await run(false);
  assert.equal(clean[2], '{"jsonrpc":"2.0","id":3,"result":{"value":{"gold":60,"bag":["rope"]}}}');
  assert.equal(
    (await run(true))[2],
    '{"jsonrpc":"2.0","id":3,"result":{"value":{"gold":60,"bag":["rope","vandal"],"vandal":true}}}', // the kept value,
  );
});

Deno.test("connectInProcess: only for the engine's own send, once, and not past an overridden receive", async () => {
  const send = (_line: string) => {};
  const engine = new BridgeEngine({}, send);
  assert.equal(engine.connectInProcess(() => {}, () => {}), null, "another send: the lines go on");
  assert.equal(engine.handsOver, false);
  const receive = engine.connectInProcess(send, () => {});
  assert.equal(typeof receive, "function");
  assert.equal(engine.handsOver, true);
  assert.equal(engine.connectInProcess(send, () => {}), null, "once");
  class Logging extends BridgeEngine {
    override receive(line: string): void {
      super.receive(line);
    }
  }
  assert.equal(new Logging({}, send).connectInProcess(send, () => {}), null, "receive is overridden");
  // A host that wraps the line callback keeps seeing every line.
  const lines: string[] = [];
  {
    await using bridge = await Bridge.open({
      ...quiet,
      engine: (send, onShutdown) =>
        new BridgeEngine({ onShutdown }, (line) => {
          lines.push(line);
          send(line);
        }),
    });
    await bridge.request("ping");
  }
  assert.deepStrictEqual(lines.map((line) => JSON.parse(line).id), [1, 2, 3]); // initialize, ping, shutdown
});
