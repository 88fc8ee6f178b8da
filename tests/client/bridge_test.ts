/**
 * The typed client, one suite over every transport (the in-process engine, the real `cli.ts stdio`
 * process, and the `/rpc` WebSocket of an `oam serve` server): client tools (success, throw, timeout, cancel), streaming order (callbacks and iterators), NPC
 * talk/bark/state/restore, world subscriptions, decisions, typed content, errors as BridgeError, and
 * close() in the middle of a turn. Every case opens its own bridge and closes it; the sanitizers check that
 * nothing (timer, process, stream) is left behind.
 */
import assert from "node:assert/strict";
import {
  BridgeError,
  type NpcEvent,
  type ScriptedModelSpec,
  type ScriptStep,
  type SessionEvent,
  type WorldChange,
} from "../../mod.ts";
import { collecting, TRANSPORTS } from "./transports.ts";

function scripted(...steps: ScriptStep[]): ScriptedModelSpec {
  return { type: "scripted", steps };
}

/** A promise and the function that resolves it (for "the handler has started"). */
function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  return { promise, resolve };
}

function isBridgeError(code: number, dataCode: string, message?: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof BridgeError, `expected a BridgeError, got ${error}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.dataCode, dataCode, error.message);
    if (message) assert.match(error.message, message);
    return true;
  };
}

const ITEM_SCHEMA = {
  type: "object",
  properties: { item: { type: "string" } },
  required: ["item"],
} as const;

for (const t of TRANSPORTS) {
  const quiet = collecting().options;

  Deno.test(`${t.name}: a tool's return value is its output, a throw an error output; ctx names the turn`, async () => {
    await using bridge = await t.open(quiet);
    const seen: unknown[] = [];
    const stock = bridge.tool({
      name: "check_stock",
      description: "How many of an item the shop has.",
      parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
    }, async ({ item }, ctx) => {
      const name: string = item; // typed from the schema
      seen.push({ item: name, session: ctx.session, call: ctx.call.name, requestId: typeof ctx.requestId });
      await Promise.resolve();
      return { item, count: 3 };
    });
    bridge.tool({ name: "light_fuse", description: "Always fails." }, () => {
      throw new Error("The powder is wet.");
    });
    const session = await bridge.createSession({
      session: "shop",
      tools: [stock, "light_fuse"],
      model: scripted(
        {
          toolCalls: [
            { name: "check_stock", arguments: { item: "ale" } },
            { name: "light_fuse", arguments: {} },
          ],
        },
        { template: "{toolOutputs}" },
      ),
    });
    const result = await session.respond("Ale?");
    const records = result.toolCalls.map((r) => [r.call.name, r.output, r.isError]).sort();
    assert.deepEqual(records, [
      ["check_stock", { item: "ale", count: 3 }, false],
      ["light_fuse", "The powder is wet.", true],
    ]);
    assert.match(result.text, /\{"item":"ale","count":3\}/);
    assert.match(result.text, /The powder is wet\./);
    assert.deepEqual(seen, [{ item: "ale", session: "shop", call: "check_stock", requestId: "number" }]);
  });

  Deno.test(`${t.name}: a handler's bug (a TypeError) is also a warning with its stack; a meant throw is not`, async () => {
    const { warnings, options } = collecting();
    await using bridge = await t.open(options);
    const inventory: Record<string, { count: number }> = {};
    const count = bridge.tool({ name: "count_item", description: "How many." }, () => inventory.ale.count);
    const fuse = bridge.tool({ name: "light_fuse", description: "Always fails." }, () => {
      throw new Error("The powder is wet.");
    });
    const session = await bridge.createSession({
      tools: [count, fuse],
      model: scripted(
        { toolCalls: [{ name: "count_item", arguments: {} }, { name: "light_fuse", arguments: {} }] },
        { text: "Done." },
      ),
    });
    const result = await session.respond("Count.");
    const outputs = result.toolCalls.map((r) => [r.call.name, r.isError]).sort();
    assert.deepEqual(outputs, [["count_item", true], ["light_fuse", true]]);
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.match(
      warnings[0],
      /^Tool 'count_item' threw a TypeError; the model got its message as an error output\. TypeError: Cannot read properties of undefined \(reading 'count'\)\n\s+at /,
    );
    assert.match(warnings[0], /bridge_test\.ts:\d+:\d+/);
  });

  Deno.test(`${t.name}: a tool passed as a bare definition, with no handler, is a warning when it is called`, async () => {
    const { warnings, options } = collecting();
    await using bridge = await t.open(options);
    const npc = await bridge.createNpc({ name: "Hilda" }, {
      // a definition (as a persona file holds it) that was never given a handler with bridge.tool
      tools: [{ name: "give_item", description: "Hand over an item.", parameters: ITEM_SCHEMA }],
      model: scripted(
        { toolCalls: [{ name: "give_item", arguments: { item: "key" } }] },
        { toolCalls: [{ name: "give_item", arguments: { item: "ale" } }] },
        {
          json: {
            emotion: "happy",
            line: "There.",
            player_options: ["a", "b", "c"],
            ends_conversation: false,
          },
        },
      ),
    });
    const reply = await npc.talk("A room, please.");
    assert.deepEqual(reply.toolCalls.map((r) => [r.output, r.isError]), [
      ["No handler for tool 'give_item' in this client.", true],
      ["No handler for tool 'give_item' in this client.", true],
    ]);
    assert.deepEqual(warnings, [
      "Tool 'give_item' was called, but this client has no handler for it, so the model got an error " +
      "output: register it with bridge.tool(definition, handler) and pass the handle, or its name, in 'tools'.",
    ]);
  });

  Deno.test(`${t.name}: an NPC restored in a new bridge without its tool's handler is told to register it there`, async () => {
    const definition = { name: "give_item", description: "Hand over an item.", parameters: ITEM_SCHEMA };
    const steps = [
      { toolCalls: [{ name: "give_item", arguments: { item: "key" } }] },
      {
        json: { emotion: "happy", line: "There.", player_options: ["a", "b", "c"], ends_conversation: false },
      },
    ];
    let save;
    {
      await using bridge = await t.open(quiet);
      const tool = bridge.tool(definition, ({ item }) => `gave ${item}`);
      const npc = await bridge.createNpc({ name: "Hilda" }, {
        npc: "hilda",
        tools: [tool],
        model: scripted(...steps),
      });
      assert.deepEqual((await npc.talk("The key?")).toolCalls.map((r) => r.output), ["gave key"]);
      save = await npc.state();
    }
    const { warnings, options } = collecting();
    await using bridge = await t.open(options);
    const npc = await bridge.restoreNpc(save, { model: scripted(...steps) }); // the save's tools: definitions
    const reply = await npc.talk("The key?");
    assert.deepEqual(reply.toolCalls.map((r) => [r.output, r.isError]), [
      ["No handler for tool 'give_item' in this client.", true],
    ]);
    assert.deepEqual(warnings, [
      "Tool 'give_item' was called, but this client has no handler for it, so the model got an error " +
      "output: NPC 'hilda' was restored from a save, which holds its tools' definitions but not their handlers: " +
      "register each with bridge.tool(definition, handler) in the bridge it is restored in.",
    ]);
  });

  Deno.test(`${t.name}: a tool timeout aborts the handler's signal and the model sees the timeout`, async () => {
    await using bridge = await t.open(quiet);
    const aborted = signal<string>();
    bridge.tool(
      { name: "raise_bridge", description: "Slow.", timeoutSeconds: 0.05 },
      (_args, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            aborted.resolve(ctx.signal.reason instanceof Error ? ctx.signal.reason.message : "?");
            resolve("too late");
          });
        }),
    );
    const session = await bridge.createSession({
      tools: ["raise_bridge"],
      model: scripted({ toolCalls: [{ name: "raise_bridge", arguments: {} }] }, { template: "{toolOutput}" }),
    });
    const result = await session.respond("Raise it.");
    assert.equal(result.toolCalls[0].isError, true);
    assert.match(String(result.toolCalls[0].output), /timed out/);
    assert.match(await aborted.promise, /raise_bridge.*timed out/);
  });

  Deno.test(`${t.name}: aborting a turn mid-tool cancels it (-32009) and aborts the handler`, async () => {
    await using bridge = await t.open(quiet);
    const started = signal();
    const aborted = signal<unknown>();
    bridge.tool({ name: "wait_for_guard", description: "Waits." }, (_args, ctx) => {
      started.resolve();
      return new Promise((_, reject) => {
        ctx.signal.addEventListener("abort", () => {
          aborted.resolve(ctx.signal.reason);
          reject(ctx.signal.reason);
        });
      });
    });
    const npc = await bridge.createNpc({ name: "Gate" }, {
      tools: ["wait_for_guard"],
      options: { groundingTool: "wait_for_guard" },
      model: scripted({ toolCalls: [{ name: "wait_for_guard", arguments: {} }] }),
    });
    const controller = new AbortController();
    const turn = npc.talk("Open up.", { signal: controller.signal });
    await started.promise;
    controller.abort();
    await assert.rejects(turn, isBridgeError(-32009, "cancelled"));
    const reason = await aborted.promise;
    assert.ok(reason instanceof BridgeError && reason.dataCode === "cancelled", String(reason));
    // The NPC still works afterwards (its queue was cancelled, not broken).
    assert.equal((await bridge.listNpcs())[0].busy, false);
  });

  Deno.test(`${t.name}: timeoutMs cancels a turn and rejects with -32024`, async () => {
    await using bridge = await t.open(quiet);
    const session = await bridge.createSession({ model: scripted({ text: "Too slow.", delayMs: 60_000 }) });
    await assert.rejects(
      session.respond("Hurry.", { timeoutMs: 50 }),
      isBridgeError(-32024, "timeout", /'session\/respond' did not finish within 50 ms/),
    );
    assert.deepEqual((await bridge.listSessions()).map((s) => s.busy), [false]);
  });

  Deno.test(`${t.name}: callbacks see every event in wire order, tool calls in between, before the result`, async () => {
    await using bridge = await t.open(quiet);
    const log: string[] = [];
    bridge.tool({ name: "check_stock", description: "Stock.", parameters: ITEM_SCHEMA }, ({ item }) => {
      log.push(`tool ${item}`);
      return 3;
    });
    const session = await bridge.createSession({
      tools: ["check_stock"],
      model: scripted(
        { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
        { text: "Three ales.", chunks: 3 },
      ),
    });
    const result = await session.respond("Ale?", {
      onEvent: (event: SessionEvent) => log.push(`event ${event.type}`),
      onText: (delta, text, isReset) => log.push(`text ${delta}|${text}|${isReset}`),
    });
    log.push(`result ${result.text}`);
    assert.deepEqual(log, [
      "event modelStep",
      "event toolCallStarted",
      "tool ale",
      "event toolCallCompleted",
      "event modelStep",
      "event text",
      "text Thre|Thre|false",
      "event text",
      "text e al|Three al|false",
      "event text",
      "text es.|Three ales.|false",
      "result Three ales.",
    ]);
  });

  Deno.test(`${t.name}: iterators yield a turn's events in order, then end (or throw its error)`, async () => {
    await using bridge = await t.open(quiet);
    const npc = await bridge.createNpc({ name: "Gorm" }, {
      model: scripted(
        { text: "[proud] Finest steel in the valley.", chunks: 4 },
        { error: "guardrail_violation", message: "Blocked." },
      ),
      options: { replyFormat: "text", fallbackOnGuardrail: false },
    });
    const turn = npc.talkStream("Nice sword.");
    const events: NpcEvent[] = [];
    for await (const event of turn) events.push(event);
    const reply = await turn.result;
    assert.deepEqual(events[0], { type: "emotion", emotion: "proud" });
    const line = events.map((e) => e.type === "lineDelta" ? e.delta : e.type === "lineReset" ? "<reset>" : "")
      .join("");
    assert.equal(line, reply.line);
    assert.equal(reply.line, "Finest steel in the valley.");
    assert.ok(events.filter((e) => e.type === "lineDelta").length > 1, JSON.stringify(events));

    const failing = npc.talkStream("Again.");
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const event of failing) seen.push(event.type);
    }, isBridgeError(-32002, "guardrail_violation", /Blocked\./));
    await assert.rejects(failing.result, isBridgeError(-32002, "guardrail_violation"));

    const session = await bridge.createSession({ model: scripted({ text: "Halt.", chunks: 2 }) });
    const stream = session.respondStream("Hello");
    const types: string[] = [];
    for await (const event of stream) types.push(event.type === "text" ? `text:${event.delta}` : event.type);
    assert.deepEqual(types, ["modelStep", "text:Hal", "text:t."]);
    assert.equal((await stream.result).text, "Halt.");
  });

  Deno.test(`${t.name}: NPC talk, bark, state, restore`, async () => {
    await using bridge = await t.open(quiet);
    const world = await bridge.createWorld({ player: { gold: 60 } }, { world: "village" });
    const gorm = await bridge.createNpc({ name: "Gorm", role: "the village blacksmith" }, {
      npc: "gorm",
      world,
      memory: { facts: ["Aria likes axes."] },
      options: { memoryTools: ["rememberFact"], worldWritable: ["player.gold"], playerOptionCount: 2 },
      model: scripted(
        { toolCalls: [{ name: "remember_fact", arguments: { fact: "Aria bought a sword." } }] },
        {
          json: {
            emotion: "proud",
            line: "Finest steel.",
            player_options: ["Thanks.", "Bye."],
            ends_conversation: false,
          },
        },
        { text: "Rain again. Good for quenching." },
      ),
    });
    assert.deepEqual(gorm.tools, ["read_world_state", "update_world_state", "remember_fact"]);
    const emotions: string[] = [];
    const lines: string[] = [];
    const reply = await gorm.talk("A sword, please.", {
      context: "Aria holds 60 gold.",
      onEmotion: (e) => emotions.push(e),
      onLine: (_delta, line) => lines.push(line),
    });
    assert.equal(reply.npc, "gorm");
    assert.equal(reply.emotion, "proud");
    assert.equal(reply.line, "Finest steel.");
    assert.deepEqual(reply.playerOptions, ["Thanks.", "Bye."]);
    assert.equal(reply.endsConversation, false);
    assert.equal(reply.isFallback, false);
    assert.equal(reply.relationship, 0);
    assert.equal(reply.toolCalls[0].call.name, "remember_fact");
    assert.deepEqual(emotions, ["proud"]);
    assert.equal(lines.at(-1), "Finest steel.");
    assert.equal(await gorm.bark("It rains."), "Rain again. Good for quenching.");

    const save = await gorm.state();
    assert.equal(save.npc, "gorm");
    assert.equal(save.world, "village");
    assert.deepEqual(save.memory.facts, ["Aria likes axes.", "Aria bought a sword."]);

    const restored = await gorm.restore(save, {
      model: scripted({
        json: {
          emotion: "amused",
          line: "Back again?",
          player_options: ["Yes.", "No."],
          ends_conversation: false,
        },
      }),
    });
    assert.equal(restored.id, "gorm");
    assert.equal((await restored.talk("Hello.")).line, "Back again?");
    assert.deepEqual((await restored.state()).memory.facts, ["Aria likes axes.", "Aria bought a sword."]);
    const copy = await bridge.restoreNpc(save, { npc: "gorm2", world: null });
    assert.equal(copy.id, "gorm2");
    assert.deepEqual((await bridge.listNpcs()).map((n) => [n.npc, n.world]), [["gorm", "village"], [
      "gorm2",
      null,
    ]]);
    await copy.update({ persona: { role: "the apprentice" } });
    assert.equal((await copy.state()).persona.role, "the apprentice");
    await copy.reset({ clearMemory: true });
    assert.deepEqual((await copy.state()).memory.facts, []);
    assert.equal(await copy.cancel(), 0);
    await copy.delete();
    assert.deepEqual((await bridge.listNpcs()).map((n) => n.npc), ["gorm"]);
  });

  Deno.test(`${t.name}: world subscribe, changes from requests and NPC tools, unsubscribe`, async () => {
    await using bridge = await t.open(quiet);
    const world = await bridge.createWorld({ player: { gold: 60 }, shop: { swords: 3 } }, {
      world: "village",
    });
    const changes: WorldChange[] = [];
    const subscription = await world.subscribe("player", (change) => changes.push(change));
    assert.equal(subscription.path, "player");
    assert.equal(await world.set("player.gold", 45), 1);
    assert.deepEqual(changes, [
      { world: "village", subscription: subscription.id, path: "player.gold", oldValue: 60, newValue: 45 },
    ]);
    await world.set("shop.swords", 2);
    assert.equal(changes.length, 1);

    const npc = await bridge.createNpc({ name: "Gorm" }, {
      world,
      options: { worldWritable: ["player.gold"], playerOptionCount: 0 },
      model: scripted(
        { toolCalls: [{ name: "update_world_state", arguments: { path: "player.gold", value: "15" } }] },
        { json: { emotion: "happy", line: "Sold.", ends_conversation: false } },
      ),
    });
    let changesAtLine = -1;
    await npc.talk("I'll take one.", { onLine: () => changesAtLine = changes.length });
    assert.equal(changesAtLine, 2, "the world change arrives before the NPC's line");
    assert.deepEqual(changes[1], {
      world: "village",
      subscription: subscription.id,
      path: "player.gold",
      oldValue: 45,
      newValue: 15,
    });

    await subscription.unsubscribe();
    await world.set("player.gold", 10);
    assert.equal(changes.length, 2);
    assert.equal(await world.get<number>("player.gold"), 10);
    assert.equal(await world.get("player.name"), undefined);
    await world.merge({ name: "Aria" }, "player");
    assert.deepEqual(await world.remove("shop"), { removed: true, oldValue: { swords: 2 }, version: 6 });
    assert.deepEqual(await world.snapshot(), { player: { gold: 10, name: "Aria" } });
    assert.equal(await world.version(), 6);
    assert.deepEqual((await bridge.listWorlds()).map((w) => [w.world, w.npcs, w.subscriptions]), [
      ["village", 1, []],
    ]);
  });

  Deno.test(`${t.name}: a subscription its world's deletion ended is disposed quietly; removing nothing has no oldValue`, async () => {
    await using bridge = await t.open(quiet);
    const world = await bridge.createWorld({ day: 1 });
    const seen: unknown[] = [];
    {
      await using _watch = await world.subscribe("day", (change) => seen.push(change.newValue));
      await world.set("day", 2);
      await world.delete(); // ends the subscription on the bridge ({endedSubscriptions: 1})
    } // disposing it must not throw subscription_not_found
    assert.deepEqual(seen, [2]);
    const other = await bridge.createWorld({ day: 1 });
    const watch = await other.subscribe("", () => {});
    await other.delete();
    await watch.unsubscribe();
    await watch.unsubscribe();
    const third = await bridge.createWorld({ quest: null });
    assert.deepEqual(await third.remove("missing"), { removed: false, version: 0 });
    assert.deepEqual(await third.remove("quest"), { removed: true, oldValue: null, version: 1 });
  });

  Deno.test(`${t.name}: decisions have typed option ids; decideMany reports a failed decision in its place`, async () => {
    await using bridge = await t.open(quiet);
    const decision = await bridge.decide("A wolf blocks the path.", ["fight", {
      id: "flee",
      description: "Run",
    }], {
      actor: { name: "Snik", personality: "Timid." },
      model: scripted({ json: { reasoning: "Snik is timid.", choice: "flee", confidence: 80 } }),
    });
    const chosen: "fight" | "flee" = decision.optionID;
    // @ts-expect-error: "hide" is not one of the options
    const _never: "hide" = decision.optionID;
    assert.equal(chosen, "flee");
    assert.equal(decision.reasoning, "Snik is timid.");
    assert.equal(decision.confidence, 80);
    assert.equal(decision.isFallback, false);

    const only = await bridge.decide("Nothing to do.", ["wait"]);
    assert.deepEqual([only.optionID, only.confidence], ["wait", 100]);

    const results = await bridge.decideMany([
      { situation: "Ambush!", options: ["hide", "shout"] },
      { situation: "A troll wants to talk.", options: ["listen", "leave"] },
    ], {
      model: scripted(
        { json: { reasoning: "Quiet is safer.", choice: "hide", confidence: 60 } },
        { error: "guardrail_violation", message: "Blocked." },
      ),
    });
    const first = results[0];
    assert.ok(!("error" in first));
    assert.equal(first.optionID, "hide");
    const second = results[1];
    assert.ok("error" in second);
    isBridgeError(-32002, "guardrail_violation", /Blocked\./)(second.error);
    await assert.rejects(
      // @ts-expect-error: a fallback outside the options does not compile; a script without types still sends it
      bridge.decideMany([{ situation: "Bad.", options: ["a", "b"], fallbackOptionID: "c" }]),
      isBridgeError(-32602, "invalid_params", /fallbackOptionID/),
    );
    // The refused request's index is on the error: a program finds it among many.
    const crowd = Array.from(
      { length: 5 },
      (_, i) => ({ situation: `Goblin ${i}.`, options: ["hit", "run"] }),
    );
    crowd[3] = { situation: "Goblin 3.", options: ["hit", "hit"] };
    const refused = await bridge.decideMany(crowd).then(() => null, (error: unknown) => error);
    isBridgeError(-32602, "invalid_params", /^Duplicate option id 'hit' in 'requests\[3\]\.options'\.$/)(
      refused,
    );
    assert.equal((refused as BridgeError).data.index, 3);
  });

  Deno.test(`${t.name}: content and schema turns are typed by a generic parameter`, async () => {
    await using bridge = await t.open(quiet);
    interface Loot {
      name: string;
      gold: number;
    }
    const schema = {
      type: "object",
      properties: { name: { type: "string" }, gold: { type: "integer" } },
      required: ["name", "gold"],
    } as const;
    const loot = await bridge.generate<Loot>(schema, "A chest.", {
      model: scripted({ json: { gold: 12, name: "Ruby" } }),
    });
    const name: string = loot.name;
    assert.equal(name, "Ruby");
    assert.deepEqual(Object.keys(loot), ["name", "gold"], "keys in schema order");

    const session = await bridge.createSession({ model: scripted({ json: { name: "Sapphire", gold: 30 } }) });
    const result = await session.respond<Loot>("Another.", { schema });
    const gold: number | undefined = result.structured?.gold;
    assert.equal(gold, 30);
    assert.equal(result.text, '{"name":"Sapphire","gold":30}');
  });

  Deno.test(`${t.name}: errors are BridgeErrors with the protocol's codes`, async () => {
    await using bridge = await t.open(quiet);
    await assert.rejects(bridge.npc("nobody").talk("Hi."), (e) => {
      isBridgeError(-32050, "npc_not_found")(e);
      return e instanceof BridgeError && e.data.npc === "nobody";
    });
    await assert.rejects(bridge.world("nowhere").get("x"), isBridgeError(-32052, "world_not_found"));
    await assert.rejects(
      bridge.createNpc({ name: "" }),
      isBridgeError(-32602, "invalid_params", /persona\.name/),
    );
    await assert.rejects(bridge.request("quest/narrate", { quest: "q" }), (e) => {
      isBridgeError(-32601, "method_not_found")(e);
      return e instanceof BridgeError && e.data.method === "quest/narrate";
    });
    await bridge.createSession({ session: "a", model: "scripted" });
    await assert.rejects(bridge.createSession({ session: "a" }), isBridgeError(-32021, "session_exists"));
    await assert.rejects(
      bridge.createSession({ model: scripted({ error: "context_size_exceeded" }) }).then((s) =>
        s.respond("x")
      ),
      isBridgeError(-32004, "context_size_exceeded"),
    );
    await assert.rejects(
      bridge.createSession({ tools: ["never_registered"] }),
      /No tool named 'never_registered'/,
    );
  });

  Deno.test(`${t.name}: a BridgeError's stack names the script's line that made the call, not the client's internals`, async () => {
    await using bridge = await t.open(quiet);
    // An error a script does not catch is printed with its stack: it should point at the call that failed.
    async function guardDecides() {
      return await bridge.decide("A traveller comes.", ["let_pass", "raise_alarm"]); // the system model
    }
    const cases: Array<[string, () => Promise<unknown>]> = [
      ["decide", () => guardDecides()],
      ["talk", () => bridge.npc("nobody").talk("Hi.")],
      ["world get", () => bridge.world("nowhere").get("x")],
    ];
    for (const [name, call] of cases) {
      let error: unknown;
      try {
        await call();
      } catch (e) {
        error = e;
      }
      assert.ok(error instanceof BridgeError, `${name}: ${error}`);
      const stack = error.stack ?? "";
      assert.ok(stack.startsWith(`BridgeError: ${error.message}\n`), `${name}: ${stack}`);
      const frames = stack.split("\n").slice(1);
      assert.match(frames.join("\n"), /bridge_test\.ts:\d+:\d+/, `${name}: ${stack}`);
      // the first frame is not where the client rebuilt the error from the bridge's answer
      assert.doesNotMatch(
        frames[0] ?? "",
        /errors\.ts|peer\.ts|in_process\.ts|stdio\.ts|websocket/,
        `${name}: ${stack}`,
      );
    }
  });

  Deno.test(`${t.name}: session housekeeping: tools, instructions, note, compact, transcript, reset, delete`, async () => {
    await using bridge = await t.open(quiet);
    bridge.tool({ name: "ring_bell", description: "Rings the bell." }, () => "Dong.");
    const session = await bridge.createSession({
      session: "guard",
      instructions: "You are a guard.",
      model: scripted({ text: "One." }, { text: "Two." }, { text: "Three." }, { text: "They talked." }),
    });
    assert.deepEqual(session.warnings, []);
    assert.deepEqual(await session.setTools(["ring_bell", { name: "no_description" }]), [
      "no_description: no description; the model may not know when to call it.",
    ]);
    await session.setInstructions("You are a sleepy guard.");
    await session.setContextNote("It is night.");
    for (const prompt of ["a", "b", "c"]) await session.respond(prompt);
    assert.equal(await session.compact({ keepRecentTurns: 1 }), "They talked.");
    const transcript = await session.transcript();
    assert.equal(transcript.type, "FoundationModels.Transcript");
    const [info] = await bridge.listSessions();
    assert.deepEqual([info.session, info.instructions, info.tools, info.entries], [
      "guard",
      "You are a sleepy guard.",
      ["ring_bell", "no_description"],
      2,
    ]);
    const resumed = await bridge.createSession({ history: transcript, model: scripted({ text: "Back." }) });
    assert.equal((await bridge.listSessions()).find((s) => s.session === resumed.id)?.entries, 2);
    await session.reset();
    assert.equal((await bridge.listSessions())[0].entries, 0);
    assert.equal(await session.cancel(), 0);
    await session.delete();
    await resumed.delete();
    assert.deepEqual(await bridge.listSessions(), []);
    await assert.rejects(session.respond("Hello?"), isBridgeError(-32020, "session_not_found"));
  });

  Deno.test(`${t.name}: warnings in results reach onWarning (unknown options, a reply's unknown [tag])`, async () => {
    const { warnings, options } = collecting();
    await using bridge = await t.open(options);
    const npc = await bridge.createNpc({ name: "Gorm" }, {
      model: scripted({ text: "[sarcastic] Oh, wonderful." }),
      options: { replyFormat: "text", unknownOption: true } as never,
    });
    assert.deepEqual(npc.warnings, ["Unknown parameter 'options.unknownOption' was ignored."]);
    const reply = await npc.talk("Hello.");
    assert.equal(reply.emotion, "neutral");
    assert.equal(reply.warnings?.length, 1);
    assert.match(reply.warnings![0], /^The reply's emotion 'sarcastic' is not an emotion \(neutral, happy, /);
    assert.deepEqual(warnings, [...npc.warnings, ...reply.warnings!]);
    // A world path that names nothing (yet) is warned about, and allowed.
    warnings.length = 0;
    const world = await bridge.createWorld({ quests: { dragon: "open" } });
    const watch = await world.subscribe("quests.dragn", () => {});
    assert.equal(watch.path, "quests.dragn");
    assert.deepEqual(warnings, [
      `'path' names 'quests.dragn', which does not exist in world '${world.id}' (yet): world/changed is sent ` +
      "once it is created. 'quests' has keys: dragon.",
    ]);
  });

  Deno.test(`${t.name}: params that are not JSON reject the call with the encoding's TypeError`, async () => {
    await using bridge = await t.open(quiet);
    const world = await bridge.createWorld({});
    // @ts-expect-error: the types refuse a bigint too (JsonInput); this is what a JavaScript caller gets
    await assert.rejects(world.set("big", 10n), TypeError);
    assert.equal(await world.set("small", 10), 1, "the bridge still answers");
  });

  Deno.test(`${t.name}: a lone surrogate is refused before sending (TypeError naming it), never sent as a line the bridge cannot answer`, async () => {
    const errors: Error[] = [];
    await using bridge = await t.open({ ...quiet, onError: (e) => errors.push(e) });
    const half = "🙂".slice(0, 1); // text cut inside a surrogate pair
    const session = await bridge.createSession({ model: scripted({ text: "Aye." }) });
    await assert.rejects(session.respond(`Take the ${half}`), (error: unknown) => {
      assert.ok(error instanceof TypeError, String(error));
      assert.match(error.message, /^'params\.prompt' holds an unpaired UTF-16 surrogate/);
      return true;
    });
    const world = await bridge.createWorld({});
    await assert.rejects(world.set(`flag${half}`, 1), /'params\.path' holds an unpaired UTF-16 surrogate/);
    await assert.rejects(world.set("tags", ["ok", `bad${half}`]), /'params\.value\[1\]' holds an unpaired/);
    // Nothing reached the bridge: its next answers are the ones the next requests ask for.
    assert.equal((await session.respond("Well formed 🙂")).text, "Aye.");
    assert.equal(await world.set("flag", 1), 1);
    assert.deepEqual(errors, [], "no stray -32700 with id null came back");
  });

  Deno.test(`${t.name}: params nested deeper than the bridge reads are refused before sending (TypeError naming the param), never sent as a line the bridge cannot answer`, async () => {
    const errors: Error[] = [];
    await using bridge = await t.open({ ...quiet, onError: (e) => errors.push(e) });
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 120; i++) {
      schema = { type: "object", properties: { inner: schema }, required: ["inner"] };
    }
    const model = scripted({ json: { a: "x" } });
    await assert.rejects(bridge.generate(schema, "A riddle.", { model }), (error: unknown) => {
      assert.ok(error instanceof TypeError, String(error));
      assert.match(
        error.message,
        /^'params\.schema' nests arrays and objects deeper than the 100 levels the bridge reads/,
      );
      return true;
    });
    const world = await bridge.createWorld({});
    let deep: unknown = 1;
    for (let i = 0; i < 120; i++) deep = [deep];
    await assert.rejects(
      world.set("deep", deep as number),
      /^TypeError: 'params\.value' nests arrays and objects deeper/,
    );
    // Nothing reached the bridge: its next answers are the ones the next requests ask for.
    const flat = { type: "object", properties: { a: { type: "string" } } };
    assert.deepEqual(await bridge.generate(flat, "A riddle.", { model }), { a: "x" });
    assert.equal(await world.set("flag", 1), 1);
    assert.deepEqual(errors, [], "no stray -32700 with id null came back");
  });

  Deno.test(`${t.name}: a tool result with a lone surrogate becomes an error output at once (no wait for the tool timeout)`, async () => {
    const errors: Error[] = [];
    await using bridge = await t.open({ ...quiet, onError: (e) => errors.push(e) });
    bridge.tool({ name: "read_sign", description: "Reads the sign.", timeoutSeconds: 600 }, () => ({
      text: "Welcome 🙂".slice(0, 9),
    }));
    const session = await bridge.createSession({
      tools: ["read_sign"],
      model: scripted({ toolCalls: [{ name: "read_sign", arguments: {} }] }, { template: "{toolOutput}" }),
    });
    const result = await session.respond("What does it say?");
    assert.equal(result.toolCalls[0].isError, true);
    assert.match(
      String(result.toolCalls[0].output),
      /result could not be sent: 'result\.output\.text' holds an unpaired UTF-16 surrogate/,
    );
    assert.deepEqual(errors, []);
  });

  // Values in process have no line to measure.
  if (t.name !== "in-process") {
    Deno.test(`${t.name}: a message longer than the bridge reads (16 MiB) is refused before sending (-32600)`, async () => {
      const errors: Error[] = [];
      await using bridge = await t.open({ ...quiet, onError: (e) => errors.push(e) });
      const world = await bridge.createWorld({});
      const save = "x".repeat(16 * 1024 * 1024);
      await assert.rejects(
        world.set("save", save),
        isBridgeError(
          -32600,
          "invalid_message",
          /^The message is 16777\d{3} bytes, longer than the 16777216 bytes/,
        ),
      );
      assert.equal(await world.set("save", "short"), 1, "nothing was sent: the bridge answers the next one");
      assert.deepEqual(errors, []);
    });
  }

  Deno.test(`${t.name}: close() in the middle of a turn answers it, stops the bridge and leaves nothing behind`, async () => {
    const bridge = await t.open(quiet);
    const started = signal();
    bridge.tool({ name: "hold_door", description: "Holds." }, (_args, ctx) => {
      started.resolve();
      return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve("released")));
    });
    const holding = await bridge.createSession({
      tools: ["hold_door"],
      model: scripted({ toolCalls: [{ name: "hold_door", arguments: {} }] }),
    });
    const sleeping = await bridge.createSession({ model: scripted({ text: "Zzz.", delayMs: 60_000 }) });
    const turns = [holding.respond("Hold it."), sleeping.respond("Wake up.")];
    const outcomes = turns.map((turn) => turn.then(() => "answered", (error: unknown) => error));
    await started.promise;
    await bridge.close();
    for (const outcome of await Promise.all(outcomes)) isBridgeError(-32009, "cancelled")(outcome);
    assert.equal(bridge.closed, true);
    await assert.rejects(bridge.ping(), isBridgeError(-32023, "shut_down", /closed; 'ping' was not sent/));
    await bridge.close(); // idempotent
  });
}

