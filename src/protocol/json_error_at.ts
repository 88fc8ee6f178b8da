/**
 * Where a text stops being JSON. `JSON.parse` names the position of many mistakes but not of an unexpected
 * token (`Unexpected token 'o', "not json" is not valid JSON`); a parse error then still points at the right
 * character. Only called after `JSON.parse` failed: it is never on the path of a valid message.
 * @module
 */

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** The characters that may follow a backslash in a JSON string (`u` is handled apart). */
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

/**
 * The UTF-16 index of the first character at which `text` stops being JSON (RFC 8259): the character that
 * cannot stand where it stands, or `text.length` when the text ends too early. -1 when it is valid JSON.
 * Iterative, so nesting of any depth is fine.
 *
 * @example
 * ```ts
 * import { jsonErrorAt } from "./json_error_at.ts";
 * jsonErrorAt("not json"); // 1: "n" may begin null, "o" may not follow it
 * jsonErrorAt('{"a":1}'); // -1
 * ```
 */
export function jsonErrorAt(text: string): number {
  return new JsonScan(text).run();
}

/** One scan: `at` moves over the text; each step returns false with `at` on the offending character. */
class JsonScan {
  at = 0;
  /** The open containers, innermost last: `[` or `{` as char codes. */
  readonly #open: number[] = [];

  constructor(readonly text: string) {}

  #code(): number {
    return this.at < this.text.length ? this.text.charCodeAt(this.at) : -1;
  }

  #skipSpace(): void {
    while (this.at < this.text.length && isSpace(this.text.charCodeAt(this.at))) this.at++;
  }

  run(): number {
    for (;;) {
      // A value is expected here.
      this.#skipSpace();
      const opened = this.#value();
      if (opened === false) return this.at;
      if (opened === "container") continue;
      // A value ended (or a container was closed): what may follow depends on the innermost container.
      for (;;) {
        this.#skipSpace();
        const open = this.#open.at(-1);
        if (open === undefined) return this.at === this.text.length ? -1 : this.at;
        const c = this.#code();
        const close = open === 0x5b ? 0x5d : 0x7d;
        if (c === close) {
          this.at++;
          this.#open.pop();
          continue;
        }
        if (c !== 0x2c) return this.at;
        this.at++;
        if (open === 0x7b && !this.#key()) return this.at;
        break;
      }
    }
  }

  /** A member's key and its colon. */
  #key(): boolean {
    this.#skipSpace();
    if (this.#code() !== 0x22 || !this.#string()) return false;
    this.#skipSpace();
    if (this.#code() !== 0x3a) return false;
    this.at++;
    return true;
  }

  /** One value; an opened container that is not empty continues in `run` (its first member is expected). */
  #value(): boolean | "container" {
    const c = this.#code();
    if (c === 0x5b || c === 0x7b) {
      this.at++;
      this.#skipSpace();
      const close = c === 0x5b ? 0x5d : 0x7d;
      if (this.#code() === close) {
        this.at++;
        return true;
      }
      this.#open.push(c);
      if (c === 0x7b && !this.#key()) return false;
      return "container";
    }
    if (c === 0x22) return this.#string();
    if (c === 0x2d || isDigit(c)) return this.#number();
    for (const word of ["true", "false", "null"]) {
      if (c === word.charCodeAt(0)) return this.#word(word);
    }
    return false;
  }

  #word(word: string): boolean {
    for (let k = 0; k < word.length; k++, this.at++) {
      if (this.#code() !== word.charCodeAt(k)) return false;
    }
    return true;
  }

  #string(): boolean {
    this.at++; // the opening quote
    for (;;) {
      const c = this.#code();
      if (c === -1 || c < 0x20) return false;
      this.at++;
      if (c === 0x22) return true;
      if (c !== 0x5c) continue;
      const e = this.#code();
      if (SHORT_ESCAPES.has(e)) this.at++;
      else if (e === 0x75) {
        this.at++;
        for (let k = 0; k < 4; k++, this.at++) if (!isHex(this.#code())) return false;
      } else return false;
    }
  }

  #number(): boolean {
    if (this.#code() === 0x2d) this.at++;
    if (this.#code() === 0x30) this.at++;
    else if (!this.#digits()) return false;
    if (this.#code() === 0x2e) {
      this.at++;
      if (!this.#digits()) return false;
    }
    const e = this.#code();
    if (e === 0x65 || e === 0x45) {
      this.at++;
      const sign = this.#code();
      if (sign === 0x2b || sign === 0x2d) this.at++;
      if (!this.#digits()) return false;
    }
    return true;
  }

  /** One or more digits. */
  #digits(): boolean {
    const from = this.at;
    while (isDigit(this.#code())) this.at++;
    return this.at > from;
  }
}
