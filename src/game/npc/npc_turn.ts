/**
 * One `npc/talk` turn and one `npc/bark`: prompt framing, the reply format (structured, text, or automatic
 * with one plain-text retry), fallback lines, memory commit, the turn's event stream and the result JSON.
 * Plain TypeScript: the turn reaches its host (client tools, event delivery) through a {@link TalkHost}.
 * @module
 */
import { BridgeError, toBridgeError } from "../../protocol/errors.ts";
import type { JsonObject } from "../../protocol/json.ts";
import { Agent } from "../../agent/agent.ts";
import type { ToolChoice, ToolPolicy, ToolRecord, TurnResult, TurnSink } from "../../agent/types.ts";
import type { TurnDriver } from "../../agent/turn_host.ts";
import { recordJson, usageJson } from "../../agent/result_json.ts";
import type { Operation } from "../../util/work_queue.ts";
import { summarizeWorld } from "../world/mod.ts";
import type { Emotion } from "./emotions.ts";
import { DEFAULT_BARK_SITUATION, framePrompt, renderInstructions, retryPrompt } from "./instructions.ts";
import { LineTracker } from "./line_tracker.ts";
import { generationOptions, type Npc } from "./npc.ts";
import { cleanLine, parseStructuredReply, parseTextReply, splitTag } from "./reply_format.ts";
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
   * the bridge sends them as `npc/event` notifications.
   */
  onNpcEvent(event: JsonObject): void;
}

/** True for the errors that a fallback line or the plain-text retry answers. */
function isBlocked(error: BridgeError): boolean {
  return error.dataCode === "guardrail_violation" || error.dataCode === "refusal";
}

function worldSummary(npc: Npc): string {
  const paths = npc.options.worldContextPaths;
  return npc.world && paths.length > 0 ? summarizeWorld(npc.world.state, paths) : "";
}

/** The policy of a turn: per-turn choice > grounding tool > the NPC's toolChoice; `none` without tools. */
function turnPolicy(npc: Npc, override: ToolChoice | undefined): ToolPolicy {
  const names = npc.toolNames;
  let choice: ToolChoice;
  if (override !== undefined) {
    if (typeof override === "object" && !names.includes(override.tool)) {
      throw BridgeError.of(
        "invalid_request",
        `Tool '${override.tool}' is not available to ${npc.persona.name}.`,
      );
    }
    choice = override;
  } else if (npc.options.groundingTool !== null) choice = { tool: npc.options.groundingTool };
  else choice = npc.options.toolChoice;
  if (names.length === 0) choice = "none";
  return {
    choice,
    maxToolRounds: npc.options.maxToolRounds,
    maxToolCalls: npc.options.maxToolCalls,
    enabledTools: null,
  };
}

interface Reply {
  emotion: Emotion;
  line: string;
  playerOptions: string[];
  endsConversation: boolean;
}

/**
 * Runs one dialogue turn inside the NPC's queue operation `op`. The history and memory change only when the
 * turn succeeds (a fallback line leaves both as they were).
 */
export async function runTalk(
  npc: Npc,
  talk: { host: TalkHost; input: TalkInput; op: Operation },
): Promise<JsonObject> {
  const { host, input, op } = talk;
  await npc.settle(op);
  const policy = turnPolicy(npc, input.toolChoice);
  npc.prepareTurn();
  const options = npc.options;
  const settings = npc.replySettings();
  const framed = framePrompt({
    worldSummary: worldSummary(npc),
    situation: input.situation,
    line: input.line,
  });
  const records: ToolRecord[] = [];
  const emit = (event: JsonObject) => {
    if (!input.stream) return;
    host.onNpcEvent(event);
  };
  const tracker = new LineTracker(settings, emit);
  let mode: "structured" | "text" = options.replyFormat === "text" ? "text" : "structured";
  const signal = op.signal;
  const commit = () => {
    op.commit();
    npc.commitStage();
  };
  return await host.drive(async (driveSink) => {
    const sink: TurnSink = {
      event: (e) => {
        switch (e.type) {
          case "toolCallStarted":
            emit({
              type: "toolCallStarted",
              call: { id: e.call.id, name: e.call.name, arguments: e.call.arguments },
              execution: e.execution,
            });
            break;
          case "toolCallCompleted":
            records.push(e.record);
            emit({ type: "toolCallCompleted", record: recordJson(e.record) });
            break;
          case "partial":
            if (mode === "structured") tracker.partial(e.value);
            break;
          case "text":
            if (mode === "text") tracker.text(e.text);
            break;
        }
      },
      callClientTool: (call, s) => driveSink.callClientTool(call, s),
    };
    npc.beginStage();
    try {
      let result: TurnResult;
      let reply: Reply;
      try {
        if (options.replyFormat === "text") {
          result = await npc.agent.runTurn(
            { prompt: framed, schema: null, policy, stream: input.stream },
            sink,
            signal,
            commit,
          );
          reply = { ...parseTextReply(result.text, settings), playerOptions: [], endsConversation: false };
          input.warnings.push(...textReplyWarnings(result.text, settings));
        } else {
          try {
            result = await npc.agent.runTurn(
              { prompt: framed, schema: npc.replySchema(), policy, stream: input.stream },
              sink,
              signal,
              commit,
            );
            reply = parseStructuredReply(result.structured ?? null, settings);
            input.warnings.push(...structuredReplyWarnings(result.structured ?? null, settings));
          } catch (error) {
            const e = toBridgeError(error);
            if (options.replyFormat !== "automatic" || !isBlocked(e) || signal.aborted) throw e;
            mode = "text";
            result = await npc.agent.runTurn(
              {
                prompt: retryPrompt(framed, records),
                schema: null,
                policy: { ...policy, choice: "none" },
                stream: input.stream,
              },
              sink,
              signal,
              commit,
            );
            reply = { ...parseTextReply(result.text, settings), playerOptions: [], endsConversation: false };
            input.warnings.push(...textReplyWarnings(result.text, settings));
          }
        }
      } catch (error) {
        const e = toBridgeError(error);
        if (signal.aborted || !isBlocked(e) || !options.fallbackOnGuardrail) throw e;
        npc.discardStage();
        op.commit();
        const line = npc.nextFallbackLine();
        tracker.finish(npc.persona.defaultEmotion, line);
        return talkResult(
          npc,
          input,
          {
            emotion: npc.persona.defaultEmotion,
            line,
            playerOptions: [],
            endsConversation: false,
          },
          records,
          true,
          null,
        );
      }
      let isFallback = false;
      if (reply.line === "") {
        reply = { ...reply, line: npc.nextFallbackLine() };
        isFallback = true;
      }
      tracker.finish(reply.emotion, reply.line);
      const out = talkResult(npc, input, reply, records, isFallback, result);
      if (npc.compactionDue()) npc.startCompaction();
      return out;
    } finally {
      npc.discardStage();
    }
  });
}

function talkResult(
  npc: Npc,
  input: TalkInput,
  reply: Reply,
  records: ToolRecord[],
  isFallback: boolean,
  result: TurnResult | null,
): JsonObject {
  const out: JsonObject = {
    npc: npc.id,
    line: reply.line,
    emotion: reply.emotion,
    playerOptions: reply.playerOptions,
    endsConversation: reply.endsConversation,
    toolCalls: records.map(recordJson),
    relationship: npc.memory.relationship,
    isFallback,
    usage: usageJson(
      result?.usage ?? { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, totalTokens: 0 },
    ),
  };
  if (input.warnings.length > 0) out.warnings = input.warnings;
  return out;
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
    worldSummary: worldSummary(npc),
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
