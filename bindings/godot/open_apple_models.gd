## Godot 4 client for the open-apple-models bridge.
##
## Spawns the bridge (`oam stdio`, or `deno run ... cli.ts stdio`) with OS.execute_with_pipe and speaks its
## JSON-RPC 2.0 protocol, one JSON object per line. Two threads block on the stdout/stderr pipes; everything
## else (signals, tool handlers, callbacks, awaited results) runs on the main thread in _process(), in protocol
## order. Add the node to the scene tree (or call poll() yourself every frame).
##
## Requests are coroutines that return the JSON-RPC response as a Dictionary: {"result": ...} on success or
## {"error": {"code", "message", "data": {"code"}}} on failure (use is_error()/error_code()).
##
##     var oam := OamBridge.new()
##     add_child(oam)                      # starts the bridge (autostart)
##     oam.register_tool("open_gate", "Open a named gate.",
##         {"type": "object", "properties": {"gate": {"type": "string"}}, "required": ["gate"]},
##         func(args: Dictionary, _context: Dictionary): return {"opened": true})
##     await oam.create_session("guard", "You are a castle guard.", ["open_gate"])
##     var reply := await oam.respond("guard", "Open the north gate.", func(text): $Label.text = text)
##     if not OamBridge.is_error(reply): print(reply.result.text)
class_name OamBridge
extends Node

## Every notification from the bridge.
signal notification_received(method: String, params: Dictionary)
## session/event notifications (only for streamed turns).
signal session_event(session: String, request_id: Variant, event: Dictionary)
## npc/event notifications (only for streamed talks).
signal npc_event(npc: String, request_id: Variant, event: Dictionary)
## world/changed notifications: {world, subscription, path, oldValue?, newValue?}.
signal world_changed(change: Dictionary)
## A tool/call for a tool without a registered handler: answer it with respond_tool(id, output).
signal tool_call_received(id: Variant, params: Dictionary)
## The bridge gave up on a tool/call (timeout, cancelled turn): {id, callId, reason, ...}.
signal tool_cancelled(params: Dictionary)
## Text the bridge wrote to stderr (its log).
signal log_received(text: String)
## The bridge process ended; pending requests have failed with a -32023 shut_down error.
signal bridge_exited(message: String)

const VERSION := "0.1.0"
const SHUT_DOWN := -32023
const TIMEOUT := -32024
const _TOOL_ERROR_KEY := "__oam_tool_error__"

## Full argv of the bridge. Empty: bridge_path, then OAM_BRIDGE_COMMAND, OAM_BRIDGE_PATH, "oam stdio".
@export var bridge_command: PackedStringArray = PackedStringArray()
## Path of the compiled `oam` executable (runs "<path> stdio").
@export var bridge_path: String = ""
## Start the bridge when the node enters the tree.
@export var autostart: bool = true

class _Call extends RefCounted:
	signal completed(response: Dictionary)
	var method: String = ""
	var on_event: Callable = Callable()
	var on_result: Callable = Callable()

var _pipe: FileAccess
var _stderr: FileAccess
var _pid: int = -1
var _reader: Thread
var _err_reader: Thread
var _mutex := Mutex.new()
var _chunks: Array[PackedByteArray] = []
var _logs: PackedStringArray = PackedStringArray()
var _eof := false
var _buffer := PackedByteArray()
var _next_id := 0
var _pending := {}            # request id -> _Call
var _tools := {}              # name -> {"definition": Dictionary, "handler": Callable}
var _tool_calls := {}         # tool/call id -> true while its handler runs
var _subscriptions := {}      # subscription id -> Callable(change: Dictionary)
var _dead_message := ""
var _closed := false


func _ready() -> void:
	if autostart and _pid < 0:
		start()


func _process(_delta: float) -> void:
	poll()


func _exit_tree() -> void:
	close()


## Resolves the argv (see bridge_command).
func resolve_command() -> PackedStringArray:
	if not bridge_command.is_empty():
		return bridge_command
	if not bridge_path.is_empty():
		return PackedStringArray([bridge_path, "stdio"])
	var from_env := OS.get_environment("OAM_BRIDGE_COMMAND").strip_edges()
	if not from_env.is_empty():
		return from_env.replace("\t", " ").split(" ", false)
	var path := OS.get_environment("OAM_BRIDGE_PATH").strip_edges()
	return PackedStringArray([path if not path.is_empty() else "oam", "stdio"])


