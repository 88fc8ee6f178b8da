/**
 * Maps OpenAI chat `messages` onto the agent's conversation: everything before the last user message becomes
 * transcript history, the last user message becomes the prompt, and a conversation that ends with tool
 * results continues with an empty prompt.
 *
 * - `system` / `developer` → instructions, wherever they appear (joined with a blank line);
 * - `user` → prompts (text content; consecutive user messages merge with a blank line);
 * - `assistant` content → answers; `tool_calls` → a tool-calls entry keeping the client's call ids;
 * - `tool` → tool outputs whose id is the call id they answer, placed in call order.
 *
 * Tool calls pair strictly: every call id is unique in the conversation and answered by exactly one `tool`
 * message directly after the assistant message that made it.
 * @module
 */
import { compactJson, isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import type {
  ConversationEntry,
  PromptEntry,
  ResponseEntry,
  ToolCallsEntry,
  ToolOutputEntry,
} from "../protocol/transcript.ts";
import { NO_ASSETS, NO_OPTIONS } from "../agent/shared_values.ts";
import { JsonParams } from "./json_params.ts";
import { OpenAIError } from "./openai_error.ts";

/** A conversation ready for the agent. */
export interface MappedConversation {
  /** System and developer messages joined with a blank line, or null. */
  instructions: string | null;
  /** Entries before the prompt. */
  history: ConversationEntry[];
  /** The prompt to run (`""` when the conversation ends with tool results). */
  prompt: string;
  /** True when the conversation ended with tool results. */
  continuesAfterToolOutput: boolean;
}

/** The tool calls of the latest assistant message while their tool messages are collected. */
interface ToolBatch {
  /** Call ids in the order the calls were made. */
  order: string[];
  names: Map<string, string>;
  outputs: Map<string, ToolOutputEntry>;
}

function promptEntry(text: string): PromptEntry {
  return { id: "", role: "user", contents: [{ type: "text", id: "", text }], options: NO_OPTIONS };
}

function responseEntry(text: string): ResponseEntry {
  return { id: "", role: "response", contents: [{ type: "text", id: "", text }], assets: NO_ASSETS };
}

/**
 * Maps and validates `messages`.
 *
 * @example
 * ```ts
 * import { mapMessages } from "./message_mapper.ts";
 * const mapped = mapMessages([
 *   { role: "system", content: "Be brief." },
 *   { role: "user", content: "Hi" },
 * ]);
 * mapped.instructions; // "Be brief."
 * mapped.prompt; // "Hi"
 * ```
 */
export function mapMessages(messages: JsonValue[]): MappedConversation {
  const instructions: string[] = [];
  const entries: ConversationEntry[] = [];
  let pendingUser: string | null = null;
  const knownIds = new Set<string>();
  let batch: ToolBatch | null = null;
  let lastRole = "";

  const flushUser = () => {
    if (pendingUser === null) return;
    entries.push(promptEntry(pendingUser));
    pendingUser = null;
  };

  messages.forEach((value, index) => {
    const path = `messages[${index}]`;
    const message = JsonParams.of(value, path);
    const role = message.requiredString("role");
    if (role !== "tool" && batch !== null) throw missingOutputs(batch, path);
    switch (role) {
      case "system":
      case "developer": {
        const text = textContent(message, false);
        if (text !== "") instructions.push(text);
        break;
      }
      case "user": {
        const text = userText(message);
        pendingUser = pendingUser === null ? text : `${pendingUser}\n\n${text}`;
        break;
      }
      case "assistant": {
        flushUser();
        let text = textContent(message, true);
        if (text === "") text = message.string("refusal") ?? "";
        const calls = toolCalls(message, knownIds);
        if (text !== "") entries.push(responseEntry(text));
        if (calls.length > 0) {
          const entry: ToolCallsEntry = {
            id: "",
            role: "response",
            toolCalls: calls,
            contents: [],
            assets: NO_ASSETS,
          };
          entries.push(entry);
          batch = {
            order: calls.map((c) => c.id),
            names: new Map(calls.map((c) => [c.id, c.name])),
            outputs: new Map(),
          };
        }
        break;
      }
      case "tool": {
        flushUser();
        const idParam = message.param("tool_call_id");
        const id = message.requiredString("tool_call_id");
        const current: ToolBatch | null = batch;
        const name = current?.names.get(id);
        if (current === null || name === undefined) {
          if (knownIds.has(id)) {
            throw OpenAIError.invalidRequest(
              `Invalid 'tool_call_id' '${id}': that tool call was already answered. Each tool call needs exactly one 'tool' message, placed directly after the assistant message that made the call.`,
              idParam,
              "duplicate_tool_output",
            );
          }
          throw OpenAIError.invalidRequest(
            `Invalid 'tool_call_id' '${id}': no earlier assistant message has a tool call with this id.`,
            idParam,
            "unknown_tool_call_id",
          );
        }
        if (current.outputs.has(id)) {
          throw OpenAIError.invalidRequest(
            `Invalid 'tool_call_id' '${id}': more than one 'tool' message responds to this tool call.`,
            idParam,
            "duplicate_tool_output",
          );
        }
        const text = textContent(message, false);
        current.outputs.set(id, {
          id,
          role: "tool",
          toolCallID: id,
          toolName: name,
          contents: [{ type: "text", id: "", text }],
        });
        if (current.outputs.size === current.order.length) {
          for (const callId of current.order) entries.push(current.outputs.get(callId)!);
          batch = null;
        }
        break;
      }
      case "function":
        throw message.invalid("role", "The legacy 'function' role is not supported; use 'tool' messages.");
      default:
        throw message.invalid(
          "role",
          `Invalid role '${role}': expected 'system', 'developer', 'user', 'assistant' or 'tool'.`,
        );
    }
    // Instructions may appear anywhere (even last): only conversation turns decide the prompt.
    if (role !== "system" && role !== "developer") lastRole = role;
  });
  if (batch !== null) throw missingOutputs(batch, "messages");
  const joined = instructions.length === 0 ? null : instructions.join("\n\n");
  if (lastRole === "user") {
    return {
      instructions: joined,
      history: entries,
      prompt: pendingUser ?? "",
      continuesAfterToolOutput: false,
    };
  }
  if (lastRole === "tool") {
    return { instructions: joined, history: entries, prompt: "", continuesAfterToolOutput: true };
  }
  if (lastRole === "assistant") {
    throw OpenAIError.invalidRequest(
      "The last message must be a 'user' or 'tool' message; a trailing 'assistant' message (response prefill) is not supported.",
      "messages",
      "invalid_last_message",
    );
  }
  throw OpenAIError.invalidRequest(
    "The conversation needs at least one 'user' message.",
    "messages",
    "missing_user_message",
  );
}

function missingOutputs(batch: ToolBatch, param: string): OpenAIError {
  const missing = batch.order.filter((id) => !batch.outputs.has(id));
  return OpenAIError.invalidRequest(
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. Missing responses for: ${
      missing.join(", ")
    }.`,
    param,
    "missing_tool_output",
  );
}

/** Text of a message whose content is a string or an array of text parts. */
function textContent(message: JsonParams, allowNull: boolean): string {
  const content = message.value("content");
  if (content === undefined) {
    if (allowNull) return "";
    throw message.missing("content");
  }
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw message.typeError("content", "a string or an array of content parts");
  const texts: string[] = [];
  content.forEach((value, i) => {
    const part = JsonParams.of(value, message.param(`content[${i}]`));
    const type = part.requiredString("type");
    if (type === "text") texts.push(part.requiredString("text"));
    else if (type === "refusal") texts.push(part.requiredString("refusal"));
    else throw part.invalid("type", `Content parts of type '${type}' are only supported in user messages.`);
  });
  return texts.join("\n");
}

/** Text of a user message: a string or text parts (joined with a newline). */
function userText(message: JsonParams): string {
  const content = message.value("content");
  if (content === undefined) throw message.missing("content");
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw message.typeError("content", "a string or an array of content parts");
  const texts: string[] = [];
  content.forEach((value, i) => {
    const part = JsonParams.of(value, message.param(`content[${i}]`));
    const type = part.requiredString("type");
    switch (type) {
      case "text":
        texts.push(part.requiredString("text"));
        break;
      case "image_url":
        throw part.invalid("type", "Image input is not supported by this server's models; send text.");
      case "input_audio":
        throw part.invalid("type", "Audio input is not supported.");
      case "file":
        throw part.invalid("type", "File inputs are not supported; send text.");
      default:
        throw part.invalid("type", `Unsupported content part type '${type}'.`);
    }
  });
  return texts.join("\n");
}

/** The `tool_calls` of an assistant message; ids must be non-empty and unique in the conversation. */
function toolCalls(message: JsonParams, knownIds: Set<string>): ToolCallsEntry["toolCalls"] {
  const calls = message.array("tool_calls");
  if (calls === undefined) return [];
  return calls.map((value, i) => {
    const call = JsonParams.of(value, message.param(`tool_calls[${i}]`));
    const id = call.requiredString("id");
    if (id === "") throw call.invalid("id", "A tool call 'id' must not be empty.");
    if (knownIds.has(id)) {
      throw OpenAIError.invalidRequest(
        `Duplicate tool call id '${id}': every tool call in the conversation needs a unique id.`,
        call.param("id"),
        "duplicate_tool_call_id",
      );
    }
    knownIds.add(id);
    const type = call.string("type") ?? "function";
    if (type !== "function") throw call.invalid("type", `Unsupported tool call type '${type}'.`);
    const fn = call.requiredChild("function");
    const name = fn.requiredString("name");
    if (name === "") throw fn.invalid("name", "A tool call's function 'name' must not be empty.");
    const text = fn.string("arguments") ?? "";
    let args: JsonObject = {};
    if (text.trim() !== "") {
      let parsed: JsonValue;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw fn.invalid(
          "arguments",
          `'arguments' must be a JSON-encoded object: ${
            error instanceof Error ? error.message : String(error)
          }`,
        );
      }
      if (parsed !== null) {
        if (!isJsonObject(parsed)) {
          throw fn.invalid(
            "arguments",
            `'arguments' must be a JSON-encoded object, got: ${text.slice(0, 80)}`,
          );
        }
        args = parsed;
      }
    }
    return { id, name, arguments: compactJson(args) };
  });
}
