// The game methods besides dialogue, from a script: a shared world two NPCs change while the game reacts,
// decisions (one as an NPC, several at once), a generated quest, and an NPC saved and loaded in a new bridge.
// Scripted model by default; --system or --model openai:<baseURL>#<model> / gguf:<path> for a real one.
import { Bridge, type JsonObject, modelFromArgs, type NpcState } from "../mod.ts";

const say = (text: string) => Deno.stdout.writeSync(new TextEncoder().encode(`${text}\n`));
let save: { bram: NpcState; world: JsonObject };
{
  await using bridge = await Bridge.open();
  const world = await bridge.createWorld({ village: { alarm: false, gate: "open" }, player: { gold: 20 } });
  await world.subscribe<boolean>("village.alarm", (c) => {
    if (c.newValue) say("  (the game rings the bell)");
  });
  await world.subscribe<string>("village.gate", (c) => say(`  (the game shuts the gate: ${c.newValue})`));

  const edda = await bridge.createNpc({ name: "Edda", role: "the watchwoman" }, {
    world,
    options: { worldWritable: ["village.alarm"], playerOptionCount: 0 },
    model: modelFromArgs(Deno.args, [
      { toolCalls: [{ name: "update_world_state", arguments: { path: "village.alarm", value: "true" } }] },
      { json: { emotion: "afraid", line: "Wolves at the treeline!", ends_conversation: false } },
    ]),
  });
  const bram = await bridge.createNpc({ name: "Bram", role: "the gate guard", personality: "Careful." }, {
    npc: "bram",
    world,
    options: { worldWritable: ["village.gate"], playerOptionCount: 0, compactAfterTurns: 0 },
    memory: { facts: ["The player helped at the mill."] },
    model: modelFromArgs(Deno.args, [
      { toolCalls: [{ name: "update_world_state", arguments: { path: "village.gate", value: "closed" } }] },
      { json: { emotion: "suspicious", line: "Gate's shut till dawn.", ends_conversation: false } },
    ]),
  });
  say(`Edda: ${(await edda.talk("What's that noise?")).line}`);
  say(`Bram: ${(await bram.talk("Let me out!")).line}`);

  const act = await bridge.decide("Wolves circle the gate. The player asks to be let out.", [
    { id: "open", description: "Open the gate for the player" },
    { id: "refuse", description: "Keep the gate shut" },
  ], {
    actor: bram, // Bram's persona decides, on this call's model
    context: await world.snapshot(),
    model: modelFromArgs(Deno.args, [{
      json: { reasoning: "Wolves first.", choice: "refuse", confidence: 80 },
    }]),
  });
  say(`Bram decides to ${act.optionID} (${act.confidence}%): ${act.reasoning}`);

  const crowd = await bridge.decideMany(
    ["Ada", "Cy"].map((name) => ({
      situation: "The bell rings.",
      options: ["hide", "help"],
      actor: { name, role: "a villager" },
    })),
    {
      model: modelFromArgs(Deno.args, [
        { json: { reasoning: "Scared.", choice: "hide", confidence: 90 } },
        { json: { reasoning: "Brave.", choice: "help", confidence: 60 } },
      ]),
    },
  );
  say(`Villagers: ${crowd.map((d) => "error" in d ? d.error.dataCode : d.optionID).join(", ")}`);

  const quest = await bridge.generate(
    {
      type: "object",
      properties: {
        title: { type: "string" },
        reward: { type: "integer", minimum: 10, maximum: 100 },
        steps: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 3 },
      },
      required: ["title", "reward", "steps"],
    },
    "A quest about the wolves.",
    {
      context: { village: "Ashford" },
      model: modelFromArgs(Deno.args, [
        { json: { title: "Teeth in the Dark", reward: 40, steps: ["Find the den", "Drive the pack off"] } },
      ]),
    },
  );
  say(`Quest: ${quest.title} (${quest.reward} gold): ${quest.steps.join(" → ")}`);
  // Store both with the game's save: the NPC's save holds only the id of its world.
  save = { bram: await bram.state(), world: await world.snapshot() };
}
{
  // Later, in a new bridge: the world first (under its saved id, which the NPC's save names), then the
  // NPC; its script starts afresh (the model is not part of the save). Subscriptions are not saved either.
  await using bridge = await Bridge.open();
  const world = await bridge.createWorld(save.world, { world: save.bram.world ?? undefined });
  const bram = await bridge.restoreNpc(save.bram, {
    model: modelFromArgs(Deno.args, [
      { json: { emotion: "happy", line: "Dawn. Off you go, miller's friend.", ends_conversation: true } },
    ]),
  });
  const reply = await bram.talk("Morning, Bram.");
  const village = await world.get<{ alarm: boolean; gate: string }>("village");
  const gold = await world.get<number>("player.gold");
  say(
    `Bram: ${reply.line} (remembers ${(await bram.state()).memory.facts?.length} fact; ` +
      `alarm: ${village?.alarm}, gate: ${village?.gate}, gold: ${gold})`,
  );
}
