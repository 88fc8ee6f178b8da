/**
 * Small renderers shared by the interactive commands: tool calls, tool outputs, usage and answers typed by
 * the user for client tools.
 * @module
 */
import { compactJson, isJsonObject, type JsonValue } from "../protocol/json.ts";
import type { ToolAnswer } from "./command_tools.ts";
import { outputValue } from "./command_tools.ts";
import { oneLine, type Style } from "./tty.ts";

/** `name {"arg":1}` on one line. */
export function formatCall(call: JsonValue, style: Style): string {
  if (!isJsonObject(call)) return "";
  const name = typeof call.name === "string" ? call.name : "?";
  const args = isJsonObject(call.arguments) ? compactJson(call.arguments) : "{}";
  return `${style.bold(name)} ${style.dim(oneLine(args, 160))}`;
}

/** A tool output on one line (errors marked). */
export function formatOutput(outcome: { output: JsonValue; isError: boolean }, style: Style): string {
  const { output, isError } = outcome;
  const text = typeof output === "string" ? output : compactJson(output);
  const shown = oneLine(text, 160);
  return isError ? style.red(`error: ${shown}`) : style.dim(shown);
}

/** Usage as "in 12 · out 5 · total 17 tokens". */
export function formatUsage(usage: JsonValue): string {
  if (!isJsonObject(usage)) return "no usage reported";
  const n = (k: string) => typeof usage[k] === "number" ? usage[k] as number : 0;
  return `in ${n("inputTokens")} · out ${n("outputTokens")} · total ${n("totalTokens")} tokens`;
}

/**
 * Turns a line the user typed as a tool's answer into an outcome: `/error <message>` is an error output,
 * JSON objects and arrays are sent as JSON, anything else as text.
 */
export function typedAnswer(line: string): ToolAnswer {
  const trimmed = line.trim();
  if (trimmed === "/error" || trimmed.startsWith("/error ")) {
    return { output: trimmed.slice(6).trim() || "The tool failed.", isError: true };
  }
  return { output: outputValue(line), isError: false };
}
