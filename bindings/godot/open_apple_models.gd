## Godot 4 client for the open-apple-models bridge.
##
## Spawns the bridge (`oam stdio`, or `deno run ... cli.ts stdio`) with OS.execute_with_pipe and speaks its
## JSON-RPC 2.0 protocol, one JSON object per line. Two threads block on the stdout/stderr pipes; everything
## else (signals, tool handlers, callbacks, awaited results) runs on the main thread in _process(), in protocol
## order. Add the node to the scene tree (or call poll() yourself every frame). close() (called when the node
## leaves the tree) returns at once; the bridge's exit is awaited, and a bridge that ignores shutdown killed, on
## later frames.
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
## One line the bridge wrote to stderr (its log), without the line break.
signal log_received(text: String)
## The bridge process ended by itself (crashed, exited, was killed); pending requests have failed with a -32023
## shut_down error carrying the same message: how it ended, then its last stderr lines (get_last_log_lines() has
## more). Emitted from poll() a moment after the exit, without the main thread ever waiting for the process.
signal bridge_exited(message: String)

const VERSION := "0.1.0"
const SHUT_DOWN := -32023
const TIMEOUT := -32024
const INVALID_MESSAGE := -32600
## Deepest nesting the bridge reads in a message.
const MAX_DEPTH := 100
## Lines of the bridge's stderr that get_last_log_lines() keeps.
const LOG_LINES_KEPT := 20
## Lines of the bridge's stderr that the message of a bridge that died by itself ends with.
const EXIT_LOG_LINES := 3
const _TOOL_ERROR_KEY := "__oam_tool_error__"
## The variable that makes the bridge stop when the game exits or crashes (see _pass_exit_with_parent()).
const EXIT_WITH_PARENT := "OAM_EXIT_WITH_PARENT"
## How long close() gives the bridge to write anything after the shutdown (a live bridge fails the ping sent after
## it at once, even while the shutdown waits for cancelled work): one that stays silent (frozen, stopped, not
## reading its input) is killed then instead of after the whole timeout_msec. As the C and C# clients do.
const SHUTDOWN_ANSWER_MSEC := 500

## Full argv of the bridge. Empty: bridge_path, then OAM_BRIDGE_COMMAND, OAM_BRIDGE_PATH, "oam stdio".
@export var bridge_command: PackedStringArray = PackedStringArray()
## Path of the compiled `oam` executable (runs "<path> stdio").
@export var bridge_path: String = ""
## Start the bridge when the node enters the tree.
@export var autostart: bool = true
## Longest message the bridge reads, in bytes (its --max-line-bytes, 16 MiB by default). A longer one is refused
## before it is sent (the bridge would answer it with id null, so it would never get its response). start() sets it
## from the --max-line-bytes of the bridge's command when it has one (see max_line_bytes_of); set it for a bridge
## whose command does not show its limit (a wrapper script).
@export var max_line_bytes: int = 16 * 1024 * 1024

const MAX_LINE_BYTES_FLAG := "--max-line-bytes"
## The requests after which the turns of the NPC or session they name call no more callbacks (see request()).
const SILENCING_METHODS := ["npc/cancel", "npc/delete", "session/cancel", "session/delete"]
## Why the other requests in flight of the NPC or session a delete names were cancelled, when it is sent by hand with
## request() or notify(): their -32009 error ends with "when " + this. A cancel has none: its -32009 is the one the
## game asked for.
const _ENDED_BY_REQUEST := {
	"npc/delete": "an 'npc/delete' request deleted the NPC.",
	"session/delete": "a 'session/delete' request deleted the session.",
}
const _ENDED_BY_NOTIFICATION := {
	"npc/delete": "an 'npc/delete' notification deleted the NPC.",
	"session/delete": "a 'session/delete' notification deleted the session.",
}
## The cancels noted per NPC or session to explain their -32009 errors: the latest ones are kept.
const _CANCELS_KEPT := 256

class _Call extends RefCounted:
	signal completed(response: Dictionary)
	var method: String = ""
	var params: Dictionary = {}
	var on_event: Callable = Callable()
	var on_result: Callable = Callable()
	var cancels_before: int = 0   # _cancels when it was sent: a later one of its NPC or session explains its -32009


# What the reader threads share with the main thread. The threads run on this object, not on the node: after
# close() they run until the bridge's output ends, and the node may be freed before that (a scene change frees it
# right after close()); a thread still inside a method of a freed node would crash the game.
class _Channel extends RefCounted:
	var mutex := Mutex.new()
	var chunks: Array[PackedByteArray] = []
	var log_bytes := PackedByteArray()
	var eof := false
	var log_eof := false
	var discard := false        # set by close(): what the bridge still writes is dropped
	var heard := false          # the bridge wrote to stdout after discard was set, or its stdout ended

	# Runs on a reader thread: blocks on the pipe and hands bytes to the main thread, which decodes whole lines (a
	# chunk may end inside a UTF-8 sequence).
	func _read_loop(pipe: FileAccess, is_log: bool) -> void:
		while true:
			var chunk := pipe.get_buffer(65536)
			if chunk.is_empty():
				break
			mutex.lock()
			if discard:
				if not is_log:
					heard = true
			elif is_log:
				log_bytes.append_array(chunk)
			else:
				chunks.append(chunk)
			mutex.unlock()
		mutex.lock()
		if is_log:
			log_eof = true
		else:
			eof = true
			heard = true
		mutex.unlock()


