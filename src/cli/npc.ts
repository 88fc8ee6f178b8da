/**
 * `oam npc <persona.jsonc>`: talk to an NPC defined in a JSONC file (persona, options, tools, world seed).
 * Shows the emotion and the line as it streams, the player options as a numbered menu, tool calls and world
 * changes as they happen. `/state <file>` saves; `--restore <file>` loads.
 * @module
 */
import { shownWrittenPath } from "./task_folder.ts";
import { dirname as folderOf, relative, resolve } from "node:path";
import { BridgeError } from "../protocol/errors.ts";
import { compactJson, isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { parseFlags, stringFlag } from "./args.ts";
import { CliError, EXIT, EXIT_CODES_HELP } from "./cli_error.ts";
import { runSubcommand } from "./subcommand.ts";
import { npcSaveGiven, writeError } from "./conversation_file.ts";
import { parseJsonc, readInputText, refuseStdinFiles } from "./input.ts";
import {
  LocalBridge,
  MODEL_ENV_HELP,
  MODEL_FLAGS_HELP,
  type ModelChoice,
  resolveModelChoice,
} from "./local_bridge.ts";
import { PromptLoop, unknownSlashCommand } from "./prompt_loop.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { withKnownKeys } from "../client/npc_keys.ts";
import { stepsPath } from "../client/persona_file.ts";
import { oamCommand } from "./invocation.ts";
import {
  dirname,
  type LoadedTools,
  noTools,
  toolsFromValue,
  toolsProblemInFile,
  unknownToolKeyWarnings,
} from "./tools_file.ts";
import { refuseCommandsWithoutRun, refuseMissingPrograms } from "./command_tools.ts";
import { oneLine, stderrStyle, stdoutStyle, type Style, writeErr } from "./tty.ts";

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
                                                // (needs --allow-run, else refused at start)
    "memory": {"facts": [], "relationship": 0},
    "world": {"player": {"gold": 30}},          // world seed (the NPC reads it with read_world_state)
    "greeting": "The player walks in."          // optional: an opening bark in this situation
  }

The greeting is a model call (npc/bark): with --script it plays the script's first step, so start such a
script with a {"text": …} step for it (a json step is an npc/talk reply and is reported, not spoken).

Type what you say, or a number to pick one of the suggested replies. When the NPC calls one of your
tools, type its output (text or JSON; "/error <message>" for a failure; "/exit" quits). When you type at
a terminal, the prompt and the tool questions go to stdout if it is a terminal too, else to stderr: with
'oam npc mira.jsonc > talk.log' you are asked on the terminal and the file gets only the conversation.
Piped input works too, one line at a time; the conversation ends when the input does (Ctrl-C between
replies does not quit it).

When the NPC ends the conversation, the lines already typed are still read: commands run (/state, /world,
…), and what you say gets a note until /reset starts a new conversation.

A turn, a command or a reply number that fails shows its error and the next line is read; when the input
ends, oam exits with the code of the first failure (below), so a piped run tells a CI job that something
failed. Piped input that ends while a tool waits for its answer is such a failure (missing_tool_output,
exit 2); "/exit" as the answer, or Ctrl-D at a terminal, quits without one.

Commands:
  /state <file>   save the NPC and its world (load it with --restore)
  /world          show the world state
  /bark [text]    an ambient line (optionally in a situation)
  /reset          forget the conversation (keeps the memory)
  /help           show the commands
  /exit           quit (or Ctrl-D); Ctrl-C stops the NPC's reply or bark
  //text          say "/text" (a line that starts with a slash)

Options:
  --restore <file>        continue from a /state save (or a saved npc/state result)
${MODEL_FLAGS_HELP}
  -h, --help              show this help

${EXIT_CODES_HELP}
${MODEL_ENV_HELP}

Example:
  oam npc mira.jsonc --script mira.steps.json   # the script beside the file, as loadPersona reads it
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
export function runNpc(args: string[]): Promise<number> {
  return runSubcommand(args, { help: NPC_HELP, run: () => new NpcCommand().run(args) });
}

