/**
 * `oam respond [prompt…]`: one turn for shell scripts. The prompt comes from the arguments and piped stdin;
 * output is the streamed answer, one JSON object (`--json`) or JSON lines (`--events`). Client tools pause the
 * run: the conversation is saved, the pending calls are printed as JSON and the exit code is 10; `--resume
 * <file> --tool-output <id>=<text>` continues it.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { boolFlag, intFlag, listFlag, type ParsedFlags, parseFlags, stringFlag } from "./args.ts";
import { CliError, EXIT, EXIT_CODES_HELP, type OutputMode } from "./cli_error.ts";
import { runSubcommand } from "./subcommand.ts";
import type { ToolAnswer } from "./command_tools.ts";
import {
  appendEntries,
  type CallInfo,
  checkSaveTarget,
  type ConversationFile,
  type PendingState,
  readConversation,
  toolCallsEntry,
  toolOutputEntry,
  writeConversation,
} from "./conversation_file.ts";
import { readInputText, readStdinText, stdinReadBy } from "./input.ts";
import { readSchemaFile, type SchemaFile, schemaProblemInFile, schemaWarningInFile } from "./schema_file.ts";
import { convertForParam } from "../agent/tool_definitions.ts";
import {
  choiceSessionOptions,
  LocalBridge,
  MODEL_ENV_HELP,
  type ModelChoice,
  modelFlagsHelp,
  resolveModelChoice,
} from "./local_bridge.ts";
import { RespondTurn, SESSION, type TurnBudget } from "./respond_turn.ts";
import {
  addInlineTools,
  type LoadedTools,
  loadToolsFile,
  noTools,
  toolName,
  toolsFromValue,
  toolsProblemInFile,
  unknownToolKeyWarnings,
} from "./tools_file.ts";
import { isTerminal, Spinner, stderrStyle, writeErr, writeOut } from "./tty.ts";
import { outputValue, refuseCommandsWithoutRun, refuseMissingPrograms } from "./command_tools.ts";
import { generationFlags } from "./generation_flags.ts";
import { ScriptedModel } from "../models/scripted.ts";
import { oamCommand, shellWord } from "./invocation.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";

/** Help text of `oam respond`. */
export const RESPOND_HELP = `oam respond — run one turn and print the answer (for shell scripts)

Usage: oam respond [options] [prompt…]

The prompt is the arguments joined by spaces, followed by piped stdin (unless --no-stdin, or a file
flag reads stdin: --resume -, --tools -, --schema -, --script -).

Options:
  -i, --instructions <text>   system instructions
  --tools <file>              tools file: JSON/JSONC array or {"tools": [...]}; an "x-oam" block
                              ({"command": [...], "timeout", "cwd", "env", "maxOutputChars"}) makes a
                              command tool that oam runs itself (needs --allow-run: without it
                              the command is refused before the turn, exit 2)
  --tool-json <definition>    an inline tool definition (repeatable)
  --tool-choice <choice>      auto | none | required | explicit | <tool name> (default auto)
  --max-tool-rounds <n>       model steps that may call tools (default 4)
  --max-tool-calls <n>        tool calls per turn (default 12)
  --schema <file>             JSON Schema: answer with structured JSON
  --json                      print one result object
  --events                    print JSON lines: modelStep, text, partial, toolCallStarted,
                              toolCallCompleted, then {"type":"completed","response":…}
  --no-stream                 print the answer only when it is complete
  --no-stdin                  do not read the prompt from stdin
  --temperature <t>           0 to 2
  --max-tokens <n>            longest answer in tokens
  -g, --greedy                greedy sampling, reproducible (not with --temperature)
  --save-transcript <file>    save the conversation (to continue it with --resume)
  --resume <file>             continue a saved conversation
  --tool-output <id>=<value>  output of a pending tool call: text, @file or @- (stdin); repeatable
  --tool-error <id>=<message> error output of a pending tool call; repeatable
  -v, --verbose               show warnings and tool calls on stderr
${modelFlagsHelp(30)}
  -h, --help                  show this help

Client tools (tools without "x-oam"): when the model calls one, oam finishes the round (command tools
run), saves the conversation (to --save-transcript or a temporary file), prints
  {"status":"tool_calls","calls":[{"id","name","arguments"}],"transcript":"<file>"}
and exits 10. Continue with --resume <file> and one --tool-output/--tool-error per call, choosing the
same model again (--script/--model/OAM_SCRIPT; the printed hint does). A scripted model continues its
script where the paused run stopped (the file records the position; another script starts at its first
step). A temporary file is reused if the resumed turn pauses again and removed once it completes.

Errors go to stderr as "Error: <message> [<code>]", or as {"error":{"code","message"}} with --json/--events.

${EXIT_CODES_HELP}
${MODEL_ENV_HELP}

Examples:
  oam respond "Name three moons of Jupiter."
  git diff | oam respond --json "Summarize this change in one line."
  oam respond --tools tools.json --save-transcript turn.json "What's the weather in Paris?"; echo "exit $?"
  # exit 10: the model called a client tool; answer each call by the id printed, and continue:
  oam respond --resume turn.json --tool-output call_abc='{"temp": 21}'
  # in a loop, --no-stdin (else the first turn reads the loop's other lines as its prompt):
  while read -r q; do oam respond --no-stdin "$q"; done < questions.txt
`;

