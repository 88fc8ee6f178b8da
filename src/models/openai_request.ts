/**
 * Maps a one-step {@link StepRequest} onto an OpenAI Chat Completions request body.
 *
 * - instructions → a `system` message;
 * - transcript prompts → `user`, answers → `assistant`, tool-call entries → `assistant` with `tool_calls`
 *   (ids kept), tool outputs → `tool` messages with the matching `tool_call_id`;
 * - a non-empty `prompt` → a final `user` message (continuation steps send none);
 * - tools → `tools` with the client's JSON Schema as `parameters`. The list is the turn's offered list
 *   (`offeredTools`), the same on every step, so the server's prompt cache keeps its prefix; the step's
 *   callable tools are restricted by `tool_choice`: `allowed` → `"auto"`, `required` → `"required"` (or
 *   `{"type": "function", "function": {"name"}}` when exactly one of several offered tools is callable; a
 *   server that does not enforce a named choice, such as llama.cpp, gets `"required"`), `disallowed` →
 *   `"none"`. Whatever the server lets through is validated against the callable tools afterwards
 *   (`openai_validate.ts`). With `narrowTools` (a server that rejected `tool_choice`), the step's callable
 *   tools are sent instead and a disallowed step sends none;
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
  /** The server enforces `{"type": "function", "function": {"name"}}` (false: send `"required"`). */
  namedToolChoice?: boolean;
  /** Send only the step's callable tools and no `tool_choice: "none"` (servers that reject the field). */
  narrowTools?: boolean;
}

/** The `tools` and `tool_choice` of a step (none when no tool is offered). */
function toolFields(request: StepRequest, options: ChatRequestOptions): JsonObject {
  const callable = request.toolCallingMode === "disallowed" ? [] : request.tools;
  const offered = options.narrowTools ? callable : request.offeredTools ?? callable;
  if (offered.length === 0) return {};
  const fields: JsonObject = { tools: offered.map(toolDefinition) };
  if (request.toolCallingMode === "disallowed" || callable.length === 0) fields.tool_choice = "none";
  else if (request.toolCallingMode === "allowed") fields.tool_choice = "auto";
  else if (callable.length === 1 && offered.length > 1 && options.namedToolChoice !== false) {
    fields.tool_choice = { type: "function", function: { name: callable[0].name } };
  } else fields.tool_choice = "required";
  return fields;
}

/** The full JSON body of `POST {baseURL}/chat/completions` for one step. */
export function buildChatRequest(request: StepRequest, options: ChatRequestOptions): JsonObject {
  const body: JsonObject = {
    model: options.model,
    messages: buildMessages(request),
    ...toolFields(request, options),
  };

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

/** What the model is asked to do instead, after an invalid answer on a step like `request`. */
function retryHint(request: StepRequest): string {
  const names = request.toolCallingMode === "disallowed" ? [] : request.tools.map((t) => t.name);
  const list = names.map((n) => `'${n}'`).join(", ");
  const answer = request.responseSchema !== null
    ? "answer with JSON that matches the response format"
    : "answer in plain text";
  if (request.toolCallingMode === "required") {
    return names.length === 1
      ? `Call the tool ${list} now, with valid arguments.`
      : `Call one of ${list} now.`;
  }
  if (names.length === 0) return `Do not call any tool now; ${answer}.`;
  return `Call only ${list}, or ${answer}.`;
}

/** Whether `text` parses as JSON. */
function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The messages that carry an invalid answer and the problem back to the model, appended to the request for
 * the next attempt. The conversation only grows, so the server's prompt cache still covers everything before
 * it, and the retried request is never the one that just failed.
 *
 * - an answer with tool calls → the assistant message with those calls, then one `tool` message per call
 *   saying what was wrong (arguments that are not JSON are sent as `{}`: llama.cpp's server fails a request
 *   whose history has unparsable arguments; the problem quotes what the model wrote);
 * - a text answer → the assistant message, then a `user` message saying what was wrong.
 */
export function retryMessages(
  output: { content: string; toolCalls: { id?: string; name: string; arguments: string }[] },
  retry: { problem: string; request: StepRequest; attempt: number },
): JsonObject[] {
  const { problem, request, attempt } = retry;
  const feedback = `That answer could not be used: ${problem}. ${retryHint(request)}`;
  if (output.toolCalls.length === 0) {
    return [
      { role: "assistant", content: output.content },
      { role: "user", content: `(${feedback})` },
    ];
  }
  const calls = output.toolCalls.map((call, i) => ({
    id: call.id !== undefined && call.id !== "" ? call.id : `call_retry_${attempt}_${i}`,
    type: "function",
    function: { name: call.name, arguments: isJsonText(call.arguments) ? call.arguments : "{}" },
  }));
  return [
    { role: "assistant", content: output.content === "" ? null : output.content, tool_calls: calls },
    ...calls.map((call) => ({ role: "tool", tool_call_id: call.id, content: `Error: ${feedback}` })),
  ];
}