# Ends a bridge without blocking the main thread, after close() or once it has died by itself. step() runs every
# frame (SceneTree.process_frame, also while the game is paused; poll() steps it when there is no SceneTree): once
# the process has exited, or has been killed at the deadline, and the reader threads have seen the end of its
# output, it joins them and closes the pipes. A thread is only joined once it has ended: a process the bridge
# started (or a launcher script whose child outlives it) can hold the output open long after the bridge is gone,
# and joining a thread blocked on it would freeze the game as long. It holds all it needs (also the _Channel the
# threads run on: a Thread's Callable does not keep its object alive) and nothing of the node, so it goes on after
# the node is freed; OamBridge._reapers holds it (dropped once done). When the game quits no frame comes any more:
# the root's tree_exiting, emitted after every node's _exit_tree, runs wait_for_exit(), which waits until the
# process has exited (killing it at the deadline), so no bridge outlives the game.
class _Reaper extends RefCounted:
	var pid := -1
	var deadline := 0           # ticks msec: kill the process if it still runs then
	var answer_deadline := -1   # ticks msec: kill it then if it has written nothing since close() (-1: no check)
	var threads: Array[Thread] = []
	var pipes: Array[FileAccess] = []
	var channel: _Channel
	var tree: SceneTree
	var done := false

	func _init(process_id: int, kill_at: int, reader_channel: _Channel, reader_threads: Array[Thread],
			open_pipes: Array[FileAccess], answer_at: int = -1) -> void:
		pid = process_id
		deadline = kill_at
		answer_deadline = answer_at
		channel = reader_channel
		threads = reader_threads
		pipes = open_pipes

	# Steps once a frame from now on, and waits when the game quits.
	func schedule(scene_tree: SceneTree) -> void:
		tree = scene_tree
		tree.process_frame.connect(step)
		tree.root.tree_exiting.connect(wait_for_exit)

	# One look, never a wait.
	func step() -> void:
		if done:
			return
		if OS.is_process_running(pid):
			if Time.get_ticks_msec() < deadline and not _silent():
				return
			OS.kill(pid)
		if _readers_alive():
			return  # a pipe has not ended yet
		_finish()

	# Blocks until the process has exited (killing it at the deadline, or once it counts as frozen), then at most 1 s
	# more for the reader threads. A reader still blocked after that (its pipe is held open by a process the bridge
	# started) is left running with its pipe open instead of being waited for: step() joins it once it ends (at quit,
	# nothing does; Godot may warn that a Thread was not waited for).
	func wait_for_exit() -> void:
		if done:
			return
		while OS.is_process_running(pid) and Time.get_ticks_msec() < deadline and not _silent():
			OS.delay_msec(10)
		if OS.is_process_running(pid):
			OS.kill(pid)
		var readers_until := Time.get_ticks_msec() + 1000
		while _readers_alive() and Time.get_ticks_msec() < readers_until:
			OS.delay_msec(10)
		if not _readers_alive():
			_finish()

	# True once the bridge counts as frozen: answer_deadline has passed and it wrote nothing since close() (a line,
	# or the end of its output, shows it alive: it then gets until deadline to exit).
	func _silent() -> bool:
		if answer_deadline < 0 or Time.get_ticks_msec() < answer_deadline:
			return false
		channel.mutex.lock()
		var alive := channel.heard
		channel.mutex.unlock()
		return not alive

	func _readers_alive() -> bool:
		for thread in threads:
			if thread.is_alive():
				return true
		return false

	# Called once no reader thread is alive, so joining them does not wait. The pipes are closed only after that:
	# a pipe closed under a blocked read does not end that read, and its file descriptor could be reused meanwhile.
	func _finish() -> void:
		done = true
		for thread in threads:
			if thread.is_started():
				thread.wait_to_finish()
		for pipe in pipes:
			pipe.close()
		if tree != null:
			if tree.process_frame.is_connected(step):
				tree.process_frame.disconnect(step)
			if tree.root != null and tree.root.tree_exiting.is_connected(wait_for_exit):
				tree.root.tree_exiting.disconnect(wait_for_exit)
		threads.clear()
		pipes.clear()
		channel = null

var _pipe: FileAccess
var _stderr: FileAccess
var _pid: int = -1
var _reader: Thread
var _err_reader: Thread
var _channel := _Channel.new()
var _buffer := PackedByteArray()
var _scanned := 0               # bytes of _buffer known to hold no line break
var _log_buffer := PackedByteArray()
var _received := false          # the bridge wrote something to stdout
# Control characters that JSON.stringify/json_escape() would write as JSON cannot read them (all but \b \t \n \f \r).
var _control_chars := RegEx.create_from_string("[\\x00-\\x07\\x0b\\x0e-\\x1f]")
var _next_id := 0
var _pending := {}            # request id -> _Call
var _tools := {}              # name -> {"definition": Dictionary, "handler": Callable}
var _tool_calls := {}         # tool/call id -> true while its handler runs
var _subscriptions := {}      # subscription id -> Callable(change: Dictionary)
# The cancels of a whole NPC's or session's work this client sent for a reason the -32009 of its other requests does not
# show (a delete, a turn whose timeout passed), numbered; per work ("npc gorm") the last one: [number, why].
var _cancels := 0
var _last_cancel := {}
var _dead_message := ""
var _closed := false
var _exit_deadline := -1      # once the output ended or the process is gone: until when poll() waits for the rest
var _next_exit_check := 0     # when poll() next looks whether the process still runs (ticks msec)
var _log_lines := PackedStringArray()   # the last LOG_LINES_KEPT lines of the bridge's stderr
# Godot before 4.5 gives the stderr pipe fd 0 (the game's stdin) as its write end and closes fd 0 when that pipe
# is closed or freed; the next bridge's stdin pipe then gets fd 0 and the bridge starts without stdin
# (godotengine/godot#109652, fixed by #109397). Such pipes are kept open for the life of the game instead.
static var _kept_pipes: Array[FileAccess] = []
# Reapers of closed bridges still running (see _Reaper), kept here because the node may be gone.
static var _reapers: Array = []
var _argv0 := ""


