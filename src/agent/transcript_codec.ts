/**
 * Converts between an agent's state and the saved FoundationModels transcript JSON (`session/transcript`,
 * `history`, NPC saves).
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import {
  assignMissingIds,
  type ConversationEntry,
  type InstructionsEntry,
  type Segment,
  TRANSCRIPT_TYPE,
  TRANSCRIPT_VERSION,
  type TranscriptToolDefinition,
} from "../protocol/transcript.ts";
import type { AgentTool } from "./types.ts";

/**
 * The envelope `session/transcript` returns.
 *
 * @example
 * ```ts
 * import { exportTranscript, type TranscriptEnvelope } from "@open-apple-models/bridge/engine";
 * const saved: TranscriptEnvelope = exportTranscript({ instructions: null, tools: [], entries: [] });
 * saved.version; // "1.1"
 * ```
 */
export interface TranscriptEnvelope extends JsonObject {
  /** `FoundationModels.Transcript`. */
  type: string;
  /** Envelope version. */
  version: string;
  /** The entries, instructions first. */
  transcript: { entries: JsonValue[] };
}

/** Id of the instructions entry (fixed, so reading a transcript twice gives the same JSON). */
export const INSTRUCTIONS_ENTRY_ID = "instructions";

/** Builds the instructions entry for the given instructions and tools. */
export function instructionsEntry(instructions: string | null, tools: AgentTool[]): InstructionsEntry {
  return {
    id: INSTRUCTIONS_ENTRY_ID,
    role: "instructions",
    contents: instructions ? [{ type: "text", id: `${INSTRUCTIONS_ENTRY_ID}-text`, text: instructions }] : [],
    tools: tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.jsonSchema },
    })),
  };
}

/**
 * A conversation to save: its instructions, its tools and its entries.
 *
 * @example
 * ```ts
 * import { exportTranscript, type TranscriptSource } from "@open-apple-models/bridge/engine";
 * const source: TranscriptSource = {
 *   instructions: "You are a guard.",
 *   tools: [],
 *   entries: [
 *     { id: "p1", role: "user", contents: [{ type: "text", id: "p1-text", text: "Hello" }], options: {} },
 *   ],
 * };
 * exportTranscript(source).transcript.entries.length; // 2: the instructions and the prompt
 * ```
 */
export interface TranscriptSource {
  /** The instructions (null: none). */
  instructions: string | null;
  /** The tools (saved with the instructions entry). */
  tools: AgentTool[];
  /** The conversation. */
  entries: ConversationEntry[];
}

/**
 * The saved transcript of a conversation.
 *
 * @example
 * ```ts
 * import { exportTranscript } from "@open-apple-models/bridge/engine";
 * const saved = exportTranscript({ instructions: "You are a guard.", tools: [], entries: [] });
 * saved.type; // "FoundationModels.Transcript"
 * ```
 */
export function exportTranscript(source: TranscriptSource): TranscriptEnvelope {
  const { instructions, tools, entries } = source;
  const all = [instructionsEntry(instructions, tools), ...entries];
  assignMissingIds(all);
  return {
    type: TRANSCRIPT_TYPE,
    version: TRANSCRIPT_VERSION,
    transcript: { entries: structuredClone(all) as unknown as JsonValue[] },
  };
}

/**
 * What a saved transcript restores.
 *
 * @example
 * ```ts
 * import {
 *   exportTranscript,
 *   type ImportedTranscript,
 *   importTranscript,
 * } from "@open-apple-models/bridge/engine";
 * const restored: ImportedTranscript = importTranscript(
 *   exportTranscript({ instructions: "You are a guard.", tools: [], entries: [] }),
 * );
 * restored.instructions; // "You are a guard."
 * ```
 */
export interface ImportedTranscript {
  /** Saved instructions text. */
  instructions: string | null;
  /** Saved tool definitions. */
  tools: TranscriptToolDefinition[];
  /** Conversation entries after the instructions. */
  entries: ConversationEntry[];
}

function fail(param: string, reason: string): never {
  throw BridgeError.invalidParams(`'${param}' is not a valid transcript: ${reason}`);
}

function readSegments(value: JsonValue | undefined, where: string, param: string): Segment[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(param, `${where}.contents must be an array`);
  return value.map((s, i) => {
    if (!isJsonObject(s)) fail(param, `${where}.contents[${i}] must be an object`);
    const id = typeof s.id === "string" ? s.id : "";
    if (s.type === "text") {
      if (typeof s.text !== "string") fail(param, `${where}.contents[${i}].text must be a string`);
      return { type: "text", id, text: s.text };
    }
    if (s.type === "structure") {
      const st = s.structure;
      if (!isJsonObject(st) || !Object.hasOwn(st, "content")) {
        fail(param, `${where}.contents[${i}].structure must be an object with 'content'`);
      }
      return {
        type: "structure",
        id,
        structure: { source: typeof st.source === "string" ? st.source : "", content: st.content },
      };
    }
    return fail(param, `${where}.contents[${i}] has unsupported type ${JSON.stringify(s.type ?? null)}`);
  });
}

/** The entries of a saved transcript: the envelope, its `transcript` member, or a whole `session/transcript` result. */
function transcriptEntries(value: JsonValue, param: string): JsonValue[] {
  const notTranscript = () =>
    BridgeError.invalidParams(`'${param}' must be a transcript object from session/transcript.`);
  if (!isJsonObject(value)) throw notTranscript();
  let envelope: JsonObject = value;
  if (!isJsonObject(envelope.transcript) || !Array.isArray(envelope.transcript.entries)) {
    if (Array.isArray(envelope.entries)) envelope = { transcript: envelope };
  }
  if (isJsonObject(envelope.transcript) && isJsonObject(envelope.transcript.transcript)) {
    envelope = envelope.transcript; // a whole session/transcript result
  }
  const inner = envelope.transcript;
  if (!isJsonObject(inner) || !Array.isArray(inner.entries)) throw notTranscript();
  return inner.entries;
}

