/**
 * `oam npc <persona.jsonc>`: talk to an NPC defined in a JSONC file (persona, options, tools, world seed).
 * Shows the emotion and the line as it streams, the player options as a numbered menu, tool calls and world
 * changes as they happen. `/state <file>` saves; `--restore <file>` loads.
 * @module
 */
import { compactJson, isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { parseFlags, stringFlag, wantsHelp } from "./args.ts";
import { CliError, EXIT, EXIT_CODES_HELP, isPermissionError, reportError, toCliError } from "./cli_error.ts";
import { LineReader, readJsonInput } from "./input.ts";
import { LocalBridge, MODEL_ENV_HELP, MODEL_FLAGS_HELP, resolveModelChoice } from "./local_bridge.ts";
import { formatCall, formatOutput } from "./render.ts";
import { addSigint, removeSigint } from "./respond.ts";
import { besideQuestion, ToolPrompter } from "./tool_prompt.ts";
import { dirname, type LoadedTools, noTools, toolsFromValue } from "./tools_file.ts";
import {
  isTerminal,
  oneLine,
  Spinner,
  stderrStyle,
  stdoutStyle,
  type Style,
  writeErr,
  writeOut,
} from "./tty.ts";

/** Help text of `oam npc`. */
export const NPC_HELP = `oam npc — talk to a game character defined in a file

Usage: oam npc [options] <persona.jsonc>
       oam npc [options] --restore <save.json>

The file (JSON or JSONC) describes the NPC with the keys of npc/create (PROTOCOL.md §6):
  {
    "npc": "mira",                              // id (optional)
    "persona": {"name": "Mira", "role": "the innkeeper", "personality": "…"},
    "options": {"playerOptionCount": 3, "worldWritable": ["player.gold"]},
    "tools": [ … ],                             // client tools; "x-oam" makes a command tool
    "memory": {"facts": [], "relationship": 0},
    "world": {"player": {"gold": 30}},          // world seed (the NPC reads it with read_world_state)
    "greeting": "The player walks in."          // optional: an opening bark in this situation
  }

The greeting is a model call (npc/bark): with --script it plays the script's first step, so start such a
script with a {"text": …} step for it (a json step is an npc/talk reply and is reported, not spoken).

Type what you say, or a number to pick one of the suggested replies. When the NPC calls one of your
tools, type its output (text or JSON; "/error <message>" for a failure).

When the NPC ends the conversation, the lines already typed are still read: commands run (/state, /world,
…), and what you say gets a note until /reset starts a new conversation.

Commands:
  /state <file>   save the NPC and its world (load it with --restore)
  /world          show the world state
  /bark [text]    an ambient line (optionally in a situation)
  /reset          forget the conversation (keeps the memory)
  /help           show the commands
  /exit           quit (or Ctrl-D); Ctrl-C stops the NPC's reply

Options:
  --restore <file>    continue from a /state save
${MODEL_FLAGS_HELP}
  -h, --help          show this help

${EXIT_CODES_HELP}
${MODEL_ENV_HELP}

Example:
  oam npc mira.jsonc --script mira_steps.json
`;

const FLAGS = {
  restore: { type: "string" },
  model: { type: "string" },
  script: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

const FILE_KEYS = ["npc", "persona", "options", "tools", "memory", "world", "greeting"];
const WORLD = "world";

/** Runs `oam npc`; resolves with the exit code. */
export async function runNpc(args: string[]): Promise<number> {
  if (wantsHelp(args)) {
    writeOut(NPC_HELP);
    return EXIT.ok;
  }
  try {
    return await new NpcCommand().run(args);
  } catch (error) {
    return reportError(error, { mode: "human", style: stderrStyle() });
  }
}

/** Checks the shape of a persona file (before the model is touched). */
function checkPersonaFile(path: string, value: JsonValue): void {
  if (!isJsonObject(value)) throw CliError.invalidInput(`${path}: expected an object with a 'persona'.`);
  if (!isJsonObject(value.persona)) {
    throw CliError.invalidInput(`${path}: 'persona' must be an object with a 'name'.`);
  }
  if (value.world !== undefined && value.world !== null && !isJsonObject(value.world)) {
    throw CliError.invalidInput(`${path}: 'world' must be an object (the world seed).`);
  }
}

/** The save file written by `/state`. */
interface NpcSave {
  state: JsonObject;
  world: { id: string; state: JsonObject } | null;
  tools: JsonObject[];
  toolsDir: string;
}

/** What one turn of `oam npc` has shown so far. */
interface TurnView {
  /** The NPC's emotion as the events last said (null before the first). */
  emotion: string | null;
  /** The emotion in the header of the line on screen. */
  shownEmotion: string | null;
  /** Whether the NPC's line is the current output line (text may be appended to it). */
  lineOpen: boolean;
  /** The line as streamed so far. */
  spoken: string;
  /** Set by Ctrl-C (or the input ending at a tool question): the events that follow are not shown. */
  cancelled: boolean;
  /** The tool question on the terminal while it waits for its answer (null when none does). */
  question: string | null;
}

/** True for text that is a JSON object or array (a scripted json step played as text). */
function isJsonText(text: string): boolean {
  const t = text.trim();
  if (!/^[[{]/.test(t)) return false;
  try {
    const value = JSON.parse(t);
    return typeof value === "object" && value !== null;
  } catch {
    return false;
  }
}

function show(value: JsonValue | undefined): string {
  if (value === undefined) return "∅";
  return oneLine(typeof value === "string" ? JSON.stringify(value) : compactJson(value), 80);
}

class NpcCommand {
  readonly #out: Style = stdoutStyle();
  readonly #err: Style = stderrStyle();
  readonly #interactive = isTerminal(Deno.stdin);
  readonly #stdoutTerminal = isTerminal(Deno.stdout);
  readonly #reader = new LineReader();
  readonly #spinner = new Spinner();
  #bridge!: LocalBridge;
  #npc = "";
  #name = "NPC";
  #world: string | null = null;
  #tools: LoadedTools = noTools();
  #options: string[] = [];
  #relationship = 0;
  #cancelTurn: (() => void) | null = null;
  #quit = false;
  /** True once the NPC ended the conversation (until /reset). */
  #ended = false;
  /** True when the model is a scripted one (the greeting then plays a script step). */
  #scripted = false;
  #atLineStart = true;

  #write(text: string): void {
    if (text === "") return;
    this.#spinner.stop();
    writeOut(text);
    this.#atLineStart = text.endsWith("\n");
  }

  #newline(): void {
    if (!this.#atLineStart) this.#write("\n");
  }

  async run(args: string[]): Promise<number> {
    const { values, positionals } = parseFlags(args, { command: "npc", flags: FLAGS, positionals: true });
    const restorePath = stringFlag(values, "restore");
    if (restorePath === undefined && positionals.length !== 1) {
      throw CliError.usage(
        "oam npc needs one persona file, e.g. 'oam npc mira.jsonc' (or --restore <save>).",
      );
    }
    if (restorePath !== undefined && positionals.length > 0) {
      throw CliError.usage("Use either a persona file or --restore <save>, not both.");
    }
    // Read the file before touching the model, so file problems are reported first.
    const file = await readJsonInput(restorePath ?? positionals[0]);
    if (restorePath === undefined) checkPersonaFile(positionals[0], file);
    const model = await resolveModelChoice({
      model: stringFlag(values, "model"),
      script: stringFlag(values, "script"),
    });
    this.#bridge = new LocalBridge(model);
    this.#scripted = model.name === "scripted";
    this.#bridge.onWorldChanged = (p) => this.#worldChanged(p);
    await this.#bridge.requireAvailable();
    let greeting: string | null = null;
    if (restorePath !== undefined) await this.#restore(restorePath, file);
    else greeting = await this.#create(positionals[0], file);

    const onSigint = () => {
      if (this.#cancelTurn) this.#cancelTurn();
      else if (this.#interactive) {
        this.#write(`\n${this.#out.dim("(Ctrl-D or /exit to quit)")}\n`);
        this.#prompt();
      }
    };
    const sigint = addSigint(onSigint);
    try {
      if (this.#interactive) {
        this.#write(
          this.#out.dim(
            `Talking to ${this.#name} (${model.label}). Type what you say, or a number to pick a reply. ` +
              `/help for commands, Ctrl-D to quit.\n`,
          ),
        );
      }
      if (greeting !== null) await this.#bark(greeting, true);
      while (!this.#quit) {
        this.#prompt();
        const line = await this.#reader.readLine();
        if (line === null || line === undefined) {
          if (this.#interactive) this.#write("\n");
          break;
        }
        this.#atLineStart = true;
        const text = line.trim();
        if (text === "") continue;
        if (text.startsWith("/")) {
          await this.#command(text);
          continue;
        }
        if (this.#ended) {
          this.#write(
            this.#out.dim(
              `(${this.#name} has ended the conversation: /reset starts a new one, /exit quits.)\n`,
            ),
          );
          continue;
        }
        let said = line;
        if (/^\d+$/.test(text) && this.#options.length > 0) {
          const n = Number(text);
          if (n < 1 || n > this.#options.length) {
            writeErr(`${this.#err.red("Error:")} pick a reply from 1 to ${this.#options.length}. [usage]\n`);
            continue;
          }
          said = this.#options[n - 1];
          this.#write(`${this.#out.dim(`you: ${said}`)}\n`);
        }
        await this.#talk(said);
      }
    } finally {
      removeSigint(sigint, onSigint);
    }
    return EXIT.ok;
  }

  #prompt(): void {
    if (this.#interactive) this.#write(this.#out.bold(this.#out.green("you› ")));
  }

  async #create(path: string, value: JsonValue): Promise<string | null> {
    if (!isJsonObject(value)) throw CliError.invalidInput(`${path}: expected an object with a 'persona'.`);
    for (const key of Object.keys(value)) {
      if (!FILE_KEYS.includes(key)) {
        writeErr(this.#err.yellow(`warning: ${path}: unknown key '${key}' was ignored.\n`));
      }
    }
    if (!isJsonObject(value.persona)) {
      throw CliError.invalidInput(`${path}: 'persona' must be an object with a 'name'.`);
    }
    if (value.tools !== undefined && value.tools !== null) {
      this.#tools = toolsFromValue(value.tools, { label: `${path}: tools`, baseDir: dirname(path) });
    }
    if (value.world !== undefined && value.world !== null) {
      if (!isJsonObject(value.world)) {
        throw CliError.invalidInput(`${path}: 'world' must be an object (the world seed).`);
      }
      await this.#bridge.call("world/create", { world: WORLD, state: value.world });
      this.#world = WORLD;
      await this.#bridge.call("world/subscribe", { world: WORLD, path: "" });
    }
    const params: JsonObject = { persona: value.persona, tools: this.#tools.definitions, model: "system" };
    if (typeof value.npc === "string") params.npc = value.npc;
    if (value.options !== undefined) params.options = value.options;
    if (value.memory !== undefined) params.memory = value.memory;
    if (this.#world) params.world = this.#world;
    const created = await this.#bridge.call("npc/create", params) as JsonObject;
    this.#npc = String(created.npc);
    this.#name = typeof value.persona.name === "string" ? value.persona.name : this.#npc;
    if (isJsonObject(value.memory) && typeof value.memory.relationship === "number") {
      this.#relationship = value.memory.relationship;
    }
    this.#warn(created.warnings);
    if (value.greeting === true) return "";
    return typeof value.greeting === "string" ? value.greeting : null;
  }

  async #restore(path: string, value: JsonValue): Promise<void> {
    const oam = isJsonObject(value) && isJsonObject(value.oam) ? value.oam : null;
    if (!isJsonObject(value) || !oam || oam.kind !== "npc" || !isJsonObject(value.state)) {
      throw CliError.invalidInput(`${path}: not an NPC save (write one with /state <file>).`);
    }
    const save: NpcSave = {
      state: value.state,
      world:
        isJsonObject(value.world) && typeof value.world.id === "string" && isJsonObject(value.world.state)
          ? { id: value.world.id, state: value.world.state }
          : null,
      tools: Array.isArray(value.tools) ? value.tools.filter(isJsonObject) : [],
      toolsDir: typeof value.toolsDir === "string" ? value.toolsDir : Deno.cwd(),
    };
    this.#tools = toolsFromValue(save.tools, { label: `${path}: tools`, baseDir: save.toolsDir });
    if (save.world) {
      await this.#bridge.call("world/create", { world: save.world.id, state: save.world.state });
      this.#world = save.world.id;
      await this.#bridge.call("world/subscribe", { world: this.#world, path: "" });
    }
    const restored = await this.#bridge.call("npc/restore", {
      state: save.state,
      tools: this.#tools.definitions,
      world: this.#world,
      model: "system",
    }) as JsonObject;
    this.#npc = String(restored.npc);
    const persona = isJsonObject(save.state.persona) ? save.state.persona : {};
    this.#name = typeof persona.name === "string" ? persona.name : this.#npc;
    const memory = isJsonObject(save.state.memory) ? save.state.memory : {};
    if (typeof memory.relationship === "number") this.#relationship = memory.relationship;
    this.#warn(restored.warnings);
    this.#write(this.#out.dim(`(restored ${this.#name} from ${path})\n`));
  }

  #warn(warnings: JsonValue | undefined): void {
    if (!Array.isArray(warnings)) return;
    for (const w of warnings) writeErr(this.#err.yellow(`warning: ${w}\n`));
  }

  async #save(path: string): Promise<void> {
    const state = await this.#bridge.call("npc/state", { npc: this.#npc }) as JsonObject;
    let world: JsonValue = null;
    if (this.#world) {
      const snap = await this.#bridge.call("world/snapshot", { world: this.#world }) as JsonObject;
      world = { id: this.#world, state: snap.state ?? {} };
    }
    const out = {
      oam: { version: 1, kind: "npc" },
      state: state.state ?? null,
      world,
      tools: this.#tools.raw,
      toolsDir: this.#tools.baseDir,
    };
    try {
      await Deno.writeTextFile(path, `${JSON.stringify(out, null, 2)}\n`);
    } catch (error) {
      const why = isPermissionError(error)
        ? "permission denied (needs --allow-write)"
        : (error as Error).message;
      throw new CliError("io_error", `Cannot write '${path}': ${why}`);
    }
  }

  #worldChanged(p: JsonObject): void {
    const o = this.#out;
    this.#newline();
    const change = !Object.hasOwn(p, "oldValue")
      ? `${show(p.newValue)} ${o.dim("(new)")}`
      : !Object.hasOwn(p, "newValue")
      ? `${show(p.oldValue)} ${o.dim("(removed)")}`
      : `${show(p.oldValue)} → ${show(p.newValue)}`;
    this.#write(`  ${o.magenta("◆")} ${o.dim("world")} ${o.bold(String(p.path || "(root)"))} ${change}\n`);
  }

  async #command(text: string): Promise<void> {
    const [name, ...rest] = text.split(/\s+/);
    const arg = rest.join(" ");
    const o = this.#out;
    try {
      switch (name) {
        case "/exit":
        case "/quit":
          this.#quit = true;
          return;
        case "/help":
          this.#write(
            "/state <file> · /world · /bark [situation] · /reset · /exit — a number picks a suggested reply; " +
              "Ctrl-C stops a reply, Ctrl-D quits.\n",
          );
          return;
        case "/state":
          if (arg === "") throw CliError.usage("/state needs a file name, e.g. /state mira_save.json");
          await this.#save(arg);
          this.#write(o.dim(`(saved to ${arg})\n`));
          return;
        case "/world":
          if (!this.#world) {
            this.#write(o.dim("(this NPC has no world)\n"));
            return;
          } else {
            const snap = await this.#bridge.call("world/snapshot", { world: this.#world }) as JsonObject;
            this.#write(`${JSON.stringify(snap.state ?? {}, null, 2)}\n`);
          }
          return;
        case "/bark":
          await this.#bark(arg);
          return;
        case "/reset":
          await this.#bridge.call("npc/reset", { npc: this.#npc });
          this.#options = [];
          this.#ended = false;
          this.#write(o.dim("(conversation forgotten)\n"));
          return;
        default:
          throw CliError.usage(`unknown command '${name}'; type /help.`);
      }
    } catch (error) {
      reportError(error, { mode: "human", style: this.#err });
    }
  }

  async #bark(situation: string, greeting = false): Promise<void> {
    this.#spinner.start(`${this.#name} is thinking`);
    try {
      const params: JsonObject = { npc: this.#npc };
      if (situation !== "") params.situation = situation;
      const result = await this.#bridge.call("npc/bark", params) as JsonObject;
      this.#spinner.stop();
      if (greeting && this.#scripted) {
        if (isJsonText(String(result.line))) {
          writeErr(this.#err.yellow(
            "warning: the greeting played step 1 of the script, a json step (an npc/talk reply), so it is not " +
              "spoken; start the script with a {\"text\": …} step for the greeting, or drop 'greeting'.\n",
          ));
          return;
        }
        writeErr(this.#err.dim("note: the greeting is a model call: it played step 1 of the script.\n"));
      }
      this.#write(
        `${this.#out.bold(this.#name)}${this.#out.dim(":")} ${this.#out.italic(String(result.line))}\n`,
      );
    } catch (error) {
      this.#spinner.stop();
      reportError(error, { mode: "human", style: this.#err });
    }
  }

  #header(emotion: string | null): string {
    const o = this.#out;
    return `${o.bold(this.#name)} ${emotion ? o.cyan(`[${emotion}]`) : ""}${o.dim(":")} `;
  }

  /** One turn: the player's line to npc/talk, its events shown as they come, then the reply or failure. */
  async #talk(line: string): Promise<void> {
    const turn: TurnView = {
      emotion: null,
      shownEmotion: null,
      lineOpen: false,
      spoken: "",
      cancelled: false,
      question: null,
    };
    const prompter = this.#toolPrompter(turn);
    this.#cancelTurn = () => this.#stopTurn(turn);
    this.#spinner.start(`${this.#name} is thinking`);
    try {
      const result = await this.#bridge.run("npc/talk", { npc: this.#npc, line, stream: true }, {
        onEvent: (event) => this.#turnEvent(turn, event),
        onToolCall: (id, call) => prompter.enqueue(id, call),
        onToolCancel: (p) => prompter.cancel(String(p.id)),
      });
      this.#spinner.stop();
      this.#showReply(turn, result);
    } catch (error) {
      this.#showFailure(turn, error);
    } finally {
      this.#cancelTurn = null;
      prompter.finish();
    }
  }

  /** Asks the player for the outputs of the turn's client tools (command tools run by themselves). */
  #toolPrompter(turn: TurnView): ToolPrompter {
    return new ToolPrompter(this.#bridge, this.#reader, this.#tools, this.#interactive, this.#out, {
      beforeAsk: () => {
        this.#spinner.stop();
        this.#newline();
      },
      ask: (text) => {
        turn.question = text;
        this.#write(text);
      },
      answered: () => {
        turn.question = null;
        this.#atLineStart = true;
        this.#spinner.start(`${this.#name} is thinking`);
      },
      inputEnded: () => {
        this.#quit = true;
        this.#stopTurn(turn);
      },
    });
  }

  /** Ctrl-C, or the input ending at a tool question: cancels the turn; its unwinding is not shown. */
  #stopTurn(turn: TurnView): void {
    turn.cancelled = true;
    this.#bridge.call("npc/cancel", { npc: this.#npc }).catch(() => {});
  }

  /** Starts the NPC's line (the header with the emotion known now) unless one is open. */
  #openLine(turn: TurnView): void {
    if (turn.lineOpen) return;
    this.#spinner.stop();
    this.#newline();
    this.#write(this.#header(turn.emotion));
    turn.shownEmotion = turn.emotion;
    turn.lineOpen = true;
  }

  /** Shows one `npc/event` of the turn. */
  #turnEvent(turn: TurnView, event: JsonObject): void {
    if (turn.cancelled) return; // what follows a Ctrl-C is the turn unwinding
    switch (event.type) {
      case "emotion":
        turn.emotion = String(event.emotion);
        break;
      case "lineDelta": {
        // A line a tool call cut off is shown again whole under its new header, then continued.
        const resumed = !turn.lineOpen ? turn.spoken : "";
        this.#openLine(turn);
        turn.spoken += String(event.delta ?? "");
        this.#write(resumed + String(event.delta ?? ""));
        break;
      }
      case "lineReset":
        // The line changed otherwise than by growing: it is shown again, on a line of its own.
        if (turn.lineOpen) this.#write("\n");
        turn.lineOpen = false;
        this.#openLine(turn);
        turn.spoken = String(event.line ?? "");
        this.#write(turn.spoken);
        break;
      case "toolCallStarted":
        this.#toolCallStarted(turn, event);
        break;
      case "toolCallCompleted":
        this.#toolCallCompleted(turn, event);
        break;
    }
  }

  /**
   * A line about a tool call, on a line of its own; a tool question waiting for its answer (another call of
   * the round started or ended meanwhile) is asked again below it (see besideQuestion).
   */
  #toolLine(turn: TurnView, line: string): void {
    if (turn.question === null) this.#newline();
    this.#write(besideQuestion(line, { question: turn.question, terminal: this.#stdoutTerminal }));
  }

  /** `  ⚙ name {arguments}` (a line being spoken ends first). */
  #toolCallStarted(turn: TurnView, event: JsonObject): void {
    const o = this.#out;
    this.#spinner.stop();
    turn.lineOpen = false;
    const builtIn = event.execution === "local" ? o.dim(" (built-in)") : "";
    this.#toolLine(turn, `  ${o.cyan("⚙")} ${formatCall(event.call ?? null, o)}${builtIn}\n`);
  }

  /** `  ↳ output` (or `error: …`); the NPC is thinking again unless a tool question waits. */
  #toolCallCompleted(turn: TurnView, event: JsonObject): void {
    const o = this.#out;
    const record = isJsonObject(event.record) ? event.record : {};
    const output = formatOutput({ output: record.output ?? null, isError: record.isError === true }, o);
    this.#toolLine(turn, `  ${o.dim("↳")} ${output}\n`);
    if (turn.question === null) this.#spinner.start(`${this.#name} is thinking`);
  }

  /** The end of a turn that succeeded: the line ends; the notes, the suggested replies, the ending. */
  #showReply(turn: TurnView, result: JsonObject): void {
    const o = this.#out;
    const finalEmotion = typeof result.emotion === "string" ? result.emotion : null;
    if (turn.spoken === "" && !turn.lineOpen) {
      // No line event was shown (a Ctrl-C that came too late to stop the turn): the whole line now.
      turn.emotion = finalEmotion;
      this.#openLine(turn);
      this.#write(String(result.line ?? ""));
    }
    this.#newline();
    if (finalEmotion !== null && turn.shownEmotion !== null && finalEmotion !== turn.shownEmotion) {
      this.#write(o.dim(`  (now ${finalEmotion})\n`));
    }
    if (result.isFallback === true) {
      this.#write(o.dim("  (a fallback line: the model's reply was blocked)\n"));
    }
    this.#showRelationship(result.relationship);
    this.#showOptions(result.playerOptions);
    if (result.endsConversation === true) {
      // The lines already typed are still read: commands run, talk gets a note (see the help).
      this.#write(o.dim(`(${this.#name} ends the conversation.)\n`));
      this.#ended = true;
    }
  }

  /** `  ♥ relationship a → b` when the turn changed it. */
  #showRelationship(relationship: JsonValue | undefined): void {
    if (typeof relationship !== "number" || relationship === this.#relationship) return;
    const o = this.#out;
    const heart = relationship > this.#relationship ? o.green("♥") : o.red("♥");
    this.#write(`  ${heart} ${o.dim(`relationship ${this.#relationship} → ${relationship}`)}\n`);
    this.#relationship = relationship;
  }

  /** The suggested replies as a numbered menu (a number typed next picks one). */
  #showOptions(playerOptions: JsonValue | undefined): void {
    this.#options = Array.isArray(playerOptions) ? playerOptions.map(String) : [];
    this.#options.forEach((opt, i) => this.#write(`  ${this.#out.yellow(`${i + 1})`)} ${opt}\n`));
  }

  /** The end of a turn that failed: `(stopped)` when it was cancelled, else the error on stderr. */
  #showFailure(turn: TurnView, error: unknown): void {
    this.#spinner.stop();
    this.#newline();
    const e = toCliError(error);
    if (turn.cancelled || e.code === "cancelled") this.#write(this.#out.dim("(stopped)\n"));
    else reportError(e, { mode: "human", style: this.#err });
  }
}
