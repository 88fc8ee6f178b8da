/**
 * Chat-template tool-call markup in text a server could not parse into a tool call: llama.cpp's server answers
 * a tool call the token limit cut before its name was complete with the template's markup as plain content
 * (`<tool_call>\n{"name` for Qwen and Hermes templates); streamed, it holds that text back and sends nothing.
 * The markup is the model's internal syntax, never an answer.
 * @module
 */

/** Opening markers of tool calls in common chat templates. */
const MARKERS = [
  "<tool_call>", // Qwen 2.5/3, Hermes
  "<|tool_call|>", // Granite
  "<tool_calls>",
  "[TOOL_CALLS]", // Mistral
  "<|python_tag|>", // Llama 3.x
  "<function=", // Functionary, Llama 3.x, Qwen3-Coder
  "<｜tool▁calls▁begin｜>", // DeepSeek
  "<|tool_calls_section_begin|>", // Kimi K2
  "<|START_ACTION|>", // Command R7B
];

/**
 * `text` without a cut tool call at its end: from the first tool-call marker on, or a trailing start of one
 * (`<tool_ca`), is removed. For text the token limit cut off in a step that offered tools.
 *
 * @example
 * ```ts
 * import { withoutCutToolMarkup } from "./tool_markup.ts";
 * withoutCutToolMarkup('Let me look.\n<tool_call>\n{"name'); // "Let me look.\n"
 * withoutCutToolMarkup("<tool_ca"); // ""
 * withoutCutToolMarkup("It is <"); // "It is "
 * withoutCutToolMarkup("Oslo is < 5"); // "Oslo is < 5"
 * ```
 */
export function withoutCutToolMarkup(text: string): string {
  let end = text.length;
  for (const marker of MARKERS) {
    const at = text.indexOf(marker);
    if (at !== -1 && at < end) end = at;
  }
  if (end < text.length) return text.slice(0, end);
  // A marker the limit cut inside: the text ends with its start (`<tool_ca`, or only its `<`: the token after it
  // was cut anyway).
  for (const marker of MARKERS) {
    for (let n = Math.min(marker.length - 1, text.length); n >= 1; n--) {
      if (text.endsWith(marker.slice(0, n))) {
        end = Math.min(end, text.length - n);
        break;
      }
    }
  }
  return text.slice(0, end);
}
