#!/usr/bin/env python3
"""The stdio protocol by hand, with no binding: what a client in Lua, Rust or any engine language does.

One thread, one loop: `call` writes a request and reads lines until its response, answering each `tool/call`
request and showing each notification on the way. Uses a scripted model (docs/PROTOCOL.md §10), so it runs
anywhere:

    python3 examples/wire_client.py          # or OAM_BRIDGE_COMMAND="oam stdio" python3 examples/wire_client.py

Copied out of the checkout, it has no `../cli.ts` to start: set OAM_BRIDGE_COMMAND (it says so).

What every message looks like: docs/PROTOCOL.md §7 (`session/event` and `npc/event` types, the replies a
`tool/call` takes and what the model sees for each, `tool/cancel`) and §8 (each error code and what it means).
"""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
cli = os.path.normpath(os.path.join(here, "..", "cli.ts"))  # the checkout's bridge, when this file is in examples/
from_env = os.environ.get("OAM_BRIDGE_COMMAND", "").split()
command = from_env or ["deno", "run", "--no-prompt", "--allow-env", "--allow-read", cli, "stdio"]
if not from_env and not os.path.exists(cli):
    sys.exit(f"No bridge at {cli} (this file is not in a checkout's examples/). Name the bridge to start:\n"
             "  OAM_BRIDGE_COMMAND=\"deno run --allow-env --allow-read /path/to/open-apple-models/cli.ts stdio\" "
             f"python3 {sys.argv[0]}\n(or \"oam stdio\" with oam installed, or \"/path/to/oam stdio\" for a compiled one)")
# stderr is inherited: a pipe that nobody reads would fill up and stop the bridge. OAM_EXIT_WITH_PARENT=1
# makes the bridge stop when this process dies (README, `oam stdio`).
bridge = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
                          env={"OAM_EXIT_WITH_PARENT": "1", **os.environ})
next_id = 0


def send(message):
    bridge.stdin.write(json.dumps(message, separators=(",", ":")) + "\n")  # one object per line
    bridge.stdin.flush()


def request(method, params):
    global next_id
    next_id += 1
    send({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params})
    return next_id


def run_tool(call):  # the engine's side of a client tool
    if call["arguments"].get("gate") == "north":
        return {"error": {"code": -32000, "message": "the portcullis chain is jammed"}}  # the model sees an error
    return {"result": {"output": {"opened": True}}}


def read_one():
    """Reads one message, answers it if it is a `tool/call` and shows it if it is a notification."""
    line = bridge.stdout.readline()
    if not line:  # its stderr, above, says why
        sys.exit(f"the bridge closed its output (exit code {bridge.wait()}): {' '.join(command)}")
    message = json.loads(line)
    if message.get("method") == "tool/call":  # a request from the bridge: answer it with its own id
        call = message["params"]["call"]
        print(f"  [engine runs {call['name']} {json.dumps(call['arguments'])}]")
        if call["name"] != "wait_forever":
            send({"jsonrpc": "2.0", "id": message["id"], **run_tool(call)})
    elif message.get("method") == "session/event":
        event = message["params"]["event"]
        if event["type"] == "text":
            print(f"  text so far: {event['text']!r}")
    elif "method" in message:  # tool/cancel, npc/event, world/changed
        print(f"  {message['method']}: {json.dumps(message['params'])}")
    return message


def read_until(*ids):
    """Reads messages until every id in `ids` has its response; returns the responses by id."""
    responses = {}
    while len(responses) < len(ids):
        message = read_one()
        if "method" not in message and message.get("id") in ids:
            responses[message["id"]] = message
    return responses


def call(method, params):
    id = request(method, params)
    response = read_until(id)[id]
    if "error" in response:
        raise RuntimeError(f"{method}: {response['error']['message']}")
    return response["result"]


print("initialize:", call("initialize", {"client": {"name": "wire_client.py"}, "protocolVersion": "1.0"})["protocolVersion"])
gate = {"name": "open_gate", "description": "Opens a named gate; says whether it opened.",
        "parameters": {"type": "object", "properties": {"gate": {"type": "string"}}, "required": ["gate"]}}
script = {"type": "scripted", "steps": [
    {"toolCalls": [{"name": "open_gate", "arguments": {"gate": "north"}}, {"name": "open_gate", "arguments": {"gate": "south"}}]},
    {"template": "The gates answered:\n{toolOutputs}", "chunks": 3}]}
call("session/create", {"session": "guard", "tools": [gate], "model": script})
print("guard:", call("session/respond", {"session": "guard", "prompt": "Open the gates.", "stream": True})["text"])

# Cancel a turn while its tool call is out: the turn fails with -32009, the bridge sends tool/cancel.
stuck = {"type": "scripted", "steps": [{"toolCalls": [{"name": "wait_forever", "arguments": {}}]}]}
call("session/create", {"session": "stuck", "tools": [{"name": "wait_forever", "description": "Never answers."}], "model": stuck})
turn = request("session/respond", {"session": "stuck", "prompt": "Wait."})
while read_one().get("method") != "tool/call":
    pass
cancel = request("session/cancel", {"session": "stuck"})
answers = read_until(turn, cancel)
print("cancelled:", answers[cancel]["result"]["cancelled"], "turn;", "its error:", answers[turn]["error"]["data"]["code"])

call("shutdown", {})
print("bridge exited with code", bridge.wait())
