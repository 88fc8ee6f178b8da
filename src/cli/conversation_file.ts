/**
 * Saved conversations of `oam respond` and `oam chat` (`--save-transcript`, `/save`, `--resume`):
 * `{"transcript": <session/transcript envelope>, "modelName", "oam": {version: 1, tools?, toolsDir?, schema?,
 * pending?, script?, temporary?}}`. `pending` holds the tool calls a paused `oam respond` is waiting for (exit 10) and the
 * remaining budget; resuming appends the tool outputs in call order and continues with an empty prompt.
 * @module
 */
import { dirname as folderOf, relative, resolve } from "node:path";
import { compactJson, isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { assignMissingIds, type TranscriptEntry } from "../protocol/transcript.ts";
import { modelVisibleOutput } from "../agent/tool_runtime.ts";
import { oamCommand } from "./invocation.ts";
import { CliError, isPermissionError } from "./cli_error.ts";
import type { ToolAnswer } from "./command_tools.ts";
import { readJsonInput } from "./input.ts";

/** A tool call the model made: `{id, name, arguments}`. */
export interface CallInfo extends JsonObject {
  /** Call id (the transcript's and the wire's). */
  id: string;
  /** Tool name. */
  name: string;
  arguments: JsonObject;
}

/** A paused turn. */
export interface PendingState {
  /** Every call of the paused round, in call order. */
  calls: CallInfo[];
  /** Outputs of the calls that were already answered (command tools, budget errors). */
  outputs: Array<{ id: string; output: JsonValue; isError: boolean }>;
  /** Tool rounds already used by the turn. */
  roundsUsed: number;
  /** Tool calls already used by the turn. */
  callsUsed: number;
  /** The turn's round budget. */
  maxToolRounds: number;
  /** The turn's call budget. */
  maxToolCalls: number;
  /** The turn's tool choice (JSON form). */
  toolChoice: JsonValue;
}

/** The `oam` member of a saved conversation. */
export interface OamSection {
  /** Format version (1). */
  version: 1;
  /** Tool definitions as written in the tools file (with `x-oam`). */
  tools?: JsonObject[];
  /** Directory relative command paths resolve against (in the file: relative to the file's folder). */
  toolsDir?: string;
  /** JSON Schema of a paused structured turn. */
  schema?: JsonObject;
  /** The paused turn, if any. */
  pending?: PendingState;
  /**
   * Where a scripted model stopped: its script's digest and the steps played. Resuming with the same script
   * continues from there; another script starts from its first step.
   */
  script?: { digest: string; played: number };
  /** True for a file oam created itself (no --save-transcript): removed once the resumed turn completes. */
  temporary?: boolean;
}

/** A saved conversation. */
export interface ConversationFile {
  /** The `session/transcript` envelope. */
  transcript: JsonObject;
  /** Model kind that produced it (`system`, `scripted`, `openai`). */
  modelName: string;
  /** CLI extras. */
  oam: OamSection;
}

/**
 * The `io_error` of a file that could not be written, saying why in words: "Cannot write 'saves/a.json': the
 * folder 'saves' does not exist."
 *
 * @example
 * ```ts
 * import { writeError } from "./conversation_file.ts";
 * writeError("saves/a.json", new Deno.errors.NotFound("os error 2")).message;
 * // "Cannot write 'saves/a.json': the folder 'saves' does not exist."
 * ```
 */
export function writeError(path: string, error: unknown): CliError {
  const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  const folder = cut < 0 ? "." : path.slice(0, cut) || "/";
  const why = isPermissionError(error)
    ? "permission denied (needs --allow-write)"
    : error instanceof Deno.errors.NotFound
    ? `the folder '${folder}' does not exist`
    : error instanceof Deno.errors.IsADirectory
    ? "it is a folder"
    : (error as Error).message;
  return new CliError("io_error", `Cannot write '${path}': ${why}.`);
}

/**
 * Refuses a path a conversation cannot be written to, before any turn runs: its folder is missing, or it
 * is a folder. The same `io_error` as {@link writeConversation} would give after the turn; other failures
 * (permissions, a full disk) are left to the write itself.
 *
 * @example
 * ```ts
 * import { checkSaveTarget } from "./conversation_file.ts";
 * await checkSaveTarget("talk.json"); // fine: the current folder exists
 * // await checkSaveTarget("saves/a.json") throws "Cannot write 'saves/a.json': the folder 'saves' does not exist."
 * ```
 */
export async function checkSaveTarget(path: string): Promise<void> {
  const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  const folder = cut < 0 ? "." : path.slice(0, cut) || "/";
  const kind = async (p: string) => {
    try {
      return (await Deno.stat(p)).isDirectory ? "folder" : "file";
    } catch (error) {
      return error instanceof Deno.errors.NotFound ? "missing" : "unknown";
    }
  };
  if (await kind(path) === "folder") throw writeError(path, new Deno.errors.IsADirectory(path));
  if (await kind(folder) === "missing") throw writeError(path, new Deno.errors.NotFound(folder));
}

/** Writes a conversation file (pretty JSON). */
export async function writeConversation(path: string, file: ConversationFile): Promise<void> {
  const oam = cleanOam(file.oam);
  // Relative to the file's folder: a conversation checked in with its tools file stays the same bytes in any
  // checkout, and resumes wherever the folder moved.
  if (typeof oam.toolsDir === "string") {
    oam.toolsDir = relative(folderOf(resolve(path)), resolve(oam.toolsDir)) || ".";
  }
  const out: JsonObject = { transcript: file.transcript, modelName: file.modelName, oam };
  try {
    await Deno.writeTextFile(path, `${JSON.stringify(out, null, 2)}\n`);
  } catch (error) {
    throw writeError(path, error);
  }
}

function cleanOam(oam: OamSection): JsonObject {
  const out: JsonObject = { version: 1 };
  if (oam.tools !== undefined) out.tools = oam.tools;
  if (oam.toolsDir !== undefined) out.toolsDir = oam.toolsDir;
  if (oam.schema !== undefined) out.schema = oam.schema;
  if (oam.pending !== undefined) out.pending = oam.pending as unknown as JsonObject;
  if (oam.script !== undefined) out.script = { digest: oam.script.digest, played: oam.script.played };
  if (oam.temporary === true) out.temporary = true;
  return out;
}

function parsePending(value: JsonValue, label: string): PendingState {
  const bad = () => CliError.invalidInput(`${label}: 'oam.pending' is malformed.`);
  if (!isJsonObject(value) || !Array.isArray(value.calls) || !Array.isArray(value.outputs ?? [])) throw bad();
  const calls = value.calls.map((c) => {
    if (!isJsonObject(c) || typeof c.id !== "string" || typeof c.name !== "string") throw bad();
    return { id: c.id, name: c.name, arguments: isJsonObject(c.arguments) ? c.arguments : {} };
  });
  const outputs = (value.outputs as JsonValue[] ?? []).map((o) => {
    if (!isJsonObject(o) || typeof o.id !== "string") throw bad();
    return { id: o.id, output: o.output ?? null, isError: o.isError === true };
  });
  const int = (v: JsonValue | undefined, d: number) =>
    typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : d;
  return {
    calls,
    outputs,
    roundsUsed: int(value.roundsUsed, 0),
    callsUsed: int(value.callsUsed, 0),
    maxToolRounds: int(value.maxToolRounds, 4),
    maxToolCalls: int(value.maxToolCalls, 12),
    toolChoice: value.toolChoice ?? "auto",
  };
}

/**
 * The error of an NPC save (`oam npc`'s `/state`) given where another file was expected (a conversation, a
 * persona file): it names the command that loads it.
 */
export function npcSaveGiven(label: string): CliError {
  return CliError.invalidInput(
    `${label} is an NPC save (from /state): load it with '${oamCommand()} npc --restore ${label}'.`,
  );
}

/**
 * Reads a conversation file. Also accepts a bare transcript (`session/transcript` result or its
 * `transcript` value), which resumes with the tools saved in it. An NPC save is refused with the command
 * that loads it.
 */
export async function readConversation(path: string): Promise<ConversationFile> {
  const value = await readJsonInput(path, "--resume");
  const label = path === "-" ? "<stdin>" : path;
  if (!isJsonObject(value)) throw CliError.invalidInput(`${label}: expected a saved conversation object.`);
  if (isJsonObject(value.oam) && value.oam.kind === "npc") throw npcSaveGiven(label);
  if (!isJsonObject(value.oam) && isJsonObject(value.persona) && value.transcript === undefined) {
    throw CliError.invalidInput(
      `${label} is an NPC persona file, not a conversation: talk to it with '${oamCommand()} npc ${label}' ` +
        `('${oamCommand()} npc --restore ${label}' if it is an npc/state save).`,
    );
  }
  if (!isJsonObject(value.oam)) {
    checkEntries(value, label);
    return { transcript: value, modelName: "", oam: { version: 1 } };
  }
  if (!isJsonObject(value.transcript)) throw CliError.invalidInput(`${label}: 'transcript' is missing.`);
  checkEntries(value.transcript, label);
  const oam = value.oam;
  if (oam.version !== 1) {
    throw CliError.invalidInput(
      `${label}: unsupported 'oam.version' ${JSON.stringify(oam.version ?? null)}.`,
    );
  }
  const section: OamSection = { version: 1 };
  if (oam.tools !== undefined && oam.tools !== null) {
    if (!Array.isArray(oam.tools) || !oam.tools.every(isJsonObject)) {
      throw CliError.invalidInput(`${label}: 'oam.tools' must be an array of tool definitions.`);
    }
    section.tools = oam.tools as JsonObject[];
  }
  if (typeof oam.toolsDir === "string") {
    // Relative to the file's folder (an absolute one, as older files hold, stays as it is).
    section.toolsDir = path === "-" ? resolve(oam.toolsDir) : resolve(folderOf(resolve(path)), oam.toolsDir);
  }
  if (isJsonObject(oam.schema)) section.schema = oam.schema;
  if (oam.pending !== undefined && oam.pending !== null) section.pending = parsePending(oam.pending, label);
  const script = oam.script;
  if (isJsonObject(script) && typeof script.digest === "string") {
    const played = script.played;
    if (typeof played !== "number" || !Number.isInteger(played) || played < 0) {
      throw CliError.invalidInput(`${label}: 'oam.script.played' must be a whole number of steps.`);
    }
    section.script = { digest: script.digest, played };
  }
  if (oam.temporary === true) section.temporary = true;
  return {
    transcript: value.transcript,
    modelName: typeof value.modelName === "string" ? value.modelName : "",
    oam: section,
  };
}

/** A file whose transcript has no entries is not a conversation (the bridge would blame its 'history'). */
function checkEntries(transcript: JsonObject, label: string): void {
  try {
    entriesOf(transcript);
  } catch {
    throw CliError.invalidInput(
      `${label}: not a saved conversation (from --save-transcript or /save) or a session/transcript result: ` +
        "it has no transcript entries.",
    );
  }
}

function entriesOf(envelope: JsonObject): JsonValue[] {
  let inner: JsonValue = envelope;
  if (isJsonObject(inner) && isJsonObject(inner.transcript) && isJsonObject(inner.transcript.transcript)) {
    inner = inner.transcript; // a whole session/transcript result
  }
  if (isJsonObject(inner) && isJsonObject(inner.transcript) && Array.isArray(inner.transcript.entries)) {
    return inner.transcript.entries;
  }
  if (isJsonObject(inner) && Array.isArray(inner.entries)) return inner.entries;
  throw CliError.invalidInput("The saved conversation has no transcript entries.");
}

/**
 * A copy of `envelope` (a session/transcript envelope) with `entries` appended, their missing (`""`) ids
 * given as the bridge gives them: the same conversation is saved with the same ids.
 */
export function appendEntries(envelope: JsonObject, entries: JsonObject[]): JsonObject {
  const copy = structuredClone(envelope) as JsonObject;
  const all = entriesOf(copy);
  all.push(...entries);
  assignMissingIds(all.filter(isEntryShaped) as unknown as TranscriptEntry[]);
  return copy;
}

/** An entry with a string id, segments with string ids and tool calls that are objects (what assignMissingIds reads). */
function isEntryShaped(entry: JsonValue): boolean {
  return isJsonObject(entry) && typeof entry.id === "string" && Array.isArray(entry.contents) &&
    entry.contents.every((s) => isJsonObject(s) && typeof s.id === "string") &&
    (!Array.isArray(entry.toolCalls) || entry.toolCalls.every(isJsonObject));
}

/** The tool-calls entry of a paused round. */
export function toolCallsEntry(calls: CallInfo[]): JsonObject {
  return {
    id: "", // given by appendEntries
    role: "response",
    toolCalls: calls.map((c) => ({ id: c.id, name: c.name, arguments: compactJson(c.arguments) })),
    contents: [],
    assets: [],
  };
}

/** A tool-output entry (errors as "Error: …" text, JSON values as structure segments). */
export function toolOutputEntry(call: CallInfo, answer: ToolAnswer): JsonObject {
  const segment: JsonObject = !answer.isError && typeof answer.output !== "string"
    ? { type: "structure", id: "", structure: { source: call.name, content: answer.output } }
    : { type: "text", id: "", text: modelVisibleOutput(answer) };
  return { id: call.id, role: "tool", toolCallID: call.id, toolName: call.name, contents: [segment] };
}