Deno.test("decide, decideMany and generate stop waiting at timeoutMs or an aborted signal; nothing is sent for them", async () => {
  await using bridge = await TRANSPORTS[0].open(collecting().options);
  const slow = scripted({ json: { reasoning: "r", choice: "flee", confidence: 50 }, delayMs: 200 });
  await assert.rejects(
    bridge.decide("A wolf growls.", ["fight", "flee"], { model: slow, timeoutMs: 5 }),
    isBridgeError(-32024, "timeout", /did not finish within 5 ms; its response will be ignored/),
  );
  const controller = new AbortController();
  const many = bridge.decideMany([{ situation: "A wolf.", options: ["fight", "flee"] }], {
    model: slow,
    signal: controller.signal,
  });
  controller.abort();
  await assert.rejects(many, isBridgeError(-32009, "cancelled"));
  await assert.rejects(
    bridge.generate(ITEM_SCHEMA, "An item.", {
      model: scripted({ json: { item: "rope" }, delayMs: 200 }),
      timeoutMs: 5,
    }),
    isBridgeError(-32024, "timeout"),
  );
  // A bad value is a TypeError before anything is sent, as for turns.
  await assert.rejects(
    // @ts-expect-error: not a number
    bridge.decide("A wolf.", ["fight", "flee"], { model: slow, timeoutMs: "soon" }),
    TypeError,
  );
  // In time, the same decision answers, and the bridge never saw the options (it warns of unknown params).
  const decided = await bridge.decide("A wolf growls.", ["fight", "flee"], {
    model: slow,
    timeoutMs: 60_000,
  });
  assert.equal(decided.optionID, "flee");
  assert.equal(decided.warnings, undefined);
});
