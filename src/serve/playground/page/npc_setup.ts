/**
 * Setting up an NPC the bridge creates (Start, a restore, an Apply): its client tools registered with the
 * connection (each call goes to the conversation), its world created and followed in the State panel, and the
 * record of it running. Owns when the editor's tool renames and the answers kept for the NPC's tools start
 * again: once the bridge took the new tools, not before (a refused change leaves the NPC that ran with its own).
 * @module
 */
import { Npc } from "../../../client/npc.ts";
import { World } from "../../../client/world.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import type { Conversation } from "./conversation.ts";
import type { Link, ServerInfo } from "./link.ts";
import type { PersonaAnswers } from "./persona_answers.ts";
import { type Running, scriptedRun, toolSettings, type WorldParts } from "./running.ts";
import { jsonStepsHint, type ScriptedRun } from "./script_hint.ts";
import type { NowRunningParts } from "./state_files.ts";
import type { StatePanel } from "./state_panel.ts";
import type { Saved } from "./storage.ts";
import type { ToolRenames } from "./tool_renames.ts";
import type { WorldEdits } from "./world_edits.ts";
import { shownName } from "./turn_format.ts";

/** What setting up an NPC asks of the page. */
export interface NpcSetupHost {
  link: Link;
  saved: Saved;
  conversation: () => Conversation;
  state: () => StatePanel;
  /** The server's info (its model), or null when unknown. */
  info: () => ServerInfo | null;
  /** The designer's world edits still running (a world change they made is shown as theirs). */
  worldEdits: WorldEdits;
  /** Tools renamed in the editor since the running NPC took its tools. */
  renames: ToolRenames;
  /** The answers kept for the editor's persona's tools. */
  answers: () => PersonaAnswers;
  /** Makes `running` the NPC that runs now. */
  setRunning: (running: Running) => void;
}

/**
 * Sets up the NPCs the bridge creates.
 *
 * @example
 * ```ts ignore
 * const setup = new NpcSetup(host);
 * setup.registerTools(tools); // before npc/create
 * const name = setup.nowRunning(value, { connection, created, worldParts, tools, settings, model, label: "start" });
 * ```
 */
export class NpcSetup {
  readonly #host: NpcSetupHost;

  constructor(host: NpcSetupHost) {
    this.#host = host;
  }

  /**
   * Registers the client tools with the connection: each call goes to the conversation. (Before the NPC that
   * calls them is created: {@link NpcSetup.tookTools} once it is.)
   */
  registerTools(definitions: JsonObject[]): void {
    const connection = this.#host.link.require();
    for (const def of definitions) {
      if (typeof def.name !== "string") continue;
      // (The connection runs the handler of the tool the call names: `ctx.call` has the name and arguments.)
      connection.tools.add(
        { ...def } as never,
        (_args, ctx) => this.#host.conversation().handleTool(ctx),
      );
    }
  }

  /**
   * The running NPC took the tools `definitions` (the bridge created it with them): it calls them by their
   * names now, and an answer kept for a tool it no longer has would never be asked for. Not before the bridge
   * took them: after a refused start, restore or Apply the NPC that ran runs on (or is put back) with its tools,
   * their renames in the editor and the answers kept for them.
   */
  tookTools(definitions: JsonObject[]): void {
    this.#host.renames.reset();
    this.#host.answers().prune(definitions);
  }

  /** Creates world `id` from `seed`, shows it in the State panel and follows its changes there. */
  async openWorld(id: string, seed: JsonObject): Promise<WorldParts> {
    const host = this.#host;
    const connection = host.link.require();
    const created = await connection.request<{ world: string }>("world/create", { world: id, state: seed });
    const world = new World(connection, created.world);
    const subscription = await world.subscribe("", (change) => {
      host.state().world.change(change, host.worldEdits.changedBy(change.path, host.conversation().busy));
    });
    host.state().world.show(created.world, await world.snapshot());
    return { world, subscription };
  }

  /**
   * Records the NPC the bridge just created (from the editor's persona or a saved state, `from`) as the one
   * running, and starts its relationship history (`label`: how it begins); returns its name.
   */
  nowRunning(from: JsonObject, parts: NowRunningParts & { label: "start" | "restored" }): string {
    const host = this.#host;
    const { connection, created, worldParts, settings, model, label } = parts;
    this.tookTools(parts.tools);
    const persona = isJsonObject(from.persona) ? from.persona : {};
    const name = typeof persona.name === "string" ? shownName(persona.name) : created.npc;
    host.setRunning({
      // (The handle knows its model: an NPC put back after a refused Apply runs on it again.)
      npc: new Npc(connection, created.npc, {
        tools: created.tools,
        warnings: created.warnings,
        model: model as never,
      }),
      name,
      world: worldParts?.world ?? null,
      subscription: worldParts?.subscription ?? null,
      generation: host.link.generation,
      scripted: this.scriptedRun(name, from.options),
      settings,
      worldSeed: label === "start" ? worldSeedOf(from) : null,
      model,
      ...toolSettings(from.options, parts.tools),
    });
    // The last state seen is this NPC's from now on: the way back to an NPC that went is offered again when
    // this one goes with the connection.
    host.state().offerLast(null);
    const memory = isJsonObject(from.memory) ? from.memory : {};
    host.state().resetHistory(
      typeof memory.relationship === "number" ? Math.round(memory.relationship) : 0,
      label,
    );
    return name;
  }

  /** The script an NPC started now plays (the Model tab's, or the bridge's `--script`), or null. */
  scriptedRun(name: string, options: JsonValue | undefined): ScriptedRun | null {
    return scriptedRun({ name, options, useScript: this.#host.saved.useScript, info: this.#host.info() });
  }

  /**
   * The warning for an NPC `name` (persona file `value`, created with `model`) on the Model tab's script that
   * does not fit it, or null.
   */
  unfitScript(
    value: JsonObject,
    { name, model }: { name: string; model: JsonValue | undefined },
  ): string | null {
    if (!this.#host.saved.useScript) return null;
    const options = isJsonObject(value.options) ? value.options : {};
    return jsonStepsHint({ name, replyFormat: options.replyFormat, model });
  }
}

/**
 * The initial world of a persona document's `value` as JSON text ("null": none), to compare with another.
 *
 * @example
 * ```ts ignore
 * worldSeedOf({ world: { inn: { open: true } } }); // '{"inn":{"open":true}}'
 * worldSeedOf({}); // "null"
 * ```
 */
export function worldSeedOf(value: JsonObject): string {
  return JSON.stringify(isJsonObject(value.world) ? value.world : null);
}
