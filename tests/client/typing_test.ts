/**
 * Compile-time checks of the typed client: `deno test` type-checks this file, so a wrong type fails the suite
 * (`same<A, B>(true)` compiles only when A and B are the same type, and each `@ts-expect-error` line must
 * fail to compile). Tool arguments typed from an inline schema, a plain JSON object otherwise; raw calls,
 * schema turns, tool handlers, world values, decisions and saves as a script writes them.
 */
import type {
  Bridge,
  Decision,
  DecisionFailure,
  DecisionRequest,
  Emotion,
  JsonObject,
  JsonSchema,
  JsonValue,
  Model,
  Npc,
  NpcInfo,
  NpcReply,
  NpcState,
  RequestId,
  RespondOptions,
  RespondResult,
  SchemaValue,
  Session,
  SessionEvent,
  TalkOptions,
  ToolArgs,
  ToolDefinition,
  ToolHandler,
  WorldChange,
} from "../../mod.ts";

// A host's own model type (made by its engine's `modelFactory`), registered for the typed client.
declare module "../../mod.ts" {
  interface ModelSpecRegistry {
    mimic: { type: "mimic"; prefix?: string };
  }
}

/** True when A and B are the same type. */
/** What the result of `generate` with a widened schema is named by (the key of its type). */
const WIDENED_SCHEMA =
  "generate's schema has widened types: write it inline, add 'as const' to its variable, or name the result's type: generate<Quest>(schema, prompt)";

type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function same<A, B>(_proof: Same<A, B>): void {}

Deno.test("tool arguments are typed from an inline schema and are a JSON object otherwise", () => {
  same<
    SchemaValue<{
      type: "object";
      properties: {
        item: { type: "string" };
        count: { type: "integer" };
        size: { enum: readonly ["small", "large"] };
        tags: { type: "array"; items: { type: "string" } };
        owner: { type: readonly ["string", "null"] };
        where: { type: "object"; properties: { x: { type: "number" } }; required: readonly ["x"] };
      };
      required: readonly ["item", "where"];
    }>,
    {
      item: string;
      where: { x: number };
      count?: number;
      size?: "small" | "large";
      tags?: string[];
      owner?: string | null;
    }
  >(true);
  same<ToolArgs<{ type: "object"; properties: { gate: { type: "string" } } }>, { gate?: string }>(true);
  // A schema whose types are not literal (loaded from a file, or declared without `as const`).
  const widened = { type: "object", properties: { item: { type: "string" } } };
  same<ToolArgs<typeof widened>, JsonObject>(true);
  same<ToolArgs<NonNullable<ToolDefinition["parameters"]>>, JsonObject>(true);
  same<SchemaValue<{ description: "anything" }>, JsonValue>(true);
  // @ts-expect-error: a number is not the string the schema says
  same<ToolArgs<{ type: "object"; properties: { gate: { type: "string" } } }>, { gate?: number }>(true);
});

Deno.test("a schema declared without a type annotation, with alternatives of objects of different properties, is a JsonSchema", () => {
  // TypeScript gives the branches of `oneOf` each other's properties as optional `undefined` members
  // (`{town: …; dungeon?: undefined}`): a designer's quest schema written as a plain const.
  const location = {
    oneOf: [
      { type: "object", properties: { town: { type: "string" } }, required: ["town"] },
      { type: "object", properties: { dungeon: { type: "string" }, floor: { type: "integer" } } },
    ],
  };
  const loot = {
    type: "array",
    items: {
      anyOf: [{ properties: { gold: { type: "integer" } } }, { properties: { item: { type: "string" } } }],
    },
  };
  const quest: JsonSchema = { type: "object", properties: { location, loot } };
  same<typeof quest, JsonSchema>(true);
});

Deno.test("generate's result is typed from an inline schema; a type argument still names it", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (bridge: Bridge) => {
    const loot = await bridge.generate({
      type: "object",
      properties: {
        name: { type: "string" },
        rarity: { enum: ["common", "rare"] },
        gold: { type: "integer", minimum: 1 },
        tags: { type: "array", items: { type: "string" } },
      },
      required: ["name", "rarity"],
    }, "A drop.");
    same<typeof loot, { name: string; rarity: "common" | "rare"; gold?: number; tags?: string[] }>(true);
    const named = await bridge.generate<{ rumor: string }>({ type: "object" }, "A rumor.");
    same<typeof named, { rumor: string }>(true);
    const declared: JsonSchema = { type: "object" };
    const unknown = await bridge.generate(declared, "p");
    same<typeof unknown, JsonValue>(true);
    const widened = { type: "object", properties: { a: { type: "string" } } };
    const loose = await bridge.generate(widened, "p");
    // Not literal: a type no value has, named by the fix (`loose.a` shows it), that a JsonValue still takes.
    same<typeof loose, { readonly [WIDENED_SCHEMA]: never }>(true);
    const json: JsonValue = loose;
    void json;
    // A declared JsonSchema, or one without a type, still gives any JSON value.
    same<typeof unknown, JsonValue>(true);
  };
  void typed;
});