/** Where the NPC comes from: a persona file, or a `/state` save (`--restore`). */
interface NpcFile {
  path: string;
  restore: boolean;
}

/**
 * `error` (the on-device model unavailable, with its advice) followed by the command that plays the script
 * beside the persona file (`guard.jsonc` → `guard.steps.json`, the file `loadPersona` reads), when there is one
 * and no model was chosen: a designer whose script loads the pair runs `oam npc guard.jsonc` and expects it.
 * The command is the one that runs where it is printed (`deno task oam npc …` in the repository's folder).
 */
function withScriptBeside(error: unknown, path: string, model: ModelChoice): unknown {
  if (!(error instanceof CliError) || error.code !== "model_unavailable" || model.name !== "system") {
    return error;
  }
  const script = String(stepsPath(path));
  try {
    if (!Deno.statSync(script).isFile) return error;
  } catch {
    return error;
  }
  return new CliError(
    error.code,
    `${error.message} The persona file has its script beside it: '${oamCommand()} npc ${path} --script ${script}' plays it.`,
    error.data,
    error.exitCode,
  );
}

/** The persona file or the save the flags name: exactly one of them. */
function npcFile(restorePath: string | undefined, positionals: string[]): NpcFile {
  if (restorePath === undefined && positionals.length !== 1) {
    throw CliError.usage(
      "oam npc needs one persona file, e.g. 'oam npc mira.jsonc' (or --restore <save>).",
    );
  }
  if (restorePath !== undefined && positionals.length > 0) {
    throw CliError.usage(
      "Use either a persona file or --restore <save>, not both: the save holds the NPC's persona, options " +
        `and tools, so '${oamCommand()} npc --restore ${restorePath}' goes on with it alone.`,
    );
  }
  return restorePath !== undefined
    ? { path: restorePath, restore: true }
    : { path: positionals[0], restore: false };
}

/** A persona file whose shape was checked: an object with a `persona` object, `world` an object if any. */
interface PersonaFile {
  path: string;
  value: JsonObject;
  persona: JsonObject;
  world: JsonObject | null;
}

/** Checks the shape of a persona file (before the model is touched). */
function checkPersonaFile(path: string, value: JsonValue): PersonaFile {
  if (!isJsonObject(value)) throw CliError.invalidInput(`${path}: expected an object with a 'persona'.`);
  // A save of oam npc or of oam chat / oam respond given for a persona file: the command that loads it.
  if (isJsonObject(value.oam) && value.oam.kind === "npc") throw npcSaveGiven(path);
  if (isJsonObject(value.oam) && isJsonObject(value.transcript)) {
    throw CliError.invalidInput(
      `${path} is a saved conversation (from oam chat or oam respond): continue it with 'oam chat --resume ${path}'.`,
    );
  }
  if (!isJsonObject(value.persona)) {
    // "personna": {…} for "persona": name the key the file has, as the warnings of unknown keys do.
    const misspelt = value.persona === undefined
      ? Object.keys(value).find((key) => nearestName(key, ["persona"]) === "persona")
      : undefined;
    const has = misspelt === undefined ? "" : `; the file has '${misspelt}'${didYouMean("persona")}`;
    throw CliError.invalidInput(`${path}: 'persona' must be an object with a 'name'${has}.`);
  }
  if (value.world !== undefined && value.world !== null && !isJsonObject(value.world)) {
    throw CliError.invalidInput(`${path}: 'world' must be an object (the world seed).`);
  }
  return { path, value, persona: value.persona, world: isJsonObject(value.world) ? value.world : null };
}

/** The save file written by `/state`. */
interface NpcSave {
  state: JsonObject;
  world: { id: string; state: JsonObject } | null;
  tools: JsonObject[];
  /** JSON pointer of the tools in the save. */
  toolsAt: string;
  toolsDir: string;
}

