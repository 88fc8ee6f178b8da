/**
 * Composing the tools an NPC's model sees — client tools, then world tools, then memory tools — and
 * checking the options that name tools.
 * @module
 */
import { BridgeError } from "../../protocol/errors.ts";
import { convertSchema, toolArgumentsTypeName } from "../../schema/mod.ts";
import type { AgentTool } from "../../agent/types.ts";
import type { Script } from "../../models/scripted.ts";
import { type WorldState, type WorldTool, worldTools } from "../world/mod.ts";
import { type MemoryToolHost, memoryTools } from "./memory_tools.ts";
import type { NpcOptions } from "./npc_options.ts";

/** Names of the built-in NPC tools. */
export const BUILT_IN_TOOLS = [
  "read_world_state",
  "update_world_state",
  "remember_fact",
  "change_relationship",
];

/** The option that turns each built-in tool on. */
const BUILT_IN_OPTION: Record<string, string> = {
  read_world_state: "worldReadable",
  update_world_state: "worldWritable",
  remember_fact: "memoryTools",
  change_relationship: "memoryTools",
};

/**
 * How a designer turns on the built-in tool `name` (null for any other name), for messages about a tool the NPC
 * lacks. `at` is where its options came from (`options`, `state.options`).
 *
 * @example
 * ```ts
 * import { builtInToolHint } from "./npc_tools.ts";
 * builtInToolHint("update_world_state", "options");
 * // "The built-in 'update_world_state' is on when the NPC has a 'world' and 'options.worldWritable' names paths."
 * ```
 */
export function builtInToolHint(name: string, at: string): string | null {
  const option = Object.hasOwn(BUILT_IN_OPTION, name) ? BUILT_IN_OPTION[name] : undefined;
  if (option === undefined) return null;
  if (option === "memoryTools") {
    const member = name === "remember_fact" ? "rememberFact" : "changeRelationship";
    return `The built-in '${name}' is on when '${at}.memoryTools' names "${member}" (or is "all").`;
  }
  return `The built-in '${name}' is on when the NPC has a 'world' and '${at}.${option}' names paths.`;
}

/**
 * Warnings for a scripted model whose steps (or fallback) call a built-in tool the NPC does not have: such a
 * call only gets "There is no tool named …" as its output when the turn runs. One warning per tool, in the
 * order the script first calls it; client tools are left alone (the game may add them with `npc/update`).
 *
 * @example
 * ```ts
 * import { scriptToolWarnings } from "./npc_tools.ts";
 * const script = { steps: [{ toolCalls: [{ name: "update_world_state", arguments: {} }] }] };
 * scriptToolWarnings(script, { toolNames: ["read_world_state"], optionsPath: "options" }).length; // 1
 * ```
 */
export function scriptToolWarnings(
  script: Script,
  npc: { toolNames: readonly string[]; optionsPath: string },
): string[] {
  const warned = new Set<string>();
  const warnings: string[] = [];
  for (const step of script.fallback === undefined ? script.steps : [...script.steps, script.fallback]) {
    if (!("toolCalls" in step)) continue;
    for (const { name } of step.toolCalls) {
      if (warned.has(name) || npc.toolNames.includes(name)) continue;
      const hint = builtInToolHint(name, npc.optionsPath);
      if (hint === null) continue;
      warned.add(name);
      warnings.push(`The script calls '${name}', which this NPC does not have. ${hint}`);
    }
  }
  return warnings;
}

/**
 * Wraps a world tool as a local agent tool. Its description is read once, here: the read tool names the
 * world's top-level keys as they are when the NPC's tools are composed (create, restore, an update of tools
 * or options), and does not follow later changes, so the tool list the model sees stays the same turn after
 * turn (a changed description would change the start of every prompt).
 */
export function worldAgentTool(tool: WorldTool): AgentTool {
  const generationSchema = convertSchema(tool.parameters, toolArgumentsTypeName(tool.name)).generationSchema;
  return {
    name: tool.name,
    description: tool.description,
    jsonSchema: tool.parameters,
    generationSchema,
    execution: "local",
    timeoutMs: null,
    run: (args) => {
      const result = tool.run(args);
      return { output: result.output, isError: result.isError };
    },
  };
}

/**
 * Every tool the model sees, in order: `clientTools`, world tools (`worldReadable`/`worldWritable`, only with
 * a world), memory tools. Throws -32602 for a client tool named like a built-in one (naming the client tool
 * at `npc.toolsPath`, or, when that is null, the option turning the built-in one on), a `groundingTool` or
 * `toolChoice` naming a missing tool (the message names the option at `npc.optionsPath`).
 */
export function composeTools(
  clientTools: AgentTool[],
  npc: {
    world: WorldState | null;
    options: NpcOptions;
    host: MemoryToolHost;
    /** Where the options came from, for error messages (default `options`; a save's are `state.options`). */
    optionsPath?: string;
    /**
     * Where the client tools came from, for error messages (default `tools`; a save's are `state.tools`);
     * null when they are the NPC's own, not sent with this request (an `npc/update` of options only).
     */
    toolsPath?: string | null;
  },
): AgentTool[] {
  const { world, options, host } = npc;
  const at = npc.optionsPath ?? "options";
  const builtIn: AgentTool[] = [];
  if (world) {
    for (const t of worldTools(world, { readable: options.worldReadable, writable: options.worldWritable })) {
      builtIn.push(worldAgentTool(t));
    }
  }
  builtIn.push(...memoryTools(options.memoryTools, { host, maxChange: options.maxRelationshipChange }));
  for (const t of builtIn) {
    const index = clientTools.findIndex((c) => c.name === t.name);
    if (index >= 0 && npc.toolsPath === null) {
      throw BridgeError.invalidParams(
        `'${at}.${
          BUILT_IN_OPTION[t.name]
        }' cannot turn on the built-in tool '${t.name}': the NPC already has ` +
          `a client tool of that name (its tools[${index}]); send 'tools' without it in the same npc/update.`,
      );
    }
    if (index >= 0) {
      const tools = npc.toolsPath ?? "tools";
      throw BridgeError.invalidParams(
        `'${tools}[${index}].name' must not be '${t.name}': the built-in world and memory ` +
          "tools use read_world_state, update_world_state, remember_fact and change_relationship.",
      );
    }
  }
  const all = [...clientTools, ...builtIn];
  const names = all.map((t) => t.name);
  if (options.groundingTool !== null && !names.includes(options.groundingTool)) {
    throw BridgeError.invalidParams(
      `'${at}.groundingTool' names '${options.groundingTool}', which is not one of the NPC's tools: ${
        names.length === 0 ? "(none)" : names.join(", ")
      }. ${
        builtInToolHint(options.groundingTool, at) ??
          `Give the NPC a client tool named '${options.groundingTool}' in 'tools', or name one of those.`
      }`,
    );
  }
  const choice = options.toolChoice;
  if (typeof choice === "object" && !names.includes(choice.tool)) {
    throw BridgeError.invalidParams(`'${at}.toolChoice' names unknown tool '${choice.tool}'.`);
  }
  return all;
}
