/**
 * The generation flags of `oam chat` and `oam respond`: `--temperature`, `--max-tokens` and `-g/--greedy`, as
 * session options.
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import { boolFlag, intFlag, numberFlag, type ParsedFlags } from "./args.ts";
import { CliError } from "./cli_error.ts";

/**
 * The session options (`temperature`, `maxResponseTokens`, `sampling`) of the generation flags. `-g` with
 * `--temperature` is a usage error: greedy sampling takes the likeliest token whatever the temperature, so
 * one of the two flags would be ignored without a word.
 *
 * @example
 * ```ts
 * import { generationFlags } from "./generation_flags.ts";
 * generationFlags({ temperature: "0.7", "max-tokens": "200" }); // { temperature: 0.7, maxResponseTokens: 200 }
 * generationFlags({ greedy: true }); // { sampling: "greedy" }
 * ```
 */
export function generationFlags(values: ParsedFlags["values"]): JsonObject {
  const options: JsonObject = {};
  const temperature = numberFlag(values, { name: "temperature", min: 0, max: 2 });
  const greedy = boolFlag(values, "greedy");
  if (greedy && temperature !== undefined) {
    throw CliError.usage(
      "-g/--greedy and --temperature do not go together: greedy sampling always takes the likeliest token, " +
        "so a temperature would be ignored. Give one of them.",
    );
  }
  if (temperature !== undefined) options.temperature = temperature;
  const maxTokens = intFlag(values, { name: "max-tokens", min: 1 });
  if (maxTokens !== undefined) options.maxResponseTokens = maxTokens;
  if (greedy) options.sampling = "greedy";
  return options;
}
