/**
 * History trimming: hides the oldest complete turns from the model when the context would overflow.
 * Only for models that ask for it (the system model); the session transcript keeps every entry.
 * @module
 */
import { compactJson } from "../protocol/json.ts";
import type { ConversationEntry } from "../protocol/transcript.ts";
import type { LanguageModel } from "../models/language_model.ts";
import type { AgentSettings, AgentTool } from "./types.ts";
import { entryBytes } from "./entry_text.ts";
import { utf8Length } from "../util/text.ts";

/** Trimmed history and how many entries were hidden. */
export interface TrimResult {
  history: ConversationEntry[];
  trimmedEntries: number;
}

function turnStarts(entries: ConversationEntry[]): number[] {
  const starts: number[] = [];
  entries.forEach((e, i) => {
    if (e.role === "user") starts.push(i);
  });
  return starts;
}

/** What {@link trimHistory} measures. */
export interface TrimInput {
  /** The model (its context size and token counter). */
  model: LanguageModel;
  /** The agent's settings (reserved response tokens, generation options). */
  settings: AgentSettings;
  /** The instructions the step sends. */
  instructions: string | null;
  /** The tools the step offers. */
  tools: AgentTool[];
  /** The committed history. */
  entries: ConversationEntry[];
  /**
   * The UTF-8 length of `entries`' text when the caller keeps it (the agent does, incrementally): the cheap
   * first estimate then reads no entry, and a turn does not cost as much as the whole conversation.
   */
  entriesBytes?: number;
}

/** True when the steps of `model` go through {@link trimHistory}: the model asks for it and the agent has it on. */
export function needsTrim(model: LanguageModel, settings: AgentSettings): boolean {
  return model.trimsHistory && settings.trimHistory;
}

/**
 * The history the model should see. Cheap estimate first (UTF-8 bytes / 3: a token for every 3 characters of
 * English, a token a character of Japanese or Chinese); only when it exceeds 60% of the budget are tokens
 * counted (the backend's counter, else the estimate), and the oldest complete turns cut until it fits, keeping
 * at least the most recent turn.
 */
export async function trimHistory(input: TrimInput): Promise<TrimResult> {
  const { model, settings, instructions, tools, entries } = input;
  const budget = model.contextSize - settings.reservedResponseTokens;
  const fixed = utf8Length(instructions ?? "") +
    tools.reduce(
      (n, t) => n + t.name.length + utf8Length(t.description) + utf8Length(compactJson(t.generationSchema)),
      0,
    );
  let bytes = input.entriesBytes;
  if (bytes === undefined) {
    bytes = 0;
    for (const e of entries) bytes += entryBytes(e);
  }
  const total = fixed + bytes + 16 * entries.length;
  if (total / 3 <= budget * 0.6) return { history: entries, trimmedEntries: 0 };
  const count = async (history: ConversationEntry[]): Promise<number> => {
    if (model.countTokens) {
      try {
        return await model.countTokens({
          instructions,
          tools: tools.map((t) => ({
            name: t.name,
            description: t.description,
            parameters: t.generationSchema,
            jsonSchema: t.jsonSchema,
          })),
          toolCallingMode: "allowed",
          history,
          prompt: "",
          responseSchema: null,
          options: settings.options,
          stream: false,
        });
      } catch {
        // fall back to the estimate
      }
    }
    let estimate = fixed;
    for (const e of history) estimate += entryBytes(e) + 16;
    return Math.ceil(estimate / 3);
  };
  if (await count(entries) <= budget) return { history: entries, trimmedEntries: 0 };
  const starts = turnStarts(entries).filter((i) => i > 0);
  let cut = starts.length > 0 ? starts[starts.length - 1] : 0;
  for (const from of starts) {
    if (await count(entries.slice(from)) <= budget) {
      cut = from;
      break;
    }
  }
  return { history: entries.slice(cut), trimmedEntries: cut };
}
