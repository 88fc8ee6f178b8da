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

const entryPrefix = `${crypto.randomUUID().slice(0, 8)}-`;
let entryCounter = 0;

/** A unique id for transcript entries and segments (a per-process random prefix and a decimal counter). */
export function newEntryId(): string {
  return entryPrefix + ++entryCounter;
}

/** Envelope type string of a saved transcript. */
export const TRANSCRIPT_TYPE = "FoundationModels.Transcript";
/** Envelope version written by this bridge. */
export const TRANSCRIPT_VERSION = "1.1";

/** A text segment. */
export interface TextSegment {
  /** Segment kind. */
  type: "text";
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** The text, as the model wrote it or the client sent it. */
  text: string;
}

/** A structured (JSON) segment. */
export interface StructureSegment {
  /** Segment kind. */
  type: "structure";
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** The JSON content and the name of its source (schema or tool). */
  structure: { source: string; content: JsonValue };
}

/** A segment of an entry's contents. */
export type Segment = TextSegment | StructureSegment;

/** A tool definition as stored in the instructions entry. */
export interface TranscriptToolDefinition {
  /** Always `function`. */
  type: "function";
  /** Name, description and JSON Schema of the arguments. */
  function: { name: string; description: string; parameters: JsonObject };
}

/** The instructions entry (always first when present). */
export interface InstructionsEntry {
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** Entry kind. */
  role: "instructions";
  /** The entry's segments. */
  contents: Segment[];
  /** Tool definitions the model was given. */
  tools: TranscriptToolDefinition[];
}

/** A user prompt. */
export interface PromptEntry {
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** Entry kind. */
  role: "user";
  /** The entry's segments. */
  contents: Segment[];
  /** Generation options of the prompt (kept as saved). */
  options: JsonObject;
  /** The structured-output schema of a schema turn. */
  responseFormat?: { name: string; schema: JsonObject };
}

/** A model answer. */
export interface ResponseEntry {
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** Entry kind. */
  role: "response";
  /** The entry's segments. */
  contents: Segment[];
  /** Asset ids (always empty here). */
  assets: string[];
}

/** One tool call inside a tool-calls entry; `arguments` is JSON text. */
export interface TranscriptToolCall {
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** The tool's name. */
  name: string;
  /** The arguments as compact JSON text. */
  arguments: string;
}

/** The model's batch of tool calls in one step. */
export interface ToolCallsEntry {
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** Entry kind. */
  role: "response";
  /** The calls, in the order the model made them. */
  toolCalls: TranscriptToolCall[];
  /** The entry's segments. */
  contents: Segment[];
  /** Asset ids (always empty here). */
  assets: string[];
}

/** A tool's output, fed back to the model. `id` equals the call's id. */
export interface ToolOutputEntry {
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** Entry kind. */
  role: "tool";
  /** Id of the call this output answers. */
  toolCallID: string;
  /** Name of the tool that produced the output. */
  toolName: string;
  /** The entry's segments. */
  contents: Segment[];
}

/** Any entry after the instructions. */
export type ConversationEntry = PromptEntry | ResponseEntry | ToolCallsEntry | ToolOutputEntry;

/** Any transcript entry. */
export type TranscriptEntry = InstructionsEntry | ConversationEntry;

/**
 * Gives every entry and segment whose `id` is `""` a fresh id, in place (so later reads see the same ids).
 * The agent leaves the ids of the prompts and answers it writes empty until something needs them (an export,
 * a native model): a long conversation then keeps no id strings it never shows.
 */
export function assignMissingIds(entries: TranscriptEntry[]): void {
  for (const entry of entries) {
    if (entry.id === "") entry.id = newEntryId();
    for (const segment of entry.contents) if (segment.id === "") segment.id = newEntryId();
  }
}

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
