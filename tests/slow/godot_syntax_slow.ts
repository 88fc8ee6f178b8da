/**
 * Slow tier (`deno task test:slow`): the Godot client has no Godot on the build machines, so nothing runs it;
 * these tests parse it instead. Every .gd file under bindings/ and every ```gdscript block of
 * bindings/README.md and bindings/godot/README.md goes through tree-sitter's GDScript grammar
 * (npm:tree-sitter-gdscript, run by tests/slow/gdscript_tree.ts in its own process with --no-lock, so the native
 * packages stay out of deno.lock and out of `deno task test`). A parse error fails with file, line and text.
 * Queries then check what Godot 4 would reject at load time but the grammar accepts (`:=` from a value
 * without a type) and what the protocol needs from the source (one guarded write path, its own JSON encoder,
 * stderr decoded by whole lines, a close() that returns at once and leaves the wait and the kill to a reaper that
 * outlives the node). Each check is also run on a deliberately broken copy, to show that it can fail. The grammar
 * is more lenient than Godot's own parser (it accepts a function header without its colon and mixed
 * indentation), so a clean parse is necessary, not sufficient.
 */
import assert from "node:assert/strict";
import { REPO_ROOT } from "../bindings/toolchain.ts";

const HELPER = `${REPO_ROOT}/tests/slow/gdscript_tree.ts`;
const PARSER_DIR = `${REPO_ROOT}/.build/gdscript-parser`;
const BINDING = "bindings/godot/open_apple_models.gd";
const READMES = ["bindings/README.md", "bindings/godot/README.md"];

interface Source {
  name: string;
  text: string;
  /** Added to reported lines (a README block starts below line 1). */
  offset?: number;
}

interface Problem {
  kind: string;
  line: number;
  column: number;
  text: string;
}

interface Capture {
  capture: string;
  line: number;
  text: string;
}

interface Parsed {
  name: string;
  problems: Problem[];
  captures: Record<string, Capture[]>;
}

/** Parses `sources` (and runs `queries` on them) in the helper process. */
async function parse(sources: Source[], queries: Record<string, string> = {}): Promise<Parsed[]> {
  await Deno.mkdir(PARSER_DIR, { recursive: true });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-lock",
      "--no-config",
      "--node-modules-dir=auto",
      "--allow-read",
      "--allow-env",
      "--allow-ffi",
      HELPER,
    ],
    cwd: PARSER_DIR,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(180_000),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify({ sources, queries })));
  await writer.close();
  const output = await child.output();
  const decoder = new TextDecoder();
  if (output.code !== 0) {
    throw new Error(
      `the GDScript parser (${HELPER}) exited with ${output.code}: ${decoder.decode(output.stderr)}`,
    );
  }
  const { results } = JSON.parse(decoder.decode(output.stdout)) as { results: Parsed[] };
  return results.map((result, index) => {
    const offset = sources[index].offset ?? 0;
    const shift = <T extends { line: number }>(item: T) => ({ ...item, line: item.line + offset });
    return {
      ...result,
      problems: result.problems.map(shift),
      captures: Object.fromEntries(
        Object.entries(result.captures).map(([key, list]) => [key, list.map(shift)]),
      ),
    };
  });
}

/** Every .gd file under bindings/, by path from the repository root. */
async function gdFiles(dir = "bindings"): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(`${REPO_ROOT}/${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await gdFiles(path));
    else if (entry.name.endsWith(".gd")) found.push(path);
  }
  return found.sort();
}

/** The ```gdscript blocks of a Markdown file, each with the line its code starts after. */
function gdscriptBlocks(path: string): Source[] {
  const lines = Deno.readTextFileSync(`${REPO_ROOT}/${path}`).split("\n");
  const blocks: Source[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "```gdscript") continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== "```") end++;
    blocks.push({
      name: `${path}:${start + 1}`,
      text: lines.slice(start, end).join("\n") + "\n",
      offset: start,
    });
    i = end;
  }
  return blocks;
}

function describe(parsed: Parsed[]): string {
  return parsed.flatMap(({ name, problems }) =>
    problems.map((p) => `${name.split(":")[0]}:${p.line}:${p.column}: ${p.kind} ${JSON.stringify(p.text)}`)
  ).join("\n");
}

async function sources(): Promise<Source[]> {
  const files = (await gdFiles()).map((path) => ({
    name: path,
    text: Deno.readTextFileSync(`${REPO_ROOT}/${path}`),
  }));
  return [...files, ...READMES.flatMap(gdscriptBlocks)];
}

/**
 * `var name := value` where `value` has no type Godot 4 can infer (a Variant): the script fails to load with
 * "Cannot infer the type of "name" variable because the value doesn't have a set type". Subscripts, `.get()`,
 * `.call()`, JSON.parse_string and an awaited signal all give a Variant.
 */
const VARIANT_INFERENCE = `
(variable_statement name: (name) @name type: (inferred_type) value: (subscript) @value)
(variable_statement name: (name) @name type: (inferred_type)
  value: (attribute (attribute_call (identifier) @method (#match? @method "^(get|call|callv|get_meta|parse_string|pop_back|pop_front|front|back|pick_random)$"))) @value)
(variable_statement name: (name) @name type: (inferred_type)
  value: (await_expression (attribute (identifier) . (identifier))) @value)
`;

/** Functions by name with their whole text, every call by method name, and inner classes by name. */
const STRUCTURE = `
(function_definition name: (name) @function) @body
(attribute_call (identifier) @method)
(class_definition name: (name) @class) @class_body
`;

interface Functions {
  /** Function name → its text. */
  bodies: Map<string, string>;
  /** Method name → the functions calling it. */
  callers: Map<string, string[]>;
  /** Inner class name → its text. */
  classes: Map<string, string>;
}

function functions(parsed: Parsed): Functions {
  const bodies = new Map<string, string>();
  const classes = new Map<string, string>();
  const spans: { name: string; from: number; to: number }[] = [];
  const caps = parsed.captures.structure;
  for (let i = 0; i < caps.length; i++) {
    if (caps[i].capture !== "body") continue;
    const name = caps.slice(i + 1).find((c) => c.capture === "function")!.text;
    bodies.set(name, caps[i].text);
    spans.push({ name, from: caps[i].line, to: caps[i].line + caps[i].text.split("\n").length - 1 });
  }
  const callers = new Map<string, string[]>();
  for (const c of caps.filter((c) => c.capture === "method")) {
    // The innermost function around the call (lambdas are not function_definitions).
    const owner = spans.filter((s) => s.from <= c.line && c.line <= s.to).sort((a, b) => b.from - a.from)[0];
    callers.set(c.text, [...(callers.get(c.text) ?? []), owner?.name ?? "(top level)"]);
  }
  for (let i = 0; i < caps.length; i++) {
    if (caps[i].capture !== "class_body") continue;
    classes.set(caps.slice(i + 1).find((c) => c.capture === "class")!.text, caps[i].text);
  }
  return { bodies, callers, classes };
}

