#!/usr/bin/env python3
"""A quest driven by world events, saved to disk and loaded after a restart, on the Python binding.

The game subscribes to `quests.wolves.stage` before the quest exists, an NPC accepts it by writing the world,
a decision picks the party's tactic, and everything is saved to a file. A second bridge process (the game
started again) loads the world and the NPC from that file, subscribes again, and the quest ends when the NPC
writes the stage `done`. Scripted models (docs/PROTOCOL.md §10), so it runs anywhere:

    python3 examples/quest_save.py           # or OAM_BRIDGE_COMMAND="oam stdio" python3 examples/quest_save.py

It imports `bindings/python/open_apple_models.py` from the checkout (copy that file beside your own game).
"""
import asyncio
import json
import os
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "bindings", "python"))
from open_apple_models import Bridge  # noqa: E402

cli = os.path.normpath(os.path.join(here, "..", "cli.ts"))
COMMAND = os.environ.get("OAM_BRIDGE_COMMAND") or ["deno", "run", "--no-prompt", "--allow-env", "--allow-read",
                                                  cli, "stdio"]
BRAM = {"name": "Bram", "role": "the gate guard", "personality": "Gruff, fair."}
OPTIONS = {"worldWritable": ["quests.wolves.stage"], "playerOptionCount": 0, "compactAfterTurns": 0}


def scripted(*steps):
    return {"type": "scripted", "steps": list(steps)}


def set_stage(stage):  # the model's tool call: update_world_state takes the value as text
    return {"toolCalls": [{"name": "update_world_state",
                           "arguments": {"path": "quests.wolves.stage", "value": stage}}]}


def line(emotion, text):  # an NPC reply step: snake_case keys (docs/scripting.md)
    return {"json": {"emotion": emotion, "line": text, "ends_conversation": False}}


async def watch_wolves(world, on_stage):
    """Subscribes to the quest's stage. A change can come at the stage's own path, or above it (the quest
    written whole, a save loaded at the root), with that parent's value: then the stage is read."""
    async def changed(change):
        stage = change.get("newValue") if change["path"] == subscription.path else await world.get(subscription.path)
        await on_stage(stage)

    subscription = await world.subscribe(changed, path="quests.wolves.stage")
    return subscription


async def play(save_file):
    async with Bridge(COMMAND) as bridge:
        world = await bridge.create_world({"player": {"gold": 10}, "quests": {}}, world="village")
        accepted = asyncio.Event()

        async def on_stage(stage):
            print(f"  (quest log: wolves {stage})")
            if stage == "accepted":
                await world.set("quests.wolves.reward", 50)
                accepted.set()

        subscription = await watch_wolves(world, on_stage)
        print("subscribed before the quest exists:", subscription.warnings[0].split(":")[0])
        await world.set("quests.wolves", {"stage": "offered"})  # arrives at 'quests.wolves': the stage is read

        bram = await bridge.create_npc(BRAM, npc="bram", world=world, options=OPTIONS, model=scripted(
            set_stage("accepted"), line("proud", "Good. Bring me their pelts.")))
        print("Bram:", (await bram.talk("I'll deal with the wolves."))["line"])
        await accepted.wait()  # the quest logic runs in the game, beside the bridge: wait for it, never sleep

        tactic = await bridge.decide("Wolves circle the mill at dusk.", ["ambush", "torches", "wait"],
                                     actor=bram, model=scripted({"json": {
                                         "reasoning": "Fire keeps wolves back.", "choice": "torches",
                                         "confidence": 70}}))
        await world.set("quests.wolves.tactic", tactic["optionID"])
        print("tactic:", tactic["optionID"])

        save = {"world": await world.snapshot(), "npcs": {"bram": await bram.state()}}
        with open(save_file, "w", encoding="utf-8") as f:
            json.dump(save, f)
        print("saved:", json.dumps(save["world"]["quests"]["wolves"]))
    print("-- the game quits; the bridge process exits --")


async def load(save_file):
    with open(save_file, encoding="utf-8") as f:
        save = json.load(f)  # parse it: the bridge takes the objects, not the file's text
    async with Bridge(COMMAND) as bridge:  # a new bridge process
        # The world first, under the id the NPC's save names; then the NPC; subscriptions are not saved.
        world = await bridge.create_world(save["world"], world=save["npcs"]["bram"]["world"])
        paid = asyncio.Event()

        async def on_stage(stage):
            print(f"  (quest log: wolves {stage})")
            if stage == "done":
                reward = await world.get("quests.wolves.reward", 0)
                await world.set("player.gold", await world.get("player.gold", 0) + reward)
                paid.set()

        await watch_wolves(world, on_stage)
        # The model is not part of the save: send it again (its script starts from its first step).
        bram = await bridge.restore_npc(save["npcs"]["bram"], model=scripted(
            set_stage("done"), line("grateful", "You did it. Here is your reward.")))
        print("restored:", bram.id, "warnings:", bram.warnings)
        print("Bram:", (await bram.talk("The wolves are gone."))["line"])
        await paid.wait()
        print("gold:", await world.get("player.gold"), "| remembers the talk:",
              len((await bram.state())["transcript"]["transcript"]["entries"]) > 2)


async def main():
    with tempfile.TemporaryDirectory() as folder:
        save_file = os.path.join(folder, "save.json")
        await play(save_file)
        await load(save_file)


if __name__ == "__main__":
    asyncio.run(main())
