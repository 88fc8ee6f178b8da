/**
 * What a designer's script passes wrong to the typed client and the bridge never sees (world handles,
 * signals, callbacks, tool lists): a TypeError that names the value, and nothing on the wire for it, instead
 * of a silent no-op or a failure deep inside the client. Values the bridge checks are its own tests'.
 */
import assert from "node:assert/strict";
import {
  Bridge,
  BridgeError,
  InProcessTransport,
  type JsonRpcMessage,
  loadPersona,
  type ScriptStep,
} from "../../mod.ts";

const REPLY: ScriptStep = {
  json: {
    emotion: "happy",
    line: "Welcome!",
    player_options: ["Hi.", "Ale?", "Bye."],
    ends_conversation: false,
  },
};

/** An in-process bridge whose sent messages are recorded (method of each). */
async function recorded(): Promise<{ bridge: Bridge; sent: string[] }> {
  const sent: string[] = [];
  const transport = new InProcessTransport();
  const send = transport.send.bind(transport);
  transport.send = (message: JsonRpcMessage) => {
    if ("method" in message) sent.push(message.method);
    return send(message);
  };
  const bridge = await Bridge.connect(transport, { onWarning: () => {} });
  sent.length = 0; // initialize
  return { bridge, sent };
}

function typeError(message: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof TypeError, `expected a TypeError, got ${error}`);
    assert.match(error.message, message);
    return true;
  };
}

Deno.test("createNpc with a world seed instead of a World handle is a TypeError saying so, and no NPC is made without its world", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  const shop = await loadPersona(new URL("../../personas/shopkeeper.jsonc", import.meta.url));
  assert.deepEqual(shop.world, { player: { name: "Aria", gold: 20 } });
  await assert.rejects(
    bridge.createNpc(shop.persona, {
      world: shop.world as never,
      model: { type: "scripted", steps: [REPLY] },
    }),
    typeError(
      /^'world' must be a World \(from bridge\.createWorld\) or a world id; got \{"player":\{"name":"Aria","gold":20\}\}\. A world seed .* is created first: world: await bridge\.createWorld\(seed\)\.$/,
    ),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  const gorm = await bridge.createNpc({ name: "Gorm" }, { npc: "gorm", model: "scripted" });
  const save = await gorm.state();
  await assert.rejects(
    bridge.restoreNpc(save, { npc: "gorm-2", world: {} as never }),
    typeError(/got \{\}\./),
  );
  await assert.rejects(gorm.restore(save, { world: 42 as never }), typeError(/got 42\./));
  assert.deepEqual((await bridge.listNpcs()).map((n) => n.npc), ["gorm"]);
  // The handle and the id still work.
  const world = await bridge.createWorld(shop.world);
  const mira = await bridge.createNpc(shop.persona, { world, model: "scripted" });
  assert.ok(mira.tools.includes("read_world_state"));
  const copy = await bridge.restoreNpc(await mira.state(), {
    npc: "mira-2",
    world: world.id,
    model: "scripted",
  });
  assert.ok(copy.tools.includes("read_world_state"));
});

Deno.test("a turn's 'signal' that is not an AbortSignal, or a bad 'timeoutMs', is a TypeError naming it; nothing is sent and close() still works", async () => {
  const { bridge, sent } = await recorded();
  const gorm = await bridge.createNpc({ name: "Gorm" }, { model: { type: "scripted", steps: [REPLY] } });
  const session = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Aye." }] } });
  sent.length = 0;
  await assert.rejects(
    gorm.talk("Hello.", { signal: {} as never }),
    typeError(
      /^'npc\/talk' was not sent: 'signal' must be an AbortSignal \(e\.g\. new AbortController\(\)\.signal\); got \{\}\.$/,
    ),
  );
  await assert.rejects(
    session.respond("Hello.", { signal: "stop" as never }),
    typeError(/^'session\/respond' was not sent: 'signal' must be an AbortSignal .*; got "stop"\.$/),
  );
  for (const timeoutMs of [-1, Number.NaN, "500", 2 ** 31]) {
    await assert.rejects(
      gorm.talk("Hello.", { timeoutMs: timeoutMs as number }),
      typeError(
        /^'npc\/talk' was not sent: 'timeoutMs' must be a number of milliseconds from 0 to 2147483647; got /,
      ),
    );
  }
  assert.deepEqual(sent, [], "nothing was sent");
  // The next turn is answered, and closing leaves no request behind (it threw at close before).
  assert.equal(
    (await gorm.talk("Hello.", { signal: new AbortController().signal, timeoutMs: 5000 })).line,
    "Welcome!",
  );
  await bridge.close();
  assert.deepEqual(sent, ["npc/talk", "shutdown"]);
});

