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

/**
 * A text segment.
 *
 * @example
 * ```ts
 * import type { TextSegment } from "@open-apple-models/bridge/engine";
 * const hello: TextSegment = { type: "text", id: "p1-text", text: "Open the gate." };
 * ```
 */
export interface TextSegment {
  /** Segment kind. */
  type: "text";
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** The text, as the model wrote it or the client sent it. */
  text: string;
}

/**
 * A structured (JSON) segment.
 *
 * @example
 * ```ts
 * import type { StructureSegment } from "@open-apple-models/bridge/engine";
 * const verdict: StructureSegment = {
 *   type: "structure",
 *   id: "r1-verdict",
 *   structure: { source: "Verdict", content: { open: false } },
 * };
 * ```
 */
export interface StructureSegment {
  /** Segment kind. */
  type: "structure";
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** The JSON content and the name of its source (schema or tool). */
  structure: { source: string; content: JsonValue };
}

/**
 * A segment of an entry's contents.
 *
 * @example
 * ```ts
 * import type { Segment } from "@open-apple-models/bridge/engine";
 * const contents: Segment[] = [{ type: "text", id: "r1-text", text: "Not at night." }];
 * ```
 */
export type Segment = TextSegment | StructureSegment;

/**
 * A tool definition as stored in the instructions entry.
 *
 * @example
 * ```ts
 * import type { TranscriptToolDefinition } from "@open-apple-models/bridge/engine";
 * const openGate: TranscriptToolDefinition = {
 *   type: "function",
 *   function: {
 *     name: "open_gate",
 *     description: "Open a gate.",
 *     parameters: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
 *   },
 * };
 * ```
 */
export interface TranscriptToolDefinition {
  /** Always `function`. */
  type: "function";
  /** Name, description and JSON Schema of the arguments. */
  function: { name: string; description: string; parameters: JsonObject };
}

/**
 * The instructions entry (always first when present).
 *
 * @example
 * ```ts
 * import type { InstructionsEntry } from "@open-apple-models/bridge/engine";
 * const instructions: InstructionsEntry = {
 *   id: "instructions",
 *   role: "instructions",
 *   contents: [{ type: "text", id: "instructions-text", text: "You are the guard of the north gate." }],
 *   tools: [],
 * };
 * ```
 */
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

/**
 * A user prompt.
 *
 * @example
 * ```ts
 * import type { PromptEntry } from "@open-apple-models/bridge/engine";
 * const prompt: PromptEntry = {
 *   id: "p1",
 *   role: "user",
 *   contents: [{ type: "text", id: "p1-text", text: "Open the gate." }],
 *   options: {},
 * };
 * ```
 */
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

/**
 * A model answer.
 *
 * @example
 * ```ts
 * import type { ResponseEntry } from "@open-apple-models/bridge/engine";
 * const answer: ResponseEntry = {
 *   id: "r1",
 *   role: "response",
 *   contents: [{ type: "text", id: "r1-text", text: "Not at night." }],
 *   assets: [],
 * };
 * ```
 */
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

/**
 * One tool call inside a tool-calls entry; `arguments` is JSON text.
 *
 * @example
 * ```ts
 * import type { TranscriptToolCall } from "@open-apple-models/bridge/engine";
 * const call: TranscriptToolCall = { id: "call_1", name: "open_gate", arguments: '{"gate":"north"}' };
 * ```
 */
export interface TranscriptToolCall {
  /** Unique id within the transcript (a tool output's id equals its call's id). */
  id: string;
  /** The tool's name. */
  name: string;
  /** The arguments as compact JSON text. */
  arguments: string;
}

/**
 * The model's batch of tool calls in one step.
 *
 * @example
 * ```ts
 * import type { ToolCallsEntry } from "@open-apple-models/bridge/engine";
 * const calls: ToolCallsEntry = {
 *   id: "r1",
 *   role: "response",
 *   toolCalls: [{ id: "call_1", name: "open_gate", arguments: '{"gate":"north"}' }],
 *   contents: [],
 *   assets: [],
 * };
 * ```
 */
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

/**
 * A tool's output, fed back to the model. `id` equals the call's id.
 *
 * @example
 * ```ts
 * import type { ToolOutputEntry } from "@open-apple-models/bridge/engine";
 * const output: ToolOutputEntry = {
 *   id: "call_1",
 *   role: "tool",
 *   toolCallID: "call_1",
 *   toolName: "open_gate",
 *   contents: [{ type: "structure", id: "o1", structure: { source: "open_gate", content: { ok: true } } }],
 * };
 * ```
 */
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

/**
 * Any entry after the instructions.
 *
 * @example
 * ```ts
 * import { Agent, type ConversationEntry, ScriptedModel } from "@open-apple-models/bridge/engine";
 * // A conversation to start an agent from (`session/create`'s `history` is the saved form).
 * const entries: ConversationEntry[] = [
 *   { id: "p1", role: "user", contents: [{ type: "text", id: "p1-text", text: "Open it." }], options: {} },
 *   { id: "r1", role: "response", contents: [{ type: "text", id: "r1-text", text: "No." }], assets: [] },
 * ];
 * const guard = new Agent({ model: new ScriptedModel({ steps: [{ text: "Still no." }] }), entries });
 * ```
 */
export type ConversationEntry = PromptEntry | ResponseEntry | ToolCallsEntry | ToolOutputEntry;

/**
 * Any transcript entry.
 *
 * @example
 * ```ts
 * import type { TranscriptEntry } from "@open-apple-models/bridge/engine";
 * const transcript: TranscriptEntry[] = [
 *   { id: "instructions", role: "instructions", contents: [], tools: [] }, // always first when present
 *   { id: "p1", role: "user", contents: [{ type: "text", id: "p1-text", text: "Hello" }], options: {} },
 * ];
 * ```
 */
export type TranscriptEntry = InstructionsEntry | ConversationEntry;

/**
 * Gives every entry and segment whose `id` is `""` a fresh id, in place (so later reads see the same ids).
 * The agent leaves the ids of the prompts and answers it writes empty until something needs them (an export,
 * a native model): a long conversation then keeps no id strings it never shows.
 *
 * The ids are `e1`, `e2`, … in transcript order, skipping the ids the transcript already holds: the same
 * conversation gets the same ids in every process (golden files of saves stay byte-stable), and an id is
 * unique within its transcript.
 *
 * @example
 * ```ts
 * import { assignMissingIds, type TranscriptEntry } from "./transcript.ts";
 * const entries: TranscriptEntry[] = [
 *   { id: "e1", role: "user", contents: [{ type: "text", id: "", text: "Hello" }], options: {} },
 * ];
 * assignMissingIds(entries);
 * entries[0].contents[0].id; // "e2"
 * ```
 */
export function assignMissingIds(entries: readonly TranscriptEntry[]): void {
  let used: Set<string> | null = null;
  let n = 0;
  const fresh = (): string => {
    used ??= idsIn(entries);
    let id: string;
    do id = `e${++n}`; while (used.has(id));
    used.add(id);
    return id;
  };
  for (const entry of entries) {
    if (entry.id === "") entry.id = fresh();
    for (const segment of entry.contents ?? []) if (segment.id === "") segment.id = fresh();
  }
}

/** The ids a transcript holds: its entries', its segments' and its tool calls'. */
function idsIn(entries: readonly TranscriptEntry[]): Set<string> {
  const used = new Set<string>();
  for (const entry of entries) {
    used.add(entry.id);
    for (const segment of entry.contents ?? []) used.add(segment.id);
    if (isToolCallsEntry(entry)) { for (const call of entry.toolCalls) used.add(call.id); }
  }
  return used;
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
