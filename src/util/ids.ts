/**
 * Id helpers: tool call ids, generated object ids and the printable-id rule.
 * @module
 */
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A fresh tool call id: `call_` + 24 random alphanumerics. */
export function newCallId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  let out = "call_";
  for (const b of bytes) out += ALNUM[b % ALNUM.length];
  return out;
}

/** Made on first use: creating a segmenter loads ICU's break rules, ≈ 10 ms of every process's start. */
let graphemes: Intl.Segmenter | undefined;

/** True when `text` has at most `limit` characters (grapheme clusters, as the reference counts them). */
function atMostCharacters(text: string, limit: number): boolean {
  if (text.length <= limit) return true; // a character has at least one code unit
  let n = 0;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  for (const _ of graphemes.segment(text)) if (++n > limit) return false;
  return true;
}

/** True when `id` is 1–128 characters (grapheme clusters) with no Unicode control characters. */
export function isPrintableId(id: string): boolean {
  return id.length >= 1 && !/\p{Cc}/u.test(id) && atMostCharacters(id, 128);
}

/**
 * Generates ids `<prefix>1`, `<prefix>2`, … skipping ids in use; the counter never goes back.
 *
 * @example
 * ```ts
 * import { IdGenerator } from "./ids.ts";
 * const ids = new IdGenerator("s");
 * ids.next(() => false); // "s1"
 * ```
 */
export class IdGenerator {
  #n = 0;
  readonly #prefix: string;

  /** A generator of `<prefix><n>` ids. */
  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  /** The next id not reported as taken by `inUse`. */
  next(inUse: (id: string) => boolean): string {
    for (;;) {
      this.#n++;
      const id = `${this.#prefix}${this.#n}`;
      if (!inUse(id)) return id;
    }
  }
}