Deno.test("tools that are not a list of tools, and a tool without a handler function, are TypeErrors naming them", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  const model = { type: "scripted" as const, steps: [REPLY] };
  await assert.rejects(
    bridge.createNpc({ name: "Gorm" }, { tools: "check_stock" as never, model }),
    typeError(
      /^'tools' must be an array \(handles from bridge\.tool, registered names or definitions\); got "check_stock"\.$/,
    ),
  );
  const stock = bridge.tool({ name: "check_stock", description: "Stock." }, () => 3);
  let missing; // a handle the script forgot to assign
  await assert.rejects(
    bridge.createNpc({ name: "Gorm" }, { tools: [stock, missing as never], model }),
    typeError(/^'tools\[1\]' must be one of the handles from bridge\.tool, .*; got undefined\.$/),
  );
  await assert.rejects(
    bridge.createSession({ tools: [42 as never], model: "scripted" }),
    typeError(/^'tools\[0\]' must be one of .*; got 42\.$/),
  );
  assert.throws(
    () => bridge.tool({ name: "ring_bell", description: "Rings." }, undefined as never),
    typeError(/^The handler of tool 'ring_bell' must be a function; got undefined\.$/),
  );
  assert.throws(
    () => bridge.tool({ name: "ring_bell", description: "Rings." }, "Dong." as never),
    typeError(/^The handler of tool 'ring_bell' must be a function; got "Dong\."\.$/),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  // Not registered: the NPC gets no tool that could only answer with an error.
  await assert.rejects(
    bridge.createNpc({ name: "Gorm" }, { tools: ["ring_bell"], model }),
    /No tool named 'ring_bell'/,
  );
  const gorm = await bridge.createNpc({ name: "Gorm" }, { tools: [stock], model });
  assert.deepEqual(gorm.tools, ["check_stock"]);
});

Deno.test("world.subscribe without a callback function, or with the callback first, is a TypeError; nothing is subscribed", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  const world = await bridge.createWorld({ player: { gold: 20 } });
  sent.length = 0;
  await assert.rejects(
    world.subscribe("player.gold", undefined as never),
    typeError(/^The callback of world\.subscribe\("player\.gold"\) must be a function; got undefined\.$/),
  );
  await assert.rejects(
    world.subscribe(((change: unknown) => change) as never, undefined as never),
    typeError(/^world\.subscribe takes the path first: subscribe\("player\.gold", callback\) \(""/),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  const seen: unknown[] = [];
  await world.subscribe("player.gold", (change) => seen.push(change.newValue));
  await world.set("player.gold", 15);
  assert.deepEqual(seen, [15]);
});

Deno.test("a turn's callback that is not a function is a TypeError before the turn is sent (the turn does not happen); decideMany without an array names 'requests'", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  const gorm = await bridge.createNpc({ name: "Gorm" }, { model: { type: "scripted", steps: [REPLY] } });
  const session = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Aye." }] } });
  sent.length = 0;
  await assert.rejects(
    gorm.talk("Hello.", { onLine: "typewriter" as never }),
    typeError(/^npc\.talk: 'onLine' must be a function; got "typewriter"\.$/),
  );
  await assert.rejects(
    gorm.talk("Hello.", { onEmotion: { happy: "smile.png" } as never }),
    typeError(/^npc\.talk: 'onEmotion' must be a function; got \{"happy":"smile\.png"\}\.$/),
  );
  await assert.rejects(
    session.respond("Hello.", { onText: true as never }),
    typeError(/^session\.respond: 'onText' must be a function; got true\.$/),
  );
  await assert.rejects(
    bridge.decideMany(undefined as never),
    typeError(/^'requests' must be an array of \{situation, options\}; got undefined\.$/),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  // The script's first step is still there for the first turn that is sent.
  let shown = "";
  assert.equal((await gorm.talk("Hello.", { onLine: (_d, line) => shown = line })).line, "Welcome!");
  assert.equal(shown, "Welcome!");
  assert.equal((await session.respond("Hello.", { onText: () => {} })).text, "Aye.");
});

Deno.test("a tool that returns a Map or a Set (which JSON writes as {}) gives the model an error output naming it, not {}", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const stock = new Map([["ale", 3]]);
  bridge.tool({ name: "stock", description: "Stock." }, () => stock);
  bridge.tool(
    { name: "tags", description: "Tags." },
    () => ({ item: "ale", tags: [{ kinds: new Set(["drink"]) }] }),
  );
  bridge.tool({ name: "fine", description: "Fine." }, () => ({ empty: {}, list: [], at: new Date(0) }));
  const session = await bridge.createSession({
    tools: ["stock", "tags", "fine"],
    model: {
      type: "scripted",
      steps: [{
        toolCalls: [
          { name: "stock", arguments: {} },
          { name: "tags", arguments: {} },
          { name: "fine", arguments: {} },
        ],
      }, { text: "Done." }],
    },
  });
  const result = await session.respond("Look.");
  const byName = Object.fromEntries(result.toolCalls.map((r) => [r.call.name, [r.output, r.isError]]));
  assert.deepEqual(byName, {
    stock: [
      "The tool's result is not JSON: 'output' is a Map, which JSON writes as {} (return Object.fromEntries(map) instead).",
      true,
    ],
    tags: [
      "The tool's result is not JSON: 'output.tags[0].kinds' is a Set, which JSON writes as {} (return [...set] instead).",
      true,
    ],
    fine: [{ empty: {}, list: [], at: "1970-01-01T00:00:00.000Z" }, false],
  });
});

