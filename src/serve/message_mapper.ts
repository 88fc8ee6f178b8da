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
import { headUnits } from "../util/text.ts";

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
  const mapper = new MessageMapper();
  messages.forEach((value, index) => mapper.add(JsonParams.of(value, `messages[${index}]`)));
  return mapper.finish();
}

/** The state of mapping one `messages` array, one message at a time. */
class MessageMapper {
  readonly #instructions: string[] = [];
  readonly #entries: ConversationEntry[] = [];
  /** User text since the last entry (consecutive user messages merge). */
  #pendingUser: string | null = null;
  /** Every tool call id so far (ids are unique in the conversation). */
  readonly #knownIds = new Set<string>();
  /** The latest assistant message's tool calls while their `tool` messages are collected. */
  #batch: ToolBatch | null = null;
  /** The role of the latest message that was not instructions. */
  #lastRole = "";

  /** Maps one message. */
  add(message: JsonParams): void {
    const role = message.requiredString("role");
    if (role !== "tool" && this.#batch !== null) throw missingOutputs(this.#batch, message.path);
    switch (role) {
      case "system":
      case "developer": {
        const text = textContent(message, false);
        if (text !== "") this.#instructions.push(text);
        // Instructions may appear anywhere (even last): only conversation turns decide the prompt.
        return;
      }
      case "user": {
        const text = userText(message);
        this.#pendingUser = this.#pendingUser === null ? text : `${this.#pendingUser}\n\n${text}`;
        break;
      }
      case "assistant":
        this.#assistant(message);
        break;
      case "tool":
        this.#tool(message);
        break;
      case "function":
        throw message.invalid("role", "The legacy 'function' role is not supported; use 'tool' messages.");
      default:
        throw message.invalid(
          "role",
          `Invalid role '${role}': expected 'system', 'developer', 'user', 'assistant' or 'tool'.`,
        );
    }
    this.#lastRole = role;
  }

  /** The mapped conversation, once every message was added. */
  finish(): MappedConversation {
    if (this.#batch !== null) throw missingOutputs(this.#batch, "messages");
    const instructions = this.#instructions.length === 0 ? null : this.#instructions.join("\n\n");
    const history = this.#entries;
    switch (this.#lastRole) {
      case "user":
        return { instructions, history, prompt: this.#pendingUser ?? "", continuesAfterToolOutput: false };
      case "tool":
        return { instructions, history, prompt: "", continuesAfterToolOutput: true };
      case "assistant":
        throw OpenAIError.invalidRequest(
          "The last message must be a 'user' or 'tool' message; a trailing 'assistant' message (response prefill) is not supported.",
          "messages",
          "invalid_last_message",
        );
      default:
        throw OpenAIError.invalidRequest(
          "The conversation needs at least one 'user' message.",
          "messages",
          "missing_user_message",
        );
    }
  }

  /** Ends the pending user text as a prompt entry. */
  #flushUser(): void {
    if (this.#pendingUser === null) return;
    this.#entries.push(promptEntry(this.#pendingUser));
    this.#pendingUser = null;
  }

  /** An answer and/or tool calls; the calls' `tool` messages must follow. */
  #assistant(message: JsonParams): void {
    this.#flushUser();
    let text = textContent(message, true);
    if (text === "") text = message.string("refusal") ?? "";
    const calls = toolCalls(message, this.#knownIds);
    if (text !== "") this.#entries.push(responseEntry(text));
    if (calls.length === 0) return;
    const entry: ToolCallsEntry = {
      id: "",
      role: "response",
      toolCalls: calls,
      contents: [],
      assets: NO_ASSETS,
    };
    this.#entries.push(entry);
    this.#batch = {
      order: calls.map((c) => c.id),
      names: new Map(calls.map((c) => [c.id, c.name])),
      outputs: new Map(),
    };
  }

  /** One tool output; when the batch is complete its outputs are added in call order. */
  #tool(message: JsonParams): void {
    this.#flushUser();
    const idParam = message.param("tool_call_id");
    const id = message.requiredString("tool_call_id");
    const batch = this.#batch;
    const name = batch?.names.get(id);
    if (batch === null || name === undefined) {
      if (this.#knownIds.has(id)) {
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
    if (batch.outputs.has(id)) {
      throw OpenAIError.invalidRequest(
        `Invalid 'tool_call_id' '${id}': more than one 'tool' message responds to this tool call.`,
        idParam,
        "duplicate_tool_output",
      );
    }
    const text = textContent(message, false);
    batch.outputs.set(id, {
      id,
      role: "tool",
      toolCallID: id,
      toolName: name,
      contents: [{ type: "text", id: "", text }],
    });
    if (batch.outputs.size === batch.order.length) {
      for (const callId of batch.order) this.#entries.push(batch.outputs.get(callId)!);
      this.#batch = null;
    }
  }
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
            `'arguments' must be a JSON-encoded object, got: ${headUnits(text, 80)}`,
          );
        }
        args = parsed;
      }
    }
    return { id, name, arguments: compactJson(args) };
  });
}
