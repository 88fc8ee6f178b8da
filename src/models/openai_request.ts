/**
 * Maps a one-step {@link StepRequest} onto an OpenAI Chat Completions request body.
 *
 * - instructions → a `system` message;
 * - transcript prompts → `user`, answers → `assistant`, tool-call entries → `assistant` with `tool_calls`
 *   (ids kept), tool outputs → `tool` messages with the matching `tool_call_id`;
 * - a non-empty `prompt` → a final `user` message (continuation steps send none);
 * - tools → `tools` with the client's JSON Schema as `parameters`; `allowed` → `tool_choice: "auto"`,
 *   `required` → `"required"`, `disallowed` → no tools at all;
 * - response schema → `response_format: {type: "json_schema", json_schema: {name, schema}}` (not on
 *   `required` steps, which must end in a tool call);
 * - options → `temperature`, `max_tokens`, `top_k`, `top_p`, `seed` (greedy → `temperature: 0`).
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import { type ConversationEntry, isToolCallsEntry, segmentsText } from "../protocol/transcript.ts";
import type { StepRequest, StepTool } from "./language_model.ts";

/** The `messages` list of a step. */
export function buildMessages(
  request: Pick<StepRequest, "instructions" | "history" | "prompt">,
): JsonObject[] {
  const messages: JsonObject[] = [];
  if (request.instructions !== null && request.instructions !== "") {
    messages.push({ role: "system", content: request.instructions });
  }
  for (const entry of request.history) messages.push(entryMessage(entry));
  if (request.prompt !== "") messages.push({ role: "user", content: request.prompt });
  return messages;
}

function entryMessage(entry: ConversationEntry): JsonObject {
  if (isToolCallsEntry(entry)) {
    const text = segmentsText(entry.contents);
    return {
      role: "assistant",
      content: text === "" ? null : text,
      tool_calls: entry.toolCalls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments === "" ? "{}" : call.arguments },
      })),
    };
  }
  switch (entry.role) {
    case "user":
      return { role: "user", content: segmentsText(entry.contents) };
    case "response":
      return { role: "assistant", content: segmentsText(entry.contents) };
    case "tool":
      return { role: "tool", tool_call_id: entry.toolCallID, content: segmentsText(entry.contents) };
  }
}

/** A tool in the `tools` array: `{type: "function", function: {name, description, parameters}}`. */
export function toolDefinition(tool: StepTool): JsonObject {
  const schema = tool.jsonSchema;
  // An empty schema means "no arguments"; servers expect an object schema.
  const parameters: JsonObject = Object.keys(schema).length === 0
    ? { type: "object", properties: {} }
    : schema;
  const fn: JsonObject = { name: tool.name, parameters };
  if (tool.description !== "") fn.description = tool.description;
  return { type: "function", function: fn };
}

/** `json_schema.name` must match `^[A-Za-z0-9_-]{1,64}$` on OpenAI; other characters become `_`. */
export function schemaName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  return cleaned === "" ? "Response" : cleaned;
}

/** Options of {@link buildChatRequest}. */
export interface ChatRequestOptions {
  /** Model id. */
  model: string;
  /** Use SSE streaming (`stream: true` plus `stream_options.include_usage`). */
  stream: boolean;
}

/** The full JSON body of `POST {baseURL}/chat/completions` for one step. */
export function buildChatRequest(request: StepRequest, options: ChatRequestOptions): JsonObject {
  const body: JsonObject = { model: options.model, messages: buildMessages(request) };

  if (request.toolCallingMode !== "disallowed" && request.tools.length > 0) {
    body.tools = request.tools.map(toolDefinition);
    body.tool_choice = request.toolCallingMode === "required" ? "required" : "auto";
  }

  // A `required` step must end in a tool call, so the schema cannot apply to it; llama.cpp would even let the
  // response format win over the forced tool call. The schema is sent on the following (answer) steps.
  if (request.responseSchema !== null && request.toolCallingMode !== "required") {
    body.response_format = {
      type: "json_schema",
      json_schema: {
        name: schemaName(request.responseSchema.name),
        schema: request.responseSchema.jsonSchema,
      },
    };
  }

  const { temperature, maximumResponseTokens, sampling } = request.options;
  if (temperature !== undefined) body.temperature = temperature;
  if (maximumResponseTokens !== undefined) body.max_tokens = maximumResponseTokens;
  if (sampling !== undefined) {
    switch (sampling.mode) {
      case "greedy":
        body.temperature = 0;
        break;
      case "topK":
        body.top_k = sampling.k;
        if (sampling.seed !== undefined) body.seed = sampling.seed;
        break;
      case "topP":
        body.top_p = sampling.p;
        if (sampling.seed !== undefined) body.seed = sampling.seed;
        break;
    }
  }

  if (options.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}