Deno.test("world.set, world.merge and createWorld with NaN or Infinity (which JSON sends as null) are TypeErrors naming where; nothing is sent and the world keeps its value", async () => {
  const { bridge, sent } = await recorded();
  const world = await bridge.createWorld({ player: { gold: 20 } });
  sent.length = 0;
  const price = ({} as { price?: number }).price;
  await assert.rejects(
    world.set("player.gold", 20 - (price as number)),
    typeError(
      /^world\.set\("player\.gold"\): the value is NaN, which JSON sends as null; pass a finite number \(or null\)\.$/,
    ),
  );
  await assert.rejects(
    world.merge({ player: { gold: Infinity } }),
    typeError(/^world\.merge\(\): the patch's 'player\.gold' is Infinity, which JSON sends as null;/),
  );
  await assert.rejects(
    world.set("party", [{ hp: 1 }, { hp: -Infinity }]),
    typeError(/^world\.set\("party"\): the value's '1\.hp' is -Infinity,/),
  );
  await assert.rejects(
    bridge.createWorld({ day: NaN }),
    typeError(/^bridge\.createWorld\(\): the state's 'day' is NaN,/),
  );
  assert.deepEqual(sent, []);
  assert.equal(await world.get("player.gold"), 20);
  await world.set("player.gold", null); // null on purpose is fine
  assert.equal(await world.get("player.gold"), null);
  await bridge.close();
});

Deno.test("bridge.npc, bridge.world and bridge.session given a persona, a handle or a state instead of an id are TypeErrors saying what to pass", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const persona = { name: "Bram", role: "the gate guard" };
  const bram = await bridge.createNpc(persona, { npc: "bram", model: "scripted" });
  const village = await bridge.createWorld({ gate: "shut" }, { world: "village" });
  assert.throws(
    () => bridge.npc(persona as never),
    typeError(
      /^bridge\.npc\(\) takes an NPC's id \(a string such as "bram"\); got a persona \(\{"name":"Bram","role":"the gate guard"\}\): create the NPC with bridge\.createNpc\(persona\) and use the handle it returns\.$/,
    ),
  );
  assert.throws(
    () => bridge.npc(bram as never),
    typeError(
      /^bridge\.npc\(\) takes an NPC's id \(a string such as "bram"\); got the handle of NPC 'bram': use the handle itself\.$/,
    ),
  );
  assert.throws(
    () => bridge.world(village as never),
    typeError(
      /^bridge\.world\(\) takes a world's id \(a string such as "village"\); got the handle of world 'village': use the handle itself\.$/,
    ),
  );
  assert.throws(
    () => bridge.world({ gate: "shut" } as never),
    typeError(
      /^bridge\.world\(\) takes a world's id \(a string such as "village"\); got \{"gate":"shut"\}\.$/,
    ),
  );
  assert.throws(
    () => bridge.session(7 as never),
    typeError(/^bridge\.session\(\) takes a session's id \(a string such as "s1"\); got 7\.$/),
  );
  assert.equal(bridge.npc("bram").id, "bram");
});

Deno.test("world.set with undefined or a function (which JSON leaves out) is a TypeError saying to pass null or to remove the path; nothing is sent", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  const world = await bridge.createWorld({ quest: { stage: "start" } });
  sent.length = 0;
  const next = ({} as { next?: string }).next;
  await assert.rejects(
    world.set("quest.stage", next as never),
    typeError(
      /^world\.set\("quest\.stage"\): the value is undefined, which JSON leaves out; pass null, or world\.remove\("quest\.stage"\) to delete it\.$/,
    ),
  );
  await assert.rejects(
    world.set("quest.stage", (() => "end") as never),
    typeError(
      /^world\.set\("quest\.stage"\): the value is a function, which JSON leaves out; pass null, or world\.remove/,
    ),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  assert.equal(await world.get("quest.stage"), "start");
});

Deno.test("world.set, generate and decide with a BigInt are TypeErrors naming the call, the path and what to pass; nothing is sent", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  const world = await bridge.createWorld({ quest: { reward: 10 } });
  sent.length = 0;
  await assert.rejects(
    world.set("quest.reward", (2n ** 70n) as never),
    typeError(
      /^world\.set\("quest\.reward"\): the value is a BigInt \(1180591620717411303424n\), which JSON cannot send; pass a number \(Number\(n\)\) or a string \(String\(n\)\)\.$/,
    ),
  );
  await assert.rejects(
    world.merge({ quest: { reward: 5n } } as never),
    typeError(/^world\.merge\(\): the patch's 'quest\.reward' is a BigInt \(5n\),/),
  );
  await assert.rejects(
    bridge.generate({ type: "object" }, "A rumor.", { context: { day: 3n } as never }),
    typeError(/^bridge\.generate\(\): the context's 'day' is a BigInt \(3n\),/),
  );
  await assert.rejects(
    bridge.decide("A wolf growls.", ["fight", "flee"], { temperature: 7n as never }),
    typeError(/^bridge\.decide\(\): the temperature is a BigInt \(7n\),/),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  assert.equal(await world.get("quest.reward"), 10);
});

Deno.test("world.set, world.merge and createWorld with a Map or a Set (which JSON sends as {}) are TypeErrors saying what to pass; nothing is sent and the world keeps its value", async () => {
  const { bridge, sent } = await recorded();
  const world = await bridge.createWorld({ player: { gold: 20, bag: { ale: 1 } } });
  sent.length = 0;
  await assert.rejects(
    // @ts-expect-error: the types refuse it too (JsonInput); this is the check of a JavaScript caller
    world.set("player.bag", new Map([["ale", 2]])),
    typeError(
      /^world\.set\("player\.bag"\): the value is a Map, which JSON sends as \{\}; pass an object \(Object\.fromEntries\(map\)\)\.$/,
    ),
  );
  await assert.rejects(
    // @ts-expect-error: the types refuse it too (JsonInput); this is the check of a JavaScript caller
    world.merge({ player: { seen: new Set(["wolf"]) } }),
    typeError(
      /^world\.merge\(\): the patch's 'player\.seen' is a Set, which JSON sends as \{\}; pass an array \(\[\.\.\.set\]\)\.$/,
    ),
  );
  await assert.rejects(
    // @ts-expect-error: the types refuse it too (JsonInput); this is the check of a JavaScript caller
    bridge.createWorld({ quests: [new Map()] }),
    typeError(/^bridge\.createWorld\(\): the state's 'quests\.0' is a Map,/),
  );
  assert.deepEqual(sent, []);
  assert.deepEqual(await world.get("player.bag"), { ale: 1 });
  await world.set("player.bag", Object.fromEntries(new Map([["ale", 2]])));
  assert.deepEqual(await world.get("player.bag"), { ale: 2 });
  await bridge.close();
});

Deno.test("world.merge with the path first is a TypeError saying the patch comes first; nothing is sent", async () => {
  const { bridge, sent } = await recorded();
  const world = await bridge.createWorld({ player: { gold: 20 } });
  sent.length = 0;
  await assert.rejects(
    world.merge("player" as never, { gold: 5 } as never),
    typeError(/^world\.merge takes the patch first: merge\(\{"gold":5\}, "player"\)\.$/),
  );
  assert.deepEqual(sent, []);
  await world.merge({ gold: 5 }, "player");
  assert.equal(await world.get("player.gold"), 5);
  await bridge.close();
});

Deno.test("createWorld given the world's id where its state goes is a TypeError saying where the id goes; nothing is sent", async () => {
  const { bridge, sent } = await recorded();
  await assert.rejects(
    bridge.createWorld("village" as never),
    typeError(
      /^bridge\.createWorld\("village"\): the world's state comes first, its id in the options: createWorld\(\{ … \}, \{ world: "village" \}\)\.$/,
    ),
  );
  assert.deepEqual(sent, []);
  const village = await bridge.createWorld({ gate: "open" }, { world: "village" });
  assert.equal(village.id, "village");
  await bridge.close();
});

Deno.test("npc.talk, npc.bark and npc.update with a Map, a Set or NaN in what they send are TypeErrors naming the call and the path; nothing is sent", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  const gorm = await bridge.createNpc({ name: "Gorm" }, {
    memory: { relationship: 10 },
    model: { type: "scripted", steps: [REPLY, { text: "Fine weather." }] },
  });
  sent.length = 0;
  const hp = ({} as { hp?: number }).hp;
  await assert.rejects(
    gorm.talk("Hello.", { context: { player: { hp: 10 - (hp as number) } } }),
    typeError(
      /^npc\.talk\(\): the context's 'player\.hp' is NaN, which JSON sends as null; pass a finite number \(or null\)\.$/,
    ),
  );
  await assert.rejects(
    gorm.talk("Hello.", { context: { inventory: new Map([["ale", 2]]) } as never, onLine: () => {} }),
    typeError(
      /^npc\.talk\(\): the context's 'inventory' is a Map, which JSON sends as \{\}; pass an object \(Object\.fromEntries\(map\)\)\.$/,
    ),
  );
  await assert.rejects(
    gorm.talkStream("Hello.", { context: [1, Infinity] }).result,
    typeError(/^npc\.talk\(\): the context's '1' is Infinity, which JSON sends as null;/),
  );
  await assert.rejects(
    gorm.talk("Hello.", { context: NaN }),
    typeError(/^npc\.talk\(\): the context is NaN, which JSON sends as null;/),
  );
  await assert.rejects(
    gorm.bark({ seen: new Set(["wolf"]) } as never),
    typeError(/^npc\.bark\(\): the situation's 'seen' is a Set, which JSON sends as \{\}; pass an array/),
  );
  await assert.rejects(
    gorm.update({ memory: { relationship: 10 / 0 } }),
    typeError(/^npc\.update\(\): the memory's 'relationship' is Infinity, which JSON sends as null;/),
  );
  await assert.rejects(
    gorm.update({ persona: { goals: new Set(["sell"]) as never } }),
    typeError(/^npc\.update\(\): the persona's 'goals' is a Set,/),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  assert.equal((await gorm.talk("Hello.", { context: { player: { hp: 10 } } })).line, "Welcome!");
  assert.equal((await gorm.state()).memory.relationship, 10, "the memory kept its value");
});

Deno.test("createNpc, restoreNpc and npc.restore with a Map, a Set or NaN in the persona, memory or save are TypeErrors naming the call and the path; nothing is sent and the NPC is kept", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  await assert.rejects(
    bridge.createNpc({ name: "Gorm", goals: new Set(["sell"]) as never }, { model: "scripted" }),
    typeError(
      /^bridge\.createNpc\(\): the persona's 'goals' is a Set, which JSON sends as \{\}; pass an array/,
    ),
  );
  await assert.rejects(
    bridge.createNpc({ name: "Gorm" }, { memory: { relationship: NaN }, model: "scripted" }),
    typeError(/^bridge\.createNpc\(\): the memory's 'relationship' is NaN, which JSON sends as null;/),
  );
  await assert.rejects(
    bridge.createNpc({ name: "Gorm" }, { options: { playerOptionCount: Infinity }, model: "scripted" }),
    typeError(/^bridge\.createNpc\(\): the options' 'playerOptionCount' is Infinity,/),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  const gorm = await bridge.createNpc({ name: "Gorm" }, {
    npc: "gorm",
    memory: { relationship: 10 },
    model: "scripted",
  });
  const save = await gorm.state();
  sent.length = 0;
  const edited = { ...save, memory: { ...save.memory, relationship: NaN } };
  await assert.rejects(
    bridge.restoreNpc(edited, { npc: "gorm-2", model: "scripted" }),
    typeError(/^bridge\.restoreNpc\(\): the state's 'memory\.relationship' is NaN,/),
  );
  await assert.rejects(
    gorm.restore({ ...save, persona: { ...save.persona, likes: new Map() } as never }),
    typeError(/^npc\.restore\(\): the state's 'persona\.likes' is a Map,/),
  );
  assert.deepEqual(sent, [], "nothing was sent (no npc/delete either)");
  assert.deepEqual((await bridge.listNpcs()).map((n) => n.npc), ["gorm"]);
  assert.equal((await gorm.state()).memory.relationship, 10);
});

Deno.test("createSession, session.respond, session.setTools and session.compact with a Map, a Set or NaN in what they send are TypeErrors naming the call and the path; nothing is sent", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  await assert.rejects(
    bridge.createSession({ options: { temperature: NaN }, model: "scripted" }),
    typeError(/^bridge\.createSession\(\): the options' 'temperature' is NaN, which JSON sends as null;/),
  );
  await assert.rejects(
    bridge.createSession({ model: { type: "scripted", steps: [{ json: { hp: -Infinity } }] } }),
    typeError(/^bridge\.createSession\(\): the model's 'steps\.0\.json\.hp' is -Infinity,/),
  );
  const session = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Aye." }] } });
  sent.length = 0;
  await assert.rejects(
    session.respond("Hello.", { maxToolRounds: NaN }),
    typeError(/^session\.respond\(\): the maxToolRounds is NaN, which JSON sends as null;/),
  );
  await assert.rejects(
    session.respond("Hello.", { schema: { type: "object", enum: new Set(["a"]) as never } }),
    typeError(/^session\.respond\(\): the schema's 'enum' is a Set,/),
  );
  await assert.rejects(
    session.setTools([{
      name: "roll",
      description: "Rolls a die.",
      parameters: { type: "object", properties: { sides: { type: "integer", maximum: NaN } } },
    }]),
    typeError(/^session\.setTools\(\): the tools' '0\.parameters\.properties\.sides\.maximum' is NaN,/),
  );
  await assert.rejects(
    session.compact({ keepRecentTurns: Infinity }),
    typeError(/^session\.compact\(\): the keepRecentTurns is Infinity,/),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  assert.equal((await session.respond("Hello.", { maxToolRounds: 2 })).text, "Aye.");
});

Deno.test("decide, decideMany and generate with a Map, a Set or NaN in the situation, context or settings are TypeErrors naming the call and the path; nothing is sent", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  const hp = ({} as { hp?: number }).hp;
  await assert.rejects(
    bridge.decide("A wolf growls.", ["fight", "flee"], { context: { hp: (hp as number) * 2 } }),
    typeError(/^bridge\.decide\(\): the context's 'hp' is NaN, which JSON sends as null;/),
  );
  await assert.rejects(
    bridge.decide({ enemies: new Set(["wolf"]) } as never, ["fight", "flee"]),
    typeError(/^bridge\.decide\(\): the situation's 'enemies' is a Set, which JSON sends as \{\};/),
  );
  await assert.rejects(
    bridge.decide("A wolf growls.", ["fight", "flee"], { temperature: Infinity }),
    typeError(/^bridge\.decide\(\): the temperature is Infinity,/),
  );
  await assert.rejects(
    bridge.decideMany([
      { situation: "A wolf growls.", options: ["fight", "flee"] },
      { situation: "A troll.", options: ["fight", "flee"], context: { seen: new Map() } as never },
    ]),
    typeError(
      /^bridge\.decideMany\(\): the requests' '1\.context\.seen' is a Map, which JSON sends as \{\};/,
    ),
  );
  await assert.rejects(
    bridge.generate({ type: "object" }, "A rumor.", { context: { town: "Ashford", day: NaN } }),
    typeError(/^bridge\.generate\(\): the context's 'day' is NaN,/),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  const decision = await bridge.decide("A wolf growls.", ["fight", "flee"], {
    context: { hp: 3 },
    model: { type: "scripted", steps: [{ json: { reasoning: "Weak.", choice: "flee", confidence: 70 } }] },
  });
  assert.equal(decision.optionID, "flee");
});

Deno.test("a tool that returns NaN, Infinity (which JSON writes as null) or a BigInt gives the model an error output naming it, not null", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  bridge.tool({ name: "distance", description: "Distance." }, () => ({ to: "mill", km: 0 / 0 }));
  bridge.tool({ name: "far", description: "Far." }, () => [{ km: Infinity }]);
  bridge.tool({ name: "fine", description: "Fine." }, () => ({ km: null, list: [1.5] }));
  bridge.tool({ name: "coins", description: "Coins." }, () => ({ gold: 2n ** 70n }) as never);
  const session = await bridge.createSession({
    tools: ["distance", "far", "fine", "coins"],
    model: {
      type: "scripted",
      steps: [{
        toolCalls: [
          { name: "distance", arguments: {} },
          { name: "far", arguments: {} },
          { name: "fine", arguments: {} },
          { name: "coins", arguments: {} },
        ],
      }, { text: "Done." }],
    },
  });
  const result = await session.respond("How far?");
  const byName = Object.fromEntries(result.toolCalls.map((r) => [r.call.name, [r.output, r.isError]]));
  assert.deepEqual(byName, {
    distance: [
      "The tool's result is not JSON: 'output.km' is NaN, which JSON writes as null (return a finite number or null instead).",
      true,
    ],
    far: [
      "The tool's result is not JSON: 'output[0].km' is Infinity, which JSON writes as null (return a finite number or null instead).",
      true,
    ],
    fine: [{ km: null, list: [1.5] }, false],
    coins: [
      "The tool's result is not JSON: 'output.gold' is a BigInt (1180591620717411303424n), which JSON cannot " +
      "write (return Number(n) or String(n) instead).",
      true,
    ],
  });
});

Deno.test("decideMany with a model (or another shared setting) inside a request is a TypeError that says to pass it in the settings; nothing is sent", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  const flee = {
    type: "scripted" as const,
    steps: [{ json: { reasoning: "Hurt.", choice: "run", confidence: 60 } }],
  };
  // Without `deno check` the request's model used to be dropped with a warning, and the decision ran on the
  // system model: "The system model is unavailable … give the … decision … another model".
  await assert.rejects(
    bridge.decideMany([
      { situation: "A troll charges.", options: ["fight", "run"] },
      { situation: "A wolf howls.", options: ["fight", "run"], model: flee } as never,
    ]),
    typeError(
      /^bridge\.decideMany\(\): 'requests\[1\]\.model' is not read per decision: one decideMany call shares its settings among its decisions, so pass it beside the requests: bridge\.decideMany\(requests, \{ model \}\)\. A scripted model there plays one step per decision, in request order\. For a different one per decision, call bridge\.decide for each\.$/,
    ),
  );
  for (const key of ["instructions", "temperature", "maxToolRounds", "toolTimeoutSeconds", "timeoutMs"]) {
    await assert.rejects(
      bridge.decideMany([{ situation: "A troll charges.", options: ["fight", "run"], [key]: 1 } as never]),
      typeError(
        new RegExp(
          `^bridge\\.decideMany\\(\\): 'requests\\[0\\]\\.${key}' is not read per decision: .*bridge\\.decideMany\\(requests, \\{ ${key} \\}\\)`,
        ),
      ),
    );
  }
  assert.deepEqual(sent, [], "nothing was sent");
  // In the settings, the same model plays.
  const [decision] = await bridge.decideMany([{ situation: "A wolf howls.", options: ["fight", "run"] }], {
    model: flee,
  });
  assert.ok(!("error" in decision) && decision.optionID === "run");
});

Deno.test("createNpc given a whole loaded persona file is a TypeError saying which parts go where; nothing is sent", async () => {
  const { bridge, sent } = await recorded();
  await using _ = bridge;
  const guard = await loadPersona(new URL("../../personas/guard.jsonc", import.meta.url));
  // It was sent, and the bridge answered "Missing required parameter 'persona.name'." for a file that has one.
  await assert.rejects(
    bridge.createNpc(guard as never, { model: { type: "scripted", steps: guard.steps } }),
    typeError(
      /^bridge\.createNpc\(\): the persona has no 'name' but a 'persona' named "Bram": it looks like a whole persona file\. Pass its parts: bridge\.createNpc\(file\.persona, \{ npc: file\.npc, options: file\.options, tools: file\.tools, memory: file\.memory, model: modelFromArgs\(Deno\.args, file\) \}\)\.$/,
    ),
  );
  assert.deepEqual(sent, [], "nothing was sent");
  // Its parts work.
  for (const tool of guard.tools ?? []) bridge.tool(tool, () => ({ opened: true }));
  const bram = await bridge.createNpc(guard.persona, {
    options: guard.options,
    tools: guard.tools,
    model: { type: "scripted", steps: guard.steps },
  });
  assert.equal((await bram.talk("Hello.")).line, "State your business at the north gate.");
});

Deno.test("a handle used after its bridge closed says who closed it: this script (close() or the end of its 'await using' block), or the bridge", async () => {
  // A designer's setup function: `await using` closes the bridge when the function returns its NPC.
  async function setUp() {
    await using bridge = await Bridge.open();
    return await bridge.createNpc({ name: "Gorm" }, { model: { type: "scripted", steps: [REPLY] } });
  }
  const gorm = await setUp();
  await assert.rejects(gorm.talk("Hello."), (error: unknown) => {
    assert.ok(error instanceof BridgeError && error.dataCode === "shut_down", String(error));
    assert.equal(
      error.message,
      "The bridge is closed; 'npc/talk' was not sent. This program closed it (close(), or the end of the block " +
        "or function that opened it with 'await using'): its NPCs, sessions and worlds went with it. Keep it " +
        "open while you use them, or save them (npc.state(), world.snapshot()) and restore them in a new bridge.",
    );
    return true;
  });
  // Closed by the other side: the message says why instead.
  const transport = new InProcessTransport();
  const bridge = await Bridge.connect(transport, { onWarning: () => {} });
  const ended = bridge.done;
  transport.onclose?.(new Error("The bridge process exited (exit code 3)."));
  await ended;
  await assert.rejects(
    bridge.ping(),
    /^BridgeError: The bridge is closed; 'ping' was not sent\. It stopped: The bridge process exited \(exit code 3\)\.$/,
  );
  await bridge.close();
});

Deno.test("bridge.tool with a name that already has another handler warns that the new one answers every NPC's calls", async () => {
  const warnings: string[] = [];
  await using bridge = await Bridge.open({ onWarning: (w, method) => warnings.push(`${method}: ${w}`) });
  // Two persona files that both have check_stock, each registered with its own inventory.
  const definition = { name: "check_stock", description: "Stock." };
  const reply = { text: "[happy] {toolOutput}" };
  const call = { toolCalls: [{ name: "check_stock", arguments: {} }] };
  const answer = { template: "[happy] {toolOutput}" };
  const mira = bridge.tool(definition, () => "3 ales");
  const npcs = [];
  for (const name of ["Mira", "Tom"]) {
    npcs.push(
      await bridge.createNpc({ name }, {
        tools: [mira],
        options: { replyFormat: "text" },
        model: { type: "scripted", steps: [call, answer, reply] },
      }),
    );
  }
  assert.deepEqual(warnings, []);
  const tom = () => "9 ciders";
  bridge.tool(definition, tom);
  bridge.tool(definition, tom); // the same handler again: nothing new to say
  assert.deepEqual(warnings, [
    "bridge.tool: Tool 'check_stock' already had a handler; the new one answers every call of it from now on, " +
    "whichever NPC, session or decision makes it (one handler per name: to answer each NPC its own way, look " +
    "at ctx.npc in one handler).",
  ]);
  // As it says: Mira's calls get Tom's answer.
  assert.equal((await npcs[0].talk("Ale?")).line, "9 ciders");
});