Deno.test("a decision's optionID is typed from its options, and a fallbackOptionID outside them does not compile", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (bridge: Bridge) => {
    const d = await bridge.decide("A wolf growls.", ["fight", { id: "flee" }], { fallbackOptionID: "flee" });
    same<typeof d.optionID, "fight" | "flee">(true);
    // @ts-expect-error: 'hide' is not one of the options (a typo of the fallback, not a third option)
    await bridge.decide("A wolf growls.", ["fight", "flee"], { fallbackOptionID: "hide" });
    const [first] = await bridge.decideMany([
      { situation: "A wolf growls.", options: ["fight", "flee"], fallbackOptionID: "flee" },
    ]);
    if (!("error" in first)) same<typeof first.optionID, "fight" | "flee">(true);
    await bridge.decideMany([
      // @ts-expect-error: 'hide' is not one of the options
      { situation: "A wolf growls.", options: ["fight", "flee"], fallbackOptionID: "hide" },
    ]);
  };
  void typed;
});

Deno.test("a world subscription's values are typed by the type argument, as world.get's are", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (bridge: Bridge) => {
    const world = await bridge.createWorld({ player: { gold: 20 } });
    await world.subscribe<number>("player.gold", (change) => {
      same<typeof change.newValue, number | undefined>(true); // undefined when removed
      same<typeof change.oldValue, number | undefined>(true); // undefined when created
      if ((change.newValue ?? 0) < 10) change.path;
    });
    await world.subscribe("player", (change) => same<typeof change.newValue, JsonValue | undefined>(true));
  };
  void typed;
});

Deno.test("generate's options are content/generate's: no maxToolRounds (a decision's setting)", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (bridge: Bridge) => {
    await bridge.generate({ type: "object" }, "A rumor.", { instructions: "Short.", temperature: 0 });
    // @ts-expect-error: content/generate has no tool-round limit; the bridge would ignore it with a warning
    await bridge.generate({ type: "object" }, "A rumor.", { maxToolRounds: 1 });
  };
  void typed;
});

Deno.test("bridge.request types the protocol's methods: wrong or missing params do not compile, and extensions' methods stay open", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (bridge: Bridge) => {
    const { npcs } = await bridge.request("npc/list", {});
    same<typeof npcs, NpcInfo[]>(true);
    await bridge.request("shutdown"); // params may be left out when every member is optional
    const reply = await bridge.request("npc/talk", { npc: "gorm", line: "Hello." });
    same<typeof reply, NpcReply>(true);
    // @ts-expect-error: 'lin' is not a param of npc/talk (the bridge answers -32602)
    await bridge.request("npc/talk", { npc: "gorm", lin: "Hello." });
    // @ts-expect-error: session/respond needs its session
    await bridge.request("session/respond", { prompt: "Hello." });
    // @ts-expect-error: npc/talk has required params
    await bridge.request("npc/talk");
    // A protocol method's result named by annotating the variable (checked), not by a type argument (which
    // TypeScript would take for an extension's method, unchecked).
    const annotated: NpcReply = await bridge.request("npc/talk", { npc: "gorm", line: "Hello." });
    void annotated;
    // @ts-expect-error: npc/talk answers an NpcReply (its line is in 'line')
    const misnamed: { text: string } = await bridge.request("npc/talk", { npc: "gorm", line: "Hello." });
    void misnamed;
    // An extension's method: any params, the result type the caller names.
    const narration = await bridge.request<{ text: string }>("quest/narrate", { quest: "crypt" });
    same<typeof narration, { text: string }>(true);
    const untyped = await bridge.request("quest/narrate", { quest: "crypt" });
    same<typeof untyped, JsonValue>(true);
    await bridge.notify("session/cancel", { session: "guard" });
    await bridge.notify("quest/cancel", { quest: "crypt" });
    // @ts-expect-error: a notification is never answered, so a misspelled param would go unnoticed
    await bridge.notify("session/cancel", { sesion: "guard" });
  };
  void typed;
});

