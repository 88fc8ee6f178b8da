/**
 * The NPC running on the bridge now, as the page keeps it: its client handles, its name, and the settings
 * the conversation asks about (tool timeouts, tool descriptions, the script it plays). Owns the
 * {@link Running} record and how its tool settings and script are read from a persona's options and tools.
 * @module
 */
import type { Npc } from "../../../client/npc.ts";
import type { Subscription, World } from "../../../client/world.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import type { ServerInfo } from "./link.ts";
import type { ScriptedRun } from "./script_hint.ts";

/** What runs on the bridge now. */
export interface Running {
  npc: Npc;
  name: string;
  world: World | null;
  subscription: Subscription | null;
  /** Tool timeouts in seconds by name (null: none), and the NPC's default. */
  timeouts: Map<string, number | null>;
  defaultTimeout: number | null;
  /** Tool descriptions by name (shown in a call's empty answer box). */
  descriptions: Map<string, string>;
  generation: number;
  /** The script the NPC plays (the Model tab's or the bridge's), or null: it runs on a real model. */
  scripted: ScriptedRun | null;
  /**
   * The `settingsKey` of what it was started or applied with (the editor says when it differs), or null when
   * unknown: a restored NPC runs on the saved persona, options and tools, which the bridge wrote out in full.
   */
  settings: string | null;
  /**
   * The initial world (as JSON text, "null": none) it was started with, or null when unknown (a restored NPC
   * runs on its saved world): Apply keeps the live world, and says so when the World tab's differs.
   */
  worldSeed: string | null;
  /**
   * The `model` param it was created (or last applied) with, undefined for the bridge's: a Start or a restore
   * the bridge refuses puts it back on the model it ran on, not on the one the editor has now.
   */
  model: JsonValue | undefined;
}

/** A world the page created for the NPC, with its subscription to the world's changes. */
export interface WorldParts {
  world: World;
  subscription: Subscription;
}

function seconds(value: JsonValue | undefined, fallback: number | null): number | null {
  if (typeof value !== "number") return fallback;
  return value === 0 ? null : value;
}

/**
 * The running NPC's tool timeouts (its own, and the NPC's default) and tool descriptions, by tool name.
 *
 * @example
 * ```ts ignore
 * toolSettings({ toolTimeoutSeconds: 30 }, [{ name: "give", timeoutSeconds: 0 }]);
 * // { defaultTimeout: 30, timeouts: Map { "give" => null }, descriptions: Map {} }
 * ```
 */
export function toolSettings(
  options: JsonValue | undefined,
  tools: JsonObject[],
): Pick<Running, "timeouts" | "defaultTimeout" | "descriptions"> {
  const o = isJsonObject(options) ? options : {};
  const defaultTimeout = seconds(o.toolTimeoutSeconds, 120);
  const timeouts = new Map<string, number | null>();
  const descriptions = new Map<string, string>();
  for (const tool of tools) {
    if (typeof tool.name === "string" && typeof tool.description === "string") {
      descriptions.set(tool.name, tool.description);
    }
    if (typeof tool.name === "string" && typeof tool.timeoutSeconds === "number") {
      timeouts.set(tool.name, seconds(tool.timeoutSeconds, defaultTimeout));
    }
  }
  return { timeouts, defaultTimeout, descriptions };
}

/** What {@link scriptedRun} reads. */
export interface ScriptedRunOptions {
  /** The NPC's name. */
  name: string;
  /** The persona's `options` (its `replyFormat`). */
  options: JsonValue | undefined;
  /** The Model tab's "use the script" choice. */
  useScript: boolean;
  /** The server's info (its model), or null when unknown. */
  info: ServerInfo | null;
}

/**
 * The script an NPC started now plays (the Model tab's, or the bridge's `--script`), or null.
 *
 * @example
 * ```ts ignore
 * scriptedRun({ name: "Mira", options: {}, useScript: true, info: null });
 * // { name: "Mira", replyFormat: undefined, bridgeLabel: null }
 * ```
 */
export function scriptedRun({ name, options, useScript, info }: ScriptedRunOptions): ScriptedRun | null {
  const replyFormat = isJsonObject(options) ? options.replyFormat : undefined;
  if (useScript) return { name, replyFormat, bridgeLabel: null };
  const model = info?.model;
  return model?.name === "scripted" ? { name, replyFormat, bridgeLabel: model.label } : null;
}