func _init() -> void:
	# Responses, tool calls and timeouts keep flowing while the game is paused (a pause menu during a dialogue).
	process_mode = Node.PROCESS_MODE_ALWAYS


func _ready() -> void:
	if autostart and _pid < 0:
		start()


func _process(_delta: float) -> void:
	poll()


func _exit_tree() -> void:
	close()


func _notification(what: int) -> void:
	# A node freed while outside the tree (used without adding it, poll() called by hand) gets no _exit_tree.
	if what == NOTIFICATION_PREDELETE:
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
	# The flag is what the bridge reads: a longer line would be skipped and its call never answered.
	var from_flag := max_line_bytes_of(argv)
	if from_flag > 0:
		max_line_bytes = from_flag
	_pass_exit_with_parent()
	var info := OS.execute_with_pipe(argv[0], argv.slice(1))
	if info.is_empty():
		_dead_message = "Cannot start the bridge '%s'." % " ".join(argv)
		push_error("[open-apple-models] " + _dead_message)
		return ERR_CANT_CREATE
	_pipe = info["stdio"]
	_stderr = info["stderr"]
	_pid = info["pid"]
	_argv0 = argv[0]
	_dead_message = ""
	_exit_deadline = -1
	_next_exit_check = 0
	_log_lines = PackedStringArray()
	_channel = _Channel.new()
	_reader = Thread.new()
	_reader.start(_channel._read_loop.bind(_pipe, false))
	_err_reader = Thread.new()
	_err_reader.start(_channel._read_loop.bind(_stderr, true))
	return OK


## The value of --max-line-bytes in a bridge's argv ("--max-line-bytes N" or "--max-line-bytes=N"; the last one
## counts, as `oam stdio` reads it), or -1 when it has none. start() sets max_line_bytes from it, as the C and C#
## clients read their limit from the command.
static func max_line_bytes_of(argv: PackedStringArray) -> int:
	var limit := -1
	for k in range(1, argv.size()):
		var value := ""
		if argv[k] == MAX_LINE_BYTES_FLAG and k + 1 < argv.size():
			value = argv[k + 1]
		elif argv[k].begins_with(MAX_LINE_BYTES_FLAG + "="):
			value = argv[k].substr(MAX_LINE_BYTES_FLAG.length() + 1)
		if value.is_valid_int() and value.to_int() >= 1:
			limit = value.to_int()
	return limit


## The bridge is started with OAM_EXIT_WITH_PARENT=1 unless the game's environment has the variable already
## (OS.set_environment("OAM_EXIT_WITH_PARENT", "0") before start() turns it off): when the game is killed or
## crashes, the bridge cancels its turns and exits instead of running them on for nobody (Linux and macOS).
## OS.execute_with_pipe takes no environment, so it is set in the game's own, which the bridge inherits.
static func _pass_exit_with_parent() -> void:
	if not OS.has_environment(EXIT_WITH_PARENT):
		OS.set_environment(EXIT_WITH_PARENT, "1")


## Process id of the bridge (-1 before start).
func get_pid() -> int:
	return _pid


## True while the bridge process runs.
func is_running() -> bool:
	return _pid > 0 and _dead_message.is_empty() and OS.is_process_running(_pid)


## Why the bridge is gone: the message of bridge_exited, "The bridge was closed." after close(), or why start()
## failed; "" while it runs (and before start()).
func get_exit_message() -> String:
	return _dead_message


## The last lines the bridge wrote to stderr (up to LOG_LINES_KEPT), oldest first: what a game can show when the
## bridge died. Kept after it exited.
func get_last_log_lines() -> PackedStringArray:
	return _log_lines


## Handles everything the bridge sent since the last call. _process() calls it every frame.
func poll() -> void:
	if not (Engine.get_main_loop() is SceneTree):
		# Without a SceneTree no frame steps the reapers of bridges that died by themselves: poll() does.
		for reaper in _reapers:
			if reaper.tree == null:
				reaper.step()
	if _closed:
		return
	_channel.mutex.lock()
	var chunks := _channel.chunks
	_channel.chunks = []
	var log_bytes := _channel.log_bytes
	_channel.log_bytes = PackedByteArray()
	var eof := _channel.eof
	var log_eof := _channel.log_eof
	_channel.mutex.unlock()
	for chunk in chunks:
		_buffer.append_array(chunk)
		_received = true
	while true:
		var newline := _buffer.find(10, _scanned)
		if newline < 0:
			_scanned = _buffer.size()
			break
		# The line leaves the buffer before it is handled: a handler may call poll() again.
		var line := _buffer.slice(0, newline).get_string_from_utf8().strip_edges(false, true)
		_buffer = _buffer.slice(newline + 1)
		_scanned = 0
		if not line.is_empty():
			_dispatch(line)
	_emit_logs(log_bytes, log_eof)
	if _dead_message.is_empty() and not _closed:
		_look_for_exit(eof, log_eof)


# Notices that the bridge is gone, never waiting for it. Its output ends when it exits, but a process it started
# (or the child of a launcher script) may hold the output open after that: the process itself is also looked at,
# four times a second. From then on each poll (frame) looks for the rest of its stdout and stderr and for its exit,
# for up to 2 s; then _on_exit() reports it, and whatever still is not there is no longer waited for.
func _look_for_exit(eof: bool, log_eof: bool) -> void:
	var now := Time.get_ticks_msec()
	if _exit_deadline < 0:
		if not eof and now < _next_exit_check:
			return
		_next_exit_check = now + 250
		if not eof and OS.is_process_running(_pid):
			return
		_exit_deadline = now + 2000
	if (eof and log_eof and not OS.is_process_running(_pid)) or now >= _exit_deadline:
		_on_exit()