/** Where an entry is read from, for error messages: `entries[<i>]` of parameter `param`. */
interface EntryPlace {
  where: string;
  param: string;
}

/** The instructions entry: its text (null when empty) and its tool definitions. */
function readInstructions(
  raw: JsonObject,
  at: EntryPlace,
): { instructions: string | null; tools: TranscriptToolDefinition[] } {
  const { where, param } = at;
  const text = readSegments(raw.contents, where, param).map((s) => s.type === "text" ? s.text : "").join("");
  if (raw.tools !== undefined && !Array.isArray(raw.tools)) fail(param, `${where}.tools must be an array`);
  const tools: TranscriptToolDefinition[] = [];
  for (const [k, t] of (raw.tools as JsonValue[] ?? []).entries()) {
    const fn = isJsonObject(t) && isJsonObject(t.function) ? t.function : t;
    if (!isJsonObject(fn) || typeof fn.name !== "string") {
      fail(param, `${where}.tools[${k}] must be a tool definition with a name`);
    }
    // Absent: a tool without arguments. Anything else would lose the arguments without a word.
    if (fn.parameters !== undefined && !isJsonObject(fn.parameters)) {
      const at = fn === t ? `${where}.tools[${k}].parameters` : `${where}.tools[${k}].function.parameters`;
      fail(param, `${at} must be a JSON Schema object`);
    }
    tools.push({
      type: "function",
      function: {
        name: fn.name,
        description: typeof fn.description === "string" ? fn.description : "",
        parameters: isJsonObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} },
      },
    });
  }
  return { instructions: text === "" ? null : text, tools };
}

/** A prompt entry (`role: "user"`). */
function readPrompt(raw: JsonObject, id: string, at: EntryPlace): ConversationEntry {
  return {
    id,
    role: "user",
    contents: readSegments(raw.contents, at.where, at.param),
    options: isJsonObject(raw.options) ? raw.options : {},
    ...(isJsonObject(raw.responseFormat) && typeof raw.responseFormat.name === "string" &&
        isJsonObject(raw.responseFormat.schema)
      ? { responseFormat: { name: raw.responseFormat.name, schema: raw.responseFormat.schema } }
      : {}),
  };
}

/** A response entry: an answer, or a round of tool calls. */
function readResponse(raw: JsonObject, id: string, at: EntryPlace): ConversationEntry {
  const { where, param } = at;
  if (raw.toolCalls === undefined) {
    return { id, role: "response", contents: readSegments(raw.contents, where, param), assets: [] };
  }
  if (!Array.isArray(raw.toolCalls)) fail(param, `${where}.toolCalls must be an array`);
  const calls = raw.toolCalls.map((c, k) => {
    if (!isJsonObject(c) || typeof c.id !== "string" || typeof c.name !== "string") {
      fail(param, `${where}.toolCalls[${k}] needs 'id' and 'name'`);
    }
    const args = typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {});
    return { id: c.id, name: c.name, arguments: args };
  });
  return { id, role: "response", toolCalls: calls, contents: [], assets: [] };
}

/** A tool output entry (its id is its call's). */
function readToolOutput(raw: JsonObject, id: string, at: EntryPlace): ConversationEntry {
  const callId = typeof raw.toolCallID === "string" ? raw.toolCallID : id;
  return {
    id: callId,
    role: "tool",
    toolCallID: callId,
    toolName: typeof raw.toolName === "string" ? raw.toolName : "",
    contents: readSegments(raw.contents, at.where, at.param),
  };
}

/**
 * Parses a saved transcript: the envelope, its `transcript` member, or a whole `session/transcript` result.
 * Throws -32602 with "'<param>' must be a transcript object from session/transcript." or
 * "'<param>' is not a valid transcript: <reason>".
 *
 * @example
 * ```ts
 * import { BridgeEngine, importTranscript } from "@open-apple-models/bridge/engine";
 * const engine = new BridgeEngine({}, () => {});
 * const model = { type: "scripted", steps: [{ text: "Halt!" }] };
 * await engine.call("session/create", { session: "guard", instructions: "You are a guard.", model });
 * await engine.call("session/respond", { session: "guard", prompt: "Hello" });
 * const saved = importTranscript(await engine.call("session/transcript", { session: "guard" }));
 * saved.entries.map((entry) => entry.role); // ["user", "response"]
 * ```
 */
export function importTranscript(value: JsonValue, param = "history"): ImportedTranscript {
  let instructions: string | null = null;
  let tools: TranscriptToolDefinition[] = [];
  const entries: ConversationEntry[] = [];
  transcriptEntries(value, param).forEach((raw, i) => {
    const at: EntryPlace = { where: `entries[${i}]`, param };
    if (!isJsonObject(raw)) fail(param, `${at.where} must be an object`);
    const id = typeof raw.id === "string" ? raw.id : "";
    switch (raw.role) {
      case "instructions":
        ({ instructions, tools } = readInstructions(raw, at));
        break;
      case "user":
        entries.push(readPrompt(raw, id, at));
        break;
      case "response":
        entries.push(readResponse(raw, id, at));
        break;
      case "tool":
        entries.push(readToolOutput(raw, id, at));
        break;
      default:
        fail(param, `${at.where}.role must be "instructions", "user", "response" or "tool"`);
    }
  });
  return { instructions, tools, entries };
}
