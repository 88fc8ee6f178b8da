/**
 * The NPC reply: the structured reply schema, defensive parsing of structured and `[emotion] line` text
 * replies, and the line cleanup used both for final lines and while streaming.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../protocol/json.ts";
import type { ResponseSchema } from "../../models/language_model.ts";
import { convertSchema } from "../../schema/mod.ts";
import { type Emotion, EMOTIONS, parseEmotion } from "./emotions.ts";

/** Root type name of the reply schema. */
export const REPLY_SCHEMA_NAME = "NPCReply";

/** Longest text after an opening `[` that can still be an emotion tag. */
export const MAX_TAG_LENGTH = 24;

/** What reply parsing needs to know. */
export interface ReplySettings {
  /** The NPC's name (speaker labels, schema descriptions). */
  name: string;
  /** Emotions the model may choose from (empty = all). */
  emotions: readonly Emotion[];
  /** Emotion when the model gives none that is usable. */
  defaultEmotion: Emotion;
  /** Reply length in sentences. */
  maxSentences: number;
  /** Suggested player replies (0…4). */
  playerOptionCount: number;
  /** Whether `ends_conversation` is offered. */
  canEndConversation: boolean;
}

/** A parsed reply. */
export interface ParsedReply {
  /** The chosen emotion. */
  emotion: Emotion;
  /** The cleaned spoken line ("" when nothing usable). */
  line: string;
  /** Cleaned suggestions. */
  playerOptions: string[];
  /** Whether the NPC ends the conversation. */
  endsConversation: boolean;
}

/** The emotions offered to the model (all when none are configured). */
export function allowedEmotions(s: ReplySettings): Emotion[] {
  return s.emotions.length === 0 ? [...EMOTIONS] : [...s.emotions];
}

/** Number of suggested player replies (0…4). */
export function optionCount(s: ReplySettings): number {
  return Math.max(0, Math.min(4, s.playerOptionCount));
}

/** The structured reply schema: `emotion`, `line`, `player_options`?, `ends_conversation`? (all required). */
export function replySchema(s: ReplySettings): ResponseSchema {
  const n = Math.max(1, s.maxSentences);
  const sentences = n === 1 ? "one short sentence" : `at most ${n} short sentences`;
  const properties: JsonObject = {
    emotion: {
      type: "string",
      enum: allowedEmotions(s),
      description: `How ${s.name} feels right now.`,
    },
    line: {
      type: "string",
      description:
        `What ${s.name} says out loud, in character, in ${sentences}. After using a tool, mention ` +
        `the specific facts it returned (items, prices, numbers).`,
    },
  };
  const count = optionCount(s);
  if (count > 0) {
    properties.player_options = {
      type: "array",
      items: { type: "string" },
      minItems: count,
      maxItems: count,
      description: `${count} short, different things the player could say next.`,
    };
  }
  if (s.canEndConversation) {
    properties.ends_conversation = {
      type: "boolean",
      description: `true only when ${s.name} ends the conversation now.`,
    };
  }
  const jsonSchema: JsonObject = {
    type: "object",
    additionalProperties: false,
    properties,
    required: Object.keys(properties),
  };
  return {
    name: REPLY_SCHEMA_NAME,
    generationSchema: convertSchema(jsonSchema, REPLY_SCHEMA_NAME).generationSchema,
    jsonSchema,
  };
}

/** The emotion for a model's word: lenient, limited to the allowed ones, else the default. */
export function chooseEmotion(word: string, s: ReplySettings): Emotion {
  const emotion = parseEmotion(word);
  if (emotion === null) return s.defaultEmotion;
  if (s.emotions.length > 0 && !s.emotions.includes(emotion)) return s.defaultEmotion;
  return emotion;
}

/** Speaker labels a model may put before a line, in matching order (`：` is the full-width colon of Japanese). */
function speakerLabels(name: string): string[] {
  return [
    `${name} says:`,
    `**${name}**:`,
    `**${name}:**`,
    `*${name}*:`,
    `${name}:`,
    `**${name}**：`,
    `${name}：`,
  ];
}

