/**
 * A method set of your own in TypeScript: the quest narrator of PROTOCOL.md §11 (`quest/create`,
 * `quest/narrate` streaming `quest/event`s and calling client tools, `quest/cancel`), served in-process next to
 * the standard methods and called through the typed client. docs/extending.md walks through it.
 *
 *   deno run examples/quest_extension.ts
 */
// deno-lint-ignore-file no-console
import {
  Agent,
  BridgeEngine,
  BridgeError,
  type BridgeExtension,
  DEFAULT_POLICY,
  type MethodRegistry,
  parseToolDefinitions,
  standardExtensions,
  WorkQueue,
} from "../engine.ts";
import { Bridge } from "../mod.ts";

/** What `quest/narrate` answers. */
export interface Narration {
  /** The quest's id. */
  quest: string;
  /** The narrator's text. */
  text: string;
  /** Names of the tools called, in completion order. */
  toolsUsed: string[];
  /** Unknown parameters ignored. */
  warnings: string[];
}

/** A quest: its narrator, and the queue its narrations run on, one at a time. */
interface Quest {
  agent: Agent;
  queue: WorkQueue;
}

/** The quest narrator: one agent per quest; narrations force a tool call first when the quest has tools. */
export class QuestMethods implements BridgeExtension {
  /** Listed in `initialize`'s `capabilities.notifications`. */
  readonly notificationMethods = ["quest/event"];
  readonly #quests = new Map<string, Quest>();

  register(registry: MethodRegistry): void {
    // A fast method returns its result: it runs in arrival order, before the next request is read.
    registry.register("quest/create", (ctx) => {
      const p = ctx.params;
      // Warnings for unknown keys, as the built-in methods give (a missing parameter's error names them too).
      const warnings = p.unknownKeys(["quest", "instructions", "tools", "model"]);
      const id = p.string("quest");
      const tools = p.has("tools")
        ? parseToolDefinitions(p.get("tools"), { path: "tools", defaultTimeoutMs: 60_000 }).tools
        : [];
      const model = ctx.createModel(ctx.parseModel(p.get("model")));
      const agent = new Agent({ model, instructions: p.optionalString("instructions") ?? null, tools });
      this.#quests.set(id, { agent, queue: new WorkQueue() });
      return { quest: id, warnings };
    });
    // A slow method does its order-sensitive part now (queue the turn) and returns the outcome of the work.
    registry.register("quest/narrate", (ctx) => {
      const p = ctx.params;
      const warnings = p.unknownKeys(["quest", "text", "stream"]);
      const id = p.string("quest");
      const quest = this.#quest(id);
      const text = p.string("text");
      const stream = p.optionalBool("stream") ?? false;
      const policy = {
        ...DEFAULT_POLICY,
        choice: quest.agent.tools.length > 0 ? "required" as const : "auto" as const,
      };
      // An agent runs one turn at a time: the queue runs them in arrival order. `op.signal` is aborted by
      // quest/cancel and at shutdown; the turn calls `op.commit()` right before it changes the history.
      return quest.queue.enqueue((op) =>
        ctx.drive(
          (sink) =>
            quest.agent.runTurn(
              { prompt: text, schema: null, policy, stream },
              sink,
              op.signal,
              () => op.commit(),
            ),
          { stream, context: { quest: id }, eventMethod: "quest/event" },
        ).then((result) => ({
          quest: id,
          text: result.text,
          toolsUsed: result.toolCalls.map((r) => r.call.name),
          warnings,
        }))
      ).outcome;
    });
    // Cancels the quest's running and waiting narrations: each is answered -32009.
    registry.register("quest/cancel", (ctx) => {
      const quest = this.#quest(ctx.params.string("quest"));
      return { cancelled: quest.queue.cancelAll() };
    });
  }

  #quest(id: string): Quest {
    const quest = this.#quests.get(id);
    if (!quest) throw new BridgeError(-32090, "quest_not_found", `No quest '${id}'.`, { quest: id });
    return quest;
  }

  shutdown(): void {
    for (const quest of this.#quests.values()) quest.queue.cancelAll();
    this.#quests.clear();
  }
}

if (import.meta.main) {
  await using bridge = await Bridge.open({
    engine: (send, onShutdown) =>
      new BridgeEngine({ extensions: [...standardExtensions(), new QuestMethods()], onShutdown }, send),
  });
  const look = bridge.tool({
    name: "look_around",
    description: "Describe what the player sees in a place.",
    parameters: { type: "object", properties: { where: { type: "string" } }, required: ["where"] },
  }, ({ where }) => where === "crypt" ? "cobwebs and an open coffin" : "nothing unusual");
  await bridge.request("quest/create", {
    quest: "crypt",
    instructions: "You narrate a dungeon crawl in two sentences.",
    tools: [look.definition],
    model: {
      type: "scripted",
      steps: [
        { toolCalls: [{ name: "look_around", arguments: { where: "crypt" } }] },
        { template: "You see {toolOutput}. Something stirs." },
      ],
    },
  });
  const narration = await bridge.request<Narration>("quest/narrate", {
    quest: "crypt",
    text: "I enter the crypt.",
    stream: true,
  }, {
    onNotification: (method, params) => console.log(`  ${method}: ${JSON.stringify(params.event)}`),
  });
  console.log(`${narration.text} (tools: ${narration.toolsUsed.join(", ")})`);
}