const FLAGS = {
  instructions: { type: "string", short: "i" },
  tools: { type: "string" },
  "tool-json": { type: "string", multiple: true },
  "tool-choice": { type: "string" },
  "max-tool-rounds": { type: "string" },
  "max-tool-calls": { type: "string" },
  schema: { type: "string" },
  json: { type: "boolean" },
  events: { type: "boolean" },
  stream: { type: "boolean" },
  stdin: { type: "boolean" },
  temperature: { type: "string" },
  "max-tokens": { type: "string" },
  greedy: { type: "boolean", short: "g" },
  "save-transcript": { type: "string" },
  resume: { type: "string" },
  "tool-output": { type: "string", multiple: true },
  "tool-error": { type: "string", multiple: true },
  verbose: { type: "boolean", short: "v" },
  model: { type: "string" },
  script: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** The `--tool-choice` values that are no tool's name. */
const TOOL_CHOICE_KEYWORDS = ["auto", "none", "required", "explicit"];

/** Parses `--tool-choice`. */
export function parseToolChoiceFlag(value: string | undefined): JsonValue | undefined {
  if (value === undefined) return undefined;
  if (value === "any") return "required";
  if (TOOL_CHOICE_KEYWORDS.includes(value)) return value;
  if (value === "") throw CliError.usage("--tool-choice must not be empty.");
  return { tool: value };
}

/** Runs `oam respond`; resolves with the exit code. */
export function runRespond(args: string[]): Promise<number> {
  const end = args.indexOf("--");
  const head = end === -1 ? args : args.slice(0, end);
  const mode: OutputMode = head.includes("--events") ? "events" : head.includes("--json") ? "json" : "human";
  return runSubcommand(args, { help: RESPOND_HELP, mode, run: () => new RespondCommand(mode).run(args) });
}

/** The conversation a run resumes (`--resume`), if any, and the tool calls it waits for. */
interface Saved {
  resume: ConversationFile | null;
  resumePath: string | undefined;
  pending: PendingState | null;
}

/** A run's tool budget and generation options. */
interface Budget {
  options: JsonObject;
  baseChoice: JsonValue;
  maxRounds: number;
  maxCalls: number;
  usedRounds: number;
  usedCalls: number;
}

/**
 * A tool `--tool-choice` names must be one of `toolNames` (`oam respond` and `oam chat` check it before the
 * model is touched).
 */
export function checkNamedToolChoice(choice: JsonValue | undefined, toolNames: string[]): void {
  if (isJsonObject(choice) && !toolNames.includes(String(choice.tool))) {
    throw CliError.usage(
      `--tool-choice names '${choice.tool}', which is not one of the tools: ${
        toolNames.join(", ") || "(none)"
      }.`,
    );
  }
}

/**
 * `--tool-choice` must name a tool the run has, and `required` needs tools: checked before the model is touched,
 * the same way in `oam respond` and `oam chat`. `tools` is null when no flag gave tools and no saved conversation
 * had any; a resumed conversation may still bring tools in its transcript, so it is not refused then.
 * `toolFlags` names the command's tool flags for the message (`--tools or --tool-json`). A name that is no
 * tool's but a misspelt keyword (`requried`) is refused as such.
 *
 * @example
 * ```ts
 * import { checkToolChoice } from "./respond.ts";
 * checkToolChoice("auto", { tools: null, resumed: false, toolFlags: "--tools" }); // fine
 * // checkToolChoice("required", { tools: null, resumed: false, toolFlags: "--tools" }) throws:
 * // "--tool-choice required needs tools (--tools)."
 * ```
 */
export function checkToolChoice(
  choice: JsonValue | undefined,
  context: { tools: LoadedTools | null; resumed: boolean; toolFlags: string },
): void {
  if (choice === undefined) return;
  const { tools, resumed, toolFlags } = context;
  const toolNames = tools?.definitions.map(toolName) ?? [];
  // "requried": a misspelt keyword, not the name of a tool (a resumed transcript's own tools are not known).
  if (isJsonObject(choice) && !toolNames.includes(String(choice.tool)) && (tools !== null || !resumed)) {
    // Not auto and none: a four-letter tool name one letter from them (nope, note) is as likely.
    const meant = nearestName(String(choice.tool), ["required", "explicit"]);
    if (meant !== undefined) {
      throw CliError.usage(
        `--tool-choice '${choice.tool}' is none of ${TOOL_CHOICE_KEYWORDS.join(", ")} and no tool's name` +
          didYouMean(meant, { as: "clause" }),
      );
    }
  }
  if (tools !== null) {
    if (choice === "required" && toolNames.length === 0) {
      throw CliError.usage(`--tool-choice required needs tools (${toolFlags}).`);
    }
    checkNamedToolChoice(choice, toolNames);
  } else if (!resumed && (choice === "required" || isJsonObject(choice))) {
    throw CliError.usage(
      `--tool-choice ${isJsonObject(choice) ? choice.tool : choice} needs tools (${toolFlags}).`,
    );
  }
}

/** Where a run saves its conversation: `--save-transcript`, or a temporary file for a pause. */
class ConversationFiles {
  readonly #bridge: LocalBridge;
  readonly #choice: ModelChoice;
  readonly #tools: LoadedTools | null;
  readonly #savePath: string | undefined;
  /** A temporary file oam made for an earlier pause: reused by a new pause, removed once the turn completes. */
  readonly #temporary: string | undefined;

  constructor(
    context: {
      bridge: LocalBridge;
      choice: ModelChoice;
      tools: LoadedTools | null;
      saved: Saved;
      savePath: string | undefined;
    },
  ) {
    this.#bridge = context.bridge;
    this.#choice = context.choice;
    this.#tools = context.tools;
    this.#savePath = context.savePath;
    const { resume, resumePath } = context.saved;
    this.#temporary = resume?.oam.temporary === true && resumePath !== undefined && resumePath !== "-"
      ? resumePath
      : undefined;
  }

  /** The file for `transcript`, with the tools and a scripted model's position. */
  file(transcript: JsonObject): ConversationFile {
    const tools = this.#tools;
    const file: ConversationFile = {
      transcript,
      modelName: this.#choice.name,
      oam: {
        version: 1,
        ...(tools ? { tools: tools.raw, toolsDir: tools.baseDir } : {}),
      },
    };
    const model = this.#bridge.engine.sessions.get(SESSION)?.agent.model;
    if (this.#choice.script && model instanceof ScriptedModel) {
      file.oam.script = { digest: this.#choice.script.digest, played: model.played };
    }
    return file;
  }

  /** Saves a paused conversation (`--save-transcript`, else a temporary file); returns its path. */
  async savePaused(file: ConversationFile): Promise<string> {
    const path = this.#savePath ?? this.#temporary ??
      await Deno.makeTempFile({ prefix: "oam-", suffix: ".json" }).catch((e) => {
        throw new CliError("io_error", `Cannot create a temporary file: ${(e as Error).message}`);
      });
    if (this.#savePath === undefined) file.oam.temporary = true;
    await writeConversation(path, file);
    if (this.#temporary !== undefined && this.#temporary !== path) await removeTemporary(this.#temporary);
    return path;
  }

  /** After a completed turn: removes an earlier pause's temporary file, saves when asked; returns the path. */
  async saveCompleted(): Promise<string | undefined> {
    if (this.#temporary !== undefined && this.#temporary !== this.#savePath) {
      await removeTemporary(this.#temporary);
    }
    if (this.#savePath === undefined) return undefined;
    const t = await this.#bridge.call("session/transcript", { session: SESSION }) as JsonObject;
    await writeConversation(this.#savePath, this.file(t.transcript as JsonObject));
    return this.#savePath;
  }
}

class RespondCommand {
  readonly #mode: OutputMode;
  readonly #err = stderrStyle();
  readonly #spinner: Spinner;
  #verbose = false;
  /** The `--schema` file: its warnings on stderr name it and the line, as `oam schema convert` does. */
  #schemaFile: SchemaFile | undefined;

  constructor(mode: OutputMode) {
    this.#mode = mode;
    this.#spinner = new Spinner(mode === "human" && isTerminal(Deno.stderr));
  }

  async run(args: string[]): Promise<number> {
    const { values, positionals } = parseFlags(args, { command: "respond", flags: FLAGS, positionals: true });
    if (boolFlag(values, "json") && boolFlag(values, "events")) {
      throw CliError.usage("Use either --json or --events, not both.");
    }
    this.#verbose = boolFlag(values, "verbose");
    const resumePath = stringFlag(values, "resume");
    const resume = resumePath !== undefined ? await readConversation(resumePath) : null;
    const saved: Saved = { resume, resumePath, pending: resume?.oam.pending ?? null };
    // A prompt cannot continue a paused turn: said before the tool outputs are asked for.
    if (saved.pending && positionals.join(" ").trim() !== "") {
      throw CliError.usage(
        "The saved conversation is waiting for tool outputs; continue it without a prompt (just --tool-output).",
      );
    }
    const tools = await this.#tools(values, saved);
    refuseCommandsWithoutRun(tools?.commands ?? new Map());
    await refuseMissingPrograms(tools?.commands ?? new Map());
    const answers = await this.#answers(values, saved);
    const prompt = await this.#prompt(values, { positionals, pending: saved.pending });
    const schema = await this.#schema(values, saved.pending ? resume : null);
    const savePath = stringFlag(values, "save-transcript");
    if (savePath !== undefined) await checkSaveTarget(savePath); // before the turn spends model time
    const budget = this.#budget(values, { tools, saved });
    const { bridge, choice, warnings } = await this.#open(values, {
      tools,
      saved,
      answers,
      options: budget.options,
    });
    const respond: JsonObject = {
      session: SESSION,
      prompt,
      stream: true,
      maxToolRounds: Math.max(0, budget.maxRounds - budget.usedRounds),
      maxToolCalls: Math.max(0, budget.maxCalls - budget.usedCalls),
    };
    if (schema) respond.schema = schema;
    const stream = values.stream !== false;
    const files = new ConversationFiles({
      bridge,
      choice,
      tools,
      saved,
      savePath,
    });
    const outcome = await this.#turn(bridge, respond, tools, stream, {
      maxRounds: budget.maxRounds,
      maxCalls: budget.maxCalls,
      usedRounds: budget.usedRounds,
      usedCalls: budget.usedCalls,
      choice: budget.baseChoice,
    });
    if (outcome.kind === "paused") return await this.#paused(outcome, { files, schema, choice });
    return await this.#completed(outcome, { files, warnings, stream });
  }

  /** The tools: the flags' (a file, inline definitions), else the ones saved with the conversation. */
  async #tools(values: ParsedFlags["values"], saved: Saved): Promise<LoadedTools | null> {
    const toolsPath = stringFlag(values, "tools");
    const inline = listFlag(values, "tool-json");
    if (toolsPath !== undefined || inline.length > 0) {
      const tools = toolsPath !== undefined ? await loadToolsFile(toolsPath) : noTools();
      addInlineTools(tools, inline);
      return tools;
    }
    if (saved.resume?.oam.tools) {
      return toolsFromValue(saved.resume.oam.tools, {
        label: `${saved.resumePath}: oam.tools`,
        baseDir: saved.resume.oam.toolsDir ?? Deno.cwd(),
        file: { label: saved.resumePath ?? "<stdin>", text: null, pointer: "#/oam/tools" },
      });
    }
    return null;
  }

  /** The tool outputs (`--tool-output`, `--tool-error`) of a paused turn. */
  async #answers(values: ParsedFlags["values"], saved: Saved): Promise<Map<string, ToolAnswer> | null> {
    const { pending, resumePath } = saved;
    const outputFlags = listFlag(values, "tool-output");
    const errorFlags = listFlag(values, "tool-error");
    if ((outputFlags.length > 0 || errorFlags.length > 0) && !pending) {
      throw CliError.usage(
        resumePath === undefined
          ? "--tool-output and --tool-error need --resume with a conversation waiting for tool calls."
          : `${resumePath} is not waiting for tool calls: continue it with a prompt, without --tool-output ` +
            "and --tool-error.",
      );
    }
    return pending ? await this.#collectAnswers(pending, outputFlags, errorFlags) : null;
  }

  /** The prompt: the arguments plus piped stdin (none when a paused turn continues). */
  async #prompt(
    values: ParsedFlags["values"],
    from: { positionals: string[]; pending: PendingState | null },
  ): Promise<string> {
    const prompt = from.positionals.join(" ");
    if (from.pending) return ""; // (a prompt was refused at the start)
    let text = prompt;
    // Piped stdin adds to the prompt, unless a flag read it (--resume -, --tools -, …).
    const usesStdin = values.stdin !== false && !isTerminal(Deno.stdin) && stdinReadBy() === null;
    if (usesStdin) {
      const piped = (await readStdinText()).replace(/\s+$/, "");
      if (piped !== "") text = text.trim() === "" ? piped : `${text}\n\n${piped}`;
    }
    if (text.trim() === "") throw CliError.usage("No prompt: pass it as arguments or pipe it on stdin.");
    return text;
  }

  /** The response schema: `--schema`, else the one a paused turn was started with. */
  async #schema(
    values: ParsedFlags["values"],
    paused: ConversationFile | null,
  ): Promise<JsonObject | undefined> {
    const schemaPath = stringFlag(values, "schema");
    if (schemaPath === undefined) return paused?.oam.schema ?? undefined;
    const file = await readSchemaFile(schemaPath, "--schema");
    this.#schemaFile = file;
    const value = file.schema;
    if (!isJsonObject(value)) throw CliError.invalidInput(`${schemaPath}: a JSON Schema must be an object.`);
    // Checked here, before any turn, so that a problem names the file and the place in it.
    try {
      convertForParam(value, { rootName: "Response", path: "schema" });
    } catch (error) {
      throw schemaProblemInFile(error, file);
    }
    return value;
  }

  /** The tool policy and generation options, and what a paused turn already used of its budget. */
  #budget(values: ParsedFlags["values"], context: { tools: LoadedTools | null; saved: Saved }): Budget {
    const { tools, saved } = context;
    const pending = saved.pending;
    const choiceFlag = parseToolChoiceFlag(stringFlag(values, "tool-choice"));
    const roundsFlag = intFlag(values, { name: "max-tool-rounds", min: 0, max: 1000 });
    const callsFlag = intFlag(values, { name: "max-tool-calls", min: 0, max: 10000 });
    checkToolChoice(choiceFlag, {
      tools,
      resumed: saved.resume !== null,
      toolFlags: "--tools or --tool-json",
    });
    const baseChoice = choiceFlag ?? pending?.toolChoice ?? "auto";
    // The forced first step already happened before the pause.
    const turnChoice = pending && baseChoice !== "none" && baseChoice !== "auto" ? "auto" : baseChoice;
    const options: JsonObject = { toolChoice: turnChoice, ...generationFlags(values) };
    return {
      options,
      baseChoice,
      maxRounds: roundsFlag ?? pending?.maxToolRounds ?? 4,
      maxCalls: callsFlag ?? pending?.maxToolCalls ?? 12,
      usedRounds: pending?.roundsUsed ?? 0,
      usedCalls: pending?.callsUsed ?? 0,
    };
  }

  /** The model (checked), the in-process bridge and the session, with the saved conversation and tool outputs. */
  async #open(
    values: ParsedFlags["values"],
    session: {
      tools: LoadedTools | null;
      saved: Saved;
      answers: Map<string, ToolAnswer> | null;
      options: JsonObject;
    },
  ): Promise<{ bridge: LocalBridge; choice: ModelChoice; warnings: string[] }> {
    const { tools, saved, answers } = session;
    const { resume, pending } = saved;
    const choice = await resolveModelChoice({
      model: stringFlag(values, "model"),
      script: stringFlag(values, "script"),
    });
    // A saved scripted run continues where it stopped, when it is resumed with the same script.
    const savedScript = resume?.oam.script;
    if (savedScript && choice.script && savedScript.digest === choice.script.digest) {
      choice.script.start = savedScript.played;
    }
    const bridge = new LocalBridge(choice);
    this.#spinner.start("checking the model");
    try {
      await bridge.requireAvailable();
    } finally {
      this.#spinner.stop();
    }
    let history: JsonObject | undefined = resume?.transcript;
    if (resume && pending && answers) {
      history = appendEntries(
        resume.transcript,
        pending.calls.map((c) => toolOutputEntry(c, answers.get(c.id)!)),
      );
    }
    const create: JsonObject = {
      session: SESSION,
      options: { ...session.options, ...choiceSessionOptions(choice) },
      model: "system",
    };
    const instructions = stringFlag(values, "instructions");
    if (instructions !== undefined) create.instructions = instructions;
    if (tools) create.tools = tools.definitions;
    if (history) create.history = history;
    const created = await bridge.call("session/create", create).catch((error) => {
      throw toolsProblemInFile(error, tools);
    }) as JsonObject;
    const warnings = [
      ...unknownToolKeyWarnings(tools),
      ...(Array.isArray(created.warnings) ? created.warnings.map(String) : []),
    ];
    if (this.#verbose && this.#mode === "human") {
      for (const w of warnings) writeErr(this.#err.yellow(`warning: ${w}\n`));
    }
    return { bridge, choice, warnings };
  }

  /** The turn paused for tool calls: saves the conversation and says how to continue it (exit 10). */
  async #paused(
    outcome: { pending: PendingState; transcript: JsonObject },
    context: { files: ConversationFiles; schema: JsonObject | undefined; choice: ModelChoice },
  ): Promise<number> {
    const { files, schema, choice } = context;
    const file = files.file(appendEntries(outcome.transcript, [toolCallsEntry(outcome.pending.calls)]));
    if (schema) file.oam.schema = schema;
    file.oam.pending = outcome.pending;
    const path = await files.savePaused(file);
    const external = outcome.pending.calls.filter((c) => !outcome.pending.outputs.some((o) => o.id === c.id));
    const line: JsonObject = { status: "tool_calls", calls: external, transcript: path };
    if (this.#mode === "events") writeOut(`${JSON.stringify({ type: "tool_calls", ...line })}\n`);
    else if (this.#mode === "json") writeOut(`${JSON.stringify(line)}\n`);
    else {
      writeOut(`${JSON.stringify(line)}\n`);
      const again = choice.again ?? { flags: [], env: [] };
      const command = [
        ...again.env.map(shellWord),
        // A GGUF model: `--no-lock` too, or the pasted command would pin node-llama-cpp in a lock file.
        oamCommand(undefined, { noLock: choice.name === "llama" }),
        "respond",
        "--resume",
        shellWord(path),
        ...again.flags.map(shellWord),
        ...external.map((c) => `--tool-output ${shellWord(c.id)}=<output>`),
      ].join(" ");
      writeErr(
        this.#err.yellow(`Waiting for ${external.length} tool call${external.length === 1 ? "" : "s"}. `) +
          `Answer and continue with:\n  ${command}\n`,
      );
    }
    return EXIT.toolCalls;
  }

  /** The turn completed: saves the conversation when asked and prints the result. */
  async #completed(
    outcome: { result: JsonObject; printed: string },
    context: { files: ConversationFiles; warnings: string[]; stream: boolean },
  ): Promise<number> {
    const { files, warnings, stream } = context;
    const result = outcome.result;
    const streamedLineOpen = this.#mode === "human" && stream && outcome.printed !== "" &&
      !outcome.printed.endsWith("\n");
    let savedAt: string | undefined;
    try {
      savedAt = await files.saveCompleted();
    } catch (error) {
      // The streamed answer's line ends before the error is reported.
      if (streamedLineOpen) writeOut("\n");
      throw error;
    }
    const response: JsonObject = { status: "completed" };
    for (const [k, v] of Object.entries(result)) if (k !== "session" && k !== "warnings") response[k] = v;
    if (savedAt !== undefined) response.transcript = savedAt;
    const turnWarnings = Array.isArray(result.warnings) ? result.warnings.map(String) : [];
    const allWarnings = [...warnings, ...turnWarnings];
    if (allWarnings.length > 0) response.warnings = allWarnings;
    if (this.#mode === "json") writeOut(`${JSON.stringify(response)}\n`);
    else if (this.#mode === "events") writeOut(`${JSON.stringify({ type: "completed", response })}\n`);
    else if (result.structured !== undefined) writeOut(`${JSON.stringify(result.structured, null, 2)}\n`);
    else if (!stream || outcome.printed === "") writeOut(`${result.text}\n`);
    else if (streamedLineOpen) writeOut("\n");
    // The session's warnings were shown when it was created; the turn's (a schema's) after its answer.
    if (this.#verbose && this.#mode === "human") {
      const file = this.#schemaFile;
      for (const w of turnWarnings) {
        writeErr(this.#err.yellow(`warning: ${file ? schemaWarningInFile(w, file) : w}\n`));
      }
    }
    return EXIT.ok;
  }

  async #collectAnswers(
    pending: PendingState,
    outputs: string[],
    errors: string[],
  ): Promise<Map<string, ToolAnswer>> {
    const answers = new Map<string, ToolAnswer>();
    for (const o of pending.outputs) answers.set(o.id, { output: o.output, isError: o.isError });
    const known = new Set(pending.calls.map((c) => c.id));
    const split = (flag: string, raw: string): [string, string] => {
      const eq = raw.indexOf("=");
      if (eq <= 0) throw CliError.usage(`${flag} must look like <call id>=<value>; got '${raw}'.`);
      const id = raw.slice(0, eq);
      if (!known.has(id)) {
        throw CliError.usage(
          `${flag}: no pending tool call '${id}'. Pending: ${
            pending.calls.filter((c) => !pending.outputs.some((o) => o.id === c.id)).map((c) => c.id).join(
              ", ",
            )
          }.`,
        );
      }
      return [id, raw.slice(eq + 1)];
    };
    for (const raw of outputs) {
      const [id, value] = split("--tool-output", raw);
      let text = value;
      if (value === "@-") {
        text = await readStdinText(`--tool-output ${id}=@-`);
      } else if (value.startsWith("@") && value.length > 1) {
        text = await readInputText(value.slice(1), `--tool-output ${id}`);
      }
      answers.set(id, { output: outputValue(text), isError: false });
    }
    for (const raw of errors) {
      const [id, value] = split("--tool-error", raw);
      answers.set(id, { output: value || "The tool failed.", isError: true });
    }
    const missing = pending.calls.filter((c) => !answers.has(c.id));
    if (missing.length > 0) {
      throw new CliError(
        "missing_tool_output",
        `No output for tool call${missing.length === 1 ? "" : "s"} ${
          missing.map((c) => `'${c.id}' (${c.name})`).join(", ")
        }; pass --tool-output <id>=<value> or --tool-error <id>=<message> for every pending call.`,
        { calls: missing.map((c) => c.id) },
      );
    }
    return answers;
  }

  #turn(
    bridge: LocalBridge,
    params: JsonObject,
    tools: LoadedTools | null,
    stream: boolean,
    budget: TurnBudget,
  ): Promise<
    | { kind: "completed"; result: JsonObject; printed: string }
    | { kind: "paused"; pending: PendingState; transcript: JsonObject }
  > {
    const turn = new RespondTurn({
      bridge,
      tools,
      budget,
      mode: this.#mode,
      style: this.#err,
      spinner: this.#spinner,
      streamText: this.#mode === "human" && stream && params.schema === undefined,
      showTools: this.#mode === "human" && (this.#verbose || isTerminal(Deno.stderr)),
    });
    this.#spinner.start("thinking");
    const onSigint = () => turn.interrupt();
    const signals = addSigint(onSigint);
    const run = bridge.run("session/respond", params, {
      onEvent: (event) => turn.event(event),
      onToolCall: (id, call) => turn.toolCall(id, call as CallInfo),
      onToolCancel: (p) => turn.toolCancel(p),
    });
    return run.then(
      (result) => {
        this.#spinner.stop();
        removeSigint(signals, onSigint);
        return { kind: "completed" as const, result, printed: turn.printed };
      },
      async (error) => {
        this.#spinner.stop();
        removeSigint(signals, onSigint);
        if (turn.pausing) return { kind: "paused" as const, ...(await turn.pausing) };
        if (turn.printed !== "" && this.#mode === "human") writeOut("\n");
        if (turn.interrupted) throw new CliError("interrupted", "Interrupted.");
        throw error;
      },
    );
  }
}

/** Removes a temporary conversation file oam made (already gone is fine). */
async function removeTemporary(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      throw new CliError(
        "io_error",
        `Cannot remove the temporary file '${path}': ${(error as Error).message}`,
      );
    }
  }
}

/** Adds a SIGINT listener (where signals exist); returns whether it was added. */
export function addSigint(listener: () => void): boolean {
  try {
    Deno.addSignalListener("SIGINT", listener);
    return true;
  } catch {
    return false;
  }
}

/** Removes a listener added by {@link addSigint}. */
export function removeSigint(added: boolean, listener: () => void): void {
  if (!added) return;
  try {
    Deno.removeSignalListener("SIGINT", listener);
  } catch {
    // ignore
  }
}
