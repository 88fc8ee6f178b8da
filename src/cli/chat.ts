/**
 * `oam chat`: an interactive streaming REPL. Tool calls are shown live; command tools (`x-oam`) run by
 * themselves and client tools are answered by the user at the prompt. Slash commands `/tools`, `/reset`,
 * `/save <file>`, `/usage`, `/help`, `/exit`; Ctrl-C stops the answer (`session/cancel`), Ctrl-D exits.
 * Works with piped input (one line per prompt or tool answer).
 * @module
 */
import { shownWrittenPath } from "./task_folder.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { intFlag, type ParsedFlags, parseFlags, stringFlag } from "./args.ts";
import { oamCommand } from "./invocation.ts";
import { CliError, EXIT_CODES_HELP, reportError } from "./cli_error.ts";
import { runSubcommand } from "./subcommand.ts";
import {
  checkSaveTarget,
  type ConversationFile,
  readConversation,
  writeConversation,
} from "./conversation_file.ts";
import { refuseCommandsWithoutRun, refuseMissingPrograms } from "./command_tools.ts";
import { generationFlags } from "./generation_flags.ts";
import { refuseStdinFiles } from "./input.ts";
import {
  choiceSessionOptions,
  LocalBridge,
  MODEL_ENV_HELP,
  modelFlagsHelp,
  resolveModelChoice,
} from "./local_bridge.ts";
import { formatUsage } from "./render.ts";
import { PromptLoop, unknownSlashCommand } from "./prompt_loop.ts";
import { checkToolChoice, parseToolChoiceFlag } from "./respond.ts";
import {
  type LoadedTools,
  loadToolsFile,
  toolDescription,
  toolName,
  toolsFromValue,
  toolsProblemInFile,
  unknownToolKeyWarnings,
} from "./tools_file.ts";
import { stderrStyle, stdoutStyle, type Style, writeErr, writeOut } from "./tty.ts";

/** Help text of `oam chat`. */
export const CHAT_HELP = `oam chat — talk to the model in your terminal

Usage: oam chat [options]

Type a message and press Enter; the answer streams in. When the model calls a tool you answer it at the
prompt (text, or JSON; "/error <message>" reports a failure, "/exit" quits); command tools ("x-oam" in the
tools file) run by themselves. Piped input works too: one line per message or tool answer; the chat
ends when the input does (Ctrl-C between answers does not quit it).
A turn, a command or a save that fails shows its error and the next line is read; when the input ends,
oam exits with the code of the first failure (below), so a piped run tells a CI job that something failed.
Piped input that ends while a tool waits for its answer is such a failure (missing_tool_output, exit 2);
"/exit" as the answer, or Ctrl-D at a terminal, quits without one.

When you type at a terminal, the prompt and the tool questions go to stdout if it is a terminal too,
else to stderr: with 'oam chat > chat.log' you are asked on the terminal and the file gets only the
conversation.

Commands:
  /tools          list the tools
  /reset          forget the conversation
  /save <file>    save the conversation (continue it with --resume, also in oam respond)
  /usage          token usage of the last turn and of the whole chat
  /help           show the commands
  /exit           quit (or Ctrl-D)
  Ctrl-C          stop the answer
  //text          say "/text" (a message that starts with a slash)

Options:
  -i, --instructions <text>   system instructions
  --tools <file>              tools file: JSON/JSONC array or {"tools": [...]} (x-oam command tools
                              need --allow-run: without it they are refused at start, exit 2)
  --tool-choice <choice>      auto | none | required | explicit | <tool name>
  --max-tool-rounds <n>       model steps per turn that may call tools (default 4)
  --max-tool-calls <n>        tool calls per turn (default 12)
  --temperature <t>           0 to 2
  --max-tokens <n>            longest answer in tokens
  -g, --greedy                greedy sampling (not with --temperature)
  --resume <file>             continue a saved conversation (from /save, --save-transcript or oam respond)
  --save-transcript <file>    save the conversation after every turn
${modelFlagsHelp(30)}
  -h, --help                  show this help

${EXIT_CODES_HELP}
${MODEL_ENV_HELP}

Examples:
  oam chat -i "You are a terse pirate."
  printf 'Hello\\n/usage\\n' | oam chat --script steps.json
`;