# Emits log_received for every whole stderr line (and for the rest once stderr has ended).
func _emit_logs(log_bytes: PackedByteArray, log_eof: bool) -> void:
	_log_buffer.append_array(log_bytes)
	while true:
		var newline := _log_buffer.find(10)
		if newline < 0:
			break
		var text := _log_buffer.slice(0, newline).get_string_from_utf8().strip_edges(false, true)
		_log_buffer = _log_buffer.slice(newline + 1)
		_keep_log_line(text)
		log_received.emit(text)
	if log_eof and not _log_buffer.is_empty():
		var rest := _log_buffer.get_string_from_utf8().strip_edges(false, true)
		_log_buffer = PackedByteArray()
		_keep_log_line(rest)
		log_received.emit(rest)


func _keep_log_line(text: String) -> void:
	_log_lines.append(text)
	if _log_lines.size() > LOG_LINES_KEPT:
		_log_lines = _log_lines.slice(_log_lines.size() - LOG_LINES_KEPT)


# The bridge is gone (or has closed its output): report it at once. The reader threads are not waited for here (a
# pipe held open by a process the bridge started would freeze the game as long): a _Reaper joins them once they
# end, and kills a bridge that closed its output but still runs.
func _on_exit() -> void:
	if OS.is_process_running(_pid):
		_dead_message = "The bridge closed its output but kept running; it was stopped."
	else:
		var description := "output closed"
		if OS.has_method("get_process_exit_code"):
			description = _exit_description(OS.get_process_exit_code(_pid), OS.get_name() == "Windows")
		_dead_message = "The bridge process exited (%s) before answering." % description
	_channel.mutex.lock()
	var log_bytes := _channel.log_bytes
	_channel.log_bytes = PackedByteArray()
	_channel.discard = true
	_channel.mutex.unlock()
	_hand_to_reaper(Time.get_ticks_msec())
	_emit_logs(log_bytes, true)
	var tail := PackedStringArray()
	for text in _log_lines.slice(-EXIT_LOG_LINES):
		if not text.strip_edges().is_empty():
			tail.append(text)
	if not tail.is_empty():
		# What it said last (e.g. "Error: Unknown option '--bogus'.") tells the player or the developer why.
		_dead_message += " Its last lines on stderr:\n" + "\n".join(tail)
	elif not _received:
		_dead_message += " Did '%s' start? (bridge_command, bridge_path, OAM_BRIDGE_COMMAND, OAM_BRIDGE_PATH, or 'oam' on PATH)" % _argv0
	_fail_all(_dead_message)
	bridge_exited.emit(_dead_message)


## How the bridge ended, from OS.get_process_exit_code(). On Linux and macOS, Godot 4.3 and 4.4 give the raw wait
## status once OS.is_process_running() has seen the exit (which this script checks before every write): the exit
## code times 256, or the signal number (plus 128 with a core dump). Godot's own decoding gives the exit code, or
## the raw status of a signal, so a value below 256 is either an exit code or a signal.
static func _exit_description(code: int, windows: bool) -> String:
	if code < 0:
		return "output closed"
	if windows or code == 0:
		return "exit status %d" % code
	if code >= 256 and (code & 0x7f) == 0:
		return "exit status %d" % ((code >> 8) & 0xff)
	if code < 256:
		return "exit status %d or signal %d" % [code, code & 0x7f]
	return "status %d" % code


func _fail_all(message: String) -> void:
	var calls := _pending.values()
	_pending.clear()
	_tool_calls.clear()
	for pending_call in calls:
		pending_call.completed.emit(_error(SHUT_DOWN, "shut_down", message))


## Shuts the bridge down (cancelling its work) and returns at once: waiting requests fail right away with a -32023
## shut_down error "The bridge was closed.". A ping follows the shutdown: a bridge that writes nothing within
## SHUTDOWN_ANSWER_MSEC (0.5 s; frozen, stopped, not reading its input) is killed then; one that still answers gets
## timeout_msec to exit and is killed otherwise. That wait runs on later frames (see _Reaper), also after the node
## has been freed. When the game quits there are no later frames: the wait then happens during the quit (a frozen
## bridge delays it by 0.5 s, one that answers but does not exit by up to timeout_msec, then is killed). wait = true
## blocks the calling thread until the process is gone (and at most 1 s more for the reader threads, which are left
## running if a process the bridge started holds its output open), for a caller that must know it is gone before
## going on; without a SceneTree main loop, close() always does. After the bridge died by itself, close() only
## marks the node closed. The stdin pipe is not closed first: Godot has one pipe object for the bridge's stdin and
## stdout, and the reader thread is blocked on it; the bridge exits by itself once it has answered shutdown.
func close(wait: bool = false, timeout_msec: int = 3000) -> void:
	if _pid <= 0 or _closed:
		return
	_closed = true
	if _pipe == null:
		return  # it died by itself: a _Reaper already has it
	var answer_at := -1
	if _dead_message.is_empty():
		# From here on what the bridge writes is dropped, and marks it as alive (_Channel.heard).
		_channel.mutex.lock()
		_channel.discard = true
		_channel.mutex.unlock()
		_send({"jsonrpc": "2.0", "id": "gd-shutdown", "method": "shutdown"})
		# After shutdown every request fails at once (PROTOCOL.md, shutdown): the answer to this ping shows the
		# bridge is alive even while the shutdown waits for its cancelled work.
		_send({"jsonrpc": "2.0", "id": "gd-shutdown-ping", "method": "ping"})
		answer_at = Time.get_ticks_msec() + SHUTDOWN_ANSWER_MSEC
		_dead_message = "The bridge was closed."
	var tree := Engine.get_main_loop() as SceneTree
	_hand_to_reaper(Time.get_ticks_msec() + timeout_msec, wait or tree == null or tree.root == null, answer_at)
	_fail_all("The bridge was closed.")


