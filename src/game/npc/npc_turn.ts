/**
 * One `npc/talk` turn and one `npc/bark`: prompt framing, the reply format (structured, text, or automatic
 * with one plain-text retry), fallback lines, memory commit, the turn's event stream and the result JSON.
 * Plain TypeScript: the turn reaches its host (client tools, event delivery) through a {@link TalkHost}.
 *
 * A turn runs in named steps: the policy and `Npc.prepareTurn` (instructions, room), {@link beginTalk} (the
 * prompt with the state the model lacks), {@link reply} (the agent turns), then {@link finishTalk} or
 * {@link fallback}.
 * @module
 */
import { BridgeError, toBridgeError } from "../../protocol/errors.ts";
import { copyJson, jsonNumber } from "../../protocol/codec.ts";
import type { JsonObject, JsonValue } from "../../protocol/json.ts";
import { Agent } from "../../agent/agent.ts";
import type {
  ToolChoice,
  ToolPolicy,
  ToolRecord,
  TurnInput,
  TurnResult,
  TurnSink,
  Usage,
} from "../../agent/types.ts";
import type { TurnDriver } from "../../agent/turn_host.ts";
import { recordJson, usageJson } from "../../agent/result_json.ts";
import type { Operation } from "../../util/work_queue.ts";
import { summarizeWorld } from "../world/mod.ts";
import type { Emotion } from "./emotions.ts";
import { DEFAULT_BARK_SITUATION, framePrompt, renderInstructions, retryPrompt } from "./instructions.ts";
import { LineTracker } from "./line_tracker.ts";
import { generationOptions, type Npc } from "./npc.ts";
import { defaultOptions } from "./npc_options.ts";
import type { StateLines } from "./npc_context.ts";
import {
  cleanLine,
  parseStructuredReply,
  parseTextReply,
  type ReplySettings,
  splitTag,
} from "./reply_format.ts";
import { structuredReplyWarnings, textReplyWarnings } from "./reply_check.ts";

/** What the player does in one turn. */
export interface TalkInput {
  /** What the player says ("" = nothing). */
  line: string;
  /** What is happening right now (this turn only), or null. */
  situation: string | null;
  /** Emit the turn's events to {@link TalkHost.onNpcEvent}. */
  stream: boolean;
  /** Per-turn tool choice override. */
  toolChoice?: ToolChoice;
  /** Warnings to return with the result. */
  warnings: string[];
}

/** What a dialogue turn needs from the host that runs it. */
export interface TalkHost {
  /** Runs the turn with the host's sink (client tool calls go through it). */
  drive: TurnDriver;
  /**
   * Receives each event of a streamed turn, in order (`emotion`, `lineDelta`, `toolCallStarted`, …);
   * the bridge sends them as `npc/event` notifications. Each event is made for that one notification;
   * while {@link TalkHost.handsOver}, it is also plain JSON that shares nothing with the turn.
   */
  onNpcEvent(event: JsonObject): void;
  /** `HandlerContext.handsOver`: then events and the result are plain JSON that share nothing. */
  readonly handsOver: boolean;
  /** `HandlerContext.handOver`, for the result (see {@link TalkHost.handsOver}). */
  handOver<T extends JsonValue>(value: T): T;
}

/** What a scripted NPC's invalid answer adds when a text step played where the NPC replies in JSON. */
const TEXT_STEP_HINT = "A text step played where the NPC replies in JSON";

/**
 * A scripted NPC's invalid answer, with what to change added for the script's author (who reads it in a
 * `deno run` script or `oam npc`): a text step played where the reply is JSON (the default reply format
 * starts structured), or a reply step whose `player_options` do not number `playerOptionCount`. Any other
 * error is returned as it is.
 */
function scriptStepHint(npc: Npc, error: BridgeError): BridgeError {
  const problem = error.data.problem;
  if (
    error.dataCode !== "generation_failed" || typeof problem !== "string" ||
    !npc.agent.model.kind.startsWith("scripted")
  ) {
    return error;
  }
  const hint = problem.startsWith("the answer is not valid JSON")
    ? `${TEXT_STEP_HINT} (reply format '${npc.options.replyFormat}'): make the step a json reply step, or ` +
      `give the NPC options.replyFormat "text" (docs/scripting.md, "The reply step").`
    : playerOptionsHint(npc, problem, error.message);
  if (hint === null) return error;
  return new BridgeError(error.code, error.dataCode, `${error.message} ${hint}`, error.data).withCause(error);
}