/** What the protocol needs from the binding's source; empty when all holds. */
function wireProblems(parsed: Parsed): string[] {
  const { bodies, callers } = functions(parsed);
  const found: string[] = [];
  const writers = callers.get("store_buffer") ?? [];
  if (writers.length !== 1 || writers[0] !== "_write_line") {
    found.push(
      `store_buffer must be called only in _write_line (called in: ${writers.join(", ") || "nothing"})`,
    );
  }
  const write = bodies.get("_write_line") ?? "";
  const running = write.indexOf("is_process_running");
  if (running < 0 || running > write.indexOf("store_buffer")) {
    // Godot before 4.5.2 does not suppress SIGPIPE: a write to a bridge that has exited kills the game.
    found.push("_write_line must check OS.is_process_running before store_buffer");
  }
  if (callers.has("stringify")) {
    // JSON.stringify writes NaN as "nan", "\v" as an escape JSON lacks and other control characters raw: the
    // bridge rejects the whole line (id null), so the request never gets its response.
    found.push(
      `JSON.stringify is used (in ${callers.get("stringify")!.join(", ")}); messages go through _json()`,
    );
  }
  const close = (bodies.get("close") ?? "") + (bodies.get("_hand_to_reaper") ?? "");
  if (!/\["minor"\] < 5:\n\t+_kept_pipes\.append\(_stderr\)/.test(close)) {
    // Godot before 4.5 closes fd 0 with the stderr pipe: the next bridge would start without stdin.
    found.push("close() must keep the stderr pipe open before Godot 4.5 (in _kept_pipes)");
  }
  const blocking = (callers.get("delay_msec") ?? []).filter((name) => name !== "wait_for_exit");
  if (blocking.length > 0) {
    // poll() and close() run on the main thread: a wait there freezes the game (poll: up to 2 s when the output
    // ended; close: up to 3 s at every scene change).
    found.push(
      `only _Reaper.wait_for_exit() may wait with OS.delay_msec (also: ${
        blocking.join(", ")
      }); poll() looks once a frame`,
    );
  }
  if (
    !(bodies.get("_on_exit") ?? "").includes("_exit_description(OS.get_process_exit_code") ||
    !(bodies.get("_exit_description") ?? "").includes(">> 8")
  ) {
    // Godot 4.3 and 4.4 hand back the raw wait status: exit code 1 would be shown as "exit status 256".
    found.push("_on_exit must describe the exit with _exit_description, which decodes a raw wait status");
  }
  if (
    !(bodies.get("_json_string") ?? "").includes("_utf8_chars(text)") ||
    !(bodies.get("_utf8_chars") ?? "").includes("0xd800")
  ) {
    // A lone surrogate, raw or escaped, makes the bridge reject the whole line with id null: refuse it instead.
    found.push("_json_string must look for surrogates (_utf8_chars) when the text does not survive UTF-8");
  }
  if ((bodies.get("_read_loop") ?? "").includes("get_string_from_utf8")) {
    // A chunk may end inside a UTF-8 sequence: the reader thread hands bytes over; lines are decoded whole.
    found.push("_read_loop decodes chunks as UTF-8; a character split between two chunks would be garbled");
  }
  return found;
}

/**
 * What close() needs so that it returns at once and still leaves no bridge running; empty when all holds. A scene
 * change or a quit calls it (through _exit_tree), and the node is freed right after.
 */