/** Reads a `/state` save; a file that is not one is invalid input. */
/** The file `oam npc` starts from: a persona file, or a `/state` save with `--restore`. */
type PersonaOrSave = { persona: PersonaFile; save: null } | { persona: null; save: NpcSave };

/**
 * The client tools of the file: a persona file's (relative commands run from its folder; none when it has
 * none) or a save's (run from the folder they were loaded from).
 */
function fileTools(source: { path: string; text: string }, file: PersonaOrSave): LoadedTools {
  const { path, text } = source;
  const label = `${path}: tools`;
  if (file.save !== null) {
    return toolsFromValue(file.save.tools, {
      label,
      baseDir: file.save.toolsDir,
      // Its place in the file (the save drops what is not an object, rare in a save oam wrote).
      file: { label: path, text, pointer: file.save.toolsAt },
    });
  }
  const tools = file.persona.value.tools;
  if (tools === undefined || tools === null) return noTools();
  return toolsFromValue(tools, {
    label,
    baseDir: dirname(path),
    file: { label: path, text, pointer: "#/tools" },
  });
}

/** A save the game made itself from `npc/state`: the state, or the whole result (`{"npc", "state"}`). */
function isBareState(value: JsonObject): boolean {
  return value.oam === undefined && isJsonObject(value.persona);
}

