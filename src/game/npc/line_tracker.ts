/**
 * The streaming line tracker: turns partial structured replies and growing `[emotion] line` text into
 * `npc/event` events — `emotion` as soon as it is chosen, `lineDelta` while the visible line grows,
 * `lineReset` when it changes otherwise — and reconciles the final reply so that the deltas and resets add
 * up exactly to the result's `line`.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../protocol/json.ts";
import type { Emotion } from "./emotions.ts";
import { parseEmotion } from "./emotions.ts";
import { chooseEmotion, type ReplySettings, splitTag, visibleLine } from "./reply_format.ts";
import { withoutTrailingHalf } from "../../util/text.ts";

/**
 * Tracks what the player has been shown.
 *
 * @example
 * ```ts
 * import { LineTracker } from "./line_tracker.ts";
 * import type { ReplySettings } from "./reply_format.ts";
 * const settings: ReplySettings = {
 *   name: "Gorm",
 *   emotions: [],
 *   defaultEmotion: "neutral",
 *   maxSentences: 2,
 *   playerOptionCount: 0,
 *   canEndConversation: false,
 * };
 * const events: unknown[] = [];
 * const t = new LineTracker(settings, (e) => events.push(e));
 * t.text("[proud] Aye");
 * t.text("[proud] Aye, three.");
 * t.finish("proud", "Aye, three.");
 * // events: emotion proud, lineDelta "Aye", lineDelta ", three."
 * ```
 */
export class LineTracker {
  readonly #settings: ReplySettings;
  readonly #emit: (event: JsonObject) => void;
  #shown = "";
  #emotion: Emotion | null = null;

  /** A tracker sending events to `emit`. */
  constructor(settings: ReplySettings, emit: (event: JsonObject) => void) {
    this.#settings = settings;
    this.#emit = emit;
  }

  /** The line shown so far. */
  get shown(): string {
    return this.#shown;
  }

  /** The emotion sent last, or null. */
  get emotion(): Emotion | null {
    return this.#emotion;
  }

  /** A partial structured reply. The emotion is sent once `line` has started and the emotion parses. */
  partial(value: JsonValue): void {
    if (!isJsonObject(value) || !Object.hasOwn(value, "line")) return;
    if (typeof value.emotion === "string" && parseEmotion(value.emotion) !== null) {
      this.#setEmotion(chooseEmotion(value.emotion, this.#settings));
    }
    if (typeof value.line === "string") this.#show(visibleLine(value.line, this.#settings.name));
  }

  /** A text snapshot of an `[emotion] line` reply. */
  text(snapshot: string): void {
    const split = splitTag(snapshot, false);
    if (split.kind === "pending") return;
    this.#setEmotion(
      split.tag === null ? this.#settings.defaultEmotion : chooseEmotion(split.tag, this.#settings),
    );
    this.#show(visibleLine(split.rest, this.#settings.name));
  }

  /** Sends what is needed so the player sees exactly `emotion` and `line`. */
  finish(emotion: Emotion, line: string): void {
    this.#setEmotion(emotion);
    if (line === this.#shown) return;
    if (line.startsWith(this.#shown)) {
      this.#emit({ type: "lineDelta", delta: line.slice(this.#shown.length) });
    } else this.#emit({ type: "lineReset", line });
    this.#shown = line;
  }

  #setEmotion(emotion: Emotion): void {
    if (emotion === this.#emotion) return;
    this.#emotion = emotion;
    this.#emit({ type: "emotion", emotion });
  }

  #show(partial: string): void {
    const visible = withoutTrailingHalf(partial); // the emoji comes whole with the next snapshot
    if (visible === this.#shown || visible === "") return;
    if (visible.startsWith(this.#shown)) {
      this.#emit({ type: "lineDelta", delta: visible.slice(this.#shown.length) });
    } else this.#emit({ type: "lineReset", line: visible });
    this.#shown = visible;
  }
}