# Hands the process, its pipes and the reader threads to a _Reaper (what the bridge still writes is dropped): it
# kills the process if it still runs at kill_at and joins the threads once their pipes have ended, stepped by
# frames, or by poll() without a SceneTree. wait: wait_for_exit() first, blocking the calling thread. answer_at:
# when a bridge that has written nothing since close() is killed (-1: only at kill_at).
func _hand_to_reaper(kill_at: int, wait: bool = false, answer_at: int = -1) -> void:
	_channel.mutex.lock()
	_channel.discard = true
	_channel.mutex.unlock()
	var pipes: Array[FileAccess] = [_pipe]
	if _stderr != null:
		var version := Engine.get_version_info()
		if version["major"] == 4 and version["minor"] < 5:
			_kept_pipes.append(_stderr)
		else:
			pipes.append(_stderr)
	var threads: Array[Thread] = []
	for thread in [_reader, _err_reader]:
		if thread != null and thread.is_started():
			threads.append(thread)
	var reaper := _Reaper.new(_pid, kill_at, _channel, threads, pipes, answer_at)
	_reader = null
	_err_reader = null
	_pipe = null
	_stderr = null
	for earlier in _reapers.duplicate():
		if earlier.done:
			_reapers.erase(earlier)
	_reapers.append(reaper)
	if wait:
		reaper.wait_for_exit()
	var tree := Engine.get_main_loop() as SceneTree
	if not reaper.done and tree != null and tree.root != null:
		reaper.schedule(tree)


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


# Sends one message. Returns {} when it was written, else the error response saying why not. With check_only, it
# says whether it would be sent, and writes nothing.
func _send(message: Dictionary, check_only: bool = false) -> Dictionary:
	if _pipe == null or not _dead_message.is_empty():
		return _error(SHUT_DOWN, "shut_down", _dead_message if not _dead_message.is_empty() else "The bridge is not started.")
	var text := _json(message)
	if text.is_empty():
		return _error(INVALID_MESSAGE, "invalid_message", ("The message holds a value JSON cannot carry (NaN, infinity, " +
				"text with a lone UTF-16 surrogate, or nesting deeper than %d levels); it was not sent.") % MAX_DEPTH)
	var line := (text + "\n").to_utf8_buffer()
	if line.size() - 1 > max_line_bytes:
		var why: String = ("The message is %d bytes, longer than the %d bytes the bridge reads; it was not sent (a " +
				"bridge whose command does not show its --max-line-bytes needs max_line_bytes too).") % [line.size() - 1, max_line_bytes]
		if str(message.get("method", "")) in ["world/create", "world/set", "world/merge"]:
			# A world's state (most often a saved one being loaded) is told how to send it in parts, as the other
			# clients do.
			why += (" A world's state this large loads in parts: world/create with part of it, then world/merge the " +
					"rest, a few keys at a time (docs/PROTOCOL.md §6, 'Saving a world').")
		var refused := _error(INVALID_MESSAGE, "invalid_message", why)
		refused["error"]["data"]["limit"] = max_line_bytes
		return refused
	if check_only:
		return {}
	if not _write_line(line):
		return _error(SHUT_DOWN, "shut_down", "The bridge process has exited; the message was not sent.")
	return {}


# The one place that writes to the bridge. Godot before 4.5.2 does not suppress SIGPIPE, so writing to a bridge
# that has exited kills the game: the process is checked right before the write (it could still exit in between,
# but that window is now microseconds, not the frame until poll() sees the end of its output).
func _write_line(line: PackedByteArray) -> bool:
	if _pipe == null or not OS.is_process_running(_pid):
		return false
	_pipe.store_buffer(line)
	return _pipe.get_error() == OK


# JSON text of value as the bridge reads it, or "" when it has none: NaN, infinity, text with a lone surrogate,
# nesting deeper than MAX_DEPTH (or a cycle). Not JSON.stringify: that writes NaN as "nan", "\v" as an escape JSON
# does not have and other control characters raw, and the bridge rejects such a line whole, with id null, so the
# request would wait forever. Keys keep their order (the order of schema properties matters to the model). Whole
# numbers are written as integers: JSON numbers Godot parsed are floats, so an id or a count goes back as it came
# ("3", not "3.0").
func _json(value: Variant, depth: int = 0) -> String:
	match typeof(value):
		TYPE_NIL:
			return "null"
		TYPE_BOOL:
			return "true" if value else "false"
		TYPE_INT:
			return str(value)
		TYPE_FLOAT:
			var number: float = value
			if is_nan(number) or is_inf(number):
				return ""
			if number == floorf(number) and absf(number) < 9.0e15:
				return str(int(number))
			var magnitude := floori(log(absf(number)) / log(10.0))
			if magnitude >= 15 or magnitude < -6:
				return String.num(number / pow(10.0, magnitude), 15) + "e" + str(magnitude)
			return String.num(number, 15 - magnitude)
		TYPE_STRING, TYPE_STRING_NAME, TYPE_NODE_PATH:
			return _json_string(str(value))
		TYPE_DICTIONARY:
			if depth >= MAX_DEPTH:
				return ""
			var object: Dictionary = value
			var members := PackedStringArray()
			for key in object:
				var member := _json(object[key], depth + 1)
				var key_text := _json_string(str(key))
				if member.is_empty() or key_text.is_empty():
					return ""
				members.append(key_text + ":" + member)
			return "{" + ",".join(members) + "}"
		TYPE_ARRAY, TYPE_PACKED_BYTE_ARRAY, TYPE_PACKED_INT32_ARRAY, TYPE_PACKED_INT64_ARRAY, TYPE_PACKED_FLOAT32_ARRAY, TYPE_PACKED_FLOAT64_ARRAY, TYPE_PACKED_STRING_ARRAY:
			if depth >= MAX_DEPTH:
				return ""
			var items := PackedStringArray()
			for element in value:
				var item := _json(element, depth + 1)
				if item.is_empty():
					return ""
				items.append(item)
			return "[" + ",".join(items) + "]"
	# Anything else (Vector2, Color, an Object, ...) as its text, as JSON.stringify does.
	return _json_string(str(value))


