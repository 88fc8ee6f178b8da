/**
 * What the page adds to a turn that failed because a script's reply step does not fit the NPC: a script is
 * written for one persona (`personas/shopkeeper.steps.json` for `personas/shopkeeper.jsonc`, which replies
 * in text), and the page's sample persona replies in JSON; to a bark that played a turn's json step (the
 * sample script's steps are all for turns); and to a turn the bridge's model could not answer (the page's
 * script runs anyway). Pure: no DOM.
 * @module
 */
import type { BridgeError } from "../../../protocol/errors.ts";
import { isJsonObject, type JsonValue } from "../../../protocol/json.ts";

/** The scripted model a running NPC plays. */
export interface ScriptedRun {
  /** The NPC's display name. */
  name: string;
  /** The NPC's `replyFormat` option as given (not a string: the default, `"automatic"`). */
  replyFormat: unknown;
  /**
   * The bridge's model, as the server labels it (`scripted (personas/shopkeeper.steps.json)`), or null when
   * the NPC plays the Model tab's script.
   */
  bridgeLabel: string | null;
}

/** The script file in the bridge's label (`--script <file>` or `OAM_SCRIPT=<file>`), or null. */
export function scriptFileOf(label: string): string | null {
  const file = /^scripted \((?:OAM_SCRIPT=)?(.+)\)$/.exec(label)?.[1];
  return file && /\.json[c5]?$/i.test(file) ? file : null;
}

/** Where the bridge's own advice about a text step starts in an invalid answer's message (`npc/talk`). */
const BRIDGE_TEXT_STEP_HINT = " A text step played where the NPC replies in JSON";

/**
 * `message` without the bridge's advice about a text step (in the wire's terms: `options.replyFormat`), for a
 * turn the page gives its own hint (in the page's: Options → Reply format), so it is said once.
 *
 * @example
 * ```ts
 * import { withoutBridgeHint } from "./script_hint.ts";
 * withoutBridgeHint("… not valid JSON: Hi. A text step played where the NPC replies in JSON (…).");
 * // "… not valid JSON: Hi."
 * ```
 */
export function withoutBridgeHint(message: string): string {
  const at = message.indexOf(BRIDGE_TEXT_STEP_HINT);
  return at === -1 ? message : message.slice(0, at);
}

/**
 * Why a turn of a scripted NPC failed with an invalid answer (`-32012` with `data.problem`), and what to do;
 * null for any other failure, or an NPC that does not play a script (`run` null).
 */
export function scriptHint(error: BridgeError, run: ScriptedRun | null): string | null {
  if (run === null || error.dataCode !== "generation_failed") return null;
  const data = error.data as { problem?: unknown } | undefined;
  if (typeof data?.problem !== "string") return null;
  const format = typeof run.replyFormat === "string" ? run.replyFormat : "automatic";
  const parts = [
    data.problem.startsWith("the answer is not valid JSON") && format !== "text"
      ? `A text step played where ${run.name} answers in JSON (reply format “${format}”): set Options → ` +
        "Reply format to “text”, or make the step a json step."
      : `A reply step of the script does not fit ${run.name} (docs/scripting.md, “The reply step”).`,
  ];
  if (run.bridgeLabel !== null) {
    const file = scriptFileOf(run.bridgeLabel);
    const persona = file?.replace(/\.steps\.json[c5]?$/i, ".jsonc");
    parts.push(
      `The bridge's model plays ${file ?? "a script"}, written for its own persona` +
        (persona && persona !== file ? ` (likely ${persona})` : "") +
        ": load that one (Load file…), or run this persona on the Model tab's script.",
    );
  }
  return parts.join(" ");
}

/**
 * What to add to a bark of a scripted NPC whose line is a JSON object: the bark played the script's next
 * step, a json reply step written for a turn (a bark takes a text step, PROTOCOL.md §10), and the bridge gave
 * its text back as the line. Null for any other line, or an NPC that does not play a script (`run` null).
 */
export function barkHint(line: string, run: ScriptedRun | null): string | null {
  if (run === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return null;
  const file = run.bridgeLabel === null ? null : scriptFileOf(run.bridgeLabel);
  const script = run.bridgeLabel === null
    ? "the Model tab's script"
    : `the script the bridge plays${file === null ? "" : ` (${file})`}`;
  return "This bark played the script's next step, a json reply written for a turn (that reply is used up): " +
    `a bark takes a text step, e.g. {"text": "Rain again."}. Put one in ${script} where the bark comes.`;
}

/**
 * What to add to a turn that failed because the bridge's model cannot answer (`model_unavailable`: an
 * unreachable server, the on-device model not ready): where the page says why, and the way round it, the page's
 * script. Null for any other failure, or an NPC that plays a script (`run` not null).
 */
export function unavailableHint(error: BridgeError, run: ScriptedRun | null): string | null {
  if (run !== null || error.dataCode !== "model_unavailable") return null;
  return "The bridge's model cannot answer (the Model pill at the top says why): start it, or run this NPC " +
    "on the page's script (Model tab → The page's script, then Start NPC).";
}

/**
 * A warning for a Start on the Model tab's script (`model`) of an NPC that replies in text (`replyFormat`
 * "text") when the script answers with json steps (the sample's): the bridge says nothing, and the NPC says
 * each step's JSON as its line. Null otherwise.
 *
 * @example
 * ```ts ignore
 * jsonStepsHint({ name: "Ada", replyFormat: "text", model: { type: "scripted", steps: [{ json: {} }] } });
 * // "The Model tab's script answers with json steps, but Ada replies in text (…)…"
 * ```
 */
export function jsonStepsHint(
  { name, replyFormat, model }: { name: string; replyFormat: unknown; model: JsonValue | undefined },
): string | null {
  if (replyFormat !== "text" || !isJsonObject(model) || !Array.isArray(model.steps)) return null;
  if (!model.steps.some((step) => isJsonObject(step) && step.json !== undefined)) return null;
  return `The Model tab's script answers with json steps, but ${name} replies in text (Options → Reply ` +
    "format): each would be said as it is, JSON and all. Load the persona's own script with Load file… " +
    "(personas/shopkeeper.steps.json for personas/shopkeeper.jsonc), or write text steps " +
    '({"text": "[happy] Welcome!"}).';
}
