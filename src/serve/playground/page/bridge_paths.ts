/**
 * The keys a bridge's message names, as the editor has them: the paths it is about (a field of the editor is
 * marked with it), and a restore's or an Apply's `'state.…'` keys named as the editor names them. No DOM here:
 * the unit tests import it.
 * @module
 */

/**
 * The bridge paths a message names (`'options.playerOptionCount'`, `tools[1].name`, `model.steps[0]`): paths
 * that start there, not ones inside a longer path (`'state.options.x'` names the state's key, not the editor's),
 * nor a file's name (`options.json`, `models/my-model.gguf`: a file's extension is no key of the editor), nor
 * a section's bare name unless quoted (`'model'` is the Model tab; "the model is not available" is prose).
 *
 * @example
 * ```ts ignore
 * pathsIn("'options.maxToolRounds' must be an integer."); // ["options.maxToolRounds"]
 * pathsIn("'state.options.maxToolRounds' must be an integer."); // []
 * pathsIn("Could not read options.json."); // []
 * ```
 */
export function pathsIn(message: string): string[] {
  return [
    ...message.matchAll(
      /(?<![\w.\]/\\-])(file|persona|options|memory|tools\[\d+\]|model)(?!\.(?:jsonc?|json5|gguf|txt|md|log)\b)(\.[A-Za-z_]+|\[\d+\])?(?![\w-])/g,
    ),
  ].filter((m) => m[2] !== undefined || m[1].startsWith("tools") || quoted(message, m.index, m[0].length))
    .map((m) => m[0]);
}

/** A bare section name (`model`, `file`) is a path only quoted (`'model'`): in prose it is a word. */
function quoted(message: string, index: number, length: number): boolean {
  const before = message[index - 1];
  return (before === "'" || before === '"' || before === "`") && message[index + length] === before;
}

/**
 * A message of the bridge about the state a restore or an Apply sent, with the keys it names under `state.`
 * named as the persona file and the editor name them: `'state.options.x'` becomes `'options.x'` (the designer
 * never wrote `state.`). Other paths (`'state.transcript'`, which only a state file has) stay as they are.
 *
 * @example
 * ```ts ignore
 * asEditorNames("Unknown parameter 'state.options.mood' was ignored.");
 * // "Unknown parameter 'options.mood' was ignored."
 * ```
 */
export function asEditorNames(message: string): string {
  return message.replace(/'state\.(persona|options|tools|memory)\b/g, "'$1");
}
