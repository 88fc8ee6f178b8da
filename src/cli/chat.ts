/**
 * `oam chat`: an interactive streaming REPL. Tool calls are shown live; command tools (`x-oam`) run by
 * themselves and client tools are answered by the user at the prompt. Slash commands `/tools`, `/reset`,
 * `/save <file>`, `/usage`, `/help`, `/exit`; Ctrl-C stops the answer (`session/cancel`), Ctrl-D exits.
 * Works with piped input (one line per prompt or tool answer).
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { boolFlag, intFlag, numberFlag, parseFlags, stringFlag, wantsHelp } from "./args.ts";
import { CliError, EXIT, EXIT_CODES_HELP, reportError, toCliError } from "./cli_error.ts";
import { type ConversationFile, readConversation, writeConversation } from "./conversation_file.ts";
import { LineReader } from "./input.ts";
import { LocalBridge, MODEL_ENV_HELP, MODEL_FLAGS_HELP, resolveModelChoice } from "./local_bridge.ts";
import { formatCall, formatOutput, formatUsage } from "./render.ts";
import { ToolPrompter } from "./tool_prompt.ts";
import { addSigint, parseToolChoiceFlag, removeSigint } from "./respond.ts";
import { type LoadedTools, loadToolsFile, toolDescription, toolName, toolsFromValue } from "./tools_file.ts";
import { isTerminal, Spinner, stderrStyle, stdoutStyle, type Style, writeErr, writeOut } from "./tty.ts";

/** Help text of `oam chat`. */
export const CHAT_HELP = `oam chat — talk to the model in your terminal

Usage: oam chat [options]

Type a message and press Enter; the answer streams in. When the model calls a tool you answer it at the
prompt (text, or JSON; "/error <message>" reports a failure); command tools ("x-oam" in the tools file)
run by themselves. Piped input works too: one line per message or tool answer.

Commands:
  /tools          list the tools
  /reset          forget the conversation
  /save <file>    save the conversation (continue it with --resume, also in oam respond)
  /usage          token usage of the last turn and of the whole chat
  /help           show the commands
  /exit           quit (or Ctrl-D)
  Ctrl-C          stop the answer

Options:
  -i, --instructions <text>   system instructions
  --tools <file>              tools file: JSON/JSONC array or {"tools": [...]} (x-oam command tools
                              need --allow-run)
  --tool-choice <choice>      auto | none | required | explicit | <tool name>
  --max-tool-rounds <n>       model steps per turn that may call tools (default 4)
  --max-tool-calls <n>        tool calls per turn (default 12)
  --temperature <t>           0 to 2
  --max-tokens <n>            longest answer in tokens
  -g, --greedy                greedy sampling
  --resume <file>             continue a saved conversation (from /save, --save-transcript or oam respond)
  --save-transcript <file>    save the conversation after every turn
${MODEL_FLAGS_HELP}
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
export async function runChat(args: string[]): Promise<number> {
  if (wantsHelp(args)) {
    writeOut(CHAT_HELP);
    return EXIT.ok;
  }
  try {
    return await new ChatCommand().run(args);
  } catch (error) {
    return reportError(error, { mode: "human", style: stderrStyle() });
  }
}

class ChatCommand {
  readonly #out: Style = stdoutStyle();
  readonly #err: Style = stderrStyle();
  readonly #interactive = isTerminal(Deno.stdin);
  readonly #reader = new LineReader();
  readonly #spinner = new Spinner();
  #bridge!: LocalBridge;
  #tools: LoadedTools | null = null;
  #modelName = "system";
  #savePath: string | undefined;
  #lastUsage: JsonValue = null;
  #total = { inputTokens: 0, outputTokens: 0, totalTokens: 0, turns: 0 };
  /** Cancels the running turn (set while a turn runs). */
  #cancelTurn: (() => void) | null = null;
  #quit = false;

  async run(args: string[]): Promise<number> {
    const { values, positionals } = parseFlags(args, { command: "chat", flags: FLAGS, positionals: false });
    void positionals;
    const resumePath = stringFlag(values, "resume");
    const resume = resumePath !== undefined ? await readConversation(resumePath) : null;
    if (resume?.oam.pending) {
      throw CliError.usage(
        `${resumePath} is waiting for tool outputs; finish that turn with 'oam respond --resume ${resumePath} --tool-output …' first.`,
      );
    }
    const toolsPath = stringFlag(values, "tools");
    if (toolsPath !== undefined) this.#tools = await loadToolsFile(toolsPath);
    else if (resume?.oam.tools) {
      this.#tools = toolsFromValue(resume.oam.tools, {
        label: `${resumePath}: oam.tools`,
        baseDir: resume.oam.toolsDir ?? Deno.cwd(),
      });
    }
    const options: JsonObject = {};
    const choice = parseToolChoiceFlag(stringFlag(values, "tool-choice"));
    if (choice !== undefined) options.toolChoice = choice;
    const rounds = intFlag(values, { name: "max-tool-rounds", min: 0, max: 1000 });
    if (rounds !== undefined) options.maxToolRounds = rounds;
    const calls = intFlag(values, { name: "max-tool-calls", min: 0, max: 10000 });
    if (calls !== undefined) options.maxToolCalls = calls;
    const temperature = numberFlag(values, { name: "temperature", min: 0, max: 2 });
    if (temperature !== undefined) options.temperature = temperature;
    const maxTokens = intFlag(values, { name: "max-tokens", min: 1 });
    if (maxTokens !== undefined) options.maxResponseTokens = maxTokens;
    if (boolFlag(values, "greedy")) options.sampling = "greedy";
    this.#savePath = stringFlag(values, "save-transcript");

    const model = await resolveModelChoice({
      model: stringFlag(values, "model"),
      script: stringFlag(values, "script"),
    });
    this.#modelName = model.name;
    this.#bridge = new LocalBridge(model);
    await this.#bridge.requireAvailable();
    const create: JsonObject = { session: SESSION, options, model: "system" };
    const instructions = stringFlag(values, "instructions");
    if (instructions !== undefined) create.instructions = instructions;
    if (this.#tools) create.tools = this.#tools.definitions;
    if (resume) create.history = resume.transcript;
    const created = await this.#bridge.call("session/create", create) as JsonObject;
    if (Array.isArray(created.warnings)) {
      for (const w of created.warnings) writeErr(this.#err.yellow(`warning: ${w}\n`));
    }

    const onSigint = () => {
      if (this.#cancelTurn) this.#cancelTurn();
      else if (this.#interactive) {
        writeOut(`\n${this.#out.dim("(Ctrl-D or /exit to quit)")}\n`);
        this.#prompt();
      }
    };
    const sigint = addSigint(onSigint);
    try {
      if (this.#interactive) {
        const names = this.#toolNames();
        writeOut(
          this.#out.dim(
            `oam chat · ${model.label}${names.length > 0 ? ` · tools: ${names.join(", ")}` : ""}` +
              ` · /help for commands · Ctrl-D to quit\n`,
          ),
        );
      }
      while (!this.#quit) {
        this.#prompt();
        const line = await this.#reader.readLine();
        if (line === null || line === undefined) {
          if (this.#interactive) writeOut("\n");
          break;
        }
        const text = line.trim();
        if (text === "") continue;
        if (text.startsWith("/")) await this.#command(text);
        else await this.#turn(line);
      }
    } finally {
      removeSigint(sigint, onSigint);
    }
    return EXIT.ok;
  }

  #prompt(): void {
    if (this.#interactive) writeOut(this.#out.bold(this.#out.green("you› ")));
  }

  #toolNames(): string[] {
    return this.#tools ? this.#tools.definitions.map(toolName) : [];
  }

  async #command(text: string): Promise<void> {
    const [name, ...rest] = text.split(/\s+/);
    const arg = rest.join(" ");
    const o = this.#out;
    switch (name) {
      case "/exit":
      case "/quit":
        this.#quit = true;
        return;
      case "/help":
        writeOut(
          "/tools · /reset · /save <file> · /usage · /exit — Ctrl-C stops an answer, Ctrl-D quits.\n" +
            "Answer a tool call with text or JSON; '/error <message>' reports a failure.\n",
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
        if (arg === "") {
          writeErr(`${this.#err.red("Error:")} /save needs a file name, e.g. /save chat.json [usage]\n`);
          return;
        }
        try {
          await this.#save(arg);
          writeOut(o.dim(`(saved to ${arg})\n`));
        } catch (error) {
          reportError(error, { mode: "human", style: this.#err });
        }
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
        writeErr(`${this.#err.red("Error:")} unknown command '${name}'; type /help. [usage]\n`);
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
      reportError(error, { mode: "human", style: this.#err });
    }
  }

  async #turn(prompt: string): Promise<void> {
    const o = this.#out;
    const bridge = this.#bridge;
    let printed = "";
    let atLineStart = true;
    let cancelled = false;
    const write = (text: string) => {
      if (text === "") return;
      this.#spinner.stop();
      writeOut(text);
      atLineStart = text.endsWith("\n");
    };
    const newline = () => {
      if (!atLineStart) write("\n");
    };
    const prompter = new ToolPrompter(bridge, this.#reader, this.#tools, this.#interactive, o, {
      beforeAsk: () => {
        this.#spinner.stop();
        newline();
      },
      ask: (text) => write(text),
      answered: () => {
        atLineStart = true;
        this.#spinner.start("thinking");
      },
      inputEnded: () => {
        // Ctrl-D while a tool waits: stop the turn and leave.
        this.#quit = true;
        cancelled = true;
        bridge.call("session/cancel", { session: SESSION }).catch(() => {});
      },
    });

    this.#cancelTurn = () => {
      cancelled = true;
      bridge.call("session/cancel", { session: SESSION }).catch(() => {});
    };
    this.#spinner.start("thinking");
    try {
      const result = await bridge.run("session/respond", { session: SESSION, prompt, stream: true }, {
        onEvent: (event) => {
          if (cancelled) return; // what follows a Ctrl-C is the turn unwinding
          switch (event.type) {
            case "text": {
              this.#spinner.stop();
              const delta = String(event.delta ?? "");
              if (event.isReset === true && printed !== "") {
                newline();
                write(o.dim("(rewritten)\n"));
              }
              write(delta);
              printed = event.isReset === true ? delta : printed + delta;
              break;
            }
            case "toolCallStarted":
              this.#spinner.stop();
              newline();
              write(`  ${o.cyan("⚙")} ${formatCall(event.call ?? null, o)}\n`);
              break;
            case "toolCallCompleted": {
              const record = isJsonObject(event.record) ? event.record : {};
              newline();
              write(
                `  ${o.dim("↳")} ${
                  formatOutput({ output: record.output ?? null, isError: record.isError === true }, o)
                }\n`,
              );
              this.#spinner.start("thinking");
              break;
            }
          }
        },
        onToolCall: (id, call) => prompter.enqueue(id, call),
        onToolCancel: (p) => prompter.cancel(String(p.id)),
      });
      this.#spinner.stop();
      if (printed === "") write(typeof result.text === "string" ? result.text : "");
      newline();
      this.#lastUsage = result.usage ?? null;
      if (isJsonObject(result.usage)) {
        const u = result.usage;
        this.#total.inputTokens += Number(u.inputTokens ?? 0);
        this.#total.outputTokens += Number(u.outputTokens ?? 0);
        this.#total.totalTokens += Number(u.totalTokens ?? 0);
      }
      this.#total.turns++;
      await this.#autosave();
    } catch (error) {
      this.#spinner.stop();
      newline();
      const e = toCliError(error);
      if (cancelled || e.code === "cancelled") write(o.dim("(stopped)\n"));
      else reportError(e, { mode: "human", style: this.#err });
    } finally {
      this.#cancelTurn = null;
      prompter.finish();
    }
  }
}
