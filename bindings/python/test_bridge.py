"""Tests of open_apple_models.py against the real bridge process, on scripted models.

Run: python3 bindings/python/test_bridge.py  (or python3 -m unittest bindings/python/test_bridge.py)
The bridge command comes from OAM_BRIDGE_COMMAND / OAM_BRIDGE_PATH; without them the repository's
cli.ts is run with `deno`.
"""

import asyncio
import decimal
import gc
import json
import math
import os
import signal
import sys
import time
import unittest
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from open_apple_models import (  # noqa: E402
    NULL, Bridge, BridgeError, Subscription, ToolContext, ToolError, bridge_command, bridge_environment)

REPO = Path(__file__).resolve().parents[2]


def default_command():
    if os.environ.get("OAM_BRIDGE_COMMAND") or os.environ.get("OAM_BRIDGE_PATH"):
        return None
    return ["deno", "run", "--allow-read", "--allow-env", "--allow-ffi", str(REPO / "cli.ts"), "stdio"]


COMMAND = default_command()
GATE = {"type": "object", "properties": {"gate": {"type": "string"}}, "required": ["gate"]}


def scripted(*steps):
    return {"type": "scripted", "steps": list(steps)}


def open_gate_step(gate="north"):
    return {"toolCalls": [{"name": "open_gate", "arguments": {"gate": gate}}]}


