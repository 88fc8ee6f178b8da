/**
 * Grammar text for what node-llama-cpp's JSON-schema grammar cannot express. The schema node-llama-cpp
 * compiles holds a placeholder string `const` in place of each such node (a numeric range, an object or array
 * literal; see `responseGrammarPlan` in `llama_schema.ts`); node-llama-cpp writes each as the GBNF literal
 * `"\"placeholder\""`, which is replaced here by the node's own rule (`src/schema/grammar_numbers.ts`).
 * @module
 */

/**
 * The GBNF literal node-llama-cpp writes for the string const `placeholder` (a placeholder holds letters,
 * digits and `-` only: nothing it escapes).
 *
 * @example
 * ```ts
 * import { placeholderGbnf } from "./llama_grammar.ts";
 * placeholderGbnf("oam-rule-0"); // '"\\"oam-rule-0\\""'
 * ```
 */
export function placeholderGbnf(placeholder: string): string {
  return `"\\"${placeholder}\\""`;
}

/**
 * `text` (node-llama-cpp's GBNF for a schema holding the placeholders) with each placeholder's literal
 * replaced by its rule (`rules`: placeholder → GBNF expression); undefined when none is in the text (the
 * caller then uses node-llama-cpp's grammar of the schema without placeholders). A placeholder missing from
 * the text stood for a node the grammar never reaches.
 *
 * @example
 * ```ts
 * import { grammarWithRules } from "./llama_grammar.ts";
 * grammarWithRules('root ::= val0\nval0 ::= "\\"oam-rule-0\\""', new Map([["oam-rule-0", '[1-6]']]));
 * // 'root ::= val0\nval0 ::= ( [1-6] )'
 * ```
 */
export function grammarWithRules(text: string, rules: ReadonlyMap<string, string>): string | undefined {
  let out = text;
  let replaced = 0;
  for (const [placeholder, rule] of rules) {
    const literal = placeholderGbnf(placeholder);
    if (!out.includes(literal)) continue;
    out = out.replaceAll(literal, `( ${rule} )`);
    replaced++;
  }
  return replaced === 0 ? undefined : out;
}
