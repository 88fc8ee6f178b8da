/**
 * NPC dialogue in-process: Gorm the blacksmith checks the game's inventory through a client tool, sells a
 * sword by writing the shared world state, streams his lines to the terminal as they arrive, and is saved and
 * restored with the game save.
 *
 *   deno run -A examples/npc_dialogue.ts            # a cached GGUF model (oam models pull) where there is one, else scripted
 *   deno run -A examples/npc_dialogue.ts --scripted # the scripted model (works everywhere, deterministic)
 *   deno run -A examples/npc_dialogue.ts --system   # the on-device model, where available
 *
 * The engine runs in this process (no child process): requests go in with `engine.call`, and every message
 * the bridge sends (streamed `npc/event`s, `tool/call` requests, `world/changed`) arrives in the `send`
 * callback, which plays the game engine's part.
 */
// deno-lint-ignore-file no-console
import { BridgeEngine, type JsonObject, type JsonValue } from "../engine.ts";
import { firstCachedModel } from "../src/cli/models_cache.ts";

const useSystem = Deno.args.includes("--system");
// A GGUF model from `oam models pull` plays Gorm unless --scripted or --system says otherwise.
const cached = useSystem || Deno.args.includes("--scripted") ? null : await firstCachedModel();
const encoder = new TextEncoder();
const out = (text: string) => Deno.stdout.writeSync(encoder.encode(text));

/** The game's own inventory, which `check_inventory` reads (the engine's side of the tool). */
const inventory: Record<string, { stock: number; priceGold: number }> = {
  "iron sword": { stock: 3, priceGold: 45 },
  "steel axe": { stock: 1, priceGold: 70 },
};

/** Every message the bridge sends: events, tool calls and world changes. Responses come back from `call`. */
function onMessage(line: string): void {
  const msg = JSON.parse(line) as JsonObject;
  const params = (msg.params ?? {}) as JsonObject;
  switch (msg.method) {
    case "npc/event": {
      const event = params.event as JsonObject;
      if (event.type === "emotion") out(`\n  Gorm [${event.emotion}]: `);
      else if (event.type === "lineDelta") out(event.delta as string);
      else if (event.type === "lineReset") out(`\n  Gorm (rephrases): ${event.line}`);
      else if (event.type === "toolCallStarted") {
        const call = event.call as JsonObject;
        out(`\n  · ${call.name} ${JSON.stringify(call.arguments)} (${event.execution})`);
      }
      break;
    }
    case "tool/call": {
      const call = params.call as JsonObject;
      const item = String((call.arguments as JsonObject).item ?? "").toLowerCase();
      const entry = Object.hasOwn(inventory, item) ? inventory[item] : undefined;
      const output: JsonValue = entry
        ? { item, stock: entry.stock, price_gold: entry.priceGold }
        : `We don't sell '${item}'.`;
      // Reply after the current message has been handled.
      queueMicrotask(() =>
        engine.receive(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: { output } }))
      );
      break;
    }
    case "world/changed":
      out(
        `\n  ~ world: ${params.path} ${JSON.stringify(params.oldValue)} → ${JSON.stringify(params.newValue)}`,
      );
      if (params.path === "shop.iron_sword_stock") inventory["iron sword"].stock = Number(params.newValue);
      break;
  }
}

const engine: BridgeEngine = new BridgeEngine({}, onMessage);

/** The scripted stand-in for the on-device model (one step per model call). */
function script(...steps: JsonValue[]): JsonValue {
  if (useSystem) return "system";
  if (cached) return { type: "llama", path: cached.path };
  return { type: "scripted", steps };
}

let turn = 0;
async function talk(line: string, context?: string): Promise<JsonObject> {
  out(`\nPlayer: ${line}`);
  const result = await engine.call(
    "npc/talk",
    { npc: "gorm", line, stream: true, ...(context ? { context } : {}) },
    `talk-${++turn}`,
  ) as JsonObject;
  const options = result.playerOptions as string[];
  if (options.length > 0) out(`\n  (you could say: ${options.map((o) => `"${o}"`).join(" / ")})`);
  if (result.isFallback) out("\n  (fallback line: the model declined this turn)");
  out("\n");
  return result;
}

