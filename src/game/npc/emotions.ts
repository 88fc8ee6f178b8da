/**
 * NPC emotions: the 16 names of the protocol and a lenient parser for what a model writes
 * (`"Angry!"`, `"mad"`, `"*grumpy*"`).
 * @module
 */

/**
 * The 16 emotions an NPC can show, in protocol order.
 *
 * @example
 * ```ts
 * import { EMOTIONS, type Emotion } from "@open-apple-models/bridge";
 * const portraits = new Map<Emotion, string>(EMOTIONS.map((e) => [e, `portraits/${e}.png`]));
 * portraits.get("happy"); // "portraits/happy.png"
 * ```
 */
export const EMOTIONS = [
  "neutral",
  "happy",
  "sad",
  "angry",
  "afraid",
  "surprised",
  "suspicious",
  "amused",
  "disgusted",
  "excited",
  "curious",
  "confused",
  "worried",
  "grateful",
  "annoyed",
  "proud",
] as const;

/**
 * An NPC emotion.
 *
 * @example
 * ```ts
 * import { type Emotion, type NpcOptions } from "@open-apple-models/bridge";
 * const calm: Emotion[] = ["neutral", "happy", "curious"];
 * const options: NpcOptions = { emotions: calm };
 * ```
 */
export type Emotion = typeof EMOTIONS[number];

/** Words a model commonly uses instead of an emotion name. */
const SYNONYMS: ReadonlyMap<string, Emotion> = new Map<string, Emotion>([
  ["calm", "neutral"],
  ["content", "neutral"],
  ["indifferent", "neutral"],
  ["glad", "happy"],
  ["cheerful", "happy"],
  ["joyful", "happy"],
  ["pleased", "happy"],
  ["delighted", "happy"],
  ["friendly", "happy"],
  ["happiness", "happy"],
  ["unhappy", "sad"],
  ["sorrowful", "sad"],
  ["melancholy", "sad"],
  ["mad", "angry"],
  ["furious", "angry"],
  ["enraged", "angry"],
  ["hostile", "angry"],
  ["anger", "angry"],
  ["scared", "afraid"],
  ["frightened", "afraid"],
  ["fearful", "afraid"],
  ["terrified", "afraid"],
  ["fear", "afraid"],
  ["shocked", "surprised"],
  ["astonished", "surprised"],
  ["startled", "surprised"],
  ["wary", "suspicious"],
  ["distrustful", "suspicious"],
  ["skeptical", "suspicious"],
  ["sceptical", "suspicious"],
  ["amusement", "amused"],
  ["playful", "amused"],
  ["disgust", "disgusted"],
  ["repulsed", "disgusted"],
  ["eager", "excited"],
  ["enthusiastic", "excited"],
  ["thrilled", "excited"],
  ["interested", "curious"],
  ["intrigued", "curious"],
  ["puzzled", "confused"],
  ["bewildered", "confused"],
  ["nervous", "worried"],
  ["anxious", "worried"],
  ["concerned", "worried"],
  ["thankful", "grateful"],
  ["gruff", "annoyed"],
  ["grumpy", "annoyed"],
  ["irritated", "annoyed"],
  ["irked", "annoyed"],
  ["impatient", "annoyed"],
  ["smug", "proud"],
  ["confident", "proud"],
]);

/** True when `value` is one of {@link EMOTIONS}. */
export function isEmotion(value: string): value is Emotion {
  return (EMOTIONS as readonly string[]).includes(value);
}

/**
 * Reads an emotion leniently: case-insensitive, surrounding non-letters stripped, common synonyms mapped
 * (mad → angry, scared → afraid, grumpy → annoyed, nervous → worried, …). Unknown words give `null`.
 *
 * @example
 * ```ts
 * parseEmotion(" *Grumpy* "); // "annoyed"
 * parseEmotion("banana"); // null
 * ```
 */
export function parseEmotion(text: string): Emotion | null {
  const word = text.toLowerCase().replace(/^[^\p{L}]+|[^\p{L}]+$/gu, "");
  if (word === "") return null;
  if (isEmotion(word)) return word;
  return SYNONYMS.get(word) ?? null;
}
