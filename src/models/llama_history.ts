/**
 * A step's conversation as node-llama-cpp chat history items.
 *
 * - instructions → a `system` item; prompts → `user` items;
 * - everything the model produced in one turn (tool-call batches, their outputs, the answer) → one `model`
 *   item: calls become `functionCall` items carrying their outputs as `result`, the answer is its text;
 * - the step ends with the `model` item being generated (a new empty one after a prompt, or the turn's
 *   item continued after tool outputs).
 *
 * A template renders a value the way the model wrote it only if it gets the model's own text back, so the
 * backend remembers, per session, the raw text of the calls and structured answers it returned
 * ({@link RawMemory}); the rendered prompt then equals the tokens already in the sequence's KV cache.
 * @module
 */
import type { JsonValue } from "../protocol/json.ts";
import {
  type ConversationEntry,
  isToolCallsEntry,
  type Segment,
  segmentsText,
} from "../protocol/transcript.ts";
import type { ChatFunctionCallItem, ChatItem } from "./llama_api.ts";
import type { StepRequest } from "./language_model.ts";

/** Raw model output per stored value, bounded (oldest forgotten first). */
export class RawMemory {
  readonly #calls = new Map<string, unknown>();
  readonly #answers = new Map<string, string>();
  readonly #limit: number;

  /** Keeps at most `limit` calls and `limit` answers. */
  constructor(limit = 256) {
    this.#limit = limit;
  }

  /** Remembers the generated text of the call with transcript id `id`. */
  rememberCall(id: string, raw: unknown): void {
    remember(this.#calls, id, raw, this.#limit);
  }

  /** Remembers that the answer stored as `stored` was generated as `raw`. */
  rememberAnswer(stored: string, raw: string): void {
    if (stored !== raw) remember(this.#answers, stored, raw, this.#limit);
  }

  /** The generated text of a call, if remembered. */
  call(id: string): unknown {
    return this.#calls.get(id);
  }

  /** The generated text of an answer, or the stored text. */
  answer(stored: string): string {
    return this.#answers.get(stored) ?? stored;
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > limit) map.delete(map.keys().next().value!);
}

function parseJson(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** A tool output as the function result: the JSON value of a structure segment, else the text. */
function outputValue(contents: Segment[]): JsonValue {
  if (contents.length === 1 && contents[0].type === "structure") return contents[0].structure.content;
  return segmentsText(contents);
}

/**
 * The chat history of a step, ending with the model item to generate.
 *
 * @example
 * ```ts
 * import { chatHistory, RawMemory } from "./llama_history.ts";
 * const items = chatHistory({ instructions: "Be brief.", history: [], prompt: "Hi" }, new RawMemory());
 * // [{type: "system", …}, {type: "user", text: "Hi"}, {type: "model", response: []}]
 * ```
 */
export function chatHistory(
  request: Pick<StepRequest, "instructions" | "history" | "prompt">,
  memory: RawMemory,
): ChatItem[] {
  const items: ChatItem[] = [];
  if (request.instructions !== null && request.instructions !== "") {
    items.push({ type: "system", text: request.instructions });
  }
  let calls = new Map<string, ChatFunctionCallItem>();
  const modelItem = (): Array<string | ChatFunctionCallItem> => {
    const last = items.at(-1);
    if (last?.type === "model") return last.response;
    const response: Array<string | ChatFunctionCallItem> = [];
    items.push({ type: "model", response });
    calls = new Map();
    return response;
  };
  for (const entry of request.history) add(entry);
  if (request.prompt !== "") items.push({ type: "user", text: request.prompt });
  modelItem();
  return items;

  function add(entry: ConversationEntry): void {
    if (isToolCallsEntry(entry)) {
      const response = modelItem();
      const text = segmentsText(entry.contents);
      if (text !== "") response.push(text);
      entry.toolCalls.forEach((call, index) => {
        const item: ChatFunctionCallItem = {
          type: "functionCall",
          name: call.name,
          params: parseJson(call.arguments === "" ? "{}" : call.arguments),
          result: null,
          startsNewChunk: index === 0,
        };
        const raw = memory.call(call.id);
        if (raw !== undefined) item.rawCall = raw;
        calls.set(call.id, item);
        response.push(item);
      });
      return;
    }
    switch (entry.role) {
      case "user":
        items.push({ type: "user", text: segmentsText(entry.contents) });
        return;
      case "response":
        modelItem().push(memory.answer(segmentsText(entry.contents)));
        return;
      case "tool": {
        const call = items.at(-1)?.type === "model" ? calls.get(entry.toolCallID) : undefined;
        if (call !== undefined) call.result = outputValue(entry.contents);
        else {
          items.push({
            type: "user",
            text: `Output of the tool ${entry.toolName}: ${segmentsText(entry.contents)}`,
          });
        }
        return;
      }
    }
  }
}