## Starts the bridge process and its reader threads.
func start(command: PackedStringArray = PackedStringArray()) -> Error:
	if _pid > 0:
		return OK
	var argv := command if not command.is_empty() else resolve_command()
	var info := OS.execute_with_pipe(argv[0], argv.slice(1))
	if info.is_empty():
		_dead_message = "Cannot start the bridge '%s'." % " ".join(argv)
		push_error("[open-apple-models] " + _dead_message)
		return ERR_CANT_CREATE
	_pipe = info["stdio"]
	_stderr = info["stderr"]
	_pid = info["pid"]
	_reader = Thread.new()
	_reader.start(_read_loop.bind(_pipe, false))
	_err_reader = Thread.new()
	_err_reader.start(_read_loop.bind(_stderr, true))
	return OK


## Process id of the bridge (-1 before start).
func get_pid() -> int:
	return _pid


## True while the bridge process runs.
func is_running() -> bool:
	return _pid > 0 and _dead_message.is_empty() and OS.is_process_running(_pid)


# Runs on a reader thread: blocks on the pipe and hands chunks to the main thread.
func _read_loop(pipe: FileAccess, is_log: bool) -> void:
	while true:
		var chunk := pipe.get_buffer(65536)
		if chunk.is_empty():
			break
		_mutex.lock()
		if is_log:
			_logs.append(chunk.get_string_from_utf8())
		else:
			_chunks.append(chunk)
		_mutex.unlock()
	if not is_log:
		_mutex.lock()
		_eof = true
		_mutex.unlock()


## Handles everything the bridge sent since the last call. _process() calls it every frame.
func poll() -> void:
	_mutex.lock()
	var chunks := _chunks
	_chunks = []
	var logs := _logs
	_logs = PackedStringArray()
	var eof := _eof
	_mutex.unlock()
	for chunk in chunks:
		_buffer.append_array(chunk)
	while true:
		var newline := _buffer.find(10)
		if newline < 0:
			break
		var line := _buffer.slice(0, newline).get_string_from_utf8().strip_edges(false, true)
		_buffer = _buffer.slice(newline + 1)
		if not line.is_empty():
			_dispatch(line)
	for text in logs:
		log_received.emit(text)
	if eof and _dead_message.is_empty() and not _closed:
		_on_exit()


func _on_exit() -> void:
	var description := "output closed"
	var deadline := Time.get_ticks_msec() + 2000
	while OS.is_process_running(_pid) and Time.get_ticks_msec() < deadline:
		OS.delay_msec(5)
	if not OS.is_process_running(_pid) and OS.has_method("get_process_exit_code"):
		description = "exit status %d" % OS.get_process_exit_code(_pid)
	_dead_message = "The bridge process exited (%s) before answering." % description
	_join_threads()
	_fail_all(_dead_message)
	bridge_exited.emit(_dead_message)


func _join_threads() -> void:
	if _reader != null and _reader.is_started():
		_reader.wait_to_finish()
	if _err_reader != null and _err_reader.is_started():
		_err_reader.wait_to_finish()


func _fail_all(message: String) -> void:
	var calls := _pending.values()
	_pending.clear()
	_tool_calls.clear()
	for pending_call in calls:
		pending_call.completed.emit(_error(SHUT_DOWN, "shut_down", message))


## Shuts the bridge down (cancelling its work), waits up to timeout_msec for it to exit and kills it otherwise.
## Blocks the calling thread while it waits.
func close(timeout_msec: int = 3000) -> void:
	if _pid <= 0 or _closed:
		return
	_closed = true
	if _dead_message.is_empty() and OS.is_process_running(_pid):
		_send({"jsonrpc": "2.0", "id": "gd-shutdown", "method": "shutdown"})
	var deadline := Time.get_ticks_msec() + timeout_msec
	while OS.is_process_running(_pid) and Time.get_ticks_msec() < deadline:
		OS.delay_msec(10)
	if OS.is_process_running(_pid):
		OS.kill(_pid)
	_join_threads()
	if _pipe != null:
		_pipe.close()
	if _stderr != null:
		_stderr.close()
	if _dead_message.is_empty():
		_dead_message = "The bridge was closed."
	_fail_all("The bridge was closed.")


# ---------------------------------------------------------------------------------------------- protocol

static func _error(code: int, data_code: String, message: String) -> Dictionary:
	return {"error": {"code": code, "message": message, "data": {"code": data_code}}}


## True when a response is an error response.
static func is_error(response: Dictionary) -> bool:
	return response.has("error")


