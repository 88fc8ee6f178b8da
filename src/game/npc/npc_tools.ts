/**
 * Composing the tools an NPC's model sees — client tools, then world tools, then memory tools — and
 * checking the options that name tools.
 * @module
 */
import { BridgeError } from "../../protocol/errors.ts";
import { convertSchema, toolArgumentsTypeName } from "../../schema/mod.ts";
import type { AgentTool } from "../../agent/types.ts";
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
      }. Give the NPC a client tool named '${options.groundingTool}' in 'tools', or name one of those.`,
    );
  }
  const choice = options.toolChoice;
  if (typeof choice === "object" && !names.includes(choice.tool)) {
    throw BridgeError.invalidParams(`'${at}.toolChoice' names unknown tool '${choice.tool}'.`);
  }
  return all;
}