const OPENING_QUOTES = new Map([['"', '"'], ["“", "”"], ["«", "»"], ["„", "“"], ["「", "」"], ["『", "』"]]);
const DOUBLE_QUOTES = /["“”«»„「」『』]/;

/** Case-insensitive prefix test that keeps lengths aligned with the original text. */
function startsWithLabel(text: string, label: string): boolean {
  return text.length >= label.length && text.slice(0, label.length).toLowerCase() === label.toLowerCase();
}

function stripLabel(text: string, name: string): string {
  for (const label of speakerLabels(name)) {
    if (startsWithLabel(text, label)) return text.slice(label.length).trim();
  }
  return text;
}

/**
 * Cleans a final line: trimmed, a leading speaker label ("Gorm:", "**Gorm**:", "Gorm says:") removed, and
 * quotes around the whole line removed when there are no quotes inside (a lone opening quote too).
 */
export function cleanLine(text: string, name: string): string {
  return unquote(stripLabel(text.trim(), name));
}

/** Removes quotes around the whole text when there are none inside (and a lone opening quote). */
function unquote(text: string): string {
  let t = text.trim();
  const first = t[0];
  const close = first === undefined ? undefined : OPENING_QUOTES.get(first);
  if (close !== undefined) {
    const inner = t.slice(1);
    if (inner.endsWith(close) && !DOUBLE_QUOTES.test(inner.slice(0, -1))) t = inner.slice(0, -1).trim();
    else if (!DOUBLE_QUOTES.test(inner)) t = inner.trim();
  }
  return t;
}

/**
 * The part of a growing line that can be shown already: nothing while the text could still turn into a
 * speaker label; a leading opening quote dropped; trailing whitespace and closing quotes held back (they
 * may be trimmed from the final line).
 */
export function visibleLine(text: string, name: string): string {
  let t = text.trimStart();
  const lower = t.toLowerCase();
  let labelled = false;
  for (const label of speakerLabels(name)) {
    if (startsWithLabel(t, label)) {
      t = t.slice(label.length).trimStart();
      labelled = true;
      break;
    }
  }
  if (!labelled && speakerLabels(name).some((l) => l.toLowerCase().startsWith(lower))) return "";
  if (OPENING_QUOTES.has(t[0] ?? "")) t = t.slice(1).trimStart();
  return t.replace(/[\s"”»」』]+$/u, "");
}

const LIST_MARKER = /^(?:[-*•]|\d+[.)])\s+/u;

/** Cleans suggested player replies: strings only, markers/labels/quotes stripped, no empties or repeats. */
export function cleanPlayerOptions(value: JsonValue | undefined, count: number): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const item of value) {
    if (typeof item !== "string") continue;
    let t = item.trim().replace(LIST_MARKER, "");
    t = t.replace(/^player\s*:\s*/i, "");
    t = unquote(t);
    const key = t.toLowerCase();
    if (t === "" || seen.has(key)) continue;
    seen.add(key);
    out.push(t);
    if (out.length >= count) break;
  }
  return out;
}

/** Parses a structured reply defensively (an empty line means the caller uses a fallback line). */
export function parseStructuredReply(value: JsonValue, s: ReplySettings): ParsedReply {
  const o: JsonObject = isJsonObject(value) ? value : {};
  const word = Object.hasOwn(o, "emotion") && typeof o.emotion === "string" ? o.emotion : "";
  const line = Object.hasOwn(o, "line") && typeof o.line === "string" ? cleanLine(o.line, s.name) : "";
  const options = Object.hasOwn(o, "player_options") ? o.player_options : undefined;
  return {
    emotion: word === "" ? s.defaultEmotion : chooseEmotion(word, s),
    line,
    playerOptions: cleanPlayerOptions(options, optionCount(s)),
    endsConversation: s.canEndConversation && Object.hasOwn(o, "ends_conversation") &&
      o.ends_conversation === true,
  };
}

/** An `[emotion]` tag split off a text reply. */
export type TagSplit =
  /** The tag is still arriving (show nothing yet). */
  | { kind: "pending" }
  /** `tag` is null when the text has no tag. */
  | { kind: "split"; tag: string | null; rest: string };

/** Splits a leading `[emotion]` tag off (text that is still streaming when `final` is false). */
export function splitTag(text: string, final: boolean): TagSplit {
  const t = text.trimStart();
  if (!t.startsWith("[")) {
    if (t === "" && !final) return { kind: "pending" };
    return { kind: "split", tag: null, rest: t };
  }
  const close = t.indexOf("]");
  if (close >= 0 && close <= MAX_TAG_LENGTH + 1) {
    return { kind: "split", tag: t.slice(1, close), rest: t.slice(close + 1).trimStart() };
  }
  if (close < 0 && t.length <= MAX_TAG_LENGTH + 1 && !final) return { kind: "pending" };
  return { kind: "split", tag: null, rest: t };
}

/** Parses a text reply "[emotion] line". */
export function parseTextReply(text: string, s: ReplySettings): { emotion: Emotion; line: string } {
  const split = splitTag(text, true) as Extract<TagSplit, { kind: "split" }>;
  return {
    emotion: split.tag === null ? s.defaultEmotion : chooseEmotion(split.tag, s),
    line: cleanLine(split.rest, s.name),
  };
}
