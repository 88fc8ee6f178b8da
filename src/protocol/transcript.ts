/**
 * Transcript entries in the FoundationModels `Codable` JSON shape that `session/transcript` returns and
 * `history` accepts: `{"type": "FoundationModels.Transcript", "version": "1.1", "transcript": {"entries": [...]}}`.
 *
 * Entry shapes (the bridge reads and writes exactly these):
 * - instructions: `{id, role: "instructions", contents: [segment], tools: [{type: "function", function: {name, description, parameters}}]}`
 * - prompt: `{id, role: "user", contents: [segment], options: {}, responseFormat?: {name, schema}}`
 * - response: `{id, role: "response", contents: [segment], assets: []}`
 * - tool calls: `{id, role: "response", toolCalls: [{id, name, arguments: "<JSON text>"}], contents: [], assets: []}`
 * - tool output: `{id: <call id>, role: "tool", toolCallID, toolName, contents: [segment]}`
 *
 * Segments: `{type: "text", id, text}` or `{type: "structure", id, structure: {source, content}}`.
 * @module
 */
import type { JsonObject, JsonValue } from "./json.ts";

/** Envelope type string of a saved transcript. */
export const TRANSCRIPT_TYPE = "FoundationModels.Transcript";
/** Envelope version written by this bridge. */
export const TRANSCRIPT_VERSION = "1.1";

/** A text segment. */
export interface TextSegment {
  type: "text";
  id: string;
  text: string;
}

/** A structured (JSON) segment. */
export interface StructureSegment {
  type: "structure";
  id: string;
  structure: { source: string; content: JsonValue };
}

/** A segment of an entry's contents. */
export type Segment = TextSegment | StructureSegment;

/** A tool definition as stored in the instructions entry. */
export interface TranscriptToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: JsonObject };
}

/** The instructions entry (always first when present). */
export interface InstructionsEntry {
  id: string;
  role: "instructions";
  contents: Segment[];
  tools: TranscriptToolDefinition[];
}

/** A user prompt. */
export interface PromptEntry {
  id: string;
  role: "user";
  contents: Segment[];
  options: JsonObject;
  responseFormat?: { name: string; schema: JsonObject };
}

/** A model answer. */
export interface ResponseEntry {
  id: string;
  role: "response";
  contents: Segment[];
  assets: string[];
}

/** One tool call inside a tool-calls entry; `arguments` is JSON text. */
export interface TranscriptToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** The model's batch of tool calls in one step. */
export interface ToolCallsEntry {
  id: string;
  role: "response";
  toolCalls: TranscriptToolCall[];
  contents: Segment[];
  assets: string[];
}

/** A tool's output, fed back to the model. `id` equals the call's id. */
export interface ToolOutputEntry {
  id: string;
  role: "tool";
  toolCallID: string;
  toolName: string;
  contents: Segment[];
}

/** Any entry after the instructions. */
export type ConversationEntry = PromptEntry | ResponseEntry | ToolCallsEntry | ToolOutputEntry;

/** Any transcript entry. */
export type TranscriptEntry = InstructionsEntry | ConversationEntry;

/** True for a tool-calls entry. */
export function isToolCallsEntry(entry: TranscriptEntry): entry is ToolCallsEntry {
  return entry.role === "response" && Array.isArray((entry as ToolCallsEntry).toolCalls);
}

/** True for an answer (a response entry that is not a tool-calls entry). */
export function isResponseEntry(entry: TranscriptEntry): entry is ResponseEntry {
  return entry.role === "response" && !Array.isArray((entry as ToolCallsEntry).toolCalls);
}

/** Plain text of a list of segments (structured segments as compact JSON), joined without separators. */
export function segmentsText(contents: Segment[]): string {
  if (contents.length === 1 && contents[0].type === "text") return contents[0].text;
  return contents.map((s) => s.type === "text" ? s.text : JSON.stringify(s.structure.content)).join("");
}
