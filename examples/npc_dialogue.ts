/**
 * NPC dialogue with the typed client: Gorm the blacksmith checks the game's inventory through a client tool,
 * sells a sword by writing the shared world, streams his lines to the terminal as they arrive, survives a
 * guardrail block (the automatic reply format retries as plain text), and is saved and restored with the
 * game save.
 *
 *   deno run -A --no-lock examples/npc_dialogue.ts   # a cached GGUF model (oam models pull) where there is one, else scripted
 *                                                    # (--no-lock: the GGUF runtime stays out of deno.lock)
 *   deno run examples/npc_dialogue.ts --scripted     # the scripted model (works everywhere, deterministic)
 *   deno run -A examples/npc_dialogue.ts --system    # the on-device model, where available
 *   deno run -A examples/npc_dialogue.ts --model openai:<baseURL>#<model>
 */
// deno-lint-ignore-file no-console
import {
  Bridge,
  firstCachedModel,
  type Model,
  modelFromArgs,
  type NpcReply,
  type ScriptStep,
} from "../mod.ts";

// A GGUF model from `oam models pull` plays Gorm unless the arguments choose a model (or --scripted).
const chooses = ["--scripted", "--system", "--model"].some((flag) =>
  Deno.args.some((a) => a.startsWith(flag))
);
const cached = chooses ? null : await firstCachedModel();
const model = (steps: ScriptStep[]): Model =>
  cached ? { type: "llama", path: cached.path } : modelFromArgs(Deno.args, steps);

const encoder = new TextEncoder();
const out = (text: string) => Deno.stdout.writeSync(encoder.encode(text));

/** The game's own inventory, which `check_inventory` reads (the engine's side of the tool). */
const inventory: Record<string, { stock: number; priceGold: number }> = {
  "iron sword": { stock: 3, priceGold: 45 },
  "steel axe": { stock: 1, priceGold: 70 },
};

/** The scripted stand-in for the model: one step per model call (see docs/scripting.md). */
const firstVisit: ScriptStep[] = [
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
];
const laterVisit: ScriptStep[] = [
  { toolCalls: [{ name: "check_inventory", arguments: { item: "iron sword" } }] },
  {
    json: {
      emotion: "amused",
      line: "Back already, Aria? Two swords left, if the first one broke.",
      player_options: ["It's fine.", "Just browsing.", "Goodbye."],
      ends_conversation: false,
    },
  },
];

try {
  await using bridge = await Bridge.open();
  const checkInventory = bridge.tool({
    name: "check_inventory",
    description: "Look up how many of an item the smithy has in stock and its price in gold.",
    parameters: {
      type: "object",
      properties: { item: { type: "string", description: "Item name, e.g. 'iron sword'." } },
      required: ["item"],
    },
  }, ({ item }) => {
    const key = item.toLowerCase(); // the model chose it: look up own keys only
    const entry = Object.hasOwn(inventory, key) ? inventory[key] : undefined;
    return entry ? { item, stock: entry.stock, price_gold: entry.priceGold } : `We don't sell '${item}'.`;
  });

  const world = await bridge.createWorld({
    shop: { iron_sword_stock: 3 },
    player: { name: "Aria", gold: 60 },
  }, {
    world: "village",
  });
  for (const path of ["shop", "player.gold"]) {
    await world.subscribe(path, (change) => {
      out(
        `\n  ~ world: ${change.path} ${JSON.stringify(change.oldValue)} → ${JSON.stringify(change.newValue)}`,
      );
      if (change.path === "shop.iron_sword_stock") inventory["iron sword"].stock = Number(change.newValue);
    });
  }

  let gorm = await bridge.createNpc({
    name: "Gorm",
    role: "the village blacksmith",
    personality: "Gruff but fair; proud of his work.",
    speakingStyle: "Short, plain sentences.",
    secrets: ["He once forged a sword for the bandit king."],
  }, {
    npc: "gorm",
    tools: [checkInventory],
    world,
    options: {
      groundingTool: "check_inventory",
      worldContextPaths: ["player"],
      worldWritable: ["shop.iron_sword_stock", "player.gold"],
      memoryTools: ["rememberFact"],
    },
    model: model(firstVisit),
  });
  out(`Created ${gorm.id} with tools: ${gorm.tools.join(", ")}\n`);

  const talk = async (line: string, context?: string): Promise<NpcReply> => {
    out(`\nPlayer: ${line}`);
    const reply = await gorm.talk(line, {
      context,
      onEmotion: (emotion) => out(`\n  Gorm [${emotion}]: `),
      onLine: (delta, _line, isReset) => out(isReset ? `\n  Gorm (rephrases): ${delta}` : delta),
      onEvent: (event) => {
        if (event.type === "toolCallStarted") {
          out(`\n  · ${event.call.name} ${JSON.stringify(event.call.arguments)} (${event.execution})`);
        }
      },
    });
    if (reply.playerOptions.length > 0) {
      out(`\n  (you could say: ${reply.playerOptions.map((o) => `"${o}"`).join(" / ")})`);
    }
    if (reply.isFallback) out("\n  (fallback line: the model declined this turn)");
    out("\n");
    return reply;
  };

  await talk("Got any iron swords?");
  await talk("I'll take one.", "Aria hands over 45 gold.");

  // Save with the game, then load it back (the model is not part of the save: the later visit's script).
  const save = await gorm.state();
  out(`\nSaved: ${JSON.stringify(save.memory)}, ${JSON.stringify(save).length} bytes\n`);
  gorm = await gorm.restore(save, { model: model(laterVisit) });
  out(`Restored ${gorm.id}\n`);
  await talk("Hello again, Gorm.");
  out(`\nAria has ${await world.get<number>("player.gold")} gold left.\n`);
} catch (error) {
  console.error(`\nError: ${error instanceof Error ? error.message : String(error)}`);
  if (Deno.args.includes("--system")) {
    console.error("(The system model needs Apple Intelligence on macOS; run without --system.)");
  }
  Deno.exitCode = 1;
}
