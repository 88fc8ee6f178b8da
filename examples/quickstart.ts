// A shopkeeper NPC with a client tool, streamed lines, a world change and a save/restore. Scripted model by
// default; for a real one --system, --model openai:<baseURL>#<model>, or --model gguf:<file> (-A --no-lock).
import { Bridge, loadPersona, modelFromArgs } from "../mod.ts";

const shop = await loadPersona(new URL("../personas/shopkeeper.jsonc", import.meta.url));
const model = modelFromArgs(Deno.args, shop);
const stock: Record<string, number> = { ale: 3, stew: 1 };
const say = (text: string) => Deno.stdout.writeSync(new TextEncoder().encode(text));
await using bridge = await Bridge.open();
const checkStock = bridge.tool({
  name: "check_stock",
  description: "How many of an item the inn has left and its price in gold.",
  parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
}, ({ item }) => `${stock[item] ?? 0} ${item} left, 4 gold each.`);
const world = await bridge.createWorld(shop.world);
await world.subscribe("player.gold", (c) => say(`\n  (gold: ${c.oldValue} → ${c.newValue})\n`));
const { npc, options } = shop; // npc: the file's id, "mira" (without it the bridge names her npc1)
let mira = await bridge.createNpc(shop.persona, { npc, tools: [checkStock], world, options, model });
for (const line of ["An ale, please.", "Another one!"]) {
  say(`Player: ${line}\nMira: `);
  await mira.talk(line, { onLine: (delta, _line, isReset) => say(isReset ? `\nMira: ${delta}` : delta) });
  stock.ale--;
  await world.set("player.gold", (await world.get<number>("player.gold") ?? 0) - 4);
  mira = await mira.restore(await mira.state()); // save with the game, load it back
}