function readSave(path: string, value: JsonValue): NpcSave {
  const bare = isJsonObject(value) && value.oam === undefined &&
    (isBareState(value) || isJsonObject(value.state) && isBareState(value.state));
  if (bare) {
    // No world snapshot and no tool commands in it: the saved tools are asked at the prompt.
    const state = isBareState(value) ? value : value.state as JsonObject;
    const tools = Array.isArray(state.tools) ? state.tools.filter(isJsonObject) : [];
    return {
      state,
      world: null,
      tools,
      toolsAt: isBareState(value) ? "#/tools" : "#/state/tools",
      toolsDir: Deno.cwd(),
    };
  }
  const oam = isJsonObject(value) && isJsonObject(value.oam) ? value.oam : null;
  if (!isJsonObject(value) || !oam || oam.kind !== "npc" || !isJsonObject(value.state)) {
    throw CliError.invalidInput(
      `${path}: not an NPC save (write one with /state <file>, or save what npc/state returns).`,
    );
  }
  return {
    state: value.state,
    world: isJsonObject(value.world) && typeof value.world.id === "string" && isJsonObject(value.world.state)
      ? { id: value.world.id, state: value.world.state }
      : null,
    tools: Array.isArray(value.tools) ? value.tools.filter(isJsonObject) : [],
    toolsAt: "#/tools",
    // Relative to the save's folder (an absolute one, as older saves hold, stays as it is).
    toolsDir: typeof value.toolsDir === "string"
      ? resolve(folderOf(resolve(path)), value.toolsDir)
      : Deno.cwd(),
  };
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
  readonly #loop = new PromptLoop({
    out: this.#out,
    err: this.#err,
    label: () => `${this.#name} is thinking`,
  });
  readonly #screen = this.#loop.screen;
  #bridge!: LocalBridge;
  #npc = "";
  #name = "NPC";
  /** The NPC's tools as `npc/create` or `npc/restore` listed them (client and built-in); null before. */
  #npcTools: string[] | null = null;
  #world: string | null = null;
  #tools: LoadedTools = noTools();
  #options: string[] = [];
  #relationship = 0;
  /** True once the NPC ended the conversation (until /reset). */
  #ended = false;
  /** True when the model is a scripted one (the greeting then plays a script step). */
  #scripted = false;

  /** The command: flags, the persona file or save, the model, the NPC, the greeting, then the read loop. */
  async run(args: string[]): Promise<number> {
    const { values, positionals } = parseFlags(args, { command: "npc", flags: FLAGS, positionals: true });
    const source = npcFile(stringFlag(values, "restore"), positionals);
    refuseStdinFiles("npc", {
      [source.restore ? "--restore" : "the persona file"]: source.path,
      "--script": stringFlag(values, "script"),
    });
    // Read the file and its tools before touching the model, so file problems are reported first.
    const text = await readInputText(source.path);
    const value = parseJsonc(text, source.path);
    const file: PersonaOrSave = source.restore
      ? { persona: null, save: readSave(source.path, value) }
      : { persona: checkPersonaFile(source.path, value), save: null };
    this.#tools = fileTools({ path: source.path, text }, file);
    refuseCommandsWithoutRun(this.#tools.commands);
    await refuseMissingPrograms(this.#tools.commands);
    const model = await resolveModelChoice({
      model: stringFlag(values, "model"),
      script: stringFlag(values, "script"),
    });
    await this.#openBridge(model).catch((error) => {
      throw source.restore ? error : withScriptBeside(error, source.path, model);
    });
    const greeting = file.persona !== null
      ? await this.#create(file.persona)
      : await this.#restore(source.path, file.save);
    // The first failure's exit code, when a turn or a command failed.
    return await this.#loop.run({
      banner: `Talking to ${this.#name} (${model.label}). Type what you say, or a number to pick a reply. ` +
        `/help for commands, Ctrl-D to quit.`,
      start: async () => {
        if (greeting !== null) await this.#bark(greeting, true);
      },
      command: (name, arg) => this.#command(name, arg),
      say: (line) => this.#say(line),
    });
  }

  /** The in-process bridge on the model (world changes shown as they come); fails when it is unavailable. */
  async #openBridge(model: ModelChoice): Promise<void> {
    this.#bridge = new LocalBridge(model);
    this.#scripted = model.name === "scripted";
    this.#bridge.onWorldChanged = (p) => this.#worldChanged(p);
    await this.#bridge.requireAvailable();
  }

  /** What the player typed (not a command): said to the NPC, unless the NPC ended the conversation. */
  async #say(line: string): Promise<void> {
    if (this.#ended) {
      this.#screen.write(
        this.#out.dim(`(${this.#name} has ended the conversation: /reset starts a new one, /exit quits.)\n`),
      );
      return;
    }
    const said = this.#said(line);
    if (said !== null) await this.#talk(said);
  }

  /** What a typed line says: a number picks a suggested reply (null, with an error, when out of range). */
  #said(line: string): string | null {
    const text = line.trim();
    if (!/^\d+$/.test(text) || this.#options.length === 0) return line;
    const n = Number(text);
    if (n < 1 || n > this.#options.length) {
      writeErr(`${this.#err.red("Error:")} pick a reply from 1 to ${this.#options.length}. [usage]\n`);
      this.#screen.failed(EXIT.usage); // the session goes on; the exit code says a line was refused
      return null;
    }
    const said = this.#options[n - 1];
    this.#screen.write(`${this.#out.dim(`you: ${said}`)}\n`);
    return said;
  }

  /** `npc/create` from a checked persona file (its tools, its world seeded); the greeting to bark, if any. */
  async #create(file: PersonaFile): Promise<string | null> {
    const { path, value } = file;
    for (const key of Object.keys(value)) {
      if (!FILE_KEYS.includes(key)) {
        const meant = nearestName(key, FILE_KEYS);
        writeErr(
          this.#err.yellow(`warning: ${path}: unknown key '${key}' was ignored${didYouMean(meant)}.\n`),
        );
      }
    }
    for (const w of unknownToolKeyWarnings(this.#tools)) writeErr(this.#err.yellow(`warning: ${w}\n`));
    // A misspelt field is left out with the field it meant, as loadPersona does (the bridge's warning names none).
    const known = (name: "persona" | "options" | "memory", section: JsonValue | undefined) => {
      if (!isJsonObject(section)) return section; // the bridge refuses it, naming the file (#fromFile)
      const { known, warnings } = withKnownKeys(name, section);
      for (const w of warnings) writeErr(this.#err.yellow(`warning: ${path}: ${w}\n`));
      return known as JsonObject;
    };
    if (file.world) await this.#openWorld(WORLD, file.world);
    const params: JsonObject = {
      persona: known("persona", file.persona) ?? null,
      tools: this.#tools.definitions,
      model: "system",
    };
    if (typeof value.npc === "string") params.npc = value.npc;
    if (value.options !== undefined) params.options = known("options", value.options) ?? null;
    if (value.memory !== undefined) params.memory = known("memory", value.memory) ?? null;
    if (this.#world) params.world = this.#world;
    const created = await this.#fromFile(path, "npc/create", params);
    this.#met(created, { path, persona: file.persona, memory: value.memory });
    if (value.greeting === true) return "";
    return typeof value.greeting === "string" ? value.greeting : null;
  }

  /** `npc/restore` from a `/state` save (its tools and world again); never a greeting. */
  async #restore(path: string, save: NpcSave): Promise<null> {
    if (save.world) await this.#openWorld(save.world.id, save.world.state);
    const restored = await this.#fromFile(path, "npc/restore", {
      state: save.state,
      tools: this.#tools.definitions,
      // Without a world snapshot the saved world is asked for, and the bridge warns that it is gone.
      ...(this.#world ? { world: this.#world } : {}),
      model: "system",
    });
    this.#met(restored, { path, persona: save.state.persona, memory: save.state.memory });
    this.#screen.write(this.#out.dim(`(restored ${this.#name} from ${path})\n`));
    return null;
  }

  /**
   * `npc/create` or `npc/restore` with what the file at `path` holds: an `invalid_params` error names the file
   * ("mira.jsonc: Parameter 'options.playerOptionCount' must be an integer; …"), as its warnings do.
   */
  async #fromFile(path: string, method: string, params: JsonObject): Promise<JsonObject> {
    try {
      return await this.#bridge.call(method, params) as JsonObject;
    } catch (failure) {
      // A problem of one of its tools names the place of that tool in the file.
      const error = toolsProblemInFile(failure, this.#tools);
      if (!(error instanceof BridgeError) || error.dataCode !== "invalid_params") throw error;
      throw new CliError(error.dataCode, `${path}: ${error.message}`, { ...error.data });
    }
  }

  /** Creates the world `id` with `state`, and subscribes to all of its changes. */
  async #openWorld(id: string, state: JsonObject): Promise<void> {
    await this.#bridge.call("world/create", { world: id, state });
    this.#world = id;
    await this.#bridge.call("world/subscribe", { world: id, path: "" });
  }

  /**
   * The NPC `npc/create` or `npc/restore` answered: its id, its name, the relationship; its warnings, about
   * the file at `from.path`.
   */
  #met(
    answer: JsonObject,
    from: { path: string; persona: JsonValue | undefined; memory: JsonValue | undefined },
  ): void {
    this.#npc = String(answer.npc);
    if (Array.isArray(answer.tools)) this.#npcTools = answer.tools.map(String);
    const persona = isJsonObject(from.persona) ? from.persona : {};
    this.#name = typeof persona.name === "string" ? persona.name : this.#npc;
    if (isJsonObject(from.memory) && typeof from.memory.relationship === "number") {
      this.#relationship = from.memory.relationship;
    }
    if (!Array.isArray(answer.warnings)) return;
    for (const w of answer.warnings) writeErr(this.#err.yellow(`warning: ${from.path}: ${w}\n`));
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
      // Relative to the save's folder: a save checked in with the persona files stays the same bytes in
      // any checkout, and restores wherever the folder moved.
      toolsDir: relative(folderOf(resolve(path)), resolve(this.#tools.baseDir)) || ".",
    };
    try {
      await Deno.writeTextFile(path, `${JSON.stringify(out, null, 2)}\n`);
    } catch (error) {
      throw writeError(path, error);
    }
  }

  #worldChanged(p: JsonObject): void {
    const o = this.#out;
    this.#screen.newline();
    const change = !Object.hasOwn(p, "oldValue")
      ? `${show(p.newValue)} ${o.dim("(new)")}`
      : !Object.hasOwn(p, "newValue")
      ? `${show(p.oldValue)} ${o.dim("(removed)")}`
      : `${show(p.oldValue)} → ${show(p.newValue)}`;
    this.#screen.write(
      `  ${o.magenta("◆")} ${o.dim("world")} ${o.bold(String(p.path || "(root)"))} ${change}\n`,
    );
  }

  /** A slash command (an error it throws is reported, and the conversation goes on). */
  async #command(name: string, arg: string): Promise<void> {
    const o = this.#out;
    switch (name) {
      case "/help":
        this.#screen.write(
          "/state <file> · /world · /bark [situation] · /reset · /exit — a number picks a suggested reply; " +
            "Ctrl-C stops a reply or a bark, Ctrl-D quits.\n" +
            "Start a line with // to say one that begins with a slash: //shrug says /shrug.\n",
        );
        return;
      case "/state":
        if (arg === "") throw CliError.usage("/state needs a file name, e.g. /state mira_save.json");
        await this.#save(arg);
        this.#screen.write(o.dim(`(saved to ${shownWrittenPath(arg)})\n`));
        return;
      case "/world":
        if (!this.#world) {
          this.#screen.write(o.dim("(this NPC has no world)\n"));
          return;
        } else {
          const snap = await this.#bridge.call("world/snapshot", { world: this.#world }) as JsonObject;
          this.#screen.write(`${JSON.stringify(snap.state ?? {}, null, 2)}\n`);
        }
        return;
      case "/bark":
        await this.#bark(arg);
        return;
      case "/reset":
        await this.#bridge.call("npc/reset", { npc: this.#npc });
        this.#options = [];
        this.#ended = false;
        this.#screen.write(o.dim("(conversation forgotten)\n"));
        return;
      default:
        throw unknownSlashCommand(name, {
          known: ["/help", "/state", "/world", "/bark", "/reset"],
          otherNames: { "/save": "/state" },
        });
    }
  }

  /** An ambient line (`/bark`, the greeting); Ctrl-C stops it as it stops a turn. */
  async #bark(situation: string, greeting = false): Promise<void> {
    const params: JsonObject = { npc: this.#npc };
    if (situation !== "") params.situation = situation;
    // A failure is shown (stderr, or "(stopped)") and counted by the screen; the conversation goes on.
    const result = await this.#screen.request(this.#bridge, "npc/bark", params);
    if (result === null) return;
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
    this.#screen.write(
      `${this.#out.bold(this.#name)}${this.#out.dim(":")} ${this.#out.italic(String(result.line))}\n`,
    );
  }

  #header(emotion: string | null): string {
    const o = this.#out;
    return `${o.bold(this.#name)} ${emotion ? o.cyan(`[${emotion}]`) : ""}${o.dim(":")} `;
  }

  /** One turn: the player's line to npc/talk, its events shown as they come, then the reply or failure. */
  async #talk(line: string): Promise<void> {
    const turn: TurnView = { emotion: null, shownEmotion: null, lineOpen: false, spoken: "" };
    await this.#screen.run({
      bridge: this.#bridge,
      tools: this.#tools,
      method: "npc/talk",
      params: { npc: this.#npc, line, stream: true },
      cancel: { method: "npc/cancel", params: { npc: this.#npc } },
      onEvent: (event) => this.#turnEvent(turn, event),
      onResult: (result) => this.#showReply(turn, result),
      // Ctrl-D while a tool waits: the turn stops and the command ends.
      onInputEnded: () => this.#loop.quit(),
    });
  }

  /** Starts the NPC's line (the header with the emotion known now) unless one is open. */
  #openLine(turn: TurnView): void {
    if (turn.lineOpen) return;
    this.#screen.hideThinking();
    this.#screen.newline();
    this.#screen.write(this.#header(turn.emotion));
    turn.shownEmotion = turn.emotion;
    turn.lineOpen = true;
  }

  /** Shows one `npc/event` of the turn. */
  #turnEvent(turn: TurnView, event: JsonObject): void {
    switch (event.type) {
      case "emotion":
        turn.emotion = String(event.emotion);
        break;
      case "lineDelta": {
        // A line a tool call cut off is shown again whole under its new header, then continued.
        const resumed = !turn.lineOpen ? turn.spoken : "";
        this.#openLine(turn);
        turn.spoken += String(event.delta ?? "");
        this.#screen.write(resumed + String(event.delta ?? ""));
        break;
      }
      case "lineReset":
        // The line changed otherwise than by growing: it is shown again, on a line of its own.
        if (turn.lineOpen) this.#screen.write("\n");
        turn.lineOpen = false;
        this.#openLine(turn);
        turn.spoken = String(event.line ?? "");
        this.#screen.write(turn.spoken);
        break;
      case "toolCallStarted": {
        // A line being spoken ends first; a tool the bridge runs itself is marked, and so is a call of a tool
        // the NPC does not have (a script written for another persona): the bridge answers it as unknown.
        turn.lineOpen = false;
        const name = isJsonObject(event.call) ? String(event.call.name) : "";
        const note = this.#npcTools !== null && !this.#npcTools.includes(name)
          ? " (not one of its tools)"
          : event.execution === "local"
          ? " (built-in)"
          : "";
        this.#screen.toolCallStarted(event, note === "" ? "" : this.#out.dim(note));
        break;
      }
      case "toolCallCompleted":
        this.#screen.toolCallCompleted(event);
        break;
    }
  }

  /** The end of a turn that succeeded: the line ends; the notes, the suggested replies, the ending. */
  #showReply(turn: TurnView, result: JsonObject): void {
    const o = this.#out;
    const finalEmotion = typeof result.emotion === "string" ? result.emotion : null;
    if (turn.spoken === "" && !turn.lineOpen) {
      // No line event was shown (a Ctrl-C that came too late to stop the turn): the whole line now.
      turn.emotion = finalEmotion;
      this.#openLine(turn);
      this.#screen.write(String(result.line ?? ""));
    }
    this.#screen.newline();
    if (finalEmotion !== null && turn.shownEmotion !== null && finalEmotion !== turn.shownEmotion) {
      this.#screen.write(o.dim(`  (now ${finalEmotion})\n`));
    }
    if (result.isFallback === true) {
      this.#screen.write(o.dim("  (a fallback line: the model's reply was blocked)\n"));
    }
    this.#showRelationship(result.relationship);
    this.#showOptions(result.playerOptions);
    if (result.endsConversation === true) {
      // The lines already typed are still read: commands run, talk gets a note (see the help).
      this.#screen.write(o.dim(`(${this.#name} ends the conversation.)\n`));
      this.#ended = true;
    }
  }

  /** `  ♥ relationship a → b` when the turn changed it. */
  #showRelationship(relationship: JsonValue | undefined): void {
    if (typeof relationship !== "number" || relationship === this.#relationship) return;
    const o = this.#out;
    const heart = relationship > this.#relationship ? o.green("♥") : o.red("♥");
    this.#screen.write(`  ${heart} ${o.dim(`relationship ${this.#relationship} → ${relationship}`)}\n`);
    this.#relationship = relationship;
  }

  /** The suggested replies as a numbered menu (a number typed next picks one). */
  #showOptions(playerOptions: JsonValue | undefined): void {
    this.#options = Array.isArray(playerOptions) ? playerOptions.map(String) : [];
    this.#options.forEach((opt, i) => this.#screen.write(`  ${this.#out.yellow(`${i + 1})`)} ${opt}\n`));
  }
}