# A JSON string, or "" when text holds a lone UTF-16 surrogate. json_escape() escapes the backslash, the quote and
# \b \f \n \r \t (valid JSON), writes \v as an escape JSON does not have and leaves the other control characters raw;
# those (_control_chars) are written here, each as \u00XX, and the text between them goes through json_escape().
func _json_string(text: String) -> String:
	if text.to_utf8_buffer().get_string_from_utf8() != text:
		# Rare: text that UTF-8 does not carry as it is (a surrogate; also a leading U+FEFF, which the round trip
		# drops): each character is looked at.
		var chars := _utf8_chars(text)
		if chars.is_empty():
			return ""
		text = "".join(chars)
	var parts := PackedStringArray()
	var start := 0
	for found in _control_chars.search_all(text):
		var at: int = found.get_start()
		parts.append(text.substr(start, at - start).json_escape())
		parts.append("\\u%04x" % text.unicode_at(at))
		start = at + 1
	parts.append(text.substr(start).json_escape())
	return "\"" + "".join(parts) + "\""


# The characters of text, a surrogate pair (text made of UTF-16 code units, e.g. String.chr(0xD83D)) joined into the
# character it stands for; empty when text holds a lone surrogate (or a code point past U+10FFFF). UTF-8 cannot
# carry those, written raw or as a \uD800 escape the bridge rejects the whole line with id null, so the request
# would never be answered: the message is refused instead.
static func _utf8_chars(text: String) -> PackedStringArray:
	var chars := PackedStringArray()
	var i := 0
	while i < text.length():
		var c: int = text.unicode_at(i)
		var next: int = text.unicode_at(i + 1) if i + 1 < text.length() else 0
		if c >= 0xd800 and c <= 0xdbff and next >= 0xdc00 and next <= 0xdfff:
			chars.append(String.chr(0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00)))
			i += 2
		elif (c >= 0xd800 and c <= 0xdfff) or c > 0x10ffff:
			return PackedStringArray()
		else:
			chars.append(String.chr(c))
			i += 1
	return chars


## Sends a request; await it for the response Dictionary. on_event(event) receives the event of every
## "<ns>/event" notification the request causes. With timeout_sec > 0 (node in the tree) it answers a -32024
## timeout error when the response is late, and drops the late response. From the moment an npc/cancel, npc/delete,
## session/cancel or session/delete is sent (also by hand: request("npc/delete", {"npc": "gorm"}), or notify()), the
## running turn of the NPC or session it names calls its on_event (and so on_line, on_emotion, on_text) no more, as
## with cancel_npc() and delete_npc(); after a delete, the -32009 of its requests sent before says why ("... when an
## 'npc/delete' request deleted the NPC.").
func request(method: String, params: Dictionary = {}, on_event: Callable = Callable(),
		timeout_sec: float = 0.0, on_result: Callable = Callable()) -> Dictionary:
	if method in SILENCING_METHODS:
		_end_work(method, params, _ENDED_BY_REQUEST.get(method, ""))
	return await _request(method, params, on_event, timeout_sec, on_result)


# request() without its ending of the work a cancel or delete names (delete_npc() and the like end it with their why).
func _request(method: String, params: Dictionary = {}, on_event: Callable = Callable(),
		timeout_sec: float = 0.0, on_result: Callable = Callable()) -> Dictionary:
	if not _dead_message.is_empty():
		return _error(SHUT_DOWN, "shut_down", _dead_message)
	if _pid <= 0:
		return _error(SHUT_DOWN, "shut_down", "The bridge is not started.")
	_next_id += 1
	var id := "gd-%d" % _next_id
	var pending_call := _Call.new()
	pending_call.method = method
	pending_call.params = params
	pending_call.on_event = on_event
	pending_call.on_result = on_result
	pending_call.cancels_before = _cancels
	var message := {"jsonrpc": "2.0", "id": id, "method": method}
	if not params.is_empty():
		message["params"] = params
	_pending[id] = pending_call
	var refused := _send(message)
	if not refused.is_empty():
		_pending.erase(id)
		return refused
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


## Sends a notification (no response). Returns {} when it was sent, else the error saying why not. An npc/cancel,
## npc/delete, session/cancel or session/delete ends the work it names as request() does: the running turn's callbacks
## stop at once, and after a delete its -32009 says why ("... when an 'npc/delete' notification deleted the NPC.").
func notify(method: String, params: Dictionary = {}) -> Dictionary:
	if method in SILENCING_METHODS:
		_end_work(method, params, _ENDED_BY_NOTIFICATION.get(method, ""))
	var message := {"jsonrpc": "2.0", "method": method}
	if not params.is_empty():
		message["params"] = params
	return _send(message)


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
	pending_call.completed.emit(_explained(message, pending_call))


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
	var refused := _send({"jsonrpc": "2.0", "id": id, "result": result})
	if error_code(refused) == "invalid_message":
		# The model gets an error output at once instead of waiting for the tool timeout.
		var why: String = refused["error"]["message"]
		_send({"jsonrpc": "2.0", "id": id, "result": {"output": "The tool's output was not sent: " + why, "isError": true}})


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
			# The model gets an error output; the game hears of it too (a restored save or a resumed history keeps its
			# tools' definitions, not their handlers), as in the C# and Python clients.
			push_warning(("[open-apple-models] The model called tool '%s' (%s), but no handler is registered for it " +
					"in this client: it got an error output. Register it with register_tool before the turn (a save " +
					"restored with restore_npc, or a session resumed from history, keeps the tool's definition, not " +
					"its handler), or answer it from tool_call_received.") % [tool_name, _caller_of(params)])
			_send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
				"message": "No handler for tool '%s' in this client." % tool_name}})
		return
	_run_tool(id, tool_name, call_info, params)