try {
  await engine.call("world/create", {
    world: "village",
    state: { shop: { iron_sword_stock: 3 }, player: { name: "Aria", gold: 60 } },
  });
  await engine.call("world/subscribe", { world: "village", path: "shop" });
  await engine.call("world/subscribe", { world: "village", path: "player.gold" });
  const created = await engine.call("npc/create", {
    npc: "gorm",
    persona: {
      name: "Gorm",
      role: "the village blacksmith",
      personality: "Gruff but fair; proud of his work.",
      speakingStyle: "Short, plain sentences.",
      secrets: ["He once forged a sword for the bandit king."],
    },
    tools: [{
      name: "check_inventory",
      description: "Look up how many of an item the smithy has in stock and its price in gold.",
      parameters: {
        type: "object",
        properties: { item: { type: "string", description: "Item name, e.g. 'iron sword'." } },
        required: ["item"],
      },
    }],
    world: "village",
    options: {
      groundingTool: "check_inventory",
      worldContextPaths: ["player"],
      worldWritable: ["shop.iron_sword_stock", "player.gold"],
      memoryTools: ["rememberFact"],
    },
    model: script(
      { toolCalls: [{ name: "check_inventory", arguments: { item: "iron sword" } }] },
      {
        json: {
          emotion: "proud",
          line: "Aye, three iron swords on the rack. Forty-five gold apiece.",
          player_options: ["I'll take one.", "Too pricey.", "Anything stronger?"],
          ends_conversation: false,
        },
      },
      { toolCalls: [{ name: "check_inventory", arguments: { item: "iron sword" } }] },
      {
        toolCalls: [
          { name: "update_world_state", arguments: { path: "shop.iron_sword_stock", value: "2" } },
          { name: "update_world_state", arguments: { path: "player.gold", value: "15" } },
          { name: "remember_fact", arguments: { fact: "Aria bought an iron sword." } },
        ],
      },
      { error: "guardrail_violation", message: "A sword sale tripped the guardrails." },
      { text: "[happy] A fine choice, Aria. Keep the edge oiled and it will serve you well.", chunks: 9 },
    ),
  }) as JsonObject;
  out(`Created ${created.npc} with tools: ${(created.tools as string[]).join(", ")}\n`);

  await talk("Got any iron swords?");
  await talk("I'll take one.", "Aria hands over 45 gold.");

  // Save with the game, then load it into a fresh NPC (the model is not part of the save).
  const saved = await engine.call("npc/state", { npc: "gorm" }) as JsonObject;
  const state = saved.state as JsonObject;
  out(`\nSaved: ${JSON.stringify(state.memory)}, ${JSON.stringify(state).length} bytes\n`);
  await engine.call("npc/delete", { npc: "gorm" });
  const restored = await engine.call("npc/restore", {
    state: saved,
    model: script(
      { toolCalls: [{ name: "check_inventory", arguments: { item: "iron sword" } }] },
      {
        json: {
          emotion: "amused",
          line: "Back already, Aria? Two swords left, if the first one broke.",
          player_options: ["It's fine.", "Just browsing.", "Goodbye."],
          ends_conversation: false,
        },
      },
    ),
  }) as JsonObject;
  out(`Restored ${restored.npc}${(restored.warnings as string[]).length ? ` (${restored.warnings})` : ""}\n`);
  await talk("Hello again, Gorm.");
  const gold = await engine.call("world/get", { world: "village", path: "player.gold" }) as JsonObject;
  out(`\nAria has ${gold.value} gold left.\n`);
} catch (error) {
  console.error(`\nError: ${error instanceof Error ? error.message : String(error)}`);
  if (useSystem) console.error("(The system model needs Apple Intelligence on macOS; run without --system.)");
  await engine.shutdown();
  Deno.exit(1);
}
await engine.shutdown();