Deno.test("a schema turn's structured answer is typed from an inline schema; a type argument still names it", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (session: Session) => {
    const inline = await session.respond("Any omens?", {
      schema: {
        type: "object",
        properties: { omen: { enum: ["rain", "sun"] }, days: { type: "integer" } },
        required: ["omen"],
      },
    });
    same<typeof inline.structured, { omen: "rain" | "sun"; days?: number } | undefined>(true);
    const schema = { type: "object", properties: { omen: { type: "string" } }, required: ["omen"] } as const;
    const held = await session.respond("Any omens?", { schema, timeoutMs: 1000 });
    same<typeof held.structured, { omen: string } | undefined>(true);
    const named = await session.respond<{ omen: string }>("Any omens?", { schema: { type: "object" } });
    same<typeof named, RespondResult<{ omen: string }>>(true);
    const plain = await session.respond("Hello.");
    same<typeof plain, RespondResult>(true);
    const declared: JsonSchema = { type: "object" };
    const loose = await session.respond("Hi.", { schema: declared });
    same<typeof loose.structured, JsonValue | undefined>(true);
    const options: RespondOptions = { onText: () => {} };
    const watched = await session.respond("Hi.", options);
    same<typeof watched.structured, JsonValue | undefined>(true);
    const stream = session.respondStream("Any omens?", {
      schema: { type: "object", properties: { omen: { type: "string" } }, required: ["omen"] },
    });
    const streamed = await stream.result;
    same<typeof streamed.structured, { omen: string } | undefined>(true);
  };
  void typed;
});

Deno.test("a tool handler given an inline schema cannot need more than the schema promises; for a schema the compiler cannot see it names its own type", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = (bridge: Bridge, loaded: ToolDefinition, handlers: Record<string, ToolHandler<never>>) => {
    const parameters = { type: "object", properties: { item: { type: "string" } } } as const;
    bridge.tool({ name: "look", parameters }, ({ item }) => item ?? "nothing");
    bridge.tool({ name: "look", parameters }, (args: { item?: string; extra?: number }) => args.item);
    bridge.tool({ name: "look", parameters }, () => "nothing"); // taking less is fine
    // @ts-expect-error: 'item' is optional in the schema, so the model may leave it out
    bridge.tool({ name: "look", parameters }, (args: { item: string }) => args.item.length);
    // @ts-expect-error: 'item' is a string
    bridge.tool({ name: "look", parameters }, (args: { item?: number }) => args.item);
    bridge.tool(loaded, ({ gate }: { gate: string }) => gate); // the handler's own type
    bridge.tool(loaded, (args) => same<typeof args, JsonObject>(true));
    bridge.tool(loaded, handlers.look); // a table of handlers for definitions from a file
    const ring: ToolHandler<{ times: number }> = ({ times }) => "Dong! ".repeat(times);
    bridge.tool({
      name: "ring",
      parameters: { type: "object", properties: { times: { type: "integer" } }, required: ["times"] },
    }, ring);
  };
  void typed;
});

Deno.test("world values are JSON: interfaces and class instances compile, what JSON would refuse or change does not", () => {
  interface Player {
    gold: number;
    bag: string[];
    title?: string;
  }
  class Stats {
    hp = 10;
    heal(): void {
      this.hp = 10;
    }
  }
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (
    bridge: Bridge,
    player: Player,
    save: NpcState,
    anything: unknown,
    json: JsonValue,
  ) => {
    const world = await bridge.createWorld({ player });
    await bridge.createWorld();
    await bridge.createWorld({ save }, { world: "saves" });
    await world.set("player", player);
    await world.set("stats", new Stats()); // JSON writes its fields
    await world.set("saves.gorm", save);
    await world.set("when", new Date(0)); // JSON writes its ISO string
    await world.set("note", anything); // nothing to check
    await world.set("json", json);
    await world.set("player.title", null);
    await world.merge({ player: { gold: 5, title: undefined } }, "");
    await world.merge(player, "player");
    // @ts-expect-error: JSON sends nothing: the bridge answers "Missing required parameter 'value'" (use remove)
    await world.set("player.title", undefined);
    // @ts-expect-error: a function is not JSON either
    await world.set("player.title", () => "Sir");
    // @ts-expect-error: JSON cannot write a bigint
    await world.set("player.gold", 10n);
    // @ts-expect-error: JSON writes a Map as {}
    await world.set("player.bag", new Map([["ale", 2]]));
    // @ts-expect-error: JSON writes a Set as {}, here inside the patch
    await world.merge({ player: { bag: new Set(["ale"]) } });
    // @ts-expect-error: a world's state is an object
    await bridge.createWorld(["ale"]);
    // @ts-expect-error: JSON writes a Map as {}
    await bridge.createWorld({ quests: [new Map()] });
  };
  void typed;
});

