/**
 * `oam demo [tavern]`: a tavern scene played by a tiny game-engine client against the real stdio bridge
 * (`oam stdio` in a child process): Mira the innkeeper with two client tools (`check_menu`, `take_order`),
 * world writes (gold), streamed lines and a decision at the end. It uses a scripted model unless the
 * on-device model is available, `--model` names one, or a GGUF model is cached (`oam models pull`), so it
 * runs anywhere in a few seconds.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { Peer } from "../client/peer.ts";
import { StdioTransport } from "../client/stdio.ts";
import { boolFlag, parseFlags, stringFlag } from "./args.ts";
import { CliError, EXIT, isPermissionError } from "./cli_error.ts";
import { runSubcommand } from "./subcommand.ts";
import {
  currentProcess,
  oamCommand,
  oamCommandLineFor,
  type ProcessFacts,
  startedByDeno,
} from "./invocation.ts";
import { firstCachedModel } from "../models/gguf_cache.ts";
import { isTerminal, Spinner, stderrStyle, stdoutStyle, type Style, writeOut } from "./tty.ts";

/** Help text of `oam demo`. */
export const DEMO_HELP = `oam demo — a tavern scene: an NPC, tools, a shared world and a decision

Usage: oam demo [tavern] [options]

Starts the JSON-RPC bridge ('oam stdio') as a child process and plays a small game engine against it:
Mira the innkeeper looks up the menu and takes an order through client tools (tool/call), the engine
charges gold in a shared world (world/set → world/changed), and Mira finally decides whether Aria gets
the last room (decision/decide). The lines stream in as npc/event notifications.

The scene is scripted (canned model replies, real bridge) unless the on-device model is available,
--model names one, or a GGUF model is cached ('oam models pull'); then the model improvises.

Options:
  --scripted          always use the scripted replies
  --model <spec>      let openai:<baseURL>#<model> or gguf:<path|cached name> play Mira
  --fast              no typewriter effect
  --show-protocol     print every JSON-RPC message on stderr
  -h, --help          show this help

Permissions: the demo spawns the bridge, so it needs --allow-run (plus --allow-read --allow-env);
without it the demo does not start (exit 2, usage) and says the command to run.

Exit codes: 0 the scene played, 1 a failure, 2 usage (a bad flag, a missing permission), 3 the model named
by --model is unavailable (model_unavailable), 130 interrupted (Ctrl-C).

Example:
  oam demo
`;