# Whose turn a tool/call came from, for a warning: "session 'guard'", "NPC 'gorm'", or a decision or generation.
static func _caller_of(params: Dictionary) -> String:
	if params.get("session") is String:
		return "session '%s'" % params["session"]
	if params.get("npc") is String:
		return "NPC '%s'" % params["npc"]
	return "a decision or generation"


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
		_note_cancel("session", session_id, _timed_out_why("session/respond", timeout_sec))
		notify("session/cancel", {"session": session_id})
	return response


## session/cancel: cancels the session's running turn (its respond() answers a -32009 cancelled error) and its
## queued work. Result: {session, cancelled}. From this call on, the turn's on_text and on_event are not called
## again, also for the text already on its way (a turn that had already ended still gives its reply).
func cancel_session(session_id: String) -> Dictionary:
	return await request("session/cancel", {"session": session_id})


## session/delete: cancels the session's work (its running respond() answers a -32009 cancelled error ending with
## "when delete_session() deleted the session.", or its reply when it had already ended) and frees it. Result:
## {session, deleted}. From this call on, the turn's on_text and on_event are not called again, as with
## cancel_session().
func delete_session(session_id: String) -> Dictionary:
	var params := {"session": session_id}
	_end_work("session/delete", params, "delete_session() deleted the session.")
	return await _request("session/delete", params)


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
		_note_cancel("npc", npc_id, _timed_out_why("npc/talk", timeout_sec))
		notify("npc/cancel", {"npc": npc_id})
	return response


# Why the requests of an NPC or session sent before a turn of it timed out were cancelled with that turn.
static func _timed_out_why(method: String, timeout_sec: float) -> String:
	return ("the timeout_sec of its '%s' passed (%d ms): the protocol cancels the running turn and every request " +
			"queued behind it together (there is no cancel for one request). Send it again if you still need it.") % [
			method, int(round(timeout_sec * 1000.0))]


## npc/cancel: cancels the NPC's running talk (its talk() answers a -32009 cancelled error, e.g. when the player
## walks away) and its queued requests. Result: {npc, cancelled}. From this call on, the talk's on_line and
## on_emotion are not called again, also for the rest of a line already on its way (a talk that had already ended
## still gives its reply).
func cancel_npc(npc_id: String) -> Dictionary:
	return await request("npc/cancel", {"npc": npc_id})


## npc/delete: cancels the NPC's work (its running talk() answers a -32009 cancelled error ending with "when
## delete_npc() deleted the NPC.", or its reply when it had already ended) and frees it, e.g. when the NPC dies
## mid-line. Result: {npc, deleted}. From this call on, the talk's on_line and on_emotion are not called again, as
## with cancel_npc(). To load a save over a living NPC, use restore_npc_over(id, save, model).
func delete_npc(npc_id: String) -> Dictionary:
	var params := {"npc": npc_id}
	_end_work("npc/delete", params, "delete_npc() deleted the NPC.")
	return await _request("npc/delete", params)


## Replaces a living NPC with a save made with npc_state() (npc/delete, then npc/restore under its id): the player
## loads a save over a living NPC. Answers the npc/restore response. The model is not saved: give the one the NPC
## was created with (null: the bridge's default). A running talk() answers a -32009 cancelled error ending with "when
## restore_npc_over() replaced the NPC (it deletes it first)." (or its reply when it had already ended), and from
## this call on its on_line and on_emotion are not called again, as with
## delete_npc(). When the bridge refuses the save (a field edited by hand), its error is answered and the NPC is put
## back as it was (its completed turns, memory, tools and world; the talk that was running stays cancelled). A save
## this client cannot send (too long, a value JSON cannot carry) is answered as an error before anything is sent, and
## the NPC goes on as it was.
## 	var loaded := await oam.restore_npc_over("gorm", save, model) # the story stops where it was
func restore_npc_over(npc_id: String, state: Dictionary, model: Variant = null) -> Dictionary:
	var params := {"state": state, "npc": npc_id}
	if model != null:
		params["model"] = model
	# Checked before the delete: a save this client refuses must not cost the NPC.
	var refused := _send({"jsonrpc": "2.0", "id": "gd-%d" % (_next_id + 3), "method": "npc/restore", "params": params},
			true)
	if not refused.is_empty():
		return refused
	# From this call on, not after the first answer.
	_end_work("npc/delete", {"npc": npc_id}, "restore_npc_over() replaced the NPC (it deletes it first).")
	# The NPC as it is now (answered at once, not after its talk), then the delete, which cancels the talk.
	var current: Dictionary = await request("npc/state", {"npc": npc_id, "settle": false})
	await _request("npc/delete", {"npc": npc_id})
	var result: Dictionary = await request("npc/restore", params)
	if is_error(result) and not is_error(current):
		# A refused save must not cost the NPC: put back the one that was deleted for it.
		var previous := {"state": current["result"]["state"], "npc": npc_id}
		if model != null:
			previous["model"] = model
		await request("npc/restore", previous)
	return result


# Before an npc/cancel, npc/delete, session/cancel or session/delete is sent (by cancel_npc(), delete_npc(),
# restore_npc_over(), the session's, or by hand with request() or notify()): the turns in flight of the NPC or session
# it names call their callbacks no more, and with a why the -32009 of its requests sent before ends with "when " + why.
func _end_work(method: String, params: Dictionary, why: String) -> void:
	var kind := method.get_slice("/", 0)
	if not (params.get(kind) is String):
		return
	var target: String = params[kind]
	_silence_turns(kind, target)
	if not why.is_empty():
		_note_cancel(kind, target, why)


