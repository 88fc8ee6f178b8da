/**
 * Warnings about a reply the NPC could not use fully: keys of a structured reply that are not the reply
 * schema's (`playerOptions` instead of `player_options`), an emotion that is not one of the protocol's (or
 * not one this NPC may show), a reply without a line, an unknown `[tag]` of a text reply. A model held to the
 * schema (the scripted one included) never gives such a structured reply; a backend that does not constrain
 * its output can, and a text reply of any model can carry a tag that is no emotion. Without a warning the
 * value would be lost silently.
 * @module
 */
import { didYouMean, nearestName } from "../../protocol/edit_distance.ts";
import { isJsonObject, type JsonValue } from "../../protocol/json.ts";
import { EMOTIONS, parseEmotion } from "./emotions.ts";
import { allowedEmotions, type ReplySettings, splitTag } from "./reply_format.ts";

/** The keys of a structured reply. */
const REPLY_KEYS = ["emotion", "line", "player_options", "ends_conversation"];

function emotionWarning(word: string, s: ReplySettings): string | null {
  const emotion = parseEmotion(word);
  if (emotion === null) {
    return `The reply's emotion '${word}' is not an emotion (${EMOTIONS.join(", ")}); ` +
      `'${s.defaultEmotion}' was shown instead.`;
  }
  if (s.emotions.length > 0 && !s.emotions.includes(emotion)) {
    return `The reply's emotion '${word}' is not one of this NPC's emotions (${
      allowedEmotions(s).join(", ")
    }); '${s.defaultEmotion}' was shown instead.`;
  }
  return null;
}

/**
 * Warnings for a structured reply (`{"emotion", "line", "player_options", "ends_conversation"}`).
 *
 * @example
 * ```ts
 * import { structuredReplyWarnings } from "./reply_check.ts";
 * const settings = {
 *   name: "Gorm", emotions: [], defaultEmotion: "neutral", maxSentences: 2, playerOptionCount: 3,
 *   canEndConversation: true,
 * } as const;
 * structuredReplyWarnings({ emotion: "happy", line: "Hi.", playerOptions: [] }, settings);
 * // ["The reply's key 'playerOptions' was ignored: the reply's keys are emotion, line, player_options, …"]
 * ```
 */
export function structuredReplyWarnings(value: JsonValue | null, s: ReplySettings): string[] {
  if (!isJsonObject(value)) return [];
  const out: string[] = [];
  for (const key of Object.keys(value)) {
    if (REPLY_KEYS.includes(key)) continue;
    const meant = nearestName(key, REPLY_KEYS); // `playerOptions`, `player-options`: one edit
    out.push(
      `The reply's key '${key}' was ignored${didYouMean(meant)}: ` +
        `the reply's keys are ${REPLY_KEYS.join(", ")}.`,
    );
  }
  if (typeof value.emotion === "string" && value.emotion.trim() !== "") {
    const warning = emotionWarning(value.emotion, s);
    if (warning) out.push(warning);
  }
  if (typeof value.line !== "string" || value.line.trim() === "") {
    out.push("The reply has no 'line'; a fallback line was used.");
  }
  return out;
}

/** Warnings for a text reply (`[emotion] line`): an `[emotion]` tag that is not an emotion. */
export function textReplyWarnings(text: string, s: ReplySettings): string[] {
  const split = splitTag(text, true);
  if (split.kind !== "split" || split.tag === null || split.tag.trim() === "") return [];
  const warning = emotionWarning(split.tag, s);
  return warning ? [warning] : [];
}