const FLAGS = {
  scripted: { type: "boolean" },
  model: { type: "string" },
  fast: { type: "boolean" },
  "show-protocol": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const MENU: JsonObject = { "lamb stew": 8, "fresh bread": 3, "apple cider": 2 };
const ROOM_PRICE = 12;

/** The tavern world. */
const WORLD_SEED: JsonObject = {
  player: { name: "Aria", gold: 30 },
  tavern: {
    name: "The Rusty Flagon",
    time_of_day: "late evening",
    weather: "a roaring storm",
    rooms_left: 1,
    menu: MENU,
  },
};

const PERSONA: JsonObject = {
  name: "Mira",
  role: "the innkeeper of the Rusty Flagon",
  personality: "Warm and motherly, but she keeps a sharp eye on her coin.",
  speakingStyle: "Short, homely sentences; calls guests 'love'.",
  goals: ["Keep her guests fed and happy", "Keep the inn in business"],
  defaultEmotion: "happy",
  maxSentences: 2,
};

const OPTIONS: JsonObject = {
  toolChoice: "explicit",
  maxToolRounds: 2,
  worldReadable: [],
  worldContextPaths: ["player.name", "player.gold", "tavern.time_of_day", "tavern.weather"],
  memoryTools: ["changeRelationship"],
  maxRelationshipChange: 15,
  playerOptionCount: 3,
};

const TOOLS: JsonValue[] = [
  {
    name: "check_menu",
    description: "Tonight's dishes and their prices in gold. Use it before naming any dish or price.",
    parameters: { type: "object", properties: {} },
  },
  {
    name: "take_order",
    description: "Serve a dish and charge the player for it. Returns the price and the gold left.",
    parameters: {
      type: "object",
      properties: { item: { type: "string", description: "A dish from the menu", enum: Object.keys(MENU) } },
      required: ["item"],
    },
  },
];

const LINES = [
  "Evening! Something warm to eat?",
  "The stew, please.",
  "Is there a room for the night? I can't go back out in that.",
];

/** Canned replies for Mira (one step per model call; see PROTOCOL.md §10). */
const MIRA_SCRIPT: JsonObject = {
  type: "scripted",
  steps: [
    { toolCalls: [{ name: "check_menu", arguments: {} }] },
    {
      json: {
        emotion: "happy",
        line: "Evening, love! There's lamb stew for 8 gold, fresh bread for 3, and apple cider for 2.",
        player_options: ["The stew, please.", "Just some bread.", "Any rooms free tonight?"],
        ends_conversation: false,
      },
    },
    { toolCalls: [{ name: "take_order", arguments: { item: "lamb stew" } }] },
    {
      json: {
        emotion: "grateful",
        line: "One lamb stew, that's 8 gold. Sit by the fire and dry off, love.",
        player_options: ["Thank you!", "Is there a room?", "Who else is here tonight?"],
        ends_conversation: false,
      },
    },
    {
      toolCalls: [{
        name: "change_relationship",
        arguments: { reason: "paid promptly and politely", delta: 5 },
      }],
    },
    {
      json: {
        emotion: "worried",
        line: "Just the one room left, and I'd hate to send you out in this. Let me think.",
        player_options: ["I can pay.", "Please, I'm desperate.", "Never mind."],
        ends_conversation: false,
      },
    },
  ],
  fallback: {
    json: {
      emotion: "happy",
      line: "Make yourself at home, love.",
      player_options: [],
      ends_conversation: false,
    },
  },
};

const ROOM_OPTIONS: JsonValue[] = [
  { id: "free_room", description: "Give Aria the room for free" },
  { id: "room_on_credit", description: "Let her pay tomorrow" },
  { id: "full_price", description: `Charge the full ${ROOM_PRICE} gold now` },
  { id: "turn_away", description: "Keep the room for a richer guest" },
];

const DECISION_SCRIPT: JsonObject = {
  type: "scripted",
  steps: [{
    json: {
      reasoning:
        "Aria paid promptly and can afford it, but the last room on a storm night is worth its price.",
      choice: "full_price",
      confidence: 72,
    },
  }],
};

/** Prints in order; `type` animates text on a terminal. */
class Printer {
  readonly #delayMs: number;
  #chain: Promise<void> = Promise.resolve();

  constructor(delayMs: number) {
    this.#delayMs = delayMs;
  }

  print(text: string): void {
    this.#chain = this.#chain.then(() => writeOut(text));
  }

  type(text: string): void {
    if (this.#delayMs <= 0) return this.print(text);
    for (const ch of text) {
      this.#chain = this.#chain.then(() => {
        writeOut(ch);
        return sleep(this.#delayMs);
      });
    }
  }

  pause(ms: number): void {
    if (this.#delayMs > 0) this.#chain = this.#chain.then(() => sleep(ms));
  }

  flush(): Promise<void> {
    return this.#chain;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** How to start the bridge: this executable when compiled, else deno running cli.ts. */
export function stdioCommand(extra: string[], options: { gguf?: boolean } = {}): string[] {
  if (Deno.build.standalone) return [Deno.execPath(), "stdio", ...extra];
  const cli = new URL("../../cli.ts", import.meta.url);
  const args = ["run", "--quiet", "--no-prompt", "--allow-read", "--allow-env", "--allow-ffi"];
  if (extra.some((a) => a.startsWith("openai:"))) args.push("--allow-net");
  // node-llama-cpp (a GGUF model) also needs these; --no-lock keeps it out of the repository's lock file.
  if (extra.some((a) => a.startsWith("gguf:")) || options.gguf === true) {
    args.push("--allow-sys", "--allow-run", "--no-lock");
  }
  if (cli.protocol === "file:") {
    const config = new URL("../../deno.json", import.meta.url);
    try {
      Deno.statSync(config);
      args.push("--config", decodeURIComponent(config.pathname));
    } catch {
      // no config next to cli.ts: rely on discovery
    }
  }
  const path = cli.protocol === "file:" ? decodeURIComponent(cli.pathname) : cli.href;
  return [Deno.execPath(), ...args, path, "stdio", ...extra];
}

/** Runs `oam demo`; resolves with the exit code. */
export function runDemo(args: string[]): Promise<number> {
  return runSubcommand(args, { help: DEMO_HELP, run: () => playTavern(args) });
}

/**
 * Refuses to start without `--allow-run` (a `usage` error, exit 2, as a command tool without it): the demo
 * spawns the bridge, and the message gives the command that has the grant.
 */
function refuseWithoutRun(facts: ProcessFacts = currentProcess()): void {
  if (Deno.permissions.querySync({ name: "run", command: Deno.execPath() }).state === "granted") return;
  const why = "The demo starts the bridge ('oam stdio') as a child process, which needs --allow-run";
  if (!startedByDeno(facts)) {
    throw CliError.usage(
      `${why}: this executable was compiled without it; compile it with --allow-run (deno task compile:cli does).`,
    );
  }
  const granted: ProcessFacts["granted"] = (name, scope) => name === "run" || facts.granted(name, scope);
  throw CliError.usage(`${why}: run '${oamCommand({ ...facts, granted })} demo'.`);
}

/** What the scene is played with. */
interface Cast {
  /** True when the canned replies play Mira. */
  scripted: boolean;
  /** The `model` of Mira's NPC. */
  npcModel: JsonValue;
  /** The `model` of Mira's decision. */
  decisionModel: JsonValue;
  /** The file name of the cached GGUF model playing Mira, when one does. */
  cachedModel?: string;
}

async function playTavern(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { command: "demo", flags: FLAGS, positionals: true });
  if (positionals.length > 1 || (positionals.length === 1 && positionals[0] !== "tavern")) {
    throw CliError.usage(`Unknown demo '${positionals.join(" ")}'; the demo is 'tavern'.`);
  }
  refuseWithoutRun();
  const model = stringFlag(values, "model");
  // Without --model, a cached GGUF model plays Mira when the on-device model is unavailable.
  const cached = model === undefined && !boolFlag(values, "scripted") ? await firstCachedModel() : null;
  const tavern = new Tavern({
    command: stdioCommand(model !== undefined ? ["--model", model] : [], { gguf: cached !== null }),
    animate: isTerminal(Deno.stdout) && !boolFlag(values, "fast"),
    showProtocol: boolFlag(values, "show-protocol"),
  });
  // A stuck bridge must not hang the demo.
  const watchdog = setTimeout(() => tavern.stop(), model !== undefined || cached !== null ? 300_000 : 60_000);
  try {
    await tavern.start();
    const init = await tavern.call("initialize", {
      client: { name: "oam demo", version: "1.0" },
      protocolVersion: "1.0",
    });
    const available = isJsonObject(init.model) && init.model.available === true;
    const gguf: JsonValue = !available && cached !== null ? { type: "llama", path: cached.path } : null;
    const scripted = boolFlag(values, "scripted") || (!available && model === undefined && gguf === null);
    if (!scripted && !available && gguf === null) {
      throw new CliError(
        "model_unavailable",
        `The model named by --model (${model}) is unavailable${unavailableWhy(init.model)}`,
      );
    }
    const live: JsonValue = gguf ?? "system";
    if (gguf !== null) tavern.spinner.update(`loading ${cached!.name}`);
    await tavern.play({
      scripted,
      npcModel: scripted ? MIRA_SCRIPT : live,
      decisionModel: scripted ? DECISION_SCRIPT : live,
      ...(gguf !== null && !scripted ? { cachedModel: cached!.name } : {}),
    });
    return EXIT.ok;
  } finally {
    clearTimeout(watchdog);
    await tavern.close();
  }
}

/** Why `initialize`'s model cannot answer, as a clause: its reason, then the check's detail when it has one. */
function unavailableWhy(model: JsonValue): string {
  if (!isJsonObject(model)) return ".";
  const reason = typeof model.reason === "string" ? ` (${model.reason})` : "";
  return typeof model.detail === "string" ? `${reason}: ${model.detail}` : `${reason}.`;
}

/** The game engine of the scene: a client of the bridge that owns the world's rules and prints the story. */
class Tavern {
  readonly spinner: Spinner = new Spinner();
  readonly #peer: Peer;
  readonly #printer: Printer;
  readonly #o: Style = stdoutStyle();
  readonly #s: Style = stderrStyle();
  readonly #showProtocol: boolean;
  /** True while Mira's line is being printed (a world change or a tool call then starts a new line). */
  #lineOpen = false;
  #emotion = "";

  constructor(options: { command: string[]; animate: boolean; showProtocol: boolean }) {
    // OAM_SCRIPT is dropped so that the bridge's "system" model is the real one.
    const env: Record<string, string> = {};
    try {
      for (const [k, v] of Object.entries(Deno.env.toObject())) if (k !== "OAM_SCRIPT") env[k] = v;
    } catch {
      // no env access: the child gets an empty environment
    }
    const transport = new StdioTransport({ command: options.command, env, clearEnv: true, stderr: "piped" });
    this.#peer = new Peer(transport);
    this.#printer = new Printer(options.animate ? 6 : 0);
    this.#showProtocol = options.showProtocol;
    this.#peer.setRequestHandler("tool/call", (params) => this.#toolCall(params));
    this.#peer.onNotification("*", (params, method) => this.#notification(method, params));
  }

  /** Spawns the bridge. */
  async start(): Promise<void> {
    this.spinner.start("starting the bridge");
    try {
      await this.#peer.start();
    } catch (error) {
      if (isPermissionError(error instanceof Error ? error.cause : undefined)) {
        throw CliError.usage("The demo starts the bridge as a child process: run it with --allow-run.");
      }
      throw new CliError("io_error", `Cannot start the bridge: ${(error as Error).message}`);
    }
  }

  /** Calls a method (printed with --show-protocol); the bridge ending first is a failure. */
  async call(method: string, params: JsonObject = {}): Promise<JsonObject> {
    this.#protocol(`→ ${method} ${JSON.stringify(params)}`);
    try {
      const result = await this.#peer.request(method, params) as JsonObject;
      this.#protocol(`← ${JSON.stringify(result)}`);
      return result;
    } catch (error) {
      if (this.#peer.closed && error instanceof BridgeError && error.dataCode === "shut_down") {
        throw new CliError("failure", `The bridge stopped unexpectedly: ${error.message}`);
      }
      throw error;
    }
  }

  /** Ends the bridge at once (the watchdog). */
  stop(): void {
    this.#peer.close().catch(() => {});
  }

  /** Asks the bridge to shut down and waits (bounded) for it to exit. */
  async close(): Promise<void> {
    this.spinner.stop();
    if (!this.#peer.closed) await this.#peer.request("shutdown").catch(() => {});
    await this.#peer.close();
  }

  /** The scene: the world, Mira, three lines of dialogue, her decision and its ending. */
  async play(cast: Cast): Promise<void> {
    await this.call("world/create", { world: "tavern", state: WORLD_SEED });
    await this.call("world/subscribe", { world: "tavern", path: "player" });
    this.spinner.stop();
    this.#intro(cast);
    await this.call("npc/create", {
      npc: "mira",
      persona: PERSONA,
      options: OPTIONS,
      tools: TOOLS,
      world: "tavern",
      model: cast.npcModel,
    });
    await this.#dialogue();
    const choice = await this.#decide(cast.decisionModel);
    const ending = await this.#ending(choice);
    const p = this.#printer;
    const o = this.#o;
    await p.flush();
    p.print(`\n${o.italic(ending)} ${o.dim(`(gold left: ${await this.#gold()})`)}\n\n`);
    // The command that runs where the demo ran (`deno task oam` in the checkout), not a bare `oam`.
    const oam = oamCommand();
    p.print(
      o.dim(
        `Next: '${oam} npc <persona.jsonc>' to talk to your own character, '${oam} chat', '${oam} respond --help',\n` +
          `or '${oam} stdio' to drive all of this from your engine (PROTOCOL.md). Add --show-protocol to see the wire.\n`,
      ),
    );
    await p.flush();
  }

  #intro(cast: Cast): void {
    const p = this.#printer;
    const o = this.#o;
    p.print(`\n${o.bold("🍺 The Rusty Flagon")} ${o.dim("— an open-apple-models demo")}\n`);
    // Off a Mac the on-device model is not there: say how a real model gets to play Mira.
    const who = cast.cachedModel === undefined
      ? "The model"
      : `${cast.cachedModel} (a cached GGUF model; --model picks another)`;
    p.print(
      o.dim(
        cast.scripted
          ? "   Scripted replies, real bridge: every message below went through 'oam stdio'.\n" +
            "   (With Apple Intelligence available, the on-device model plays Mira instead, and elsewhere a " +
            `cached GGUF model:\n   '${
              oamCommandLineFor("models pull <url>")
            }', or --model gguf:<file.gguf>.)\n\n`
          : `   ${who} improvises Mira's lines; the engine, tools and world are real.\n\n`,
      ),
    );
    p.print(o.italic("Rain hammers the shutters. Aria shakes off her cloak and steps up to the bar.\n\n"));
  }

  /** Aria's three lines (the second one picked from Mira's options) and Mira's streamed replies. */
  async #dialogue(): Promise<void> {
    const p = this.#printer;
    const o = this.#o;
    let options: string[] = [];
    let relationship = 0;
    for (let turn = 0; turn < LINES.length; turn++) {
      let line = LINES[turn];
      if (turn === 1 && options.length > 0) {
        line = options[0];
        p.print(`${o.bold(o.green("Aria"))} ${o.dim("(picks 1)")}${o.dim(":")} ${line}\n`);
      } else p.print(`${o.bold(o.green("Aria"))}${o.dim(":")} ${line}\n`);
      p.pause(150);
      await p.flush();
      const result = await this.#talk(line);
      options = Array.isArray(result.playerOptions) ? result.playerOptions.map(String) : [];
      if (typeof result.relationship === "number" && result.relationship !== relationship) {
        p.print(
          `  ${o.red("♥")} ${o.dim(`Mira's regard for Aria: ${relationship} → ${result.relationship}`)}\n`,
        );
        relationship = result.relationship;
      }
      if (turn < LINES.length - 1 && options.length > 0) {
        p.print(`  ${o.dim(options.map((opt, i) => `${i + 1}) ${opt}`).join("   "))}\n`);
      }
      p.print("\n");
      p.pause(150);
      await p.flush();
    }
  }

  /** One `npc/talk`: Mira's line streams in through `npc/event`s (printed whole if it did not). */
  async #talk(line: string): Promise<JsonObject> {
    this.spinner.start("Mira is thinking");
    this.#lineOpen = false;
    this.#emotion = "";
    const result = await this.call("npc/talk", { npc: "mira", line, stream: true });
    this.spinner.stop();
    if (!this.#lineOpen) {
      this.#emotion = String(result.emotion ?? "");
      this.#openLine();
      this.#printer.type(String(result.line ?? ""));
    }
    this.#printer.print("\n");
    this.#lineOpen = false;
    return result;
  }

  /** Mira decides about the last room (`decision/decide` with her persona); returns the option's id. */
  async #decide(model: JsonValue): Promise<string> {
    const p = this.#printer;
    const o = this.#o;
    this.spinner.start("Mira decides");
    const snapshot = await this.call("world/snapshot", { world: "tavern" });
    const decision = await this.call("decision/decide", {
      actor: "mira",
      situation: `Aria asks for the last room on a storm night. A room costs ${ROOM_PRICE} gold.`,
      options: ROOM_OPTIONS,
      context: isJsonObject(snapshot.state) && isJsonObject(snapshot.state.player)
        ? snapshot.state.player
        : {},
      fallbackOptionID: "full_price",
      temperature: 0.3,
      model,
    });
    this.spinner.stop();
    const choice = String(decision.optionID);
    p.print(`${o.bold("Mira decides")} ${o.dim("(decision/decide)")}: ${o.bold(o.cyan(choice))}`);
    p.print(o.dim(` — ${decision.confidence}% sure${decision.isFallback === true ? ", fallback" : ""}\n`));
    if (typeof decision.reasoning === "string" && decision.reasoning !== "") {
      p.print(`  ${o.italic(`"${decision.reasoning}"`)}\n`);
    }
    return choice;
  }

  /** The engine applies the decision to the world; returns the closing sentence. */
  async #ending(choice: string): Promise<string> {
    if (choice === "full_price") {
      const have = await this.#gold();
      if (have < ROOM_PRICE) return "Aria cannot afford the room and curls up by the fire.";
      await this.call("world/set", { world: "tavern", path: "player.gold", value: have - ROOM_PRICE });
      await this.call("world/set", { world: "tavern", path: "tavern.rooms_left", value: 0 });
      return `Aria pays ${ROOM_PRICE} gold and sleeps dry tonight.`;
    }
    if (choice === "room_on_credit") {
      await this.call("world/set", { world: "tavern", path: "player.debt", value: ROOM_PRICE });
      return "Aria gets the room and owes Mira for it.";
    }
    if (choice === "free_room") return "Mira hands Aria the key with a wink. No charge.";
    return "Mira keeps the room; Aria sleeps on a bench by the fire.";
  }

  async #gold(): Promise<number> {
    const r = await this.call("world/get", { world: "tavern", path: "player.gold" });
    return typeof r.value === "number" ? r.value : 0;
  }

  /** The engine's side of Mira's client tools: the menu, and an order charged to Aria's gold. */
  async #toolCall(params: JsonObject): Promise<JsonValue> {
    const c = isJsonObject(params.call) ? params.call : {};
    const name = String(c.name);
    const argsOf = isJsonObject(c.arguments) ? c.arguments : {};
    let output: JsonValue;
    if (name === "check_menu") output = MENU;
    else if (name === "take_order") {
      const item = String(argsOf.item ?? "");
      const price = Object.hasOwn(MENU, item) ? MENU[item] as number : undefined;
      if (price === undefined) return { output: `'${item}' is not on the menu.`, isError: true };
      const have = await this.#gold();
      if (have < price) return { output: `Aria has only ${have} gold.`, isError: true };
      await this.call("world/set", { world: "tavern", path: "player.gold", value: have - price });
      output = { item, price, goldLeft: have - price };
    } else return { output: `Unknown tool '${name}'.`, isError: true };
    this.#printer.print(`  ${this.#o.dim("↳ engine:")} ${this.#o.dim(JSON.stringify(output))}\n`);
    return { output };
  }

  #notification(method: string, params: JsonObject): void {
    this.#protocol(`← ${method} ${JSON.stringify(params)}`);
    if (method === "world/changed") this.#worldChanged(params);
    else if (method === "npc/event" && isJsonObject(params.event)) this.#npcEvent(params.event);
  }

  #worldChanged(params: JsonObject): void {
    const o = this.#o;
    if (this.#lineOpen) this.#printer.print("\n");
    this.#lineOpen = false;
    this.#printer.print(
      `  ${o.yellow("◆")} ${o.dim("world")} ${params.path} ${JSON.stringify(params.oldValue)} → ${
        JSON.stringify(params.newValue)
      }\n`,
    );
  }

  #npcEvent(e: JsonObject): void {
    const p = this.#printer;
    const o = this.#o;
    switch (e.type) {
      case "emotion":
        this.#emotion = String(e.emotion);
        break;
      case "lineDelta":
        this.#openLine();
        p.type(String(e.delta ?? ""));
        break;
      case "lineReset":
        if (this.#lineOpen) p.print("\n");
        this.#lineOpen = false;
        this.#openLine();
        p.type(String(e.line ?? ""));
        break;
      case "toolCallStarted": {
        this.spinner.stop();
        if (this.#lineOpen) p.print("\n");
        this.#lineOpen = false;
        const c = isJsonObject(e.call) ? e.call : {};
        const who = e.execution === "local"
          ? o.dim(" (built-in memory tool)")
          : o.dim(" → tool/call to the engine");
        p.print(
          `  ${o.cyan("⚙")} ${o.bold(String(c.name))} ${o.dim(JSON.stringify(c.arguments ?? {}))}${who}\n`,
        );
        break;
      }
    }
  }

  #openLine(): void {
    if (this.#lineOpen) return;
    this.#lineOpen = true;
    this.spinner.stop();
    const o = this.#o;
    this.#printer.print(`${o.bold(o.magenta("Mira"))} ${o.cyan(`[${this.#emotion || "…"}]`)}${o.dim(":")} `);
  }

  #protocol(text: string): void {
    if (this.#showProtocol) Deno.stderr.writeSync(new TextEncoder().encode(this.#s.dim(`${text}\n`)));
  }
}