const FLAGS = {
  instructions: { type: "string", short: "i" },
  tools: { type: "string" },
  "tool-choice": { type: "string" },
  "max-tool-rounds": { type: "string" },
  "max-tool-calls": { type: "string" },
  temperature: { type: "string" },
  "max-tokens": { type: "string" },
  greedy: { type: "boolean", short: "g" },
  resume: { type: "string" },
  "save-transcript": { type: "string" },
  model: { type: "string" },
  script: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

const SESSION = "chat";

/** Runs `oam chat`; resolves with the exit code. */
export function runChat(args: string[]): Promise<number> {
  return runSubcommand(args, { help: CHAT_HELP, run: () => new ChatCommand().run(args) });
}

/** A conversation `--resume` continues. */
interface Resumed {
  path: string;
  file: ConversationFile;
}

/** The saved conversation `--resume` names (null without it); one waiting for tool outputs is refused. */
async function readResume(path: string | undefined): Promise<Resumed | null> {
  if (path === undefined) return null;
  const file = await readConversation(path);
  if (file.oam.pending) {
    throw CliError.usage(
      `${path} is waiting for tool outputs; finish that turn with '${oamCommand()} respond --resume ${path} --tool-output …' first.`,
    );
  }
  return { path, file };
}

/** The tools of `--tools`, else those saved with the resumed conversation (commands relative to its tools file). */
async function loadTools(path: string | undefined, resume: Resumed | null): Promise<LoadedTools | null> {
  if (path !== undefined) return await loadToolsFile(path);
  if (!resume?.file.oam.tools) return null;
  const { tools, toolsDir } = resume.file.oam;
  return toolsFromValue(tools, {
    label: `${resume.path}: oam.tools`,
    baseDir: toolsDir ?? Deno.cwd(),
    file: { label: resume.path, text: null, pointer: "#/oam/tools" },
  });
}

/** The session options of the tool and sampling flags. */
function sessionOptions(values: ParsedFlags["values"]): JsonObject {
  const options: JsonObject = {};
  const choice = parseToolChoiceFlag(stringFlag(values, "tool-choice"));
  if (choice !== undefined) options.toolChoice = choice;
  const rounds = intFlag(values, { name: "max-tool-rounds", min: 0, max: 1000 });
  if (rounds !== undefined) options.maxToolRounds = rounds;
  const calls = intFlag(values, { name: "max-tool-calls", min: 0, max: 10000 });
  if (calls !== undefined) options.maxToolCalls = calls;
  return { ...options, ...generationFlags(values) };
}

/** What one turn of `oam chat` has shown so far. */
interface TurnView {
  /** The answer as streamed so far. */
  printed: string;
  /** A tool call's line ended the answer's line: text that continues the answer shows it whole again. */
  cut: boolean;
}

class ChatCommand {
  readonly #out: Style = stdoutStyle();
  readonly #err: Style = stderrStyle();
  readonly #loop = new PromptLoop({ out: this.#out, err: this.#err, label: () => "thinking" });
  readonly #screen = this.#loop.screen;
  #bridge!: LocalBridge;
  #tools: LoadedTools | null = null;
  #modelName = "system";
  #savePath: string | undefined;
  #lastUsage: JsonValue = null;
  #total = { inputTokens: 0, outputTokens: 0, totalTokens: 0, turns: 0 };

  /** The command: flags, saved conversation and tools, the model and the session, then the chat loop. */
  async run(args: string[]): Promise<number> {
    const { values } = parseFlags(args, { command: "chat", flags: FLAGS, positionals: false });
    refuseStdinFiles("chat", {
      "--resume": stringFlag(values, "resume"),
      "--tools": stringFlag(values, "tools"),
      "--script": stringFlag(values, "script"),
    });
    const resume = await readResume(stringFlag(values, "resume"));
    this.#tools = await loadTools(stringFlag(values, "tools"), resume);
    refuseCommandsWithoutRun(this.#tools?.commands ?? new Map());
    await refuseMissingPrograms(this.#tools?.commands ?? new Map());
    const options = sessionOptions(values);
    checkToolChoice(options.toolChoice, {
      tools: this.#tools,
      resumed: resume !== null,
      toolFlags: "--tools",
    });
    this.#savePath = stringFlag(values, "save-transcript");
    if (this.#savePath !== undefined) await checkSaveTarget(this.#savePath); // before the first turn
    const model = await resolveModelChoice({
      model: stringFlag(values, "model"),
      script: stringFlag(values, "script"),
    });
    this.#modelName = model.name;
    this.#bridge = new LocalBridge(model);
    await this.#bridge.requireAvailable();
    await this.#createSession({
      options: { ...options, ...choiceSessionOptions(model) },
      instructions: stringFlag(values, "instructions"),
      resume,
    });
    // The first failure's exit code, when a turn or a command failed.
    return await this.#loop.run({
      banner: this.#banner(model.label),
      command: (name, arg) => this.#command(name, arg),
      say: (line) => this.#turn(line),
    });
  }

  /** `session/create` with the options, instructions, tools and saved history; its warnings on stderr. */
  async #createSession(
    from: { options: JsonObject; instructions: string | undefined; resume: Resumed | null },
  ): Promise<void> {
    const { options, instructions, resume } = from;
    const create: JsonObject = { session: SESSION, options, model: "system" };
    if (instructions !== undefined) create.instructions = instructions;
    if (this.#tools) create.tools = this.#tools.definitions;
    if (resume) create.history = resume.file.transcript;
    const created = await this.#bridge.call("session/create", create).catch((error) => {
      throw toolsProblemInFile(error, this.#tools);
    }) as JsonObject;
    const warnings = [
      ...unknownToolKeyWarnings(this.#tools),
      ...(Array.isArray(created.warnings) ? created.warnings : []),
    ];
    for (const w of warnings) writeErr(this.#err.yellow(`warning: ${w}\n`));
  }

  /** The first line on a terminal: the model, the tools, the keys. */
  #banner(modelLabel: string): string {
    const names = this.#toolNames();
    return `oam chat · ${modelLabel}${names.length > 0 ? ` · tools: ${names.join(", ")}` : ""}` +
      ` · /help for commands · Ctrl-D to quit`;
  }

  #toolNames(): string[] {
    return this.#tools ? this.#tools.definitions.map(toolName) : [];
  }

  /** A slash command (an error it throws is reported, and the chat goes on). */
  async #command(name: string, arg: string): Promise<void> {
    const o = this.#out;
    switch (name) {
      case "/help":
        writeOut(
          "/tools · /reset · /save <file> · /usage · /exit — Ctrl-C stops an answer, Ctrl-D quits.\n" +
            "Start a line with // to say one that begins with a slash: //shrug says /shrug.\n" +
            "Answer a tool call with text or JSON; '/error <message>' reports a failure, '/exit' quits.\n",
        );
        return;
      case "/tools": {
        const list = await this.#bridge.call("session/list") as JsonObject;
        const session = Array.isArray(list.sessions)
          ? list.sessions.find((s) => isJsonObject(s) && s.session === SESSION) as JsonObject | undefined
          : undefined;
        const names = session && Array.isArray(session.tools) ? session.tools.map(String) : [];
        if (names.length === 0) writeOut(o.dim("(no tools)\n"));
        for (const n of names) {
          const def = this.#tools?.raw.find((d) => toolName(d) === n);
          const kind = this.#tools?.commands.has(n) ? "command" : "you answer";
          writeOut(`  ${o.bold(n)} ${o.dim(`(${kind})`)}${def ? ` ${toolDescription(def)}` : ""}\n`);
        }
        return;
      }
      case "/reset":
        await this.#bridge.call("session/reset", { session: SESSION });
        this.#lastUsage = null;
        writeOut(o.dim("(conversation cleared)\n"));
        await this.#autosave();
        return;
      case "/save":
        if (arg === "") throw CliError.usage("/save needs a file name, e.g. /save chat.json");
        await this.#save(arg);
        writeOut(o.dim(`(saved to ${shownWrittenPath(arg)})\n`));
        return;
      case "/usage":
        writeOut(
          `last turn: ${this.#lastUsage === null ? "none yet" : formatUsage(this.#lastUsage)}\n` +
            `this chat: ${this.#total.turns} turn${this.#total.turns === 1 ? "" : "s"} · ${
              formatUsage(this.#total)
            }\n`,
        );
        return;
      default:
        // As in oam npc: the session goes on, the exit code says it.
        throw unknownSlashCommand(name, {
          known: ["/help", "/tools", "/reset", "/save", "/usage"],
          otherNames: { "/state": "/save" },
        });
    }
  }

  async #save(path: string): Promise<void> {
    const t = await this.#bridge.call("session/transcript", { session: SESSION }) as JsonObject;
    const file: ConversationFile = {
      transcript: t.transcript as JsonObject,
      modelName: this.#modelName,
      oam: { version: 1, ...(this.#tools ? { tools: this.#tools.raw, toolsDir: this.#tools.baseDir } : {}) },
    };
    await writeConversation(path, file);
  }

  async #autosave(): Promise<void> {
    if (this.#savePath === undefined) return;
    try {
      await this.#save(this.#savePath);
    } catch (error) {
      this.#screen.failed(reportError(error, { mode: "human", style: this.#err }));
    }
  }

  /** One turn: the prompt to session/respond, its events shown as they come, then the answer or failure. */
  async #turn(prompt: string): Promise<void> {
    const turn: TurnView = { printed: "", cut: false };
    await this.#screen.run({
      bridge: this.#bridge,
      tools: this.#tools,
      method: "session/respond",
      params: { session: SESSION, prompt, stream: true },
      cancel: { method: "session/cancel", params: { session: SESSION } },
      onEvent: (event) => this.#turnEvent(turn, event),
      onResult: async (result) => {
        this.#showAnswer(turn, result);
        this.#countUsage(result.usage);
        await this.#autosave();
      },
      // Ctrl-D while a tool waits: the turn stops and the chat ends.
      onInputEnded: () => this.#loop.quit(),
    });
  }

  /** Shows one `session/event` of the turn. */
  #turnEvent(turn: TurnView, event: JsonObject): void {
    switch (event.type) {
      case "text":
        this.#showText(turn, event);
        break;
      case "toolCallStarted":
        // The answer's line ends; text that continues it shows it whole again.
        turn.cut = turn.printed !== "";
        this.#screen.toolCallStarted(event);
        break;
      case "toolCallCompleted":
        this.#screen.toolCallCompleted(event);
        break;
    }
  }

  /**
   * New text of the answer. Text the model gives anew (a reset) goes on a line of its own, as rewritten; text
   * that continues an answer a tool call cut off shows the answer again from its start.
   */
  #showText(turn: TurnView, event: JsonObject): void {
    this.#screen.hideThinking();
    const delta = String(event.delta ?? "");
    const reset = event.isReset === true;
    if (reset && turn.printed !== "") {
      this.#screen.newline();
      this.#screen.write(this.#out.dim("(rewritten)\n"));
    }
    this.#screen.write(turn.cut && !reset ? turn.printed + delta : delta);
    turn.printed = reset ? delta : turn.printed + delta;
    turn.cut = false;
  }

  /** The end of a turn that succeeded: the answer (whole, if no text event was shown), and its line ends. */
  #showAnswer(turn: TurnView, result: JsonObject): void {
    // No text event was shown (a Ctrl-C that came too late to stop the turn): the whole answer now.
    if (turn.printed === "") this.#screen.write(typeof result.text === "string" ? result.text : "");
    this.#screen.newline();
  }

  /** Keeps the turn's usage for /usage and adds it to the chat's. */
  #countUsage(usage: JsonValue | undefined): void {
    this.#lastUsage = usage ?? null;
    if (isJsonObject(usage)) {
      this.#total.inputTokens += Number(usage.inputTokens ?? 0);
      this.#total.outputTokens += Number(usage.outputTokens ?? 0);
      this.#total.totalTokens += Number(usage.totalTokens ?? 0);
    }
    this.#total.turns++;
  }
}