## The error's data.code string ("" when the response is not an error).
static func error_code(response: Dictionary) -> String:
	if not response.has("error"):
		return ""
	var data = response["error"].get("data", {})
	return str(data.get("code", "")) if data is Dictionary else ""


func _send(message: Dictionary) -> bool:
	if _pipe == null or not _dead_message.is_empty():
		return false
	# sort_keys = false: the order of schema properties matters to the model.
	var line := JSON.stringify(message, "", false) + "\n"
	_pipe.store_buffer(line.to_utf8_buffer())
	return true


## Sends a request; await it for the response Dictionary. on_event(event) receives the event of every
## "<ns>/event" notification the request causes. With timeout_sec > 0 (node in the tree) it answers a -32024
## timeout error when the response is late, and drops the late response.
func request(method: String, params: Dictionary = {}, on_event: Callable = Callable(),
		timeout_sec: float = 0.0, on_result: Callable = Callable()) -> Dictionary:
	if not _dead_message.is_empty():
		return _error(SHUT_DOWN, "shut_down", _dead_message)
	if _pid <= 0:
		return _error(SHUT_DOWN, "shut_down", "The bridge is not started.")
	_next_id += 1
	var id := "gd-%d" % _next_id
	var pending_call := _Call.new()
	pending_call.method = method
	pending_call.on_event = on_event
	pending_call.on_result = on_result
	var message := {"jsonrpc": "2.0", "id": id, "method": method}
	if not params.is_empty():
		message["params"] = params
	_pending[id] = pending_call
	if not _send(message):
		_pending.erase(id)
		return _error(SHUT_DOWN, "shut_down", "The bridge is not running.")
	if timeout_sec > 0.0 and is_inside_tree():
		get_tree().create_timer(timeout_sec).timeout.connect(_on_request_timeout.bind(id, timeout_sec))
	var response: Dictionary = await pending_call.completed
	return response


func _on_request_timeout(id: String, timeout_sec: float) -> void:
	if not _pending.has(id):
		return
	var pending_call: _Call = _pending[id]
	_pending.erase(id)
	# respond() and talk() send session/cancel or npc/cancel when they see this error.
	pending_call.completed.emit(_error(TIMEOUT, "timeout", "'%s' did not finish within %d ms; it was cancelled." %
			[pending_call.method, int(round(timeout_sec * 1000.0))]))


## Sends a notification (no response).
func notify(method: String, params: Dictionary = {}) -> void:
	var message := {"jsonrpc": "2.0", "method": method}
	if not params.is_empty():
		message["params"] = params
	_send(message)


func _dispatch(line: String) -> void:
	var message = JSON.parse_string(line)
	if not (message is Dictionary):
		push_warning("[open-apple-models] ignoring a non-JSON line from the bridge")
		return
	if message.has("method"):
		var params: Dictionary = message.get("params", {}) if message.get("params") is Dictionary else {}
		if message.has("id"):
			_handle_bridge_request(message["id"], str(message["method"]), params)
		else:
			_handle_notification(str(message["method"]), params)
		return
	if not message.has("id"):
		return
	var id := str(message["id"])
	if not _pending.has(id):
		return # a late response (timed out): dropped
	var pending_call: _Call = _pending[id]
	_pending.erase(id)
	if message.has("result") and pending_call.on_result.is_valid():
		pending_call.on_result.call(message["result"])
	pending_call.completed.emit(message)


func _handle_notification(method: String, params: Dictionary) -> void:
	match method:
		"tool/cancel":
			_tool_calls.erase(str(params.get("id", "")))
			tool_cancelled.emit(params)
		"world/changed":
			var callback: Callable = _subscriptions.get(str(params.get("subscription", "")), Callable())
			if callback.is_valid():
				callback.call(params)
			world_changed.emit(params)
		"session/event":
			session_event.emit(str(params.get("session", "")), params.get("requestId"), params.get("event", {}))
		"npc/event":
			npc_event.emit(str(params.get("npc", "")), params.get("requestId"), params.get("event", {}))
	if method.ends_with("/event") and params.has("requestId"):
		var pending_call: _Call = _pending.get(str(params["requestId"]))
		if pending_call != null and pending_call.on_event.is_valid() and params.get("event") is Dictionary:
			pending_call.on_event.call(params["event"])
	notification_received.emit(method, params)


# ---------------------------------------------------------------------------------------------- tools