/**
 * What to change when a reply step's `player_options` do not fit the NPC's `playerOptionCount` (the schema
 * holds the reply to exactly that many, and leaves the key out at 0), or null for another problem.
 */
function playerOptionsHint(npc: Npc, problem: string, message: string): string | null {
  const count = npc.options.playerOptionCount;
  const about =
    /^the answer does not match the response schema: (?:#\/properties\/player_options: must NOT have (?:fewer|more) than \d+ items|#: must have required property 'player_options'|#: must NOT have additional properties 'player_options')/;
  // A step that has the key misspelt (`playerOptions`) is told so already.
  if (!about.test(problem) || message.includes("; the step has '")) return null;
  if (count === 0) {
    return "The NPC's options.playerOptionCount is 0: a reply step gives no player_options (change the step, " +
      "or the option).";
  }
  const is = count === defaultOptions(null).playerOptionCount ? `is ${count} (the default)` : `is ${count}`;
  return `The NPC's options.playerOptionCount ${is}: a reply step gives exactly that many player_options ` +
    "(change the step, or the option; 0 leaves player_options out).";
}

/** True for the errors that a fallback line or the plain-text retry answers. */
function isBlocked(error: BridgeError): boolean {
  return error.dataCode === "guardrail_violation" || error.dataCode === "refusal";
}

function worldLines(npc: Npc): string[] {
  const paths = npc.options.worldContextPaths;
  const summary = npc.world && paths.length > 0 ? summarizeWorld(npc.world.state, paths) : "";
  return summary === "" ? [] : summary.split("\n");
}

interface Reply {
  emotion: Emotion;
  line: string;
  playerOptions: string[];
  endsConversation: boolean;
}

/** A reply and the turn that produced it. */
interface Replied {
  result: TurnResult;
  reply: Reply;
}

/** One dialogue turn in progress: what its steps share. */
interface Talk {
  npc: Npc;
  input: TalkInput;
  op: Operation;
  policy: ToolPolicy;
  settings: ReplySettings;
  /** The state lines the prompt carries (told to the model once the turn commits). */
  state: StateLines;
  /** The framed prompt: state blocks, situation, the player's line. */
  framed: string;
  /** Tool records of every attempt. */
  records: ToolRecord[];
  tracker: LineTracker;
  /** Which events feed the line tracker: partial values (structured) or text (text replies and retries). */
  mode: "structured" | "text";
  emit: (event: JsonObject) => void;
  /** {@link TalkHost.handsOver}: events and the result carry copies of what they would share. */
  own: boolean;
  host: TalkHost;
}

/**
 * Runs one dialogue turn inside the NPC's queue operation `op`. The history and memory change only when the
 * turn succeeds (a fallback line leaves both as they were).
 */
export async function runTalk(
  npc: Npc,
  request: { host: TalkHost; input: TalkInput; op: Operation },
): Promise<JsonObject> {
  const { host, input, op } = request;
  await npc.settle(op);
  const policy = npc.turnPolicy(input.toolChoice);
  await npc.prepareTurn(op);
  const talk = beginTalk(npc, host, input, op, policy);
  return await host.drive(async (driveSink) => {
    const sink = talkSink(talk, driveSink);
    npc.beginStage();
    try {
      let replied: Replied;
      try {
        replied = await reply(talk, sink);
      } catch (error) {
        return fallback(talk, error);
      }
      return finishTalk(talk, replied);
    } finally {
      npc.discardStage();
    }
  });
}

/** The turn's prompt with the state the model lacks, and what the turn's steps share. */
function beginTalk(npc: Npc, host: TalkHost, input: TalkInput, op: Operation, policy: ToolPolicy): Talk {
  const state = npc.context.compose(npc.stateView(), npc.agent.entries, npc.agent.hiddenByTrim);
  const framed = framePrompt({
    memory: state.memory,
    world: state.world,
    situation: input.situation,
    line: input.line,
  });
  const settings = npc.replySettings();
  const emit = input.stream ? (event: JsonObject) => host.onNpcEvent(event) : () => {};
  return {
    npc,
    input,
    op,
    policy,
    settings,
    state,
    framed,
    records: [],
    tracker: new LineTracker(settings, emit),
    mode: npc.options.replyFormat === "text" ? "text" : "structured",
    emit,
    own: host.handsOver,
    host,
  };
}

/**
 * A tool record's JSON; while {@link Talk.own}, plain JSON with copies of the record's arguments and output
 * (the transcript keeps the record).
 */
function recordFor(talk: Talk, record: ToolRecord): JsonObject {
  if (!talk.own) return recordJson(record);
  const { call } = record;
  return {
    call: { id: call.id, name: call.name, arguments: copyJson(call.arguments) },
    output: copyJson(record.output),
    isError: record.isError,
    durationSeconds: jsonNumber(record.durationSeconds),
  };
}

/** The turn's sink: tool events become `npc/event`s, partial values and text feed the line tracker. */
function talkSink(talk: Talk, driveSink: TurnSink): TurnSink {
  return {
    event: (e) => {
      switch (e.type) {
        case "toolCallStarted":
          talk.emit({
            type: "toolCallStarted",
            call: {
              id: e.call.id,
              name: e.call.name,
              arguments: talk.own ? copyJson(e.call.arguments) : e.call.arguments,
            },
            execution: e.execution,
          });
          break;
        case "toolCallCompleted":
          talk.records.push(e.record);
          talk.emit({ type: "toolCallCompleted", record: recordFor(talk, e.record) });
          break;
        case "partial":
          if (talk.mode === "structured") talk.tracker.partial(e.value);
          break;
        case "text":
          if (talk.mode === "text") talk.tracker.text(e.text);
          break;
      }
    },
    callClientTool: (call, s) => driveSink.callClientTool(call, s),
  };
}

/**
 * The reply: structured (with `automatic`, one plain-text retry with tools off when it is blocked), or
 * text. Throws what the last attempt threw.
 */
async function reply(talk: Talk, sink: TurnSink): Promise<Replied> {
  const format = talk.npc.options.replyFormat;
  if (format === "text") return await textReply(talk, sink, talk.framed, talk.policy);
  try {
    return await structuredReply(talk, sink);
  } catch (error) {
    const e = toBridgeError(error);
    if (format !== "automatic" || !isBlocked(e) || talk.op.signal.aborted) throw scriptStepHint(talk.npc, e);
    talk.mode = "text";
    // Tools off, but the same tool list shown (showRespondDirectly and the offered tools are kept).
    const policy: ToolPolicy = { ...talk.policy, choice: "none" };
    return await textReply(talk, sink, retryPrompt(talk.framed, talk.records), policy);
  }
}

/** Runs the agent turn; the commit point also commits the memory stage. */
function agentTurn(talk: Talk, sink: TurnSink, input: TurnInput): Promise<TurnResult> {
  const commit = () => {
    talk.op.commit();
    talk.npc.commitStage();
  };
  return talk.npc.agent.runTurn(input, sink, talk.op.signal, commit);
}

async function structuredReply(talk: Talk, sink: TurnSink): Promise<Replied> {
  const result = await agentTurn(talk, sink, {
    prompt: talk.framed,
    schema: talk.npc.replySchema(),
    policy: talk.policy,
    stream: talk.input.stream,
  });
  const structured = result.structured ?? null;
  talk.input.warnings.push(...structuredReplyWarnings(structured, talk.settings));
  return { result, reply: parseStructuredReply(structured, talk.settings) };
}

async function textReply(talk: Talk, sink: TurnSink, prompt: string, policy: ToolPolicy): Promise<Replied> {
  const result = await agentTurn(talk, sink, { prompt, schema: null, policy, stream: talk.input.stream });
  talk.input.warnings.push(...textReplyWarnings(result.text, talk.settings));
  const parsed = parseTextReply(result.text, talk.settings);
  return { result, reply: { ...parsed, playerOptions: [], endsConversation: false } };
}

/** A blocked turn answered with a fallback line (nothing committed); any other failure is thrown. */
function fallback(talk: Talk, error: unknown): JsonObject {
  const e = toBridgeError(error);
  const npc = talk.npc;
  if (talk.op.signal.aborted || !isBlocked(e) || !npc.options.fallbackOnGuardrail) throw e;
  npc.discardStage();
  talk.op.commit();
  const line = npc.nextFallbackLine();
  const emotion = npc.persona.defaultEmotion;
  talk.tracker.finish(emotion, line);
  return talkResult(talk, { emotion, line, playerOptions: [], endsConversation: false }, true, null);
}

/** A committed turn: the model now knows the state it was told; the result; compaction when due. */
function finishTalk(talk: Talk, replied: Replied): JsonObject {
  const npc = talk.npc;
  npc.context.delivered(talk.state, npc.agent.entries, npc.agent.hiddenByTrim);
  let reply = replied.reply;
  let isFallback = false;
  if (reply.line === "") {
    reply = { ...reply, line: npc.nextFallbackLine() };
    isFallback = true;
  }
  talk.tracker.finish(reply.emotion, reply.line);
  const out = talkResult(talk, reply, isFallback, replied.result);
  if (npc.compactionWanted()) npc.startCompaction();
  return out;
}

/** `usageJson` with the numbers JSON gives back. */
function ownUsage(usage: Usage): JsonObject {
  return {
    inputTokens: jsonNumber(usage.inputTokens),
    cachedInputTokens: jsonNumber(usage.cachedInputTokens),
    outputTokens: jsonNumber(usage.outputTokens),
    totalTokens: jsonNumber(usage.inputTokens + usage.outputTokens),
  };
}

/** The result; while {@link Talk.own}, plain JSON that shares nothing, handed over to the client. */
function talkResult(talk: Talk, reply: Reply, isFallback: boolean, result: TurnResult | null): JsonObject {
  const own = talk.own;
  const used = result?.usage ?? { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, totalTokens: 0 };
  const relationship = talk.npc.memory.relationship;
  const out: JsonObject = {
    npc: talk.npc.id,
    line: reply.line,
    emotion: reply.emotion,
    playerOptions: own ? [...reply.playerOptions] : reply.playerOptions,
    endsConversation: reply.endsConversation,
    toolCalls: talk.records.map((record) => recordFor(talk, record)),
    relationship: own ? jsonNumber(relationship) : relationship,
    isFallback,
    usage: own ? ownUsage(used) : usageJson(used),
  };
  if (talk.input.warnings.length > 0) out.warnings = own ? [...talk.input.warnings] : talk.input.warnings;
  return own ? talk.host.handOver(out) : out;
}

const NO_TOOLS: TurnSink = {
  event: () => {},
  callClientTool: () => Promise.resolve({ output: "No tools are available.", isError: true }),
};

/**
 * A bark: one short line from a fresh one-off agent on the NPC's model, without history, memory or tools.
 * Runs concurrently with the NPC's turns. Errors are returned as they are.
 */
export async function runBark(
  npc: Npc,
  bark: { situation: string | null; signal: AbortSignal },
): Promise<JsonObject> {
  const { situation, signal } = bark;
  const persona = npc.persona;
  const options = npc.options;
  const instructions = renderInstructions(persona, {
    maxSentences: 1,
    hasFactTools: false,
    secrets: "hidden",
    extraInstructions: options.extraInstructions,
    rememberFact: false,
    changeRelationship: false,
    emotionTag: false,
  });
  const prompt = framePrompt({
    world: worldLines(npc),
    situation: situation !== null && situation.trim() !== "" ? situation : DEFAULT_BARK_SITUATION,
    line: "",
  });
  const agent = new Agent({
    model: npc.agent.model,
    instructions,
    settings: {
      options: { ...generationOptions(options), maximumResponseTokens: options.barkMaximumTokens },
      trimHistory: false,
    },
  });
  const result = await agent.runTurn(
    {
      prompt,
      schema: null,
      policy: { choice: "none", maxToolRounds: 0, maxToolCalls: 0, enabledTools: null },
      stream: false,
    },
    NO_TOOLS,
    signal,
  );
  let line = "";
  for (const raw of result.text.split(/\r?\n/)) {
    const split = splitTag(raw, true);
    const rest = split.kind === "split" && split.tag !== null ? split.rest : raw;
    line = cleanLine(rest, persona.name);
    if (line !== "") break;
  }
  if (line === "") throw BridgeError.of("generation_failed", "The model produced an empty bark.");
  return { npc: npc.id, line };
}
