/**
 * How the commands word what is wrong in a script file (`--script steps.json`, `OAM_SCRIPT=steps.json`): the
 * way `loadPersona` words a steps file (steps counted from 1, a key by its name in the step), not with the
 * bridge's paths (`model.steps[0].delay`), which name a parameter the designer never wrote. The bridge's own
 * warnings (`session/create`'s `warnings`) keep its paths.
 * @module
 */
import { isJsonObject, type JsonValue } from "../protocol/json.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { idleStepMembers, knownStepMembers } from "../protocol/script_keys.ts";

/** The members of a script object; any other is ignored. */
const SCRIPT_KEYS: readonly string[] = ["type", "steps", "fallback"];

function ignored(where: string, member: string, meant: string | undefined): string {
  return `${where}unknown key '${member}' was ignored${didYouMean(meant)}.`;
}

/**
 * The members of script file `value` that nothing reads, one warning each in the order of the keys: "step 1:
 * unknown key 'delay' was ignored (did you mean 'delayMs'?).", "fallback: …", "unknown key 'fallbak' …", and
 * the members its kind of step does not read: "step 2: 'chunks' has no effect: only a 'text' step streams …".
 *
 * @example
 * ```ts
 * import { scriptFileWarnings } from "./script_file_messages.ts";
 * scriptFileWarnings([{ text: "Hi", delay: 500 }]);
 * // ["step 1: unknown key 'delay' was ignored (did you mean 'delayMs'?)."]
 * ```
 */
export function scriptFileWarnings(value: JsonValue): string[] {
  const warnings: string[] = [];
  const steps = (list: JsonValue[]) =>
    list.forEach((step, i) => {
      if (!isJsonObject(step)) return;
      for (const { member, meant } of knownStepMembers(step).unknown) {
        warnings.push(ignored(`step ${i + 1}: `, member, meant));
      }
      for (const { member, why } of idleStepMembers(step)) {
        warnings.push(`step ${i + 1}: '${member}' has no effect: ${why}.`);
      }
    });
  if (Array.isArray(value)) {
    steps(value);
    return warnings;
  }
  if (!isJsonObject(value)) return warnings;
  for (const [key, member] of Object.entries(value)) {
    if (key === "steps" && Array.isArray(member)) steps(member);
    else if (key === "fallback" && isJsonObject(member)) {
      for (const unknown of knownStepMembers(member).unknown) {
        warnings.push(ignored("fallback: ", unknown.member, unknown.meant));
      }
      for (const idle of idleStepMembers(member)) {
        warnings.push(`fallback: '${idle.member}' has no effect: ${idle.why}.`);
      }
    } else if (!SCRIPT_KEYS.includes(key)) warnings.push(ignored("", key, nearestName(key, SCRIPT_KEYS)));
  }
  return warnings;
}

/**
 * `message` (a problem the scripted model found in the script it was given as `root`) with its paths worded
 * for the file: `'<root>[1]' must contain …` → `step 2 must contain …`, `'<root>.steps[0].toolCalls[0].name'
 * must be …` → `step 1: 'toolCalls[0].name' must be …`, `'<root>.fallback.text'` → `fallback: 'text'`.
 *
 * @example
 * ```ts
 * import { scriptFileProblem } from "./script_file_messages.ts";
 * scriptFileProblem("'--script.steps[0].text' must be a string.", "--script");
 * // "step 1: 'text' must be a string."
 * ```
 */
export function scriptFileProblem(message: string, root: string): string {
  const escaped = root.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const path = new RegExp(`^'${escaped}((?:\\.steps)?\\[(\\d+)\\]|\\.fallback)?(?:\\.)?([^']*)'`);
  return message.replace(path, (_all, head: string | undefined, index: string | undefined, rest: string) => {
    const where = index !== undefined ? `step ${Number(index) + 1}` : head ? "fallback" : "";
    if (rest === "") return where === "" ? "the script" : where;
    return where === "" ? `'${rest}'` : `${where}: '${rest}'`;
  });
}