Deno.test("decideMany types each result from its own request's options", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (bridge: Bridge, requests: DecisionRequest<"a" | "b">[]) => {
    const [wolf, merchant] = await bridge.decideMany([
      { situation: "A wolf growls.", options: ["fight", { id: "flee" }], fallbackOptionID: "flee" },
      { situation: "A merchant waves.", options: ["greet", "ignore"] },
    ]);
    if (!("error" in wolf)) same<typeof wolf.optionID, "fight" | "flee">(true);
    if (!("error" in merchant)) same<typeof merchant.optionID, "greet" | "ignore">(true);
    const all: (Decision | DecisionFailure)[] = await bridge.decideMany(requests);
    const many = await bridge.decideMany(requests);
    for (const d of many) if (!("error" in d)) same<typeof d.optionID, "a" | "b">(true);
    void all;
  };
  void typed;
});

Deno.test("an NPC save has the members the bridge saves, so a misspelled one does not compile", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (npc: Npc) => {
    const save = await npc.state();
    same<typeof save.memory.relationship, number | undefined>(true);
    // @ts-expect-error: the relationship is in 'memory'
    save.relationship;
  };
  void typed;
});

Deno.test("the bridge's own notifications give their handler typed params; others stay JSON objects", () => {
  // Compiled only: the handlers are never called (no bridge is opened).
  const typed = (bridge: Bridge) => {
    bridge.onNotification("world/changed", (change) => same<typeof change, WorldChange>(true));
    bridge.onNotification("npc/event", ({ event }) => {
      if (event.type === "emotion") same<typeof event.emotion, Emotion>(true);
    });
    bridge.onNotification("session/event", ({ event }) => same<typeof event, SessionEvent>(true));
    bridge.onNotification("tool/cancel", ({ id }) => same<typeof id, RequestId>(true));
    bridge.onNotification("quest/event", (params) => same<typeof params, JsonObject>(true));
    bridge.onNotification("*", (_params, method) => same<typeof method, string>(true));
    // @ts-expect-error: a world change has no 'value' (it has oldValue and newValue)
    bridge.onNotification("world/changed", (change) => change.value);
  };
  void typed;
});

Deno.test("facts given as context (a talk's, a bark's, a decision's, a generation's) may be an interface, and are checked as JSON", () => {
  interface Facts {
    hp: number;
    foes: string[];
  }
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (
    bridge: Bridge,
    npc: Npc,
    facts: Facts,
    json: JsonValue,
    options: TalkOptions,
    maybe: string | undefined,
  ) => {
    await npc.talk("Hello.", { context: facts });
    await npc.talk("Hello.", { context: "The player holds 60 gold." });
    await npc.talk("Hello.", { context: json, onLine: () => {} });
    await npc.talk("Hello.", options);
    for await (const event of npc.talkStream("Hello.", { context: facts })) void event;
    await npc.bark(facts);
    await npc.bark("It rains.");
    await npc.bark();
    await npc.bark(maybe);
    await npc.bark(json);
    const d = await bridge.decide("A wolf.", ["fight", "flee"], { context: facts, fallbackOptionID: "flee" });
    same<typeof d.optionID, "fight" | "flee">(true);
    const loot = await bridge.generate(
      { type: "object", properties: { gold: { type: "integer" } } },
      "Loot.",
      {
        context: facts,
      },
    );
    same<typeof loot, { gold?: number }>(true);
    // @ts-expect-error: JSON writes a Map as {}
    await npc.talk("Hello.", { context: { bag: new Map<string, number>() } });
    // @ts-expect-error: JSON cannot write a bigint
    await npc.bark({ gold: 10n });
    // @ts-expect-error: JSON writes a Set as {}
    await bridge.decide("A wolf.", ["fight", "flee"], { context: { seen: new Set(["wolf"]) } });
    // @ts-expect-error: a function is not JSON
    await bridge.generate({ type: "object" }, "Loot.", { context: () => facts });
  };
  void typed;
});