class BridgeTestCase(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.bridge = Bridge(COMMAND)
        await self.bridge.start()

    async def asyncTearDown(self):
        await self.bridge.close()


class SessionTests(BridgeTestCase):
    async def test_initialize_reports_the_server(self):
        self.assertEqual(self.bridge.server_info["server"]["name"], "open-apple-models")
        self.assertIn("session/respond", self.bridge.server_info["capabilities"]["methods"])

    async def test_plain_turn(self):
        session = await self.bridge.create_session("You are a guard.", session="plain",
                                                   model=scripted({"text": "Halt! Who goes there?"}))
        self.assertEqual(session.id, "plain")
        result = await session.respond("Hello")
        self.assertEqual(result["text"], "Halt! Who goes there?")
        self.assertEqual(result["toolCalls"], [])

    async def test_client_tool_round_trip_with_context(self):
        seen = []

        @self.bridge.tool(description="Open a named gate.", parameters=GATE)
        def open_gate(args, context):
            self.assertIsInstance(context, ToolContext)
            seen.append((args["gate"], context.session, context.name))
            return {"opened": True}

        session = await self.bridge.create_session(
            session="guard", tools=["open_gate"], options={"toolChoice": "required"},
            model=scripted(open_gate_step(), {"template": "Gate: {toolOutput}"}))
        result = await session.respond("Open the north gate.")
        self.assertEqual(seen, [("north", "guard", "open_gate")])
        self.assertEqual(result["text"], 'Gate: {"opened":true}')
        self.assertEqual(result["toolCalls"][0]["output"], {"opened": True})
        self.assertFalse(result["toolCalls"][0]["isError"])

    async def test_async_tool_handler_and_converted_values(self):
        @self.bridge.tool(parameters=GATE)
        async def open_gate(args):
            """Open a named gate."""
            await asyncio.sleep(0)
            return {"gates": {"north"}, "cost": decimal.Decimal("2.5"), "pair": (1, 2)}

        self.assertEqual(self.bridge.tool_definitions(["open_gate"])[0]["description"], "Open a named gate.")
        session = await self.bridge.create_session(tools=["open_gate"],
                                                   model=scripted(open_gate_step(), {"text": "Done."}))
        result = await session.respond("Open it.")
        self.assertEqual(result["toolCalls"][0]["output"], {"gates": ["north"], "cost": 2.5, "pair": [1, 2]})

    async def test_tool_that_raises_marks_is_error(self):
        @self.bridge.tool(description="Open a named gate.", parameters=GATE)
        def open_gate(args):
            raise ValueError("the portcullis chain is jammed")

        @self.bridge.tool(name="ring_bell", description="Ring the bell.")
        def ring(args):
            raise ToolError("The bell is cracked.")

        session = await self.bridge.create_session(
            tools=["open_gate", "ring_bell"],
            model=scripted({"toolCalls": [{"name": "open_gate", "arguments": {"gate": "east"}},
                                          {"name": "ring_bell", "arguments": {}}]},
                           {"template": "{toolOutputs}"}))
        with self.assertLogs("open_apple_models", "WARNING") as logs:
            result = await session.respond("Open the east gate and ring the bell.")
        # A handler's unexpected exception is logged with its traceback (the model only sees one line); a
        # ToolError is an answer the handler meant, not logged.
        self.assertEqual(len(logs.records), 1, logs.output)
        self.assertIn("Tool 'open_gate' raised ValueError", logs.output[0])
        self.assertIn("Traceback", logs.output[0])
        self.assertIn('raise ValueError("the portcullis chain is jammed")', logs.output[0])
        outputs = {record["call"]["name"]: record for record in result["toolCalls"]}
        self.assertTrue(outputs["open_gate"]["isError"])
        self.assertEqual(outputs["open_gate"]["output"], "ValueError: the portcullis chain is jammed")
        self.assertTrue(outputs["ring_bell"]["isError"])
        self.assertEqual(outputs["ring_bell"]["output"], "The bell is cracked.")

    async def test_tool_result_that_is_not_json_is_an_error_output(self):
        @self.bridge.tool(description="Measure.")
        def measure(args):
            return {"value": math.nan}

        session = await self.bridge.create_session(
            tools=["measure"], model=scripted({"toolCalls": [{"name": "measure", "arguments": {}}]}, {"text": "ok"}))
        with self.assertLogs("open_apple_models", "WARNING"):
            result = await session.respond("Measure.")
        self.assertTrue(result["toolCalls"][0]["isError"])
        self.assertIn("not valid JSON", result["toolCalls"][0]["output"])

    async def test_handler_that_never_answers_times_out_and_is_cancelled(self):
        cancelled = asyncio.Event()

        @self.bridge.tool(description="Open a named gate.", parameters=GATE, timeout=0.3)
        async def open_gate(args):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise

        session = await self.bridge.create_session(
            tools=["open_gate"], model=scripted(open_gate_step(), {"template": "{toolOutput}"}))
        started = time.monotonic()
        result = await session.respond("Open it.")
        self.assertLess(time.monotonic() - started, 5)
        self.assertTrue(result["toolCalls"][0]["isError"])
        self.assertIn("timed out", result["toolCalls"][0]["output"])
        await asyncio.wait_for(cancelled.wait(), 2)

    async def test_unregistered_tool_gets_an_error_output(self):
        session = await self.bridge.create_session(
            tools=[{"name": "summon", "description": "Summon help."}],
            model=scripted({"toolCalls": [{"name": "summon", "arguments": {}}]}, {"template": "{toolOutput}"}))
        with self.assertLogs("open_apple_models", "WARNING") as logs:  # the game hears of it, not the model alone
            result = await session.respond("Help!")
        self.assertTrue(result["toolCalls"][0]["isError"])
        self.assertIn("No handler for tool 'summon'", result["toolCalls"][0]["output"])
        self.assertIn("The model called tool 'summon' (session", logs.output[0])
        self.assertIn("no handler is registered for it in this client", logs.output[0])

    async def test_streaming_text_and_events(self):
        texts, kinds = [], []
        session = await self.bridge.create_session(
            model=scripted({"text": "The north gate is open now.", "chunks": 4}))
        result = await session.respond("Status?", on_text=texts.append, on_event=lambda e: kinds.append(e["type"]))
        self.assertGreaterEqual(len(texts), 2)
        self.assertEqual(texts[-1], result["text"])
        self.assertIn("modelStep", kinds)
        self.assertIn("text", kinds)

    async def test_async_callbacks(self):
        texts = []

        async def on_text(text):
            await asyncio.sleep(0)
            texts.append(text)

        session = await self.bridge.create_session(model=scripted({"text": "Aye, captain.", "chunks": 2}))
        result = await session.respond("Report.", on_text=on_text)
        await asyncio.sleep(0.05)
        self.assertEqual(texts[-1], result["text"])

    async def test_async_callbacks_finish_before_the_turn_returns(self):
        shown = []

        async def on_text(text):
            await asyncio.sleep(0.01)  # a UI update that takes a moment
            shown.append(text)

        session = await self.bridge.create_session(model=scripted({"text": "Aye, captain.", "chunks": 2}))
        result = await session.respond("Report.", on_text=on_text)
        self.assertEqual(shown[-1], result["text"])

    async def test_async_callback_that_raises_after_awaiting_fails_the_call(self):
        async def on_line(line):
            await asyncio.sleep(0.01)
            raise RuntimeError("portrait missing")

        npc = await self.bridge.create_npc({"name": "Gorm"}, model=scripted(
            {"json": {"emotion": "proud", "line": "Finest steel.", "player_options": ["a", "b", "c"],
                      "ends_conversation": False}}))
        with self.assertRaisesRegex(RuntimeError, "portrait missing"):
            await npc.talk("Hi", on_line=on_line)

    async def test_callback_that_raises_fails_the_call(self):
        session = await self.bridge.create_session(model=scripted({"text": "Hello there."}))

        def on_text(text):
            raise RuntimeError("UI exploded")

        with self.assertRaisesRegex(RuntimeError, "UI exploded"):
            await session.respond("Hi", on_text=on_text)

    async def test_typed_errors(self):
        with self.assertRaises(BridgeError) as caught:
            await self.bridge.session("nobody").respond("Hi")
        self.assertEqual(caught.exception.code, -32020)
        self.assertEqual(caught.exception.data_code, "session_not_found")
        self.assertEqual(caught.exception.data["session"], "nobody")
        with self.assertRaises(BridgeError) as caught:
            await self.bridge.request("no/such")
        self.assertEqual((caught.exception.code, caught.exception.data_code), (-32601, "method_not_found"))
        with self.assertRaises(BridgeError) as caught:
            await self.bridge.create_session(session="dup")
            await self.bridge.create_session(session="dup")
        self.assertEqual(caught.exception.data_code, "session_exists")

    async def test_invalid_params_are_rejected_before_sending(self):
        with self.assertRaises(ValueError):
            await self.bridge.request("ping", {"x": math.inf})
        with self.assertRaises(TypeError):
            await self.bridge.request("ping", {"x": object()})
        with self.assertRaises(ValueError):
            self.bridge.tool_definitions(["not_registered"])
        self.assertEqual(await self.bridge.request("ping"), {})

    async def test_respond_timeout_cancels_the_turn(self):
        session = await self.bridge.create_session(
            model=scripted({"text": "late", "delayMs": 3000}, {"text": "next"}))
        with self.assertRaises(BridgeError) as caught:
            await session.respond("x", timeout=0.2)
        self.assertEqual(caught.exception.code, -32024)
        self.assertEqual(caught.exception.message, "'session/respond' did not finish within 200 ms; it was cancelled.")
        started = time.monotonic()
        result = await session.respond("y")
        self.assertEqual(result["text"], "next")
        self.assertLess(time.monotonic() - started, 2.5, "the timed-out turn was not cancelled on the bridge")

    async def test_raw_request_timeout_cancels_the_turn_too(self):
        session = await self.bridge.create_session(
            model=scripted({"text": "late", "delayMs": 3000}, {"text": "next"}))
        with self.assertRaises(BridgeError) as caught:
            await self.bridge.request("session/respond", {"session": session.id, "prompt": "x"}, timeout=0.2)
        self.assertEqual(caught.exception.message, "'session/respond' did not finish within 200 ms; it was cancelled.")
        self.assertEqual(await session.cancel(), 0, "the timed-out turn was still running on the bridge")
        self.assertEqual((await session.respond("y"))["text"], "next")

    async def test_transcript_and_history(self):
        session = await self.bridge.create_session("Be brief.", model=scripted({"text": "One."}))
        await session.respond("Count.")
        transcript = await session.transcript()
        resumed = await self.bridge.create_session(history=transcript, model=scripted({"text": "Two."}))
        sessions = {s["session"]: s for s in await self.bridge.list_sessions()}
        self.assertEqual(sessions[resumed.id]["entries"], 2)


class GameTests(BridgeTestCase):
    async def test_npc_talk_streams_and_world_changes_notify(self):
        world = await self.bridge.create_world({"player": {"gold": 60}}, world="village")
        changes = []
        subscription = await world.subscribe(changes.append, path="player")
        gorm = await self.bridge.create_npc(
            {"name": "Gorm", "role": "the village blacksmith"}, npc="gorm", world=world,
            options={"worldWritable": ["player"]},
            model=scripted(
                {"toolCalls": [{"name": "update_world_state", "arguments": {"path": "player.gold", "value": "45"}}]},
                {"json": {"emotion": "proud", "line": "That will be 15 gold, friend.",
                          "player_options": ["Thanks", "Too much!", "Bye."], "ends_conversation": False}}))
        self.assertIn("update_world_state", gorm.tools)
        lines, emotions = [], []
        result = await gorm.talk("One iron sword, please.", on_line=lines.append, on_emotion=emotions.append)
        self.assertEqual(result["line"], "That will be 15 gold, friend.")
        self.assertEqual(result["emotion"], "proud")
        self.assertEqual(lines[-1], result["line"])
        self.assertEqual(emotions, ["proud"])
        self.assertEqual(len(changes), 1)
        self.assertEqual(changes[0]["path"], "player.gold")
        self.assertEqual((changes[0]["oldValue"], changes[0]["newValue"]), (60, 45))
        self.assertEqual(changes[0]["subscription"], subscription.id)
        self.assertEqual(await world.get("player.gold"), 45)

    async def test_a_player_who_walks_away_gets_no_more_of_the_line(self):
        line = " ".join("word%d" % i for i in range(40))
        gorm = await self.bridge.create_npc({"name": "Gorm"}, options={"replyFormat": "text"},
                                            model=scripted({"text": "[happy] " + line, "chunks": 20}))
        shown, walked_away, arrived_after = [], [], []

        def on_line(text):
            shown.append(text)
            if not walked_away:  # the player walks away at the first words
                walked_away.append(True)
                turn.cancel()

        def on_npc_event(params):
            if walked_away and params["event"]["type"] == "lineDelta":
                arrived_after.append(params["event"])

        self.bridge.on_notification("npc/event", on_npc_event)
        turn = asyncio.ensure_future(gorm.talk("Hello", on_line=on_line))
        with self.assertRaises(asyncio.CancelledError):
            await turn
        await self.bridge.request("ping")  # answered after every event the turn wrote before the cancel
        self.assertTrue(arrived_after, "the rest of the line never arrived; nothing was tested")
        self.assertEqual(len(shown), 1, "on_line was called after the player walked away: %r" % shown[1:2])

    async def test_npc_cancel_stops_the_line_at_once(self):
        line = " ".join("word%d" % i for i in range(40))
        gorm = await self.bridge.create_npc({"name": "Gorm"}, options={"replyFormat": "text"},
                                            model=scripted({"text": "[happy] " + line, "chunks": 20}))
        shown, cancels, arrived_after = [], [], []

        def on_line(text):
            shown.append(text)
            if not cancels:  # the player walks away at the first words
                cancels.append(asyncio.ensure_future(gorm.cancel()))

        def on_npc_event(params):
            if cancels and params["event"]["type"] == "lineDelta":
                arrived_after.append(params["event"])

        self.bridge.on_notification("npc/event", on_npc_event)
        try:
            await gorm.talk("Hello", on_line=on_line)  # the turn had ended when the cancel came: its reply
        except BridgeError as error:
            self.assertEqual(error.data_code, "cancelled")
        self.assertGreaterEqual(await cancels[0], 0)
        self.assertTrue(arrived_after, "the rest of the line never arrived; nothing was tested")
        self.assertEqual(len(shown), 1, "on_line was called after npc.cancel(): %r" % shown[1:2])

    async def test_session_cancel_stops_the_text_at_once(self):
        session = await self.bridge.create_session(
            model=scripted({"text": " ".join("word%d" % i for i in range(40)), "chunks": 20}))
        shown, cancels, arrived_after = [], [], []

        def on_text(text):
            shown.append(text)
            if not cancels:
                cancels.append(asyncio.ensure_future(session.cancel()))

        def on_session_event(params):
            if cancels and params["event"]["type"] == "text":
                arrived_after.append(params["event"])

        self.bridge.on_notification("session/event", on_session_event)
        try:
            await session.respond("Count.", on_text=on_text)
        except BridgeError as error:
            self.assertEqual(error.data_code, "cancelled")
        await cancels[0]
        self.assertTrue(arrived_after, "the rest of the text never arrived; nothing was tested")
        self.assertEqual(len(shown), 1, "on_text was called after session.cancel(): %r" % shown[1:2])

    async def test_npc_delete_stops_the_line_at_once(self):
        line = " ".join("word%d" % i for i in range(40))
        gorm = await self.bridge.create_npc({"name": "Gorm"}, options={"replyFormat": "text"},
                                            model=scripted({"text": "[happy] " + line, "chunks": 20, "delayMs": 20}))
        shown, deletes, arrived_after = [], [], []

        def on_line(text):
            shown.append(text)
            if not deletes:  # Gorm is killed at his first words
                deletes.append(asyncio.ensure_future(gorm.delete()))

        def on_npc_event(params):
            if deletes and params["event"]["type"] == "lineDelta":
                arrived_after.append(params["event"])

        self.bridge.on_notification("npc/event", on_npc_event)
        try:
            await gorm.talk("Hello", on_line=on_line)  # the turn had ended when the delete came: its reply
        except BridgeError as error:
            self.assertEqual(error.data_code, "cancelled")
        await deletes[0]
        self.assertTrue(arrived_after, "the rest of the line never arrived; nothing was tested")
        self.assertEqual(len(shown), 1, "on_line was called after npc.delete(): %r" % shown[1:2])
        self.assertEqual(await self.bridge.request("npc/list"), {"npcs": []})

    async def test_npc_delete_in_a_task_a_callback_starts_stops_the_line_when_the_task_starts(self):
        line = " ".join("word%d" % i for i in range(40))
        gorm = await self.bridge.create_npc({"name": "Gorm"}, options={"replyFormat": "text"},
                                            model=scripted({"text": "[happy] " + line, "chunks": 20, "delayMs": 20}))
        shown, deaths, arrived_after = [], [], []

        async def die():  # the game's own death scene, which deletes Gorm first thing
            await gorm.delete()

        def on_line(text):
            shown.append(text)
            if not deaths:  # Gorm is killed at his first words, by a task the callback starts
                deaths.append(asyncio.ensure_future(die()))

        def on_npc_event(params):
            if deaths and params["event"]["type"] == "lineDelta":
                arrived_after.append(params["event"])

        self.bridge.on_notification("npc/event", on_npc_event)
        try:
            await gorm.talk("Hello", on_line=on_line)
        except BridgeError as error:
            self.assertEqual(error.data_code, "cancelled")
        await deaths[0]
        self.assertTrue(arrived_after, "the rest of the line never arrived; nothing was tested")
        self.assertEqual(len(shown), 1, "on_line was called after the task that deletes Gorm started: %r" % shown[1:2])

    async def test_session_delete_stops_the_text_at_once(self):
        session = await self.bridge.create_session(
            model=scripted({"text": " ".join("word%d" % i for i in range(40)), "chunks": 20, "delayMs": 20}))
        shown, deletes, arrived_after = [], [], []

        def on_text(text):
            shown.append(text)
            if not deletes:
                deletes.append(asyncio.ensure_future(session.delete()))

        def on_session_event(params):
            if deletes and params["event"]["type"] == "text":
                arrived_after.append(params["event"])

        self.bridge.on_notification("session/event", on_session_event)
        try:
            await session.respond("Count.", on_text=on_text)
        except BridgeError as error:
            self.assertEqual(error.data_code, "cancelled")
        await deletes[0]
        self.assertTrue(arrived_after, "the rest of the text never arrived; nothing was tested")
        self.assertEqual(len(shown), 1, "on_text was called after session.delete(): %r" % shown[1:2])

    async def test_a_save_loaded_over_a_talking_npc_shows_nothing_more_of_the_old_line(self):
        line = " ".join("word%d" % i for i in range(40))
        model = scripted({"text": "[happy] " + line, "chunks": 20, "delayMs": 20}, {"text": "[calm] Welcome back."})
        gorm = await self.bridge.create_npc({"name": "Gorm"}, npc="gorm", options={"replyFormat": "text"},
                                            model=model)
        save = await gorm.state()
        shown, loads = [], []

        async def load(deleted):  # the player loads a save: Gorm is deleted, then restored under his id
            await deleted
            return await self.bridge.restore_npc(save, npc="gorm", model=model)

        def on_line(text):
            shown.append(text)
            if not loads:  # at Gorm's first words; delete() called here silences the line at once
                loads.append(asyncio.ensure_future(load(gorm.delete())))

        try:
            await gorm.talk("Hello", on_line=on_line)
        except BridgeError as error:
            self.assertEqual(error.data_code, "cancelled")
        restored = await loads[0]
        self.assertEqual(len(shown), 1, "on_line was called after the save was loaded: %r" % shown[1:2])
        lines = []  # the restored Gorm's next line is shown in full
        self.assertEqual((await restored.talk("Hi", on_line=lines.append))["line"], lines[-1])

    async def test_npc_restore_loads_a_save_over_a_living_npc_under_its_id(self):
        model = scripted({"text": "[calm] First."}, {"text": "[happy] Zzz.", "delayMs": 60000})
        gorm = await self.bridge.create_npc({"name": "Gorm"}, npc="gorm", options={"replyFormat": "text"},
                                            model=model)
        self.assertEqual((await gorm.talk("Hello"))["line"], "First.")
        save = await gorm.state()
        lines = []
        talking = asyncio.ensure_future(gorm.talk("Wake up.", on_line=lines.append))
        await gorm.state(settle=False)  # the talk was sent first
        restored = await gorm.restore(save)  # the player loads the save while Gorm talks
        with self.assertRaises(BridgeError) as caught:
            await talking
        self.assertEqual((caught.exception.code, caught.exception.data_code), (-32009, "cancelled"))
        self.assertRegex(caught.exception.message, r"'npc/talk' was cancelled with the rest of the work of NPC 'gorm' "
                                                r"when npc\.restore\(\) replaced the NPC \(it deletes it first\)\.$")
        self.assertEqual(lines, [])
        self.assertEqual(restored.id, "gorm")
        self.assertEqual(await restored.state(), save)
        self.assertEqual([n["npc"] for n in await self.bridge.list_npcs()], ["gorm"])
        # The model is not saved: the NPC runs on the one the handle was created with (from its first step).
        self.assertEqual((await restored.talk("Hello"))["line"], "First.")

    async def test_npc_restore_from_a_callback_stops_the_old_line_at_once(self):
        line = " ".join("word%d" % i for i in range(40))
        model = scripted({"text": "[happy] " + line, "chunks": 20, "delayMs": 20}, {"text": "[calm] Welcome back."})
        gorm = await self.bridge.create_npc({"name": "Gorm"}, npc="gorm", options={"replyFormat": "text"},
                                            model=model)
        save = await gorm.state()
        shown, loads = [], []

        def on_line(text):
            shown.append(text)
            if not loads:  # the player loads a save at Gorm's first words
                loads.append(asyncio.ensure_future(gorm.restore(save)))

        try:
            await gorm.talk("Hello", on_line=on_line)
        except BridgeError as error:
            self.assertEqual(error.data_code, "cancelled")
        restored = await loads[0]
        self.assertEqual(len(shown), 1, "on_line was called after npc.restore(): %r" % shown[1:2])
        lines = []  # the restored Gorm's next line is shown in full
        self.assertEqual((await restored.talk("Hi", on_line=lines.append))["line"], lines[-1])

    async def test_npc_restore_of_a_save_the_bridge_refuses_keeps_the_npc_as_it_was(self):
        gorm = await self.bridge.create_npc({"name": "Gorm"}, npc="gorm", options={"replyFormat": "text"},
                                            memory={"facts": ["Aria likes axes."], "relationship": 25},
                                            model=scripted({"text": "[calm] Three axes."}))
        self.assertEqual((await gorm.talk("Any axes?"))["line"], "Three axes.")
        before = await gorm.state()
        edited = json.loads(json.dumps(before))
        edited["memory"]["relationship"] = 500  # a save edited by hand
        with self.assertRaises(BridgeError) as caught:
            await gorm.restore(edited)
        self.assertEqual(caught.exception.code, -32602)
        self.assertIn("'state.memory.relationship' must be at most 100", str(caught.exception))
        self.assertEqual([n["npc"] for n in await self.bridge.list_npcs()], ["gorm"])
        self.assertEqual(await gorm.state(), before, "nothing of the NPC was lost")
        self.assertEqual((await gorm.talk("Any axes?"))["line"], "Three axes.")  # on its model, from the first step
        # A value JSON cannot send is refused before anything is sent: the NPC goes on as it was.
        now = await gorm.state()
        edited["memory"]["relationship"] = math.nan
        with self.assertRaisesRegex(ValueError, r"^npc\.restore\(\): state\['memory'\]\['relationship'\] is nan"):
            gorm.restore(edited)
        self.assertEqual(await gorm.state(), now)

    async def test_a_talk_that_npc_delete_cancelled_raises_cancelled(self):
        gorm = await self.bridge.create_npc({"name": "Gorm"}, options={"replyFormat": "text"},
                                            model=scripted({"text": "[happy] Zzz.", "delayMs": 60000}))
        lines = []
        talking = asyncio.ensure_future(gorm.talk("Wake up.", on_line=lines.append))
        await gorm.state(settle=False)  # the talk was sent first
        await gorm.delete()
        with self.assertRaises(BridgeError) as caught:
            await talking
        self.assertEqual((caught.exception.code, caught.exception.data_code), (-32009, "cancelled"))
        self.assertEqual(lines, [])
        # It says why, as the typed client's does.
        self.assertRegex(caught.exception.message, r"^The (turn|request) was cancelled[^.]*\. 'npc/talk' was cancelled "
                                                r"with the rest of the work of NPC '[^']+' when npc\.delete\(\) "
                                                r"deleted the NPC\.$")

    async def test_a_turn_that_session_delete_cancelled_says_so(self):
        guide = await self.bridge.create_session(session="guide", model=scripted({"text": "Zzz.", "delayMs": 60000}))
        answering = asyncio.ensure_future(guide.respond("Which way?"))
        await self.bridge.request("ping")  # the turn was sent first
        await guide.delete()  # the level ends while the guide answers
        with self.assertRaises(BridgeError) as caught:
            await answering
        self.assertRegex(caught.exception.message, r"^The (turn|request) was cancelled[^.]*\. 'session/respond' was "
                                                r"cancelled with the rest of the work of session 'guide' when "
                                                r"session\.delete\(\) deleted the session\.$")

    async def _hand_sent_end_stops_the_line(self, methods, send, what):
        """Gorm talks a long line; at its first words the game's own code ends his work with `send` (a request or a
        notification of each of `methods`): no later word of that line may reach on_line."""
        line = " ".join("word%d" % i for i in range(40))
        for method in methods:
            gorm = await self.bridge.create_npc(
                {"name": "Gorm"}, npc="gorm", options={"replyFormat": "text"},
                model=scripted({"text": "[happy] " + line, "chunks": 20, "delayMs": 20}))
            shown, sent, arrived_after = [], [], []

            def on_line(text):
                shown.append(text)
                if not sent:
                    sent.append(asyncio.ensure_future(send(method, {"npc": "gorm"})))

            def on_npc_event(params):
                if sent and params["event"]["type"] == "lineDelta":
                    arrived_after.append(params["event"])

            remove = self.bridge.on_notification("npc/event", on_npc_event)
            try:
                await gorm.talk("Hello", on_line=on_line)  # the turn had ended when the end came: its reply
            except BridgeError as error:
                self.assertEqual(error.data_code, "cancelled")
            await sent[0]
            remove()
            self.assertTrue(arrived_after, "the rest of the line never arrived; nothing was tested")
            self.assertEqual(len(shown), 1, "on_line was called after %s: %r" % (what % method, shown[1:2]))
            await self.bridge.request("ping")  # a notification has been read
            if method == "npc/cancel":
                await gorm.delete()

    async def test_a_delete_or_cancel_sent_by_hand_stops_the_line_at_once_as_the_method_does(self):
        await self._hand_sent_end_stops_the_line(("npc/delete", "npc/cancel"), self.bridge.request, "a hand-sent %s")

    async def test_a_cancel_or_delete_notification_sent_by_hand_stops_the_line_at_once_too(self):
        await self._hand_sent_end_stops_the_line(("npc/cancel", "npc/delete"), self.bridge.notify, "a %s notification")

    async def test_a_turn_that_a_delete_notification_cancelled_says_so(self):
        gorm = await self.bridge.create_npc({"name": "Gorm"}, npc="gorm", options={"replyFormat": "text"},
                                            model=scripted({"text": "[happy] Zzz.", "delayMs": 60000}))
        talking = asyncio.ensure_future(gorm.talk("Wake up."))
        await gorm.state(settle=False)  # the talk was sent first
        await self.bridge.notify("npc/delete", {"npc": "gorm"})
        with self.assertRaises(BridgeError) as caught:
            await talking
        self.assertEqual(caught.exception.code, -32009)
        self.assertRegex(caught.exception.message, r"^The (turn|request) was cancelled[^.]*\. 'npc/talk' was cancelled "
                                                r"with the rest of the work of NPC 'gorm' when an 'npc/delete' "
                                                r"notification deleted the NPC\.$")

    async def test_a_session_cancel_sent_by_hand_stops_the_text_at_once(self):
        session = await self.bridge.create_session(
            session="guide", model=scripted({"text": " ".join("word%d" % i for i in range(40)), "chunks": 20}))
        shown, sent = [], []

        def on_text(text):
            shown.append(text)
            if not sent:
                sent.append(asyncio.ensure_future(self.bridge.request("session/cancel", {"session": "guide"})))

        try:
            await session.respond("Count.", on_text=on_text)
        except BridgeError as error:
            self.assertEqual(error.data_code, "cancelled")
        await sent[0]
        self.assertEqual(len(shown), 1, "on_text was called after a hand-sent session/cancel: %r" % shown[1:2])

    async def test_a_turn_that_a_delete_sent_by_hand_cancelled_says_so(self):
        gorm = await self.bridge.create_npc({"name": "Gorm"}, npc="gorm", options={"replyFormat": "text"},
                                            model=scripted({"text": "[happy] Zzz.", "delayMs": 60000}))
        talking = asyncio.ensure_future(gorm.talk("Wake up."))
        await gorm.state(settle=False)  # the talk was sent first
        self.assertEqual(await self.bridge.request("npc/delete", {"npc": "gorm"}), {"npc": "gorm", "deleted": True})
        with self.assertRaises(BridgeError) as caught:
            await talking
        self.assertEqual(caught.exception.code, -32009)
        self.assertRegex(caught.exception.message, r"^The (turn|request) was cancelled[^.]*\. 'npc/talk' was cancelled "
                                                r"with the rest of the work of NPC 'gorm' when an 'npc/delete' request "
                                                r"deleted the NPC\.$")

    async def test_a_restore_whose_task_is_cancelled_still_ends_with_the_npc_restored(self):
        gorm = await self.bridge.create_npc({"name": "Gorm"}, npc="gorm", options={"replyFormat": "text"},
                                            model=scripted({"text": "[calm] First."}))
        save = await gorm.state()
        self.assertEqual((await gorm.talk("Hello"))["line"], "First.")
        # The load is cancelled (the scene unloads, a timeout) right after it began, then once its requests went.
        loop = asyncio.get_running_loop()
        for steps_before_cancel in (1, 2, 3):
            loading = asyncio.ensure_future(gorm.restore(save))

            def cancel_after(steps):
                if steps == 0:
                    loading.cancel()
                else:
                    loop.call_soon(cancel_after, steps - 1)

            loop.call_soon(cancel_after, steps_before_cancel - 1)
            with self.assertRaises(asyncio.CancelledError):
                await loading
            # The NPC is not lost: the restore was finished before the cancellation came through.
            self.assertEqual([n["npc"] for n in await self.bridge.list_npcs()], ["gorm"],
                             "after a cancel at step %d" % steps_before_cancel)
            self.assertEqual(await gorm.state(), save)
            self.assertEqual((await gorm.talk("Hello"))["line"], "First.")

    async def test_a_coroutine_typewriter_of_a_turn_walked_away_from_stops_and_warns_of_nothing(self):
        gorm = await self.bridge.create_npc(
            {"name": "Gorm"}, options={"replyFormat": "text"},
            model=scripted({"text": "[happy] " + " ".join("word%d" % i for i in range(40)), "chunks": 20}))
        shown = []

        async def on_line(text):
            shown.append(text)
            if len(shown) == 1:
                turn.cancel()
            await asyncio.sleep(0)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            turn = asyncio.ensure_future(gorm.talk("Hello", on_line=on_line))
            with self.assertRaises(asyncio.CancelledError):
                await turn
            await self.bridge.request("ping")
            await asyncio.gather(*self.bridge._callback_tasks)
            gc.collect()
        self.assertEqual(len(shown), 1, "the typewriter went on after the player walked away")
        self.assertEqual([str(w.message) for w in caught], [])

    async def test_a_callback_that_raises_gets_no_more_events(self):
        gorm = await self.bridge.create_npc(
            {"name": "Gorm"}, options={"replyFormat": "text"},
            model=scripted({"text": "[happy] " + " ".join("word%d" % i for i in range(40)), "chunks": 20}))
        calls = []

        def on_line(text):
            calls.append(text)
            raise RuntimeError("the dialogue box is gone")

        with self.assertRaises(RuntimeError) as caught:
            await gorm.talk("Hello", on_line=on_line)
        self.assertEqual(str(caught.exception), "the dialogue box is gone")
        self.assertEqual(len(calls), 1, "a callback that raised was called %d times" % len(calls))

    async def test_a_coroutine_callback_that_raises_gets_no_more_events(self):
        session = await self.bridge.create_session(model=scripted({"text": "a b c d e f g h i j", "chunks": 10}))
        calls = []

        async def on_text(text):
            calls.append(text)
            raise RuntimeError("subtitles failed")

        with self.assertRaises(RuntimeError):
            await session.respond("Hello", on_text=on_text)
        self.assertLess(len(calls), 10, "a coroutine callback that raised was called for every later event")

    async def test_a_tool_that_waits_for_its_own_npcs_save_is_explained_at_its_timeout(self):
        saves = []

        @self.bridge.tool(description="Save the game.", timeout=1)
        async def save_game(args, context):
            saves.append(await self.bridge.npc(context.npc).state())  # waits for this very turn
            return "saved"

        @self.bridge.tool(description="Save the game, the right way.")
        async def save_now(args, context):
            saves.append(await self.bridge.npc(context.npc).state(settle=False))
            return "saved"

        gorm = await self.bridge.create_npc(
            {"name": "Gorm"}, npc="gorm", tools=[save_game, save_now], options={"replyFormat": "text"},
            model=scripted({"toolCalls": [{"name": "save_game", "arguments": {}}]}, {"template": "{toolOutput}"},
                           {"toolCalls": [{"name": "save_now", "arguments": {}}]}, {"template": "{toolOutput}"}))
        with self.assertLogs("open_apple_models", "WARNING") as logs:
            result = await gorm.talk("Save, please.")
        self.assertIn("timed out", result["line"])
        self.assertEqual(len(logs.output), 1, logs.output)
        self.assertIn("Tool 'save_game' timed out while 'npc/state' of its own NPC 'gorm', sent while the handler "
                      "ran, waited for the turn that made the call", logs.output[0])
        self.assertIn("save with npc.state(settle=False)", logs.output[0])
        self.assertEqual(saves, [])
        self.assertEqual((await gorm.talk("Again."))["line"], "saved")
        self.assertEqual(len(saves), 1)

    async def test_npc_client_tool_bark_state_and_restore(self):
        @self.bridge.tool(description="Look up stock of an item.",
                          parameters={"type": "object", "properties": {"item": {"type": "string"}}})
        def check_inventory(args, context):
            return {"item": args.get("item"), "stock": 3, "npc": context.npc}

        model = scripted({"toolCalls": [{"name": "check_inventory", "arguments": {"item": "iron sword"}}]},
                         {"text": "[happy] Three left."}, {"text": "Rain again."})
        gorm = await self.bridge.create_npc({"name": "Gorm"}, npc="gorm", tools=["check_inventory"],
                                            options={"replyFormat": "text"}, model=model)
        result = await gorm.talk("Any swords?")
        self.assertEqual(result["toolCalls"][0]["output"]["npc"], "gorm")
        self.assertEqual((result["line"], result["emotion"]), ("Three left.", "happy"))
        self.assertEqual(await gorm.bark("It is raining."), "Rain again.")
        save = await gorm.state()
        self.assertEqual(save["version"], 1)
        restored = await self.bridge.restore_npc(save, npc="gorm2", model=scripted({"text": "[neutral] Back again?"}))
        self.assertEqual(restored.id, "gorm2")
        self.assertEqual((await restored.talk("Hello"))["line"], "Back again?")
        self.assertEqual(sorted(n["npc"] for n in await self.bridge.list_npcs()), ["gorm", "gorm2"])
        with self.assertRaises(BridgeError) as caught:
            await self.bridge.npc("nobody").talk("Hi")
        self.assertEqual(caught.exception.data_code, "npc_not_found")

    async def test_restore_npc_sends_null_for_null_and_leaves_out_none(self):
        world = await self.bridge.create_world({"gold": 1}, world="village")
        gorm = await self.bridge.create_npc({"name": "Gorm"}, npc="gorm", world=world,
                                            options={"replyFormat": "text"}, model=scripted())
        save = await gorm.state()
        self.assertEqual(save["world"], "village")
        # None leaves the key out: the saved world and options come back.
        kept = await self.bridge.restore_npc(save, npc="kept", world=None, options=None, model=scripted())
        kept_save = await kept.state()
        self.assertEqual((kept_save["world"], kept_save["options"]["replyFormat"]), ("village", "text"))
        # NULL sends null: no world, default options (the spec: a key sent, even null, wins over the save).
        detached = await self.bridge.restore_npc(save, npc="detached", world=NULL, options=NULL, model=scripted())
        self.assertEqual(detached.warnings, [])
        detached_save = await detached.state()
        self.assertEqual((detached_save["world"], detached_save["options"]["replyFormat"]), (None, "automatic"))
        listed = {n["npc"]: n["world"] for n in await self.bridge.list_npcs()}
        self.assertEqual(listed, {"gorm": "village", "kept": "village", "detached": None})
        self.assertIs(bool(NULL), False)
        self.assertEqual(repr(NULL), "NULL")

    async def test_create_session_from_history_with_null_instructions_and_tools(self):
        @self.bridge.tool(description="Open a named gate.", parameters=GATE)
        def open_gate(args):
            return {"opened": True}

        guard = await self.bridge.create_session("You are a guard.", session="guard", tools=["open_gate"],
                                                 model=scripted({"text": "Halt."}))
        await guard.respond("Hello")
        history = await guard.transcript()
        again = await self.bridge.create_session(session="again", history=history, model=scripted())
        bare = await self.bridge.create_session(NULL, session="bare", history=history, tools=NULL,
                                                model=scripted())
        sessions = {s["session"]: s for s in await self.bridge.list_sessions()}
        self.assertEqual((sessions["again"].get("instructions"), sessions["again"]["tools"]),
                         ("You are a guard.", ["open_gate"]))
        self.assertEqual((sessions["bare"].get("instructions"), sessions["bare"]["tools"]), (None, []))
        self.assertEqual((again.warnings, bare.warnings), ([], []))

    async def test_decisions(self):
        decision = await self.bridge.decide(
            "A wolf blocks the path.", [{"id": "fight", "description": "Attack"}, "flee"],
            actor={"name": "Snik", "personality": "timid"},
            model=scripted({"json": {"reasoning": "Snik is timid.", "choice": "flee", "confidence": 75}}))
        self.assertEqual(decision["optionID"], "flee")
        self.assertEqual(decision["confidence"], 75)
        self.assertFalse(decision["isFallback"])
        results = await self.bridge.decide_many(
            [{"situation": "Low health.", "options": ["heal", "attack"]}, {"situation": "Alone.", "options": ["wait"]}],
            model=scripted({"json": {"reasoning": "Hurt.", "choice": "heal", "confidence": 90}}))
        self.assertEqual([r["optionID"] for r in results], ["heal", "wait"])

    async def test_a_handle_goes_where_its_id_goes(self):
        gorm = await self.bridge.create_npc({"name": "Gorm", "role": "the village smith"}, npc="gorm-actor",
                                            model=scripted())
        decision = await self.bridge.decide(
            "A wolf blocks the path.", ["fight", "flee"], actor=gorm,
            model=scripted({"json": {"reasoning": "A smith fights.", "choice": "fight", "confidence": 60}}))
        self.assertEqual(decision["optionID"], "fight")
        world = await self.bridge.create_world({"gold": 1}, world="handles")
        value = await self.bridge.request("world/get", {"world": world, "path": "gold"})
        self.assertEqual(value["value"], 1)

    async def test_content_generate(self):
        schema = {"type": "object", "properties": {"name": {"type": "string"}, "price": {"type": "integer"}},
                  "required": ["name", "price"]}
        content = await self.bridge.generate("A sword for a shop.", schema,
                                             model=scripted({"json": {"price": 45, "name": "Iron Sword"}}))
        self.assertEqual(content, {"name": "Iron Sword", "price": 45})
        self.assertEqual(list(content), ["name", "price"])

    async def test_world_operations(self):
        world = await self.bridge.create_world({"player": {"gold": 10}})
        changes = []
        subscription = await world.subscribe(changes.append)
        self.assertEqual(await world.set("player.name", "Aria"), 1)
        self.assertEqual(await world.merge({"gold": 20, "items": ["rope"]}, path="player"), 2)
        self.assertEqual(await world.get("player.missing", default="none"), "none")
        removed = await world.remove("player.items")
        self.assertTrue(removed["removed"])
        self.assertEqual(await world.snapshot(), {"player": {"gold": 20, "name": "Aria"}})
        await subscription.unsubscribe()
        await world.set("player.gold", 0)
        self.assertEqual([c["path"] for c in changes], ["player.name", "player.gold", "player.items", "player.items"])
        with self.assertRaises(BridgeError) as caught:
            await self.bridge.world("nowhere").get()
        self.assertEqual(caught.exception.data_code, "world_not_found")


    async def test_unsubscribe_stops_the_callback_at_once_mid_turn(self):
        # An NPC writes three values in one turn; the game unsubscribes at the first change. The later changes
        # are already on their way (the bridge wrote them before it read the unsubscribe): none reaches the
        # callback once unsubscribe() was called, as in the TypeScript client.
        world = await self.bridge.create_world({})
        seen, unsubscribing = [], []

        def on_change(change):
            seen.append(change["path"])
            if len(seen) == 1:
                unsubscribing.append(subscription.unsubscribe())  # not awaited here: a plain callback

        subscription = await world.subscribe(on_change)
        write = lambda path: {"name": "update_world_state", "arguments": {"path": path, "value": "1"}}  # noqa: E731
        ned = await self.bridge.create_npc({"name": "Ned"}, world=world, options={"worldWritable": [""]}, model=scripted(
            {"toolCalls": [write("x"), write("y")]}, {"toolCalls": [write("z")]},
            {"json": {"emotion": "neutral", "line": "Done.", "player_options": ["a", "b", "c"],
                      "ends_conversation": False}}))
        await ned.talk("Go.")
        await unsubscribing[0]
        self.assertEqual(seen, ["x"])
        self.assertEqual(await world.snapshot(), {"x": 1, "y": 1, "z": 1})

    async def test_unsubscribe_after_the_world_was_deleted_or_twice_does_nothing(self):
        world = await self.bridge.create_world({})
        first = await world.subscribe(lambda change: None)
        await first.unsubscribe()
        await first.unsubscribe()
        second = await world.subscribe(lambda change: None)
        await world.delete()
        await second.unsubscribe()
        with self.assertRaises(BridgeError) as caught:
            await Subscription(world, "sub99", "").unsubscribe()  # an id this client never had
        self.assertEqual(caught.exception.data_code, "subscription_not_found")

    async def test_subscribe_to_a_path_not_there_yet_keeps_the_warning(self):
        world = await self.bridge.create_world({"quests": {"wolves": {}}})
        subscription = await world.subscribe(lambda change: None, path="quests.wolfs.stage")
        self.assertEqual(len(subscription.warnings), 1)
        self.assertIn("'quests.wolfs.stage', which does not exist", subscription.warnings[0])
        self.assertIn("'quests' has keys: wolves", subscription.warnings[0])
        there = await world.subscribe(lambda change: None, path="quests")
        self.assertEqual(there.warnings, [])

class MistakeTests(BridgeTestCase):
    """What a script gets wrong is refused before anything is sent, with an error that names it."""

    async def test_text_with_a_lone_surrogate_is_refused_naming_it(self):
        session = await self.bridge.create_session(model=scripted({"text": "first"}))
        with self.assertRaises(ValueError) as caught:
            await session.respond("caf\udce9 menu")  # bytes decoded with errors="surrogateescape"
        self.assertIn("params.prompt", str(caught.exception))
        self.assertIn("surrogate", str(caught.exception))
        self.assertEqual((await session.respond("again"))["text"], "first")

    async def test_tool_result_with_a_lone_surrogate_is_an_error_output_at_once(self):
        @self.bridge.tool(description="List the save files.", timeout=3)
        def saves(args):
            return ["slot1", "caf\udce9.sav"]

        @self.bridge.tool(description="Load a save file.", timeout=3)
        def load(args):
            raise FileNotFoundError("No such file: 'caf\udce9.sav'")

        session = await self.bridge.create_session(
            tools=["saves", "load"],
            model=scripted({"toolCalls": [{"name": "saves", "arguments": {}}, {"name": "load", "arguments": {}}]},
                           {"text": "ok"}))
        result = await session.respond("Which saves are there?")
        outputs = {record["call"]["name"]: record for record in result["toolCalls"]}
        self.assertTrue(outputs["saves"]["isError"])
        self.assertIn("result.output[1] has a lone surrogate", outputs["saves"]["output"])
        self.assertTrue(outputs["load"]["isError"])
        self.assertEqual(outputs["load"]["output"], "FileNotFoundError: No such file: 'caf\\udce9.sav'")

    async def test_message_longer_than_the_bridge_reads_is_refused(self):
        bridge = Bridge(bridge_command(COMMAND) + ["--max-line-bytes", "4096"])
        await bridge.start()
        try:
            session = await bridge.create_session(model=scripted({"text": "short"}))
            with self.assertRaises(BridgeError) as caught:
                await asyncio.wait_for(session.respond("x" * 5000), 10)
            self.assertEqual((caught.exception.code, caught.exception.data_code), (-32600, "invalid_message"))
            self.assertIn("longer than the 4096 bytes", caught.exception.message)
            self.assertEqual((await session.respond("hi"))["text"], "short")
        finally:
            await bridge.close()

    async def test_a_saved_world_too_large_for_one_line_says_to_load_it_in_parts(self):
        bridge = Bridge(bridge_command(COMMAND) + ["--max-line-bytes", "4096"])
        await bridge.start()
        try:
            save = {"lore": {"book%d" % i: "word " * 200 for i in range(6)}}
            for load in (lambda: bridge.create_world(save, world="big"),
                         lambda: bridge.world("big").set("", save),
                         lambda: bridge.world("big").merge(save)):
                with self.assertRaises(BridgeError) as caught:
                    await load()
                self.assertEqual(caught.exception.data_code, "invalid_message")
                self.assertIn("A world's state this large loads in parts: world/create with part of it, then "
                              "world/merge the rest", caught.exception.message)
            with self.assertRaises(BridgeError) as caught:  # not a world: no such advice
                await bridge.request("ping", {"padding": "x" * 5000})
            self.assertNotIn("in parts", caught.exception.message)
        finally:
            await bridge.close()

    async def test_tool_result_longer_than_the_bridge_reads_is_an_error_output(self):
        bridge = Bridge(bridge_command(COMMAND) + ["--max-line-bytes=4096"])
        await bridge.start()
        try:
            @bridge.tool(description="Read the whole library.", timeout=3)
            def library(args):
                return "page " * 2000

            session = await bridge.create_session(
                tools=["library"], model=scripted({"toolCalls": [{"name": "library", "arguments": {}}]}, {"text": "ok"}))
            result = await asyncio.wait_for(session.respond("Read everything."), 10)
            self.assertTrue(result["toolCalls"][0]["isError"])
            self.assertIn("longer than the 4096 bytes", result["toolCalls"][0]["output"])
        finally:
            await bridge.close()

    async def test_bare_tool_decorator_registers_the_function(self):
        @self.bridge.tool
        def ring_bell(args):
            """Ring the bell."""
            return "dong"

        self.assertTrue(callable(ring_bell) and ring_bell.__name__ == "ring_bell")
        self.assertEqual(self.bridge.tool_definitions(["ring_bell"])[0]["description"], "Ring the bell.")
        session = await self.bridge.create_session(
            tools=["ring_bell"], model=scripted({"toolCalls": [{"name": "ring_bell", "arguments": {}}]},
                                                {"template": "{toolOutput}"}))
        self.assertEqual((await session.respond("Ring it."))["text"], "dong")

    async def test_tools_may_be_the_decorated_functions(self):
        @self.bridge.tool(description="Open a named gate.", parameters=GATE)
        def open_gate(args):
            return "opened"

        session = await self.bridge.create_session(
            tools=[open_gate], model=scripted(open_gate_step(), {"template": "{toolOutput}"}))
        self.assertEqual((await session.respond("Open it."))["text"], "opened")

        def not_registered(args):
            return None

        with self.assertRaisesRegex(TypeError, "not_registered"):
            await self.bridge.create_session(tools=[not_registered])
        with self.assertRaisesRegex(TypeError, "tools must be a list"):
            await self.bridge.create_session(tools="open_gate")

    async def test_callbacks_that_are_not_functions_are_refused_before_sending(self):
        session = await self.bridge.create_session(model=scripted({"text": "first"}))
        with self.assertRaisesRegex(TypeError, "on_text"):
            await session.respond("Hi", on_text="speech_label")
        self.assertEqual((await session.respond("again"))["text"], "first")  # nothing was sent
        npc = await self.bridge.create_npc({"name": "Gorm"}, model=scripted())
        with self.assertRaisesRegex(TypeError, "on_emotion"):
            await npc.talk("Hi", on_emotion="portrait")
        world = await self.bridge.create_world({"gold": 1})
        with self.assertRaisesRegex(TypeError, "callback"):
            await world.subscribe("gold", lambda change: None)  # path and callback swapped
        with self.assertRaisesRegex(TypeError, "handler"):
            self.bridge.add_tool("open_gate", "Open a gate.")

    async def test_decision_options_must_be_a_list(self):
        with self.assertRaisesRegex(TypeError, "options"):
            await self.bridge.decide("A wolf blocks the path.", "fight")
        # A dict of ids to descriptions is how a Python writer lists choices: the advice is the option objects it
        # means, not the dict inside a list (which the bridge refuses: an option object has 'id').
        with self.assertRaises(TypeError) as caught:
            await self.bridge.decide("A wolf blocks the path.", {"fight": "Attack it", "flee": "Run home"})
        self.assertIn("options=[{'id': 'fight', 'description': 'Attack it'}, "
                      "{'id': 'flee', 'description': 'Run home'}]", str(caught.exception))
        self.assertNotIn("options=[{'fight'", str(caught.exception))
        with self.assertRaises(TypeError) as caught:  # one option object, not in a list
            await self.bridge.decide("A wolf blocks the path.", {"id": "fight", "description": "Attack it"})
        self.assertIn("options=[{'id': 'fight', 'description': 'Attack it'}]", str(caught.exception))

    async def test_world_seed_where_a_world_goes_is_refused(self):
        with self.assertRaisesRegex(TypeError, "create_world"):
            await self.bridge.create_npc({"name": "Gorm"}, world={"gold": 1})


class QuestWriterMistakeTests(BridgeTestCase):
    """A quest writer's Python values that JSON cannot carry as they are: refused before anything is sent, naming
    the call, the path and what to pass instead."""

    SWORD = {"type": "object", "properties": {"name": {"type": "string"}, "price": {"type": "integer"}},
             "required": ["name", "price"]}

    def sword(self):
        return scripted({"json": {"name": "Iron Sword", "price": 45}})

    def flee(self):
        return scripted({"json": {"reasoning": "Scared.", "choice": "flee", "confidence": 50}})

    async def test_an_int_beyond_2_53_is_refused_not_rounded(self):
        world = await self.bridge.create_world({"quest": {}})
        with self.assertRaises(ValueError) as caught:
            await world.set("quest.reward", 2 ** 70)
        message = str(caught.exception)
        self.assertIn("world.set('quest.reward'): the value is an int beyond 2**53 (1180591620717411303424)", message)
        self.assertIn("str(n)", message)
        self.assertIsNone(await world.get("quest.reward"))  # nothing was sent
        with self.assertRaisesRegex(ValueError, r"bridge\.generate\(\): context\['seed'\] is an int beyond 2\*\*53"):
            await self.bridge.generate("A sword.", self.SWORD, context={"seed": 2 ** 53 + 1}, model=self.sword())
        with self.assertRaisesRegex(ValueError, r"bridge\.decide_many\(\): requests\[0\]\['context'\]\['gold'\]"):
            await self.bridge.decide_many([{"situation": "Rich.", "options": ["a", "b"],
                                            "context": {"gold": -(2 ** 60)}}], model=self.flee())
        with self.assertRaisesRegex(ValueError, r"bridge\.create_world\(\): state\['gold'\]"):
            await self.bridge.create_world({"gold": decimal.Decimal("123456789012345678901234567890")})
        await world.set("quest.reward", 2 ** 53 - 1)  # the largest exact one goes through unchanged
        self.assertEqual(await world.get("quest.reward"), 2 ** 53 - 1)

    async def test_nan_and_infinity_name_the_call_and_the_path(self):
        world = await self.bridge.create_world({"quest": {}})
        with self.assertRaisesRegex(ValueError, r"^world\.set\('quest\.odds'\): the value is nan, which JSON cannot "
                                                r"send; pass a finite number \(or None\)"):
            await world.set("quest.odds", float("nan"))
        with self.assertRaisesRegex(ValueError, r"bridge\.decide\(\): context\['player'\]\['hp'\] is inf"):
            await self.bridge.decide("A wolf.", ["fight", "flee"], context={"player": {"hp": math.inf}},
                                     model=self.flee())
        with self.assertRaisesRegex(ValueError, r"world\.merge\(\): patch\['price'\] is Decimal\('NaN'\)"):
            await world.merge({"price": decimal.Decimal("NaN")})
        with self.assertRaisesRegex(ValueError, r"patch\['price'\] is Decimal\('Infinity'\)"):
            await world.merge({"price": decimal.Decimal("Infinity")})

    async def test_values_json_has_no_type_for_say_what_to_pass(self):
        import datetime
        import enum

        class Stage(enum.Enum):
            OFFERED = 1

        class Wolf:
            pass

        world = await self.bridge.create_world({"quest": {}})
        cases = [
            (datetime.datetime(2026, 1, 2, 3, 4),
             r"the value is a datetime \(datetime\.datetime\(2026, 1, 2, 3, 4\)\), which JSON has no type for; pass a "
             r"string: value\.isoformat\(\)"),
            (datetime.date(2026, 1, 2), r"the value is a date .*value\.isoformat\(\)"),
            (datetime.timedelta(minutes=2), r"the value is a timedelta .*pass a number: value\.total_seconds\(\)"),
            (b"\x00map", r"the value is bytes \(b'\\x00map'\), .*value\.decode\('utf-8'\)"),
            (Stage.OFFERED, r"the value is an Enum member \(Stage\.OFFERED\), .*Stage\.OFFERED\.value"),
            (Wolf(), r"the value is a Wolf \(<.*\), which JSON has no type for; pass a dict"),
        ]
        for value, expected in cases:
            with self.subTest(value=value):
                with self.assertRaisesRegex(TypeError, r"^world\.set\('quest\.when'\): " + expected):
                    await world.set("quest.when", value)
        with self.assertRaisesRegex(TypeError, r"bridge\.generate\(\): context\['party'\]\[1\] is bytes"):
            await self.bridge.generate("A sword.", self.SWORD, context={"party": ["Aria", b"Bram"]}, model=self.sword())
        self.assertEqual(await world.snapshot(), {"quest": {}})

    async def test_a_coroutine_not_awaited_says_to_await_it(self):
        world = await self.bridge.create_world({"gold": 5})
        gold = world.get("gold")  # await forgotten
        with self.assertRaisesRegex(TypeError, r"world\.set\('gold'\): the value is a coroutine that was never "
                                               r"awaited \(World\.get\): add await"):
            await world.set("gold", gold)
        self.assertEqual(await gold, 5)  # it was not spent by the refusal
        npc = self.bridge.create_npc({"name": "Gorm"}, npc="gorm", model=scripted())
        with self.assertRaisesRegex(TypeError, r"bridge\.decide\(\): actor is a coroutine that was never awaited "
                                               r"\(Bridge\.create_npc\): add await"):
            await self.bridge.decide("A wolf.", ["fight", "flee"], actor=npc, model=self.flee())
        village = self.bridge.create_world({})
        with self.assertRaisesRegex(TypeError, r"world is a coroutine that was never awaited \(Bridge\.create_world\): "
                                               r"add await"):
            await self.bridge.create_npc({"name": "Bram"}, world=village, model=scripted())
        await village
        await npc

    async def test_a_cancel_or_delete_not_awaited_is_named_as_written(self):
        gorm = await self.bridge.create_npc({"name": "Gorm"}, model=scripted())
        guide = await self.bridge.create_session(model=scripted())
        for call, name in ((gorm.cancel, "Npc.cancel"), (gorm.delete, "Npc.delete"),
                           (guide.cancel, "Session.cancel"), (guide.delete, "Session.delete")):
            never_awaited = r"^coroutine '%s' was never awaited" % name.replace(".", r"\.")
            with self.assertWarnsRegex(RuntimeWarning, never_awaited):
                call()  # await forgotten: nothing is sent
                gc.collect()
        world = await self.bridge.create_world({})
        cancelled = gorm.cancel()
        with self.assertRaisesRegex(TypeError, r"world\.set\('n'\): the value is a coroutine that was never awaited "
                                               r"\(Npc\.cancel\): add await \(x = await npc\.cancel\(\.\.\.\)\)"):
            await world.set("n", cancelled)
        self.assertEqual(await cancelled, 0)
        self.assertEqual(len((await self.bridge.request("npc/list"))["npcs"]), 1)  # the delete was never sent

    async def test_dict_keys_json_cannot_keep_are_refused(self):
        world = await self.bridge.create_world({"map": {}})
        with self.assertRaisesRegex(TypeError, r"world\.set\('map\.tiles'\): the value has a key \(1, 2\) \(a tuple\); "
                                               r"JSON object keys are strings"):
            await world.set("map.tiles", {(1, 2): "tree"})
        with self.assertRaisesRegex(TypeError, r"has a key None \(a NoneType\)"):
            await world.set("map.tiles", {None: "tree"})
        with self.assertRaisesRegex(ValueError, r"world\.set\('map\.tiles'\): the value has the keys 1 and '1', which "
                                                r"are the same JSON key '1'"):
            await world.set("map.tiles", {1: "tree", "1": "rock"})
        self.assertEqual(await world.snapshot(), {"map": {}})
        await world.set("map.tiles", {1: "tree", 2: "rock"})  # int keys are sent as their digits, as json does
        self.assertEqual(await world.get("map.tiles"), {"1": "tree", "2": "rock"})

    async def test_a_list_subclass_keeps_its_order(self):
        class Party(list):
            pass

        world = await self.bridge.create_world({})
        await world.set("party", Party(["Bram", "Aria"]))
        self.assertEqual(await world.get("party"), ["Bram", "Aria"])

    async def test_a_value_that_contains_itself_is_refused(self):
        world = await self.bridge.create_world({})
        party = {"leader": "Aria"}
        party["self"] = party
        with self.assertRaisesRegex(ValueError, r"world\.set\('party'\): value\['self'\] is the dict it is inside "
                                                r"\(the value contains itself\)"):
            await world.set("party", party)

    async def test_a_schema_written_as_python_types_says_how_to_write_it(self):
        with self.assertRaisesRegex(TypeError, r"^bridge\.generate\(\): schema\['properties'\]\['price'\]\['type'\] is "
                                               r"the Python type int; JSON Schema writes it \"integer\""):
            await self.bridge.generate("A sword.", {"type": "object", "properties": {"price": {"type": int}}},
                                       model=self.sword())
        with self.assertRaisesRegex(TypeError, r"schema\['properties'\]\['name'\] is the Python type str; JSON Schema "
                                               r"writes it \{\"type\": \"string\"\}"):
            await self.bridge.generate("A sword.", {"type": "object", "properties": {"name": str}}, model=self.sword())
        with self.assertRaisesRegex(TypeError, r"the schema is the Python type dict; JSON Schema writes it "
                                               r"\{\"type\": \"object\""):
            await self.bridge.generate("A sword.", dict, model=self.sword())
        with self.assertRaisesRegex(TypeError, r"^tool 'open_gate': parameters\['properties'\]\['gate'\]"
                                               r"\['type'\] is the Python type str; JSON Schema writes it \"string\""):
            @self.bridge.tool(description="Open a gate.", parameters={"type": "object",
                                                                      "properties": {"gate": {"type": str}}})
            def open_gate(args):
                return "opened"

    async def test_a_tool_result_json_cannot_send_names_the_path_to_the_model_and_the_log(self):
        import datetime

        @self.bridge.tool(description="When does the caravan come?")
        def caravan(args):
            return {"arrives": datetime.datetime(2026, 1, 2), "gold": 10}

        @self.bridge.tool(description="The treasury.")
        def treasury(args):
            return {"gold": 2 ** 60 + 1}

        session = await self.bridge.create_session(tools=[caravan, treasury], model=scripted(
            {"toolCalls": [{"name": "caravan", "arguments": {}}, {"name": "treasury", "arguments": {}}]},
            {"text": "ok"}))
        with self.assertLogs("open_apple_models", "WARNING") as logs:
            result = await session.respond("When?")
        outputs = {record["call"]["name"]: record for record in result["toolCalls"]}
        self.assertTrue(outputs["caravan"]["isError"])
        self.assertIn("The tool result is not valid JSON: output['arrives'] is a datetime",
                      outputs["caravan"]["output"])
        self.assertTrue(outputs["treasury"]["isError"])
        self.assertIn("output['gold'] is an int beyond 2**53 (1152921504606846977)", outputs["treasury"]["output"])
        self.assertTrue(any("Tool 'caravan' returned a value JSON cannot send" in line for line in logs.output),
                        logs.output)

    async def test_a_persona_or_handle_where_an_id_goes_says_what_to_pass(self):
        gorm = await self.bridge.create_npc({"name": "Gorm"}, npc="gorm", model=scripted())
        world = await self.bridge.create_world({"gold": 1}, world="village")
        with self.assertRaisesRegex(TypeError, r"^bridge\.npc\(\) takes an NPC's id \(a string such as 'gorm'\); got "
                                               r"a persona \(\{'name': 'Gorm'\}\): create the NPC with await "
                                               r"bridge\.create_npc\(persona\)"):
            self.bridge.npc({"name": "Gorm"})
        with self.assertRaisesRegex(TypeError, r"^bridge\.world\(\) takes a world's id .*got a dict \(\{'gold': 1\}\): "
                                               r"create the world with await bridge\.create_world\(state\)"):
            self.bridge.world({"gold": 1})
        with self.assertRaisesRegex(TypeError, r"^bridge\.npc\(\) .*got World\('village'\)"):
            self.bridge.npc(world)
        with self.assertRaisesRegex(TypeError, r"^bridge\.session\(\) takes a session's id"):
            self.bridge.session(gorm)
        self.assertEqual(self.bridge.npc(gorm).id, "gorm")  # its own kind's handle still works
        self.assertEqual(await self.bridge.world(world).get("gold"), 1)
        with self.assertRaisesRegex(TypeError, r"^bridge\.decide\(\): actor takes a persona dict, an Npc or an "
                                               r"NPC's id; got World\('village'\)"):
            await self.bridge.decide("A wolf.", ["fight", "flee"], actor=world, model=self.flee())
        decision = await self.bridge.decide("A wolf.", ["fight", "flee"], actor=gorm, model=self.flee())
        self.assertEqual(decision["optionID"], "flee")

    async def test_the_bridges_warnings_of_generate_and_decide_many_are_logged_not_dropped(self):
        schema = {"type": "object", "properties": {"name": {"type": "string"}, "stats": {"type": "object"}},
                  "required": ["name", "stats"]}
        with self.assertLogs("open_apple_models", "WARNING") as logs:
            content = await self.bridge.generate("A sword.", schema,
                                                 model=scripted({"json": {"name": "Iron Sword", "stats": {}}}))
        self.assertEqual(content, {"name": "Iron Sword", "stats": {}})  # the result is still the content alone
        self.assertEqual(len(logs.output), 1, logs.output)
        self.assertIn("bridge.generate(): #/properties/stats: object without 'properties' is generated as {}",
                      logs.output[0])
        with self.assertLogs("open_apple_models", "WARNING") as logs:
            results = await self.bridge.decide_many([{"situation": "A wolf.", "options": ["fight"], "sitaution": "x"}])
        self.assertEqual(results[0]["optionID"], "fight")
        self.assertIn("bridge.decide_many(): Unknown parameter 'requests[0].sitaution' was ignored", logs.output[0])

    async def test_decide_many_requests_that_are_not_requests_say_so(self):
        with self.assertRaisesRegex(TypeError, r"^bridge\.decide_many\(\) takes a list of requests"):
            await self.bridge.decide_many({"situation": "A wolf.", "options": ["fight", "flee"]})
        with self.assertRaisesRegex(TypeError, r"^bridge\.decide_many\(\): requests\[1\] is a str \('A bear\.'\); "
                                               r"a request is a dict"):
            await self.bridge.decide_many([{"situation": "A wolf.", "options": ["a"]}, "A bear."])
        with self.assertRaisesRegex(TypeError, r"^bridge\.decide_many\(\): requests\[0\]\['model'\] is not read per "
                                               r"decision: .*bridge\.decide_many\(requests, model=\.\.\.\)"):
            await self.bridge.decide_many([{"situation": "A wolf.", "options": ["fight", "flee"],
                                            "model": self.flee()}])
        with self.assertRaisesRegex(TypeError, r"requests\[0\]\['fallback_option_id'\] is spelled 'fallbackOptionID' "
                                               r"in a request"):
            await self.bridge.decide_many([{"situation": "A wolf.", "options": ["fight", "flee"],
                                            "fallback_option_id": "flee"}], model=self.flee())
        with self.assertRaisesRegex(TypeError, r"requests\[0\]\['actor'\] takes a persona dict"):
            await self.bridge.decide_many([{"situation": "A wolf.", "options": ["fight", "flee"],
                                            "actor": await self.bridge.create_world({})}], model=self.flee())


class LifecycleTests(unittest.IsolatedAsyncioTestCase):
    async def test_bridge_exits_when_the_client_closes(self):
        async with Bridge(COMMAND) as bridge:
            session = await bridge.create_session(model=scripted({"text": "never", "delayMs": 20000}))
            turn = asyncio.ensure_future(session.respond("x"))
            await asyncio.sleep(0.1)
        self.assertIsNotNone(bridge.returncode)
        with self.assertRaises(BridgeError) as caught:
            await turn
        self.assertIn(caught.exception.code, (-32009, -32023))
        with self.assertRaises(BridgeError) as caught:
            await bridge.request("ping")
        self.assertEqual(caught.exception.data_code, "shut_down")

    async def test_bridge_dying_mid_turn_is_a_clear_error(self):
        bridge = Bridge(COMMAND)
        await bridge.start()
        try:
            session = await bridge.create_session(model=scripted({"text": "never", "delayMs": 20000}))
            turn = asyncio.ensure_future(session.respond("x"))
            await asyncio.sleep(0.1)
            os.kill(bridge.pid, signal.SIGKILL)
            with self.assertRaises(BridgeError) as caught:
                await asyncio.wait_for(turn, 5)
            self.assertEqual(caught.exception.code, -32023)
            self.assertIn("exited (signal 9)", caught.exception.message)
            with self.assertRaises(BridgeError):
                await bridge.request("ping")
        finally:
            await bridge.close()

    async def test_a_bridge_that_exits_by_itself_says_why_with_its_last_stderr_lines(self):
        script = ("import sys\nfor line in ['starting', '', 'one', 'two', 'Error: no model.']:\n"
                  "    print(line, file=sys.stderr, flush=True)\nsys.stdin.readline()\nsys.exit(2)")
        read, write = os.pipe()
        saved_stderr = sys.stderr
        # asyncio's debug mode (the test case's) logs a callback slower than 0.1 s to the same sys.stderr, as a
        # loaded machine makes one: only the bridge's lines are to be seen here.
        asyncio.get_running_loop().slow_callback_duration = 3600
        sys.stderr = os.fdopen(write, "w")  # what the bridge writes to stderr is still passed on, line by line
        try:
            error = await self._error_of_a_bridge_that_exits(script)
        finally:
            sys.stderr.close()
            sys.stderr = saved_stderr
        with os.fdopen(read) as passed_on:
            self.assertEqual(passed_on.read(), "starting\n\none\ntwo\nError: no model.\n")
        self.assertEqual(error.code, -32023)
        self.assertEqual(error.message, "The bridge process exited (exit status 2) before answering. "
                         "Its last lines on stderr:\none\ntwo\nError: no model.")

    async def test_a_bridge_started_with_a_bad_flag_says_so(self):
        bridge = Bridge(bridge_command(COMMAND) + ["--bogus"])
        with self.assertRaises(BridgeError) as caught:
            await asyncio.wait_for(bridge.start(), 30)
        await bridge.close()
        self.assertEqual(caught.exception.data_code, "shut_down")
        self.assertTrue(caught.exception.message.startswith(
            "The bridge process exited (exit status 2) before answering. "
            "Its last lines on stderr:\nError: Unknown option '--bogus'."), caught.exception.message)

    async def test_an_exit_without_stderr_lines_ends_as_before(self):
        error = await self._error_of_a_bridge_that_exits("import sys; sys.stdin.readline(); sys.exit(3)")
        self.assertEqual(error.message, "The bridge process exited (exit status 3) before answering.")

    async def _error_of_a_bridge_that_exits(self, script):
        """The error of a ping to a bridge that is the Python program `script`, which exits without answering."""
        bridge = Bridge([sys.executable, "-c", script], initialize=False)
        await bridge.start()
        try:
            with self.assertRaises(BridgeError) as caught:
                await asyncio.wait_for(bridge.request("ping"), 10)
        finally:
            await bridge.close()
        return caught.exception

    async def test_a_save_cancelled_with_a_turn_the_player_walked_away_from_says_so(self):
        async with Bridge(COMMAND) as bridge:
            gorm = await bridge.create_npc({"name": "Gorm"}, npc="gorm", options={"replyFormat": "text"},
                                           model=scripted({"text": "never", "delayMs": 20000}))
            turn = asyncio.ensure_future(gorm.talk("Hello"))
            await bridge.request("ping")  # the turn is written while the ping goes to the bridge and back
            save = asyncio.ensure_future(gorm.state())  # an autosave, queued behind the turn
            await bridge.request("ping")
            turn.cancel()  # the player walks away
            with self.assertRaises(asyncio.CancelledError):
                await turn
            with self.assertRaises(BridgeError) as caught:
                await save
            self.assertEqual(caught.exception.code, -32009)
            self.assertIn("'npc/state' was cancelled with the rest of the work of NPC 'gorm' when the task awaiting "
                          "its 'npc/talk' was cancelled or its timeout passed", caught.exception.message)
            self.assertIn("Send it again if you still need it.", caught.exception.message)

    async def test_a_turn_cancelled_by_close_says_this_program_closed_the_bridge(self):
        bridge = Bridge(COMMAND)
        await bridge.start()
        try:
            gorm = await bridge.create_npc({"name": "Gorm"}, options={"replyFormat": "text"},
                                           model=scripted({"text": "never", "delayMs": 20000}))
            turn = asyncio.ensure_future(gorm.talk("Hello"))
            await bridge.request("ping")  # the bridge has read the turn
        finally:
            await bridge.close()
        with self.assertRaises(BridgeError) as caught:
            await turn
        self.assertEqual(caught.exception.code, -32009)
        self.assertIn("It was cancelled because this program closed the bridge (close(), or the end of the "
                      "'async with' block that opened it).", caught.exception.message)

    async def test_writing_to_a_stopped_bridge_fails_fast_and_clearly(self):
        # A game loop goes on sending to a bridge that stopped (SIGSTOP here; a hung process alike): once the
        # pipe is full a write cannot finish, and every call used to wait behind it for ever (a call's own
        # timeout too: cancelling it writes a cancel notification).
        bridge = Bridge(COMMAND, write_timeout=1)
        await bridge.start()
        try:
            session = await bridge.create_session(model=scripted({"text": "Halt."}))
            os.kill(bridge.pid, signal.SIGSTOP)
            unanswered = asyncio.ensure_future(session.respond("Hello"))  # sent; the bridge never reads it
            with self.assertRaises(BridgeError) as caught:  # more than the pipe holds: it waits to be written
                await asyncio.wait_for(session.respond("x" * 1_000_000), 30)
            error = caught.exception
            self.assertEqual((error.code, error.data_code), (-32023, "shut_down"))
            self.assertIn("The bridge stopped reading its input", error.message)
            # What waited for an answer fails with it, and a later call fails at once.
            with self.assertRaises(BridgeError) as waited:
                await asyncio.wait_for(unanswered, 30)
            self.assertIs(waited.exception, error)
            with self.assertRaises(BridgeError) as later:
                await asyncio.wait_for(session.respond("Again"), 30)
            self.assertIs(later.exception, error)
        finally:
            if bridge.returncode is None:
                os.kill(bridge.pid, signal.SIGKILL)
            await bridge.close()

    async def test_a_call_timeout_is_kept_while_a_write_waits_on_a_stopped_bridge(self):
        bridge = Bridge(COMMAND, write_timeout=60)  # waiting it out fails the hang guards below
        await bridge.start()
        try:
            session = await bridge.create_session(model=scripted({"text": "Halt."}))
            os.kill(bridge.pid, signal.SIGSTOP)
            stuck = asyncio.ensure_future(session.respond("x" * 1_000_000))  # its write cannot finish
            # The next call's timeout fires; its cancel notification does not wait behind the stuck write.
            with self.assertRaises(BridgeError) as caught:
                await asyncio.wait_for(session.respond("Hello", timeout=0.2), 30)
            self.assertEqual(caught.exception.data_code, "timeout")
            with self.assertRaises(BridgeError) as caught:
                await asyncio.wait_for(bridge.request("session/respond", {"session": session.id, "prompt": "Hi"},
                                                      timeout=0.2), 30)
            self.assertEqual(caught.exception.data_code, "timeout")
        finally:
            os.kill(bridge.pid, signal.SIGKILL)
            await bridge.close()
        with self.assertRaises(BridgeError):
            await stuck

    async def test_close_of_a_stopped_bridge_is_quick(self):
        bridge = Bridge(COMMAND)
        await bridge.start()
        os.kill(bridge.pid, signal.SIGSTOP)  # a bridge that answers nothing any more
        started = time.monotonic()
        try:
            await bridge.close()
        finally:
            if bridge.returncode is None:
                os.kill(bridge.pid, signal.SIGKILL)
        self.assertEqual(bridge.returncode, -signal.SIGKILL)
        self.assertLess(time.monotonic() - started, 5.0)  # generous: it used to take 10 s

    async def test_close_of_a_stopped_bridge_does_not_wait_out_shutdown_timeout(self):
        bridge = Bridge(COMMAND, shutdown_timeout=60)  # waiting it out fails the hang guard below
        await bridge.start()
        os.kill(bridge.pid, signal.SIGSTOP)  # answers nothing, not even the ping that follows the shutdown
        try:
            await asyncio.wait_for(bridge.close(), 20)
        finally:
            if bridge.returncode is None:
                os.kill(bridge.pid, signal.SIGKILL)
        self.assertEqual(bridge.returncode, -signal.SIGKILL)

    async def test_close_waits_for_a_bridge_that_answers_but_exits_late(self):
        # Answers every line, then exits on its own 1 s after its input ends: not terminated.
        bridge = Bridge([sys.executable, "-c", "import json, sys, time\nfor line in sys.stdin:\n"
                         "    print(json.dumps({'jsonrpc': '2.0', 'id': json.loads(line)['id'], 'result': {}}),"
                         " flush=True)\n"
                         "time.sleep(1)"], initialize=False, shutdown_timeout=10)
        await bridge.start()
        # Answered first, so the child is running before close's answer wait (0.5 s) starts: on a loaded
        # machine Python's own start-up could take longer than that.
        await asyncio.wait_for(bridge.request("ping", {}), 30)
        await bridge.close()
        self.assertEqual(bridge.returncode, 0)

    async def test_close_terminates_a_silent_child_that_ignores_end_of_input(self):
        bridge = Bridge([sys.executable, "-c", "import time; time.sleep(60)"], initialize=False,
                        shutdown_timeout=0.2)
        await bridge.start()
        await bridge.close()
        self.assertEqual(bridge.returncode, -signal.SIGTERM)  # terminated, not left to the kill

    async def test_close_kills_a_silent_child_that_ignores_terminate(self):
        bridge = Bridge([sys.executable, "-c", "import signal, sys, time\n"
                         "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                         "time.sleep(60)"], initialize=False, shutdown_timeout=0.2, terminate_timeout=0.2)
        ready = asyncio.get_running_loop().create_future()
        bridge._dispatch = lambda line: ready.done() or ready.set_result(line)
        await bridge.start()
        await asyncio.wait_for(ready, 10)  # SIGTERM is ignored from here on
        await bridge.close()
        self.assertEqual(bridge.returncode, -signal.SIGKILL)

    async def test_close_lets_a_child_that_exits_at_end_of_input_exit(self):
        # It says it is reading first: a child still starting when close() waits (a loaded machine) is not
        # what this tests.
        bridge = Bridge([sys.executable, "-c", "import sys\nprint('ready', flush=True)\nsys.stdin.read()"],
                        initialize=False)
        ready = asyncio.get_running_loop().create_future()
        bridge._dispatch = lambda line: ready.done() or ready.set_result(line)
        await bridge.start()
        await asyncio.wait_for(ready, 10)
        await bridge.close()
        self.assertEqual(bridge.returncode, 0)

    async def test_missing_executable(self):
        with self.assertRaises(BridgeError) as caught:
            async with Bridge(["/nonexistent/oam-bridge", "stdio"]):
                pass
        self.assertEqual(caught.exception.data_code, "shut_down")
        self.assertIn("OAM_BRIDGE_COMMAND", caught.exception.message)  # says how to point at the bridge

    async def test_start_after_close_is_refused(self):
        bridge = Bridge(COMMAND)
        await bridge.start()
        await bridge.close()
        with self.assertRaises(BridgeError) as caught:
            await bridge.start()
        self.assertEqual(caught.exception.data_code, "shut_down")
        self.assertIn("new Bridge", caught.exception.message)

    async def _exit_with_parent_seen(self, env=None):
        """The OAM_EXIT_WITH_PARENT a child started by Bridge(env=env) sees (None when unset)."""
        bridge = Bridge([sys.executable, "-c", "import json, os\n"
                         "print(json.dumps({'value': os.environ.get('OAM_EXIT_WITH_PARENT')}), flush=True)\n"
                         "import sys; sys.stdin.read()"], env=env, initialize=False)
        seen = asyncio.get_running_loop().create_future()
        bridge._dispatch = lambda line: seen.done() or seen.set_result(line)
        await bridge.start()
        try:
            line = await asyncio.wait_for(seen, 10)
        finally:
            await bridge.close()
        return json.loads(line)["value"]

    async def test_the_bridge_is_started_with_exit_with_parent_unless_it_is_set(self):
        saved = os.environ.pop("OAM_EXIT_WITH_PARENT", None)
        try:
            self.assertEqual(await self._exit_with_parent_seen(), "1")
            self.assertEqual(await self._exit_with_parent_seen({"PATH": os.environ.get("PATH", "")}), "1")
            self.assertEqual(await self._exit_with_parent_seen({"OAM_EXIT_WITH_PARENT": "0"}), "0")
            os.environ["OAM_EXIT_WITH_PARENT"] = "0"
            self.assertEqual(await self._exit_with_parent_seen(), "0")
            self.assertIsNone(bridge_environment())  # inherited as it is
        finally:
            os.environ.pop("OAM_EXIT_WITH_PARENT", None)
            if saved is not None:
                os.environ["OAM_EXIT_WITH_PARENT"] = saved

    @unittest.skipUnless(Path("/proc/self/environ").exists(), "needs /proc")
    async def test_the_real_bridge_gets_exit_with_parent(self):
        async with Bridge(COMMAND) as bridge:
            entries = Path("/proc/%d/environ" % bridge.pid).read_bytes().split(b"\0")
        values = [e.partition(b"=")[2] for e in entries if e.startswith(b"OAM_EXIT_WITH_PARENT=")]
        self.assertEqual(values, [b"1"])

    def test_command_configuration(self):
        saved = {k: os.environ.pop(k, None) for k in ("OAM_BRIDGE_COMMAND", "OAM_BRIDGE_PATH", "OAM_BRIDGE_LOG")}
        try:
            self.assertEqual(bridge_command(), ["oam", "stdio"])
            os.environ["OAM_BRIDGE_PATH"] = "/opt/oam"
            os.environ["OAM_BRIDGE_LOG"] = "debug"
            self.assertEqual(bridge_command(), ["/opt/oam", "stdio", "--log-level", "debug"])
            os.environ["OAM_BRIDGE_COMMAND"] = "deno run -A cli.ts stdio"
            self.assertEqual(bridge_command(), ["deno", "run", "-A", "cli.ts", "stdio"])
            self.assertEqual(bridge_command(["x", "stdio"]), ["x", "stdio"])
        finally:
            for key, value in saved.items():
                os.environ.pop(key, None)
                if value is not None:
                    os.environ[key] = value


if __name__ == "__main__":
    unittest.main()