## Registers a client tool. handler(args: Dictionary, context: Dictionary) returns the output (text or JSON data)
## or tool_error("message"); it may await. context has name, call_id, request_id, session, npc and id.
## timeout_seconds (>= 0) becomes the tool's timeoutSeconds on the bridge.
func register_tool(tool_name: String, description: String, parameters: Dictionary, handler: Callable,
		timeout_seconds: float = -1.0) -> void:
	var definition := {"name": tool_name, "description": description,
		"parameters": parameters if not parameters.is_empty() else {"type": "object", "properties": {}}}
	if timeout_seconds >= 0.0:
		definition["timeoutSeconds"] = timeout_seconds
	_tools[tool_name] = {"definition": definition, "handler": handler}


## An error output for a tool handler to return (the model sees "Error: <message>").
static func tool_error(message: String) -> Dictionary:
	return {_TOOL_ERROR_KEY: message}


## Definitions of registered tools, by name.
func tool_definitions(names: Array) -> Array:
	var definitions := []
	for tool_name in names:
		if _tools.has(tool_name):
			definitions.append(_tools[tool_name]["definition"])
		else:
			push_error("[open-apple-models] no tool named '%s' is registered" % tool_name)
	return definitions


## Answers a tool/call (used automatically for registered tools; call it yourself after tool_call_received).
func respond_tool(id: Variant, output: Variant) -> void:
	var result := {}
	if output is Dictionary and output.has(_TOOL_ERROR_KEY):
		result = {"output": str(output[_TOOL_ERROR_KEY]), "isError": true}
	else:
		result = {"output": output}
	_send({"jsonrpc": "2.0", "id": id, "result": result})


func _handle_bridge_request(id: Variant, method: String, params: Dictionary) -> void:
	if method != "tool/call":
		_send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Unknown method '%s'." % method}})
		return
	var call_info: Dictionary = params.get("call", {})
	var tool_name := str(call_info.get("name", ""))
	if not _tools.has(tool_name):
		if tool_call_received.get_connections().size() > 0:
			tool_call_received.emit(id, params)
		else:
			_send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
				"message": "No handler for tool '%s' in this client." % tool_name}})
		return
	_run_tool(id, tool_name, call_info, params)


func _run_tool(id: Variant, tool_name: String, call_info: Dictionary, params: Dictionary) -> void:
	var key := str(id)
	_tool_calls[key] = true
	var context := {"name": tool_name, "call_id": call_info.get("id", ""), "request_id": params.get("requestId"),
		"session": params.get("session"), "npc": params.get("npc"), "id": id}
	var arguments: Dictionary = call_info.get("arguments", {}) if call_info.get("arguments") is Dictionary else {}
	var handler: Callable = _tools[tool_name]["handler"]
	var output = await handler.call(arguments, context)
	if not _tool_calls.has(key):
		return # tool/cancel arrived (or the bridge closed): the bridge ignores late answers
	_tool_calls.erase(key)
	respond_tool(id, output)


# ---------------------------------------------------------------------------------------------- sessions

## session/create. tool_names are tools registered with register_tool.
func create_session(session_id: String = "", instructions: String = "", tool_names: Array = [],
		options: Dictionary = {}, model: Variant = null) -> Dictionary:
	var params := {}
	if not session_id.is_empty():
		params["session"] = session_id
	if not instructions.is_empty():
		params["instructions"] = instructions
	if not tool_names.is_empty():
		params["tools"] = tool_definitions(tool_names)
	if not options.is_empty():
		params["options"] = options
	if model != null:
		params["model"] = model
	return await request("session/create", params)


## session/respond. on_text(text) gets the whole answer so far after every change (streaming is on when it or
## on_event is valid). extra holds more params (schema, toolChoice, ...). timeout_sec > 0 cancels the turn.
func respond(session_id: String, prompt: String, on_text: Callable = Callable(), on_event: Callable = Callable(),
		extra: Dictionary = {}, timeout_sec: float = 0.0) -> Dictionary:
	var params := {"session": session_id, "prompt": prompt}
	params.merge(extra)
	var handler := Callable()
	if on_text.is_valid() or on_event.is_valid():
		params["stream"] = true
		handler = func(event: Dictionary) -> void:
			if on_event.is_valid():
				on_event.call(event)
			if on_text.is_valid() and event.get("type") == "text":
				on_text.call(str(event.get("text", "")))
	var response: Dictionary = await request("session/respond", params, handler, timeout_sec)
	if error_code(response) == "timeout":
		notify("session/cancel", {"session": session_id})
	return response


## session/cancel.
func cancel_session(session_id: String) -> Dictionary:
	return await request("session/cancel", {"session": session_id})


# ---------------------------------------------------------------------------------------------- NPCs