# Notes, before it is sent, a cancel of all the work of an NPC or session ("npc", "gorm") for a reason its -32009 does
# not show: the requests of it sent before then say why (see _explained()).
func _note_cancel(kind: String, target: String, why: String) -> void:
	var key := kind + " " + target
	_cancels += 1
	_last_cancel.erase(key) # to the end of the order
	_last_cancel[key] = [_cancels, why]
	if _last_cancel.size() > _CANCELS_KEPT:
		_last_cancel.erase(_last_cancel.keys()[0])


# A -32009 cancelled error that a cancel noted after the request was sent caused (the protocol cancels the running
# turn of an NPC or session and its queued requests together) ends with why, as in the other clients:
# "... 'npc/talk' was cancelled with the rest of the work of NPC 'gorm' when delete_npc() deleted the NPC."
func _explained(response: Dictionary, pending_call: _Call) -> Dictionary:
	if error_code(response) != "cancelled":
		return response
	var kind := pending_call.method.get_slice("/", 0)
	if not (pending_call.params.get(kind) is String):
		return response
	var target: String = pending_call.params[kind]
	var noted: Array = _last_cancel.get(kind + " " + target, [])
	if noted.is_empty() or int(noted[0]) <= pending_call.cancels_before:
		return response
	var explained := response.duplicate(true)
	explained["error"]["message"] = "%s '%s' was cancelled with the rest of the work of %s '%s' when %s" % [
		str(response["error"].get("message", "")), pending_call.method, "NPC" if kind == "npc" else "session", target,
		str(noted[1])]
	return explained


# A player who walked away sees no more of the turn: the events the bridge wrote before it read the cancel are still
# on their way, and _handle_notification() passes a request's events on only while its on_event is valid.
func _silence_turns(key: String, id: String) -> void:
	for pending_call in _pending.values():
		if pending_call.method.begins_with(key + "/") and str(pending_call.params.get(key, "")) == id:
			pending_call.on_event = Callable()


## npc/bark.
func bark(npc_id: String, situation: Variant = null) -> Dictionary:
	var params := {"npc": npc_id}
	if situation != null:
		params["situation"] = situation
	return await request("npc/bark", params)


## npc/state: store response.result.state whole in the save game. By default the save waits for the NPC's earlier
## requests (its running talk among them); settle = false answers at once with the completed turns: a tool handler
## that saves its own NPC needs it, as the talk that called the tool waits for the handler.
## 	var save := await oam.npc_state(context.npc, false) # inside a tool handler of gorm's talk
func npc_state(npc_id: String, settle: bool = true) -> Dictionary:
	var params := {"npc": npc_id}
	if not settle:
		params["settle"] = false
	return await request("npc/state", params)


## npc/restore from a saved state (npc_state()'s result.state). The id, tools, world and options default to the
## saved ones: left at ""/null each is left out. A value given wins over the save, as with C#'s RestoreNpcAsync and
## Python's restore_npc: tool_names (registered names, sent as their definitions; [] restores without the saved
## tools), world (a world id; "" restores without the saved world, sent as null), options (sent as given). The model
## is not saved: give the one the NPC was created with (null: the bridge's default).
## 	var loaded := await oam.restore_npc(save, "", model, ["open_gate"], "village")
func restore_npc(state: Dictionary, npc_id: String = "", model: Variant = null, tool_names: Variant = null,
		world: Variant = null, options: Variant = null) -> Dictionary:
	var params := {"state": state}
	if not npc_id.is_empty():
		params["npc"] = npc_id
	if model != null:
		params["model"] = model
	if tool_names != null:
		params["tools"] = tool_definitions(tool_names)
	if world != null:
		params["world"] = null if str(world).is_empty() else world
	if options != null:
		params["options"] = options
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


## world/subscribe: on_change(change) runs for every world/changed of this subscription. The bridge's warnings (a
## path that does not exist yet, most often misspelt: its on_change never runs) are also pushed with push_warning:
## "[open-apple-models] world_subscribe('quests.wolfs'): 'path' names 'quests.wolfs', which does not exist ...".
func world_subscribe(world_id: String, path: String, on_change: Callable) -> Dictionary:
	var register := func(result: Variant) -> void:
		if result is Dictionary:
			_subscriptions[str(result.get("subscription", ""))] = on_change
	var response: Dictionary = await request("world/subscribe", {"world": world_id, "path": path}, Callable(), 0.0,
			register)
	_push_warnings("world_subscribe('%s')" % path, response)
	return response


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


## content/generate: result.content matches schema. extra: instructions, context, model, ... The bridge's warnings
## (a schema part it generates as {}, an unknown key) are also pushed with push_warning ("[open-apple-models]
## generate(): #/properties/stats: object without 'properties' is generated as {}; ...").
func generate(prompt: String, schema: Dictionary, extra: Dictionary = {}) -> Dictionary:
	var params := {"prompt": prompt, "schema": schema}
	params.merge(extra)
	var response: Dictionary = await request("content/generate", params)
	_push_warnings("generate()", response)
	return response


# The bridge's warnings on the result of a call whose game reads one value of it (a subscription's id, the content),
# one push_warning each, named by the call, as the C# client logs them.
static func _push_warnings(where: String, response: Dictionary) -> void:
	var result = response.get("result")
	if not (result is Dictionary) or not (result.get("warnings") is Array):
		return
	for warning in result["warnings"]:
		push_warning("[open-apple-models] %s: %s" % [where, str(warning)])