function closeProblems(parsed: Parsed, text: string): string[] {
  const { bodies, classes } = functions(parsed);
  const found: string[] = [];
  const close = bodies.get("close") ?? "";
  if (!close.startsWith("func close(wait: bool = false")) {
    found.push("close() must not block by default: close(wait: bool = false, ...)");
  }
  if (/delay_msec|while\s+OS\.is_process_running|wait_to_finish|_join_threads/.test(close)) {
    // It froze the game for up to 3 s (waiting for the exit) at every scene change.
    found.push("close() waits for the process (or the reader threads) itself; a _Reaper does that");
  }
  // close() hands the bridge over in _hand_to_reaper(), which _on_exit() uses too.
  const handOver = close + (bodies.get("_hand_to_reaper") ?? "");
  const schedule = bodies.get("schedule") ?? "";
  if (
    !/reaper\.schedule\(/.test(handOver) || !schedule.includes("process_frame.connect(step)") ||
    !schedule.includes("tree_exiting.connect(wait_for_exit)")
  ) {
    // Frames drive the wait after close(); at quit no frame comes, and the root's tree_exiting (after every node's
    // _exit_tree) is the last chance to kill a bridge that ignores shutdown.
    found.push(
      "close() must hand the bridge to a _Reaper stepped by process_frame and waited on the root's tree_exiting",
    );
  }
  if (!/_Reaper\.new\(.*\b_channel\b/.test(handOver)) {
    // A Thread's Callable does not keep its object alive: once the node is freed, only the reaper holds the channel.
    found.push("close() must give the _Reaper the _Channel the reader threads run on");
  }
  const step = (bodies.get("step") ?? "").replaceAll("_readers_alive()", bodies.get("_readers_alive") ?? "");
  if (!/is_alive\(\)[^]*_finish\(\)/.test(step) || step.includes("delay_msec")) {
    found.push(
      "_Reaper.step() must not wait: it joins the reader threads only once they are no longer alive",
    );
  }
  const finish = bodies.get("_finish") ?? "";
  if (
    !(finish.indexOf("wait_to_finish") >= 0 &&
      finish.indexOf("wait_to_finish") < finish.indexOf("pipe.close()"))
  ) {
    // A pipe closed under a blocked read does not end the read, and its file descriptor may be reused meanwhile.
    found.push("_Reaper._finish() must join the reader threads before it closes the pipes");
  }
  if (
    !(classes.get("_Channel") ?? "").includes("func _read_loop(") || /^func _read_loop\(/m.test(text) ||
    !text.includes(".start(_channel._read_loop.bind(")
  ) {
    // The threads outlive close(), and the node may be freed first: a thread inside its method would crash the game.
    found.push("the reader threads must run _Channel._read_loop, not a method of the node");
  }
  return found;
}

/**
 * What close() needs so that a frozen bridge (stopped, not reading, writing nothing) is killed after 0.5 s, as the
 * C# client's Dispose does (tested there: bindings/unity/tests/OamBridgeTests.cs), instead of delaying the quit
 * by the whole 3 s grace; empty when all holds. The shutdown is followed by a ping (a live bridge fails it at
 * once, even while the shutdown waits for cancelled work); what the bridge writes after close() (or the end of
 * its output) marks it as alive; the reaper, stepped by frames and waited at quit, kills one that stayed silent
 * past SHUTDOWN_ANSWER_MSEC.
 */
function frozenCloseProblems(parsed: Parsed, text: string): string[] {
  const { bodies, classes } = functions(parsed);
  const found: string[] = [];
  const close = bodies.get("close") ?? "";
  const shutdown = close.indexOf('"method": "shutdown"');
  const ping = close.indexOf('"method": "ping"');
  const marked = close.indexOf("_channel.discard = true");
  if (shutdown < 0 || ping < shutdown) found.push("close() must send a ping after the shutdown");
  if (marked < 0 || marked > shutdown) {
    // Else an answer read before the reaper takes over goes to the dropped chunks and is not seen.
    found.push("close() must mark the channel (discard) before it sends the shutdown");
  }
  if (!/^const SHUTDOWN_ANSWER_MSEC := 500$/m.test(text) || !/_hand_to_reaper\([^\n]*answer_at/.test(close)) {
    found.push(
      "close() must give the reaper the time by which the bridge must have written something (0.5 s)",
    );
  }
  if (!/if discard:\n\t+if not is_log:\n\t+heard = true/.test(classes.get("_Channel") ?? "")) {
    found.push("a line the bridge writes after close() must mark it as heard (_Channel.heard)");
  }
  if (
    !/not _silent\(\)/.test(bodies.get("step") ?? "") ||
    !/not _silent\(\)/.test(bodies.get("wait_for_exit") ?? "")
  ) {
    found.push("_Reaper.step() and wait_for_exit() must kill a bridge that stayed silent (_silent())");
  }
  return found;
}

/**
 * What a bridge that dies by itself (a bad flag, killed by the OS) needs so that the game sees it without its main
 * thread ever waiting on a reader thread; empty when all holds. A reader thread ends only when its pipe ends, and a
 * process the bridge started (or the child of a launcher script) can hold the pipe open long after the bridge
 * died: joining it on the main thread froze the game that long.
 */
function exitProblems(parsed: Parsed): string[] {
  const { bodies, callers } = functions(parsed);
  const found: string[] = [];
  const joiners = callers.get("wait_to_finish") ?? [];
  if (joiners.some((name) => name !== "_finish")) {
    found.push(`only _Reaper._finish() may join the reader threads (also: ${joiners.join(", ")})`);
  }
  const onExit = bodies.get("_on_exit") ?? "";
  if (!onExit.includes("_hand_to_reaper(") || /_join_threads|wait_to_finish/.test(onExit)) {
    found.push("_on_exit() must hand the reader threads to a _Reaper instead of joining them");
  }
  if (!/if not _readers_alive\(\):\n\t+_finish\(\)/.test(bodies.get("wait_for_exit") ?? "")) {
    // Also at quit and in close(true): a reader still blocked after the process is gone is left, not joined.
    found.push("_Reaper.wait_for_exit() must call _finish() only once no reader thread is alive");
  }
  if (!/not eof and OS\.is_process_running\(_pid\)/.test(bodies.get("_look_for_exit") ?? "")) {
    // A dead bridge whose output is held open never ended its stdout: poll() must look at the process itself.
    found.push("poll() must notice that the process is gone while its output is still open (_look_for_exit)");
  }
  const tail = onExit.indexOf("_log_lines");
  if (tail < 0 || tail > onExit.indexOf("bridge_exited.emit") || !bodies.has("get_last_log_lines")) {
    found.push(
      "the message of bridge_exited must end with the bridge's last stderr lines (get_last_log_lines)",
    );
  }
  return found;
}

/** The bridge must be started with OAM_EXIT_WITH_PARENT=1 unless the game set the variable; empty when so. */
function exitWithParentProblems(parsed: Parsed, text: string): string[] {
  const { bodies } = functions(parsed);
  const found: string[] = [];
  const start = bodies.get("start") ?? "";
  const passed = start.indexOf("_pass_exit_with_parent()");
  if (passed < 0 || passed > start.indexOf("OS.execute_with_pipe(")) {
    found.push("start() must call _pass_exit_with_parent() before OS.execute_with_pipe()");
  }
  if (
    !/if not OS\.has_environment\(EXIT_WITH_PARENT\):\n\t+OS\.set_environment\(EXIT_WITH_PARENT, "1"\)/.test(
      bodies.get("_pass_exit_with_parent") ?? "",
    ) || !/^const EXIT_WITH_PARENT := "OAM_EXIT_WITH_PARENT"$/m.test(text)
  ) {
    found.push(
      '_pass_exit_with_parent() must set OAM_EXIT_WITH_PARENT to "1" only when the game has not set it',
    );
  }
  return found;
}

/** How a bridge that died by itself was handled before: its reader threads were joined on the main thread. */
const OLD_EXIT = {
  _on_exit: `func _on_exit() -> void:
	var description := "output closed"
	if not OS.is_process_running(_pid) and OS.has_method("get_process_exit_code"):
		description = _exit_description(OS.get_process_exit_code(_pid), OS.get_name() == "Windows")
	_dead_message = "The bridge process exited (%s) before answering." % description
	_join_threads()
	_channel.mutex.lock()
	var log_bytes := _channel.log_bytes
	_channel.log_bytes = PackedByteArray()
	_channel.mutex.unlock()
	_emit_logs(log_bytes, true)
	_fail_all(_dead_message)
	bridge_exited.emit(_dead_message)


func _join_threads() -> void:
	if _reader != null and _reader.is_started():
		_reader.wait_to_finish()
	if _err_reader != null and _err_reader.is_started():
		_err_reader.wait_to_finish()`,
  _look_for_exit: `func _look_for_exit(eof: bool, _log_eof: bool) -> void:
	if not eof:
		return
	if _exit_deadline < 0:
		_exit_deadline = Time.get_ticks_msec() + 2000
	if not OS.is_process_running(_pid) or Time.get_ticks_msec() >= _exit_deadline:
		_on_exit()`,
  wait_for_exit: `func wait_for_exit() -> void:
		if done:
			return
		while OS.is_process_running(pid) and Time.get_ticks_msec() < deadline:
			OS.delay_msec(10)
		if OS.is_process_running(pid):
			OS.kill(pid)
		_finish()`,
  get_last_log_lines: `func _unused() -> void:
	pass`,
};

/** close() as it was: it waited up to 3 s on the main thread (and the reader threads ran on the node). */
const OLD_CLOSE =
  `## Shuts the bridge down (cancelling its work), waits up to timeout_msec for it to exit and kills it otherwise.
## Blocks the calling thread while it waits.
func close(timeout_msec: int = 3000) -> void:
\tif _pid <= 0 or _closed:
\t\treturn
\t_closed = true
\tif _dead_message.is_empty():
\t\t_send({"jsonrpc": "2.0", "id": "gd-shutdown", "method": "shutdown"})
\tvar deadline := Time.get_ticks_msec() + timeout_msec
\twhile OS.is_process_running(_pid) and Time.get_ticks_msec() < deadline:
\t\tOS.delay_msec(10)
\tif OS.is_process_running(_pid):
\t\tOS.kill(_pid)
\t_join_threads()
\tif _pipe != null:
\t\t_pipe.close()
\tif _stderr != null:
\t\tvar version := Engine.get_version_info()
\t\tif version["major"] == 4 and version["minor"] < 5:
\t\t\t_kept_pipes.append(_stderr)
\t\telse:
\t\t\t_stderr.close()
\tif _dead_message.is_empty():
\t\t_dead_message = "The bridge was closed."
\t_fail_all("The bridge was closed.")


`;

let skip = "";
try {
  await parse([{ name: "probe", text: "extends Node\n" }]);
} catch (error) {
  skip = error instanceof Error ? error.message.split("\n")[0] : String(error);
}
const name = (what: string) =>
  skip ? `bindings/godot: ${what} SKIPPED (tree-sitter-gdscript could not be installed: ${skip})` : what;

Deno.test({
  name: name("bindings/godot: every .gd file and ```gdscript block of the READMEs parses (tree-sitter)"),
  ignore: skip !== "",
  async fn() {
    const all = await sources();
    assert.ok(all.some((s) => s.name === BINDING), `${BINDING} not found`);
    assert.ok(all.filter((s) => s.name.includes(".md:")).length >= 2, "the README blocks were not found");
    const parsed = await parse(all);
    assert.equal(describe(parsed), "", "GDScript that does not parse");
  },
});

Deno.test({
  name: name("bindings/godot: the syntax check reports a broken copy of the binding (line and text)"),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const lines = text.split("\n");
    // A colon missing after an `if`, and a parenthesis never closed, each in a function of its own.
    const header = lines.findIndex((line) => line.startsWith("func poll() -> void:"));
    const broken = lines.findIndex((line, i) => i > header && /^\tif .*:$/.test(line));
    const copy = [...lines];
    copy[broken] = copy[broken].slice(0, -1);
    const notify = lines.findIndex((line) => line.startsWith("func notify("));
    const send = lines.findIndex((line, i) => i > notify && line.includes("_send(message)"));
    const unclosed = [...lines];
    unclosed[send] = unclosed[send].replace("_send(message)", "_send((message)");
    const parsed = await parse([
      { name: "no-colon.gd", text: copy.join("\n") },
      { name: "unclosed.gd", text: unclosed.join("\n") },
    ]);
    const end = (from: number) => lines.findIndex((line, i) => i > from && line.startsWith("func "));
    for (const [result, from, at] of [[parsed[0], header, broken], [parsed[1], notify, send]] as const) {
      assert.ok(result.problems.length > 0, `${result.name}: nothing reported`);
      // tree-sitter's recovery puts the first problem at the mistake or on a line near it, in the same function.
      const line = result.problems[0].line - 1;
      assert.ok(
        from <= line && line < end(from),
        `${result.name}: ${describe([result])} (mistake at ${at + 1})`,
      );
      assert.match(
        describe([result]),
        new RegExp(`^${result.name.replace(".", "\\.")}:\\d+:\\d+: ERROR "\\S`),
      );
    }
  },
});

Deno.test({
  name: name(
    "bindings/godot: no `:=` infers its type from a Variant (Godot 4 refuses to load such a script)",
  ),
  ignore: skip !== "",
  async fn() {
    const all = await sources();
    const parsed = await parse(all, { variant: VARIANT_INFERENCE });
    const found = parsed.flatMap(({ name, captures }) =>
      captures.variant.filter((c) => c.capture === "value").map((c) =>
        `${name.split(":")[0]}:${c.line}: ${c.text}`
      )
    );
    assert.deepEqual(found, [], "use an explicit type (var x: Dictionary = ...) or no type (var x = ...)");
    const broken = await parse([{
      name: "broken.gd",
      text:
        'func f(d: Dictionary) -> void:\n\tvar a := d["k"]\n\tvar b := d.get("k")\n\tvar c := await s.done\n' +
        "\tvar ok := str(d)\n",
    }], { variant: VARIANT_INFERENCE });
    assert.deepEqual(
      broken[0].captures.variant.filter((c) => c.capture === "name").map((c) => c.text),
      ["a", "b", "c"],
    );
  },
});

Deno.test({
  name: name(
    "bindings/godot: one guarded write path, its own JSON encoder, stderr read by whole lines and kept open before 4.5, no wait in poll()",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(wireProblems(parsed), []);
    // The same checks on a copy with the old habits put back.
    const old = text.replace(/(\t*)func _read_loop\(([^)]*)\) -> void:\n/, (line, indent) =>
      `${line}${indent}\tvar _old := PackedByteArray().get_string_from_utf8()\n`)
      .replace(/func _on_exit\(\) -> void:\n/, (line) =>
        `${line}\tOS.delay_msec(5)\n`)
      .replace(
        '_exit_description(OS.get_process_exit_code(_pid), OS.get_name() == "Windows")',
        '"exit status %d" % OS.get_process_exit_code(_pid)',
      )
      .replace("var chars := _utf8_chars(text)", "var chars := PackedStringArray([text])") +
      "\nfunc _old_send(message: Dictionary) -> void:\n\t_pipe.store_buffer(JSON.stringify(message).to_utf8_buffer())\n";
    const [broken] = await parse([{ name: "old.gd", text: old }], { structure: STRUCTURE });
    assert.equal(wireProblems(broken).length, 6, wireProblems(broken).join("\n"));
  },
});

Deno.test({
  name: name(
    "bindings/godot: close() returns at once; a reaper stepped by frames (and waited at quit) kills a bridge that ignores shutdown",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(closeProblems(parsed, text), []);
    // The same checks on a copy with the old close() and the reader threads on the node put back.
    const from = text.indexOf("## Shuts the bridge down");
    const to = text.indexOf("# ----", from);
    assert.ok(from > 0 && to > from, "close() and the section after it were not found");
    const old = (text.slice(0, from) + OLD_CLOSE + text.slice(to))
      .replaceAll(".start(_channel._read_loop.bind(", ".start(_read_loop.bind(") +
      "\nfunc _read_loop(pipe: FileAccess, is_log: bool) -> void:\n\tpass\n";
    const [broken] = await parse([{ name: "old.gd", text: old }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the old copy does not parse");
    assert.deepEqual(closeProblems(broken, old), [
      "close() must not block by default: close(wait: bool = false, ...)",
      "close() waits for the process (or the reader threads) itself; a _Reaper does that",
      "close() must hand the bridge to a _Reaper stepped by process_frame and waited on the root's tree_exiting",
      "close() must give the _Reaper the _Channel the reader threads run on",
      "the reader threads must run _Channel._read_loop, not a method of the node",
    ]);
    assert.deepEqual(
      wireProblems(broken),
      ["only _Reaper.wait_for_exit() may wait with OS.delay_msec (also: close); poll() looks once a frame"],
    );
  },
});

Deno.test({
  name: name(
    "bindings/godot: close() pings after the shutdown and the reaper kills a bridge that wrote nothing within 0.5 s",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(frozenCloseProblems(parsed, text), []);
    // The same checks on a copy without the ping.
    const unpinged = text.replace(/\n\t+_send\(\{[^\n]*"method": "ping"\}\)/, "");
    assert.notEqual(unpinged, text, "the ping was not found");
    const [broken] = await parse([{ name: "unpinged.gd", text: unpinged }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the copy does not parse");
    assert.deepEqual(frozenCloseProblems(broken, unpinged), ["close() must send a ping after the shutdown"]);
  },
});

Deno.test({
  name: name(
    "bindings/godot: a bridge that dies by itself is reported (with its last stderr lines) without the main thread waiting for its reader threads",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(exitProblems(parsed), []);
    // The same checks on a copy with the old handling put back.
    const { bodies } = functions(parsed);
    let old = text;
    for (const [fn, body] of Object.entries(OLD_EXIT)) {
      const current = bodies.get(fn);
      assert.ok(current !== undefined && old.includes(current), `${fn} was not found`);
      old = old.replace(current, body);
    }
    const [broken] = await parse([{ name: "old.gd", text: old }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the old copy does not parse");
    assert.deepEqual(exitProblems(broken), [
      "only _Reaper._finish() may join the reader threads (also: _finish, _join_threads, _join_threads)",
      "_on_exit() must hand the reader threads to a _Reaper instead of joining them",
      "_Reaper.wait_for_exit() must call _finish() only once no reader thread is alive",
      "poll() must notice that the process is gone while its output is still open (_look_for_exit)",
      "the message of bridge_exited must end with the bridge's last stderr lines (get_last_log_lines)",
    ]);
  },
});

Deno.test({
  name: name(
    "bindings/godot: the bridge is started with OAM_EXIT_WITH_PARENT=1 unless the game set the variable",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(exitWithParentProblems(parsed, text), []);
    // The same checks on copies without the call, and with the variable set even when the game set it.
    const uncalled = text.replace("\t_pass_exit_with_parent()\n", "");
    const forced = text.replace("\tif not OS.has_environment(EXIT_WITH_PARENT):\n\t\t", "\t");
    assert.notEqual(uncalled, text);
    assert.notEqual(forced, text);
    const [a, b] = await parse(
      [{ name: "uncalled.gd", text: uncalled }, { name: "forced.gd", text: forced }],
      {
        structure: STRUCTURE,
      },
    );
    assert.equal(describe([a, b]), "", "the broken copies do not parse");
    assert.deepEqual(exitWithParentProblems(a, uncalled), [
      "start() must call _pass_exit_with_parent() before OS.execute_with_pipe()",
    ]);
    assert.deepEqual(exitWithParentProblems(b, forced), [
      '_pass_exit_with_parent() must set OAM_EXIT_WITH_PARENT to "1" only when the game has not set it',
    ]);
  },
});

/** The advice the C, C#, Python and TypeScript clients give a world's state too large for one message. */
const WORLD_IN_PARTS =
  " A world's state this large loads in parts: world/create with part of it, then world/merge " +
  "the rest, a few keys at a time (docs/PROTOCOL.md §6, 'Saving a world').";

/**
 * What a message longer than the bridge reads needs: refused in _send() with its limit, and a world write (a saved
 * world being loaded) told how to load it in parts, as the other clients do; empty when all holds.
 */
function tooLongProblems(parsed: Parsed): string[] {
  const send = functions(parsed).bodies.get("_send") ?? "";
  const found: string[] = [];
  const refusal = send.indexOf("if line.size() - 1 > max_line_bytes:");
  const written = send.indexOf("_write_line(line)");
  if (refusal < 0 || written < refusal) {
    found.push("_send() must refuse a line over max_line_bytes before writing it");
  }
  const advice =
    /if str\(message\.get\("method", ""\)\) in \["world\/create", "world\/set", "world\/merge"\]:\n(?:\t+#[^\n]*\n)*\t+why \+= \(([^]*?")\)\n/
      .exec(send);
  const text = advice?.[1].split(/"\s*\+\s*\n?\s*"/).join("").replace(/^\s*"|"\s*$/g, "");
  if (text !== WORLD_IN_PARTS) {
    found.push(
      `a world write's refusal must say how to load it in parts (found: ${JSON.stringify(text ?? null)})`,
    );
  }
  if (!/refused\["error"\]\["data"\]\["limit"\] = max_line_bytes/.test(send)) {
    found.push("the refusal's data must carry the limit, as the C client's does");
  }
  return found;
}

/** The requests whose NPC's or session's running turn says no more from the moment they are sent. */
const SILENCING = ["npc/cancel", "npc/delete", "session/cancel", "session/delete"];

/**
 * What a player who walks away needs (cancel_npc / cancel_session, the Godot client's way to stop a turn), and a
 * game that ends an NPC or session while it talks (delete_npc / delete_session, or the same request or
 * notification sent by hand with request() or notify()): no more of the turn's callbacks from that call on, also
 * for the events already on their way, as the C#, Python and TypeScript clients do once a turn is given up; empty
 * when all holds.
 */
function walkAwayProblems(parsed: Parsed, text: string): string[] {
  const { bodies } = functions(parsed);
  const found: string[] = [];
  // request() silences them, so the dedicated functions and a request sent by hand alike.
  const listed = /^const SILENCING_METHODS := \[([^\]\n]*)\]$/m.exec(text)?.[1] ?? "";
  const missing = SILENCING.filter((method) => !listed.includes(`"${method}"`));
  if (missing.length > 0) {
    found.push(
      `SILENCING_METHODS must list ${missing.join(", ")} (the requests that stop a turn's callbacks)`,
    );
  }
  // request() and notify() end the work a cancel or delete names (_end_work, which silences its turns) before they
  // send it, so the dedicated functions and a request or notification sent by hand alike.
  for (
    const [fn, sends, table] of [
      ["request", "_request(method", "_ENDED_BY_REQUEST"],
      ["notify", "_send(message)", "_ENDED_BY_NOTIFICATION"],
    ]
  ) {
    const body = bodies.get(fn) ?? "";
    const ended = body.search(
      new RegExp(
        `if method in SILENCING_METHODS:\\n\\t+_end_work\\(method, params, ${table}\\.get\\(method, ""\\)\\)`,
      ),
    );
    if (ended < 0 || ended > body.indexOf(sends)) {
      found.push(
        `${fn}() must end the work of the NPC or session a cancel or delete names (_end_work) before it sends it`,
      );
    }
  }
  if (
    !/^\tvar target: String = params\[kind\]\n\t_silence_turns\(kind, target\)$/m.test(
      bodies.get("_end_work") ?? "",
    )
  ) {
    found.push("_end_work() must silence the turns of the NPC or session it names (_silence_turns)");
  }
  for (
    const [fn, key, method] of [
      ["cancel_npc", "npc", "npc/cancel"],
      ["cancel_session", "session", "session/cancel"],
    ]
  ) {
    if (
      !new RegExp(`return await request\\("${method}", \\{"${key}": \\w+\\}\\)`).test(bodies.get(fn) ?? "")
    ) {
      found.push(`${fn}() must send ${method} with request(), which silences the ${key}'s turns`);
    }
  }
  for (
    const [fn, key, method] of [["delete_npc", "npc", "npc/delete"], [
      "delete_session",
      "session",
      "session/delete",
    ]]
  ) {
    const body = bodies.get(fn) ?? "";
    const ended = body.indexOf(`_end_work("${method}", params, `);
    if (ended < 0 || ended > body.indexOf(`_request("${method}", params)`) || !body.includes(`{"${key}": `)) {
      found.push(
        `${fn}() must end the ${key}'s work (_end_work, which silences its turns) before it sends ${method}`,
      );
    }
  }
  const silence = bodies.get("_silence_turns") ?? "";
  if (
    !/for pending_call in _pending\.values\(\):/.test(silence) ||
    !/pending_call\.method\.begins_with\(key \+ "\/"\) and str\(pending_call\.params\.get\(key, ""\)\) == id/
      .test(
        silence,
      ) ||
    !/pending_call\.on_event = Callable\(\)/.test(silence)
  ) {
    found.push("_silence_turns() must drop the on_event of every waiting request of that NPC or session");
  }
  if (!/pending_call\.params = params/.test(bodies.get("_request") ?? "")) {
    found.push("_request() must keep the params of the call (whose NPC or session it is)");
  }
  // Read when the line is handled, not when the turn began: a silenced turn gets none of the later lines.
  if (
    !/_pending\.get\([^\n]*\n\t+if pending_call != null and pending_call\.on_event\.is_valid\(\)/.test(
      bodies.get("_handle_notification") ?? "",
    )
  ) {
    found.push("_handle_notification() must look the request's on_event up when the event arrives");
  }
  return found;
}

Deno.test({
  name: name(
    "bindings/godot: a message longer than the bridge reads is refused with its limit, a world write with how to load it in parts",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(tooLongProblems(parsed), []);
    // The refusal as it was: no advice, no limit.
    const from = text.indexOf('\t\tif str(message.get("method", "")) in');
    const to = text.indexOf("\t\tvar refused := _error(INVALID_MESSAGE");
    assert.ok(from > 0 && to > from, "the world write branch was not found");
    const old = (text.slice(0, from) + text.slice(to)).replace(
      '\t\trefused["error"]["data"]["limit"] = max_line_bytes\n',
      "",
    );
    const [broken] = await parse([{ name: "old.gd", text: old }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the old copy does not parse");
    assert.deepEqual(tooLongProblems(broken), [
      "a world write's refusal must say how to load it in parts (found: null)",
      "the refusal's data must carry the limit, as the C client's does",
    ]);
  },
});

/** `text` with `methods` left out of SILENCING_METHODS (the list as it is must be found). */
function withoutSilencing(text: string, methods: string[]): string {
  const line = /^const SILENCING_METHODS := \[[^\]\n]*\]$/m.exec(text);
  assert.ok(line, "SILENCING_METHODS was not found");
  const kept = SILENCING.filter((method) => !methods.includes(method)).map((method) => `"${method}"`);
  return text.replace(line[0], `const SILENCING_METHODS := [${kept.join(", ")}]`);
}

Deno.test({
  name: name(
    "bindings/godot: cancel_npc / cancel_session stop the turn's callbacks at once (a player who walked away sees no more of the line)",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(walkAwayProblems(parsed, text), []);
    // The cancels not silenced: the events already on their way still reached on_line.
    const old = withoutSilencing(text, ["npc/cancel", "session/cancel"]);
    const [broken] = await parse([{ name: "old.gd", text: old }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the old copy does not parse");
    assert.deepEqual(walkAwayProblems(broken, old), [
      "SILENCING_METHODS must list npc/cancel, session/cancel (the requests that stop a turn's callbacks)",
    ]);
  },
});

Deno.test({
  name: name(
    "bindings/godot: delete_npc / delete_session stop the running turn's callbacks at once (an NPC killed mid-line says no more)",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(walkAwayProblems(parsed, text), []);
    // The deletes not silenced: the rest of the line already on its way still reached on_line.
    const old = withoutSilencing(text, ["npc/delete", "session/delete"]);
    const [broken] = await parse([{ name: "old.gd", text: old }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the old copy does not parse");
    assert.deepEqual(walkAwayProblems(broken, old), [
      "SILENCING_METHODS must list npc/delete, session/delete (the requests that stop a turn's callbacks)",
    ]);
  },
});

Deno.test({
  name: name(
    'bindings/godot: a request("npc/delete", …) or a cancel sent by hand stops the turn\'s callbacks at once, as delete_npc() does',
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(walkAwayProblems(parsed, text), []);
    // request() without its ending of the work: only the dedicated functions silenced; one sent by hand did not.
    const block =
      /\tif method in SILENCING_METHODS:\n\t\t_end_work\(method, params, _ENDED_BY_REQUEST[^\n]*\n/.exec(
        text,
      );
    assert.ok(block, "request()'s ending of the work was not found");
    const old = text.replace(block[0], "");
    const [broken] = await parse([{ name: "old.gd", text: old }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the old copy does not parse");
    assert.deepEqual(walkAwayProblems(broken, old), [
      "request() must end the work of the NPC or session a cancel or delete names (_end_work) before it sends it",
    ]);
  },
});

Deno.test({
  name: name(
    'bindings/godot: a notify("npc/cancel", …) or a delete sent by hand as a notification stops the turn\'s callbacks at once, as in the TypeScript client',
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    // notify() as it was: it only sent the line, and the rest of the line already on its way still reached on_line.
    const block =
      /\tif method in SILENCING_METHODS:\n\t\t_end_work\(method, params, _ENDED_BY_NOTIFICATION[^\n]*\n/.exec(
        text,
      );
    assert.ok(block, "notify()'s ending of the work was not found");
    const old = text.replace(block[0], "");
    const [parsed, broken] = await parse([{ name: BINDING, text }, { name: "old.gd", text: old }], {
      structure: STRUCTURE,
    });
    assert.equal(describe([broken]), "", "the old copy does not parse");
    assert.deepEqual(walkAwayProblems(parsed, text), []);
    assert.deepEqual(walkAwayProblems(broken, old), [
      "notify() must end the work of the NPC or session a cancel or delete names (_end_work) before it sends it",
    ]);
  },
});

/** The why each way of deleting an NPC or session gives the -32009 of its requests it cancelled. */
const DELETE_WHYS = [
  ["delete_npc", "npc/delete", "delete_npc() deleted the NPC."],
  ["delete_session", "session/delete", "delete_session() deleted the session."],
  ["restore_npc_over", "npc/delete", "restore_npc_over() replaced the NPC (it deletes it first)."],
] as const;

/** The whys of a delete sent by hand, worded as the TypeScript, Python and C# clients word them. */
const BY_HAND = {
  _ENDED_BY_REQUEST: [
    `"npc/delete": "an 'npc/delete' request deleted the NPC."`,
    `"session/delete": "a 'session/delete' request deleted the session."`,
  ],
  _ENDED_BY_NOTIFICATION: [
    `"npc/delete": "an 'npc/delete' notification deleted the NPC."`,
    `"session/delete": "a 'session/delete' notification deleted the session."`,
  ],
};

/**
 * What a game needs to learn why a turn answered a -32009 cancelled error it did not ask for: the NPC was deleted
 * (delete_npc(), restore_npc_over(), a delete sent by hand) or another turn of it timed out (the protocol cancels the
 * running turn and the requests queued behind it together). As in the TypeScript, Python and C# clients, the error
 * of a request sent before such a cancel ends with "... 'npc/talk' was cancelled with the rest of the work of NPC
 * 'gorm' when <why>"; empty when all holds.
 */
function whyProblems(parsed: Parsed, text: string): string[] {
  const { bodies, classes } = functions(parsed);
  const found: string[] = [];
  if (
    !/pending_call\.completed\.emit\(_explained\(message, pending_call\)\)/.test(
      bodies.get("_dispatch") ?? "",
    )
  ) {
    found.push("_dispatch() must hand every response through _explained(), which says why a -32009 came");
  }
  const explained = bodies.get("_explained") ?? "";
  if (
    !/^\tif error_code\(response\) != "cancelled":\n\t\treturn response$/m.test(explained) ||
    !/_last_cancel\.get\(kind \+ " " \+ target, \[\]\)/.test(explained) ||
    !/int\(noted\[0\]\) <= pending_call\.cancels_before:\n\t\treturn response/.test(explained) ||
    !explained.includes(`"%s '%s' was cancelled with the rest of the work of %s '%s' when %s" % [`) ||
    !explained.includes("response.duplicate(true)")
  ) {
    found.push(
      "_explained() must end the -32009 of a request sent before a noted cancel of its NPC or session with why " +
        "(in a copy of the response)",
    );
  }
  if (!/\n\tvar cancels_before: int = 0/.test(classes.get("_Call") ?? "")) {
    found.push("_Call must keep cancels_before (the cancels noted when it was sent)");
  }
  const request = bodies.get("_request") ?? "";
  const noted = request.indexOf("pending_call.cancels_before = _cancels");
  if (noted < 0 || noted > request.indexOf("_send(message)")) {
    found.push("_request() must keep in the call the cancels noted before it is sent");
  }
  const note = bodies.get("_note_cancel") ?? "";
  if (!/_cancels \+= 1\n[^]*_last_cancel\[key\] = \[_cancels, why\]/.test(note)) {
    found.push("_note_cancel() must number the cancel and keep it, with its why, per NPC or session");
  }
  if (
    !/if not why\.is_empty\(\):\n\t\t_note_cancel\(kind, target, why\)/.test(bodies.get("_end_work") ?? "")
  ) {
    found.push("_end_work() must note the cancel with its why (a cancel_npc() has none)");
  }
  for (const [fn, method, why] of DELETE_WHYS) {
    const body = bodies.get(fn) ?? "";
    const ended = body.indexOf(`_end_work("${method}", `);
    const whyAt = body.indexOf(`"${why}")`);
    // Sent with _request(), not request(): that would note the why of a delete sent by hand over it.
    const sent = body.indexOf(`_request("${method}", `);
    if (ended < 0 || whyAt < ended || sent < whyAt || body.includes(` request("${method}"`)) {
      found.push(`${fn}() must note why ("${why}") before it sends ${method} with _request()`);
    }
  }
  for (const [table, entries] of Object.entries(BY_HAND)) {
    const constant = new RegExp(`^const ${table} := \\{\\n((?:\\t[^\\n]*\\n)*)\\}$`, "m").exec(text)?.[1] ??
      "";
    const missing = entries.filter((entry) => !constant.includes(`\t${entry},\n`));
    if (missing.length > 0) found.push(`${table} must hold ${missing.join(" and ")}`);
  }
  for (
    const [fn, key, method, cancel] of [
      ["talk", "npc", "npc/talk", "npc/cancel"],
      ["respond", "session", "session/respond", "session/cancel"],
    ]
  ) {
    const body = bodies.get(fn) ?? "";
    const at = body.search(
      new RegExp(
        `\\t_note_cancel\\("${key}", \\w+, _timed_out_why\\("${method}", timeout_sec\\)\\)\\n\\t+notify\\("${cancel}"`,
      ),
    );
    if (at < 0) {
      found.push(`${fn}() must note why (its timeout) before it sends ${cancel} for a turn that timed out`);
    }
  }
  if (!(bodies.get("_timed_out_why") ?? "").includes('every request " +\n\t\t\t"queued behind it together')) {
    found.push(
      "_timed_out_why() must say that the protocol cancels the requests queued behind the turn with it",
    );
  }
  return found;
}

Deno.test({
  name: name(
    "bindings/godot: a turn cancelled because its NPC or session was deleted, or another turn of it timed out, says why in its -32009",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [fixed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    const { bodies } = functions(fixed);
    assert.deepEqual(whyProblems(fixed, text), []);
    // Broken copies: the response handed on as it came (the old client: a bare -32009); delete_npc() without its
    // why; restore_npc_over() deleting through request() (the why of a delete sent by hand); a timed-out talk()
    // that notes nothing.
    const swap = (fn: string, from: string | RegExp, to: string) => {
      const body = bodies.get(fn)!;
      const changed = body.replace(from, to);
      assert.notEqual(changed, body, `${fn}: ${from} was not found`);
      return text.replace(body, changed);
    };
    const copies = [
      swap("_dispatch", "_explained(message, pending_call)", "message"),
      swap("delete_npc", /\t_end_work\("npc\/delete"[^\n]*\n/, ""),
      swap("restore_npc_over", 'await _request("npc/delete", ', 'await request("npc/delete", '),
      swap("talk", /\t\t_note_cancel\([^\n]*\n/, ""),
    ];
    const broken = await parse(copies.map((copy, i) => ({ name: `broken${i}.gd`, text: copy })), {
      structure: STRUCTURE,
    });
    assert.equal(describe(broken), "", "the broken copies do not parse");
    assert.deepEqual(broken.map((parsed, i) => whyProblems(parsed, copies[i])), [
      ["_dispatch() must hand every response through _explained(), which says why a -32009 came"],
      ['delete_npc() must note why ("delete_npc() deleted the NPC.") before it sends npc/delete with _request()'],
      [
        'restore_npc_over() must note why ("restore_npc_over() replaced the NPC (it deletes it first).") before it ' +
        "sends npc/delete with _request()",
      ],
      ["talk() must note why (its timeout) before it sends npc/cancel for a turn that timed out"],
    ]);
  },
});

/**
 * What a player who loads a save over a living NPC needs from restore_npc_over(npc_id, state, model), as Python's
 * npc.restore(save) and C#'s RestoreAsync(save) do it; empty when all holds. The save is checked before anything
 * is sent (a save the client refuses must not cost the NPC); the running talk's callbacks stop at the call; the NPC
 * as it is now is read before it is deleted (npc/state with settle false: answered at once), then deleted (which
 * cancels its talk) and restored from the save under its id; a save the bridge refuses puts back the NPC as it was.
 */
function restoreOverProblems(parsed: Parsed): string[] {
  const { bodies } = functions(parsed);
  const body = bodies.get("restore_npc_over");
  if (body === undefined) {
    return [
      "the binding must have restore_npc_over(npc_id, state, model), which loads a save over a living NPC",
    ];
  }
  const found: string[] = [];
  if (
    !body.startsWith(
      "func restore_npc_over(npc_id: String, state: Dictionary, model: Variant = null) -> Dictionary:",
    )
  ) {
    found.push(
      "restore_npc_over must take (npc_id: String, state: Dictionary, model: Variant = null) -> Dictionary",
    );
  }
  const firstAwait = body.indexOf("await ");
  const checked = body.search(
    /var refused := _send\(\{[^\n]*"method": "npc\/restore", "params": params\},\s*true\)\n\tif not refused\.is_empty\(\):\n\t\treturn refused\n/,
  );
  if (checked < 0 || checked > firstAwait) {
    found.push(
      "restore_npc_over must check the npc/restore message (_send(..., true)) before it sends anything",
    );
  }
  const silenced = body.indexOf('_end_work("npc/delete", {"npc": npc_id}, ');
  if (silenced < 0 || silenced > firstAwait) {
    found.push(
      "restore_npc_over must end the NPC's work (_end_work: its running talk's callbacks stop) before its first await",
    );
  }
  const state = body.search(
    /var current: Dictionary = await request\("npc\/state", \{"npc": npc_id, "settle": false\}\)/,
  );
  const deleted = body.search(/await _request\("npc\/delete", \{"npc": npc_id\}\)/);
  const restored = body.search(/var result: Dictionary = await request\("npc\/restore", params\)/);
  if (state < 0 || deleted < state || restored < deleted) {
    found.push(
      "restore_npc_over must read the NPC (npc/state, settle false), then delete it, then restore the save, in order",
    );
  }
  if (
    !/if is_error\(result\) and not is_error\(current\):\n(?:\t+#[^\n]*\n)*\t+var previous := \{"state": current\["result"\]\["state"\], "npc": npc_id\}[^]*await request\("npc\/restore", previous\)/
      .test(body.slice(restored))
  ) {
    found.push("restore_npc_over must put back the NPC it read when the bridge refuses the save");
  }
  if (!/if check_only:\n\t+return \{\}\n\tif not _write_line\(line\):/.test(bodies.get("_send") ?? "")) {
    found.push("_send(message, check_only) must return before writing when check_only is true");
  }
  return found;
}

Deno.test({
  name: name(
    "bindings/godot: restore_npc_over() loads a save over a living NPC as Python's npc.restore() and C#'s RestoreAsync() do",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(restoreOverProblems(parsed), []);
    // Broken copies: the delete sent before the NPC was read; no put-back of a refused save; nothing checked first.
    const body = functions(parsed).bodies.get("restore_npc_over")!;
    const swapped = body.replace(
      /(\tvar current: Dictionary = await request\("npc\/state"[^\n]*\n)(\tawait _request\("npc\/delete"[^\n]*\n)/,
      "$2$1",
    );
    const unguarded = body.replace(/if is_error\(result\) and not is_error\(current\):/, "if false:");
    const unchecked = body.replace(
      /\tvar refused := _send\([^]*?\n\tif not refused\.is_empty\(\):\n\t\treturn refused\n/,
      "",
    );
    const copies = [swapped, unguarded, unchecked].map((broken) => text.replace(body, broken));
    for (const copy of copies) assert.notEqual(copy, text, "a broken copy is the same as the binding");
    const broken = await parse(
      copies.map((copy, i) => ({ name: `broken${i}.gd`, text: copy })),
      { structure: STRUCTURE },
    );
    assert.equal(describe(broken), "", "the broken copies do not parse");
    assert.deepEqual(broken.map(restoreOverProblems), [
      ["restore_npc_over must read the NPC (npc/state, settle false), then delete it, then restore the save, in order"],
      ["restore_npc_over must put back the NPC it read when the bridge refuses the save"],
      ["restore_npc_over must check the npc/restore message (_send(..., true)) before it sends anything"],
    ]);
  },
});

/**
 * What a bridge started with its own --max-line-bytes in bridge_command needs: the client's limit is the flag's
 * (read from the argv at start(), as the C and C# clients do), or a line between the two limits is written, the
 * bridge skips it and the call waits for ever; empty when all holds.
 */
function lineLimitProblems(parsed: Parsed): string[] {
  const { bodies } = functions(parsed);
  const found: string[] = [];
  const of = bodies.get("max_line_bytes_of");
  if (of === undefined) {
    return ["the binding must have max_line_bytes_of(argv), which reads --max-line-bytes"];
  }
  if (!/^static func max_line_bytes_of\(argv: PackedStringArray\) -> int:/.test(of)) {
    found.push(
      "max_line_bytes_of must be a static func taking the argv (PackedStringArray) and returning an int",
    );
  }
  // As `oam stdio` reads its flags: both spellings, after the program's name, the last one counting.
  if (!/for \w+ in range\(1, argv\.size\(\)\):/.test(of) || /\bbreak\b|return limit\n\t\t/.test(of)) {
    found.push(
      "max_line_bytes_of must look at every argument after the program's name (the last flag counts)",
    );
  }
  if (!/argv\[\w+\] == MAX_LINE_BYTES_FLAG and \w+ \+ 1 < argv\.size\(\)/.test(of)) {
    found.push("max_line_bytes_of must read '--max-line-bytes N' (the value in the next argument)");
  }
  if (!/argv\[\w+\]\.begins_with\(MAX_LINE_BYTES_FLAG \+ "="\)/.test(of)) {
    found.push("max_line_bytes_of must read '--max-line-bytes=N'");
  }
  const start = bodies.get("start") ?? "";
  const read = start.search(/max_line_bytes = \w+/);
  const flag = start.search(/max_line_bytes_of\(argv\)/);
  const spawn = start.indexOf("OS.execute_with_pipe(");
  if (flag < 0 || read < flag || spawn < 0 || read > spawn) {
    found.push("start() must set max_line_bytes from max_line_bytes_of(argv) before it starts the bridge");
  }
  return found;
}

Deno.test({
  name: name(
    "bindings/godot: the --max-line-bytes of the bridge's command is the client's limit (read at start(), as in C and C#)",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(lineLimitProblems(parsed), []);
    // start() as it was: the export alone, whatever the command said.
    const from = text.indexOf("\t# The flag is what the bridge reads");
    const to = text.indexOf("\t_pass_exit_with_parent()\n", from);
    assert.ok(from > 0 && to > from, "start()'s reading of the flag was not found");
    const old = text.slice(0, from) + text.slice(to);
    const [broken] = await parse([{ name: "old.gd", text: old }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the old copy does not parse");
    assert.deepEqual(lineLimitProblems(broken), [
      "start() must set max_line_bytes from max_line_bytes_of(argv) before it starts the bridge",
    ]);
  },
});

/**
 * The warning the C# and Python clients give when the model calls a tool this client has no handler for (a save
 * restored on a new bridge keeps its tools' definitions, not their handlers), in the Godot client's words.
 */
const UNHANDLED_TOOL_WARNING =
  "[open-apple-models] The model called tool '%s' (%s), but no handler is registered " +
  "for it in this client: it got an error output. Register it with register_tool before the turn (a save restored " +
  "with restore_npc, or a session resumed from history, keeps the tool's definition, not its handler), or answer " +
  "it from tool_call_received.";

/**
 * What a game whose restored NPC calls a tool it registered no handler for needs: the model gets its error output,
 * and the game a push_warning saying which tool and whose turn, as the C# and Python clients log it; empty when all
 * holds. A game that answers such calls itself (tool_call_received connected) gets the signal instead.
 */
function unhandledToolProblems(parsed: Parsed): string[] {
  const { bodies } = functions(parsed);
  const found: string[] = [];
  const body = bodies.get("_handle_bridge_request") ?? "";
  const warned = body.indexOf("push_warning(");
  const emitted = body.indexOf("tool_call_received.emit(");
  const refused = body.indexOf(`"No handler for tool '%s' in this client."`);
  if (warned < 0 || warned < emitted || warned > refused) {
    found.push(
      "_handle_bridge_request() must push_warning when no handler and no tool_call_received answer a tool/call, " +
        "before the model's error output",
    );
    return found;
  }
  const call = body.slice(warned, body.indexOf("\n", body.indexOf("% [", warned)));
  const text = [...call.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]).join("");
  if (text !== UNHANDLED_TOOL_WARNING || !call.includes("% [tool_name, _caller_of(params)]")) {
    found.push(`the warning must say which tool and whose turn (found: ${JSON.stringify(call)})`);
  }
  const caller = bodies.get("_caller_of") ?? "";
  if (
    !caller.includes(`return "session '%s'" % params["session"]`) ||
    !caller.includes(`return "NPC '%s'" % params["npc"]`) ||
    !caller.includes('return "a decision or generation"')
  ) {
    found.push(
      "_caller_of() must name the session, the NPC or the decision or generation, as the C# client does",
    );
  }
  return found;
}

Deno.test({
  name: name(
    "bindings/godot: a tool the model calls that no handler is registered for is warned of (push_warning), as in C# and Python",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    // The same wording as the other clients (only the names of the calls differ).
    for (const path of ["bindings/unity/OpenAppleModels.cs", "bindings/python/open_apple_models.py"]) {
      assert.match(
        Deno.readTextFileSync(`${REPO_ROOT}/${path}`).replace(/"\s*\+?\s*\n\s*\+?\s*"/g, ""),
        /but no handler is registered for it in this client: it got an error output\. Register it with/,
        path,
      );
    }
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(unhandledToolProblems(parsed), []);
    // A copy without the warning: the model's error output alone, the game silent.
    const silent = text.replace(
      /\n\t+# The model gets an error output; the game hears[^]*?_caller_of\(params\)\]\)/,
      "",
    );
    assert.notEqual(silent, text, "the warning was not found");
    const [broken] = await parse([{ name: "silent.gd", text: silent }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the copy does not parse");
    assert.deepEqual(unhandledToolProblems(broken), [
      "_handle_bridge_request() must push_warning when no handler and no tool_call_received answer a tool/call, " +
      "before the model's error output",
    ]);
  },
});

/**
 * What a tool handler that saves its own NPC needs (npc_state from inside the talk that called the tool): npc/state
 * with settle false, answered at once with the completed turns, as C#'s StateAsync(settle: false) and Python's
 * state(settle=False); with the default settle it waits for that talk, which waits for the tool, until the tool
 * times out. Empty when all holds.
 */
function stateProblems(parsed: Parsed): string[] {
  const body = functions(parsed).bodies.get("npc_state") ?? "";
  const found: string[] = [];
  if (!body.startsWith("func npc_state(npc_id: String, settle: bool = true) -> Dictionary:")) {
    found.push("npc_state must take (npc_id: String, settle: bool = true) -> Dictionary");
  }
  if (
    !/if not settle:\n\t+params\["settle"\] = false\n[^]*return await request\("npc\/state", params\)/.test(
      body,
    )
  ) {
    found.push('npc_state(id, false) must send "settle": false');
  }
  return found;
}

Deno.test({
  name: name(
    "bindings/godot: npc_state(id, false) saves an NPC at once, also from a tool handler of its own talk (settle false, as in C# and Python)",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(stateProblems(parsed), []);
    const body = functions(parsed).bodies.get("npc_state")!;
    const old = text.replace(
      body,
      'func npc_state(npc_id: String) -> Dictionary:\n\treturn await request("npc/state", {"npc": npc_id})\n',
    );
    const [broken] = await parse([{ name: "old.gd", text: old }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the old copy does not parse");
    assert.deepEqual(stateProblems(broken), [
      "npc_state must take (npc_id: String, settle: bool = true) -> Dictionary",
      'npc_state(id, false) must send "settle": false',
    ]);
  },
});

/**
 * What a game that restores a save needs from restore_npc(): the tools, world and options npc/restore takes
 * (PROTOCOL.md), as C#'s RestoreNpcAsync and Python's restore_npc take them, as optional trailing parameters so that
 * existing calls go on as before. Left at null each comes from the save; a value is sent and wins over it:
 * tool_names as definitions ([] restores without the saved tools), world "" as null (without the saved world),
 * options as given. Empty when all holds.
 */
function restoreProblems(parsed: Parsed): string[] {
  const body = functions(parsed).bodies.get("restore_npc") ?? "";
  const found: string[] = [];
  const signature = body.slice(0, body.indexOf(":\n") + 1).replace(/\s+/g, " ");
  if (
    signature !==
      'func restore_npc(state: Dictionary, npc_id: String = "", model: Variant = null, tool_names: Variant = null, ' +
        "world: Variant = null, options: Variant = null) -> Dictionary:"
  ) {
    found.push(
      'restore_npc must take (state: Dictionary, npc_id: String = "", model: Variant = null, ' +
        "tool_names: Variant = null, world: Variant = null, options: Variant = null) -> Dictionary",
    );
  }
  const sent = body.indexOf('return await request("npc/restore", params)');
  const sends = (pattern: RegExp) => {
    const at = body.search(pattern);
    return at >= 0 && at < sent;
  };
  if (!sends(/\tif tool_names != null:\n\t\tparams\["tools"\] = tool_definitions\(tool_names\)\n/)) {
    found.push('restore_npc must send tool_names as "tools" (tool_definitions) unless it is null');
  }
  if (
    !sends(/\tif world != null:\n\t\tparams\["world"\] = null if str\(world\)\.is_empty\(\) else world\n/)
  ) {
    found.push(
      'restore_npc must send world as "world" unless it is null, "" as null (without the saved world)',
    );
  }
  if (!sends(/\tif options != null:\n\t\tparams\["options"\] = options\n/)) {
    found.push('restore_npc must send options as "options" unless it is null');
  }
  return found;
}

Deno.test({
  name: name(
    "bindings/godot: restore_npc() takes the tools, world and options of npc/restore, as C#'s RestoreNpcAsync and Python's restore_npc do",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(restoreProblems(parsed), []);
    const body = functions(parsed).bodies.get("restore_npc")!;
    const old = text.replace(
      body,
      'func restore_npc(state: Dictionary, npc_id: String = "", model: Variant = null) -> Dictionary:\n' +
        '\tvar params := {"state": state}\n\tif not npc_id.is_empty():\n\t\tparams["npc"] = npc_id\n' +
        '\tif model != null:\n\t\tparams["model"] = model\n\treturn await request("npc/restore", params)\n',
    );
    const [broken] = await parse([{ name: "old.gd", text: old }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the old copy does not parse");
    assert.deepEqual(restoreProblems(broken), [
      'restore_npc must take (state: Dictionary, npc_id: String = "", model: Variant = null, ' +
      "tool_names: Variant = null, world: Variant = null, options: Variant = null) -> Dictionary",
      'restore_npc must send tool_names as "tools" (tool_definitions) unless it is null',
      'restore_npc must send world as "world" unless it is null, "" as null (without the saved world)',
      'restore_npc must send options as "options" unless it is null',
    ]);
  },
});

/**
 * What a game needs from the bridge's warnings on a call it reads one value of: a subscription to a misspelt path
 * (it never fires) and a schema part generated as {} said nothing unless the game looked into result.warnings. As
 * the C# client logs them (world.SubscribeAsync('quests.wolfs'): …, GenerateAsync: …), world_subscribe() and
 * generate() push_warning each, named by the call; empty when all holds.
 */
function resultWarningProblems(parsed: Parsed): string[] {
  const { bodies } = functions(parsed);
  const found: string[] = [];
  for (
    const [fn, where] of [["world_subscribe", `"world_subscribe('%s')" % path`], ["generate", '"generate()"']]
  ) {
    const body = bodies.get(fn) ?? "";
    const awaited = body.search(/var response: Dictionary = await request\(/);
    const warned = body.indexOf(`_push_warnings(${where}, response)`);
    if (awaited < 0 || warned < awaited || !/\treturn response\n?$/.test(body)) {
      found.push(
        `${fn}() must push the result's warnings (_push_warnings(${where}, response)) before returning it`,
      );
    }
  }
  const push = bodies.get("_push_warnings") ?? "";
  if (
    !/for warning in result\["warnings"\]:\n\t+push_warning\("\[open-apple-models\] %s: %s" % \[where, str\(warning\)\]\)/
      .test(push)
  ) {
    found.push('_push_warnings() must push_warning each of result["warnings"], named by the call');
  }
  return found;
}

Deno.test({
  name: name(
    "bindings/godot: the warnings of world_subscribe() and generate() are pushed (a misspelt path, a schema part generated as {}), as C# logs them",
  ),
  ignore: skip !== "",
  async fn() {
    const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
    const [parsed] = await parse([{ name: BINDING, text }], { structure: STRUCTURE });
    assert.deepEqual(resultWarningProblems(parsed), []);
    const quiet = text.replace(/\n\t_push_warnings\([^\n]*\)/g, "");
    assert.notEqual(quiet, text, "the calls were not found");
    const [broken] = await parse([{ name: "quiet.gd", text: quiet }], { structure: STRUCTURE });
    assert.equal(describe([broken]), "", "the copy does not parse");
    assert.deepEqual(resultWarningProblems(broken), [
      "world_subscribe() must push the result's warnings (_push_warnings(\"world_subscribe('%s')\" % path, response)) before returning it",
      'generate() must push the result\'s warnings (_push_warnings("generate()", response)) before returning it',
    ]);
  },
});

Deno.test("bindings/godot: deno.lock pins no tree-sitter package (the parser runs with --no-lock)", () => {
  const lock = Deno.readTextFileSync(`${REPO_ROOT}/deno.lock`);
  assert.ok(!lock.includes("tree-sitter"), "the GDScript parser must stay out of deno.lock");
});

Deno.test("bindings/godot: a running turn can be cancelled at any moment, a session's and an NPC's alike", () => {
  const text = Deno.readTextFileSync(`${REPO_ROOT}/${BINDING}`);
  for (
    const [fn, method, param] of [["cancel_session", "session/cancel", "session"], [
      "cancel_npc",
      "npc/cancel",
      "npc",
    ]]
  ) {
    const body = text.match(
      new RegExp(`^func ${fn}\\(\\w+: String\\) -> Dictionary:\\n((?:\\t.*\\n)+)`, "m"),
    );
    assert.ok(body, `no func ${fn}(id: String) -> Dictionary`);
    assert.match(
      body[1],
      new RegExp(`return await request\\("${method}", \\{"${param}": \\w+\\}\\)`),
      `${fn} sends ${method}`,
    );
  }
});