## npc/create. persona needs at least "name".
func create_npc(npc_id: String, persona: Dictionary, tool_names: Array = [], world: String = "",
		options: Dictionary = {}, model: Variant = null) -> Dictionary:
	var params := {"persona": persona}
	if not npc_id.is_empty():
		params["npc"] = npc_id
	if not tool_names.is_empty():
		params["tools"] = tool_definitions(tool_names)
	if not world.is_empty():
		params["world"] = world
	if not options.is_empty():
		params["options"] = options
	if model != null:
		params["model"] = model
	return await request("npc/create", params)


## npc/talk. on_line(line) gets the whole line so far (typewriter), on_emotion(emotion) the emotion as soon as
## it is chosen. timeout_sec > 0 cancels the NPC's work on timeout.
func talk(npc_id: String, line: String, on_line: Callable = Callable(), on_emotion: Callable = Callable(),
		context: Variant = null, timeout_sec: float = 0.0) -> Dictionary:
	var params := {"npc": npc_id, "line": line}
	if context != null:
		params["context"] = context
	var handler := Callable()
	if on_line.is_valid() or on_emotion.is_valid():
		params["stream"] = true
		var shown := [""]
		handler = func(event: Dictionary) -> void:
			match event.get("type"):
				"lineDelta":
					shown[0] += str(event.get("delta", ""))
					if on_line.is_valid():
						on_line.call(shown[0])
				"lineReset":
					shown[0] = str(event.get("line", ""))
					if on_line.is_valid():
						on_line.call(shown[0])
				"emotion":
					if on_emotion.is_valid():
						on_emotion.call(str(event.get("emotion", "")))
	var response: Dictionary = await request("npc/talk", params, handler, timeout_sec)
	if error_code(response) == "timeout":
		notify("npc/cancel", {"npc": npc_id})
	return response


## npc/bark.
func bark(npc_id: String, situation: Variant = null) -> Dictionary:
	var params := {"npc": npc_id}
	if situation != null:
		params["situation"] = situation
	return await request("npc/bark", params)


## npc/state: store response.result.state whole in the save game.
func npc_state(npc_id: String) -> Dictionary:
	return await request("npc/state", {"npc": npc_id})


## npc/restore from a saved state.
func restore_npc(state: Dictionary, npc_id: String = "", model: Variant = null) -> Dictionary:
	var params := {"state": state}
	if not npc_id.is_empty():
		params["npc"] = npc_id
	if model != null:
		params["model"] = model
	return await request("npc/restore", params)


# ---------------------------------------------------------------------------------------------- worlds

## world/create.
func create_world(world_id: String = "", state: Dictionary = {}) -> Dictionary:
	var params := {}
	if not world_id.is_empty():
		params["world"] = world_id
	if not state.is_empty():
		params["state"] = state
	return await request("world/create", params)


## world/get.
func world_get(world_id: String, path: String = "") -> Dictionary:
	return await request("world/get", {"world": world_id, "path": path})


## world/set.
func world_set(world_id: String, path: String, value: Variant) -> Dictionary:
	return await request("world/set", {"world": world_id, "path": path, "value": value})


## world/merge (RFC 7386 merge patch).
func world_merge(world_id: String, patch: Dictionary, path: String = "") -> Dictionary:
	return await request("world/merge", {"world": world_id, "path": path, "patch": patch})


## world/subscribe: on_change(change) runs for every world/changed of this subscription.
func world_subscribe(world_id: String, path: String, on_change: Callable) -> Dictionary:
	var register := func(result: Variant) -> void:
		if result is Dictionary:
			_subscriptions[str(result.get("subscription", ""))] = on_change
	return await request("world/subscribe", {"world": world_id, "path": path}, Callable(), 0.0, register)


## world/unsubscribe.
func world_unsubscribe(subscription: String) -> Dictionary:
	_subscriptions.erase(subscription)
	return await request("world/unsubscribe", {"subscription": subscription})


# ---------------------------------------------------------------------------------------------- decisions, content

## decision/decide: result has optionID, reasoning, confidence, isFallback. extra: actor, context, model, ...
func decide(situation: Variant, options: Array, extra: Dictionary = {}) -> Dictionary:
	var params := {"situation": situation, "options": options}
	params.merge(extra)
	return await request("decision/decide", params)


## content/generate: result.content matches schema. extra: instructions, context, model, ...
func generate(prompt: String, schema: Dictionary, extra: Dictionary = {}) -> Dictionary:
	var params := {"prompt": prompt, "schema": schema}
	params.merge(extra)
	return await request("content/generate", params)