Deno.test("a model spec of a built-in type has its members, so a misspelled one does not compile, wherever a model is given", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (bridge: Bridge, npc: Npc, save: NpcState) => {
    const steps = [{ text: "Hi." }];
    await bridge.createSession({ model: { type: "scripted", steps } });
    // @ts-expect-error: 'step' is not a member of a scripted model ('steps'): the script would be empty
    await bridge.createSession({ model: { type: "scripted", step: steps } });
    // @ts-expect-error: 'fallbak' is not a member of a scripted model ('fallback')
    await bridge.createNpc({ name: "Gorm" }, { model: { type: "scripted", steps, fallbak: { text: "…" } } });
    await npc.restore(save, {
      model: { type: "openai", baseURL: "http://127.0.0.1:8080/v1", model: "qwen" },
    });
    await npc.restore(save, {
      // @ts-expect-error: 'baseUrl' is not a member of an OpenAI model ('baseURL')
      model: { type: "openai", baseUrl: "http://127.0.0.1:8080/v1", model: "qwen" },
    });
    await bridge.decide("A wolf.", ["fight", "flee"], {
      model: { type: "openai", baseURL: "http://127.0.0.1:8080/v1", model: "qwen", apiKey: "k" },
    });
    await bridge.decide("A wolf.", ["fight", "flee"], {
      // @ts-expect-error: 'apikey' is not a member of an OpenAI model ('apiKey'): no key would be sent
      model: { type: "openai", baseURL: "http://127.0.0.1:8080/v1", model: "qwen", apikey: "k" },
    });
    await bridge.decideMany([{ situation: "A wolf.", options: ["fight", "flee"] }], {
      // @ts-expect-error: an OpenAI model needs the server's model name
      model: { type: "openai", baseURL: "http://127.0.0.1:8080/v1" },
    });
    // @ts-expect-error: 'contextsize' is not a member of a llama model ('contextSize')
    await bridge.request("decision/decide", {
      situation: "A wolf.",
      options: ["fight", "flee"],
      model: { type: "llama", path: "m.gguf", contextsize: 4096 },
    });
    await bridge.generate({ type: "object" }, "Loot.", {
      model: { type: "llama", path: "m.gguf", gpu: false },
    });
    // @ts-expect-error: 'step' is not a member of a scripted model ('steps')
    await bridge.generate({ type: "object" }, "Loot.", { model: { type: "scripted", step: steps } });
    await bridge.request("session/create", { model: { type: "system" } });
    // @ts-expect-error: 'step' is not a member of a scripted model ('steps')
    await bridge.request("session/create", { model: { type: "scripted", step: steps } });
    // @ts-expect-error: 'step' is not a member of a scripted model ('steps')
    await bridge.request("npc/create", {
      persona: { name: "Gorm" },
      model: { type: "scripted", step: steps },
    });
    // @ts-expect-error: 'baseUrl' is not a member of an OpenAI model ('baseURL')
    const model: Model = { type: "openai", baseUrl: "http://127.0.0.1:8080/v1", model: "qwen" };
    void model;
  };
  void typed;
});

Deno.test("a host's own model type compiles once registered in ModelSpecRegistry, and is then held to its members", () => {
  // Compiled only: the calls are never run (no bridge is opened).
  const typed = async (bridge: Bridge, fromFile: JsonObject) => {
    await bridge.createSession({ model: { type: "mimic", prefix: "You said: " } });
    await bridge.createNpc({ name: "Gorm" }, { model: { type: "mimic" } });
    await bridge.request("npc/create", { persona: { name: "Gorm" }, model: { type: "mimic" } });
    const models: Model[] = ["system", "scripted", { type: "mimic" }, { type: "scripted", steps: [] }];
    void models;
    // @ts-expect-error: 'prefx' is not a member of the registered mimic model ('prefix')
    await bridge.createSession({ model: { type: "mimic", prefx: "You said: " } });
    // @ts-expect-error: a type nobody registered (the bridge would answer -32602 Unknown model type)
    await bridge.createSession({ model: { type: "mine" } });
    // A spec only known when the game runs (read from a settings file): the bridge checks it.
    await bridge.createSession({ model: fromFile as Model });
  };
  void typed;
});
