/**
 * Strict UTF-8 decoding of input files: a file saved in a legacy encoding (Latin-1, Windows-1252, Shift-JIS)
 * is refused with where its first byte that is not UTF-8 is, rather than read with replacement characters
 * that end up in a persona's name or a tool's description.
 * @module
 */
import { CliError } from "./cli_error.ts";

/** Where the first byte that is not valid UTF-8 is in `bytes`, or -1 when they are all valid. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    // Length of the sequence and the range its second byte must be in (no overlongs, no surrogates, ≤ U+10FFFF).
    let length: number, low = 0x80, high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) low = 0xa0;
      if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f;
    } else return i;
    if (i + length > bytes.length) return i;
    if (bytes[i + 1] < low || bytes[i + 1] > high) return i;
    for (let k = 2; k < length; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return i;
    i += length;
  }
  return -1;
}

/** What {@link decodeUtf8Strict} names in its error, and where the bytes start in the whole input. */
export interface Utf8Source {
  /** The path of the file, or `<stdin>`. */
  label: string;
  /** Where the bytes start (a line of stdin read on its own); the input's first byte by default. */
  start?: Utf8Start;
}

/** Where in the input a chunk of bytes starts (for a line of stdin read on its own). */
export interface Utf8Start {
  /** The byte offset of the chunk's first byte in the whole input. */
  offset: number;
  /** The line the chunk starts on, from 1. */
  line: number;
}

/**
 * Decodes `bytes` as UTF-8 text, or throws `invalid_input` (exit 2) naming its `label` (the path, or `<stdin>`),
 * the first bad byte and its line and column. For stdin (`<stdin>`) the message also gives the byte's offset
 * (from `start`, when the bytes are a line of a longer input) and how to convert what is piped.
 *
 * @example
 * ```ts
 * import { decodeUtf8Strict } from "./utf8_text.ts";
 * decodeUtf8Strict(new TextEncoder().encode("Grüße"), { label: "a.jsonc" }); // "Grüße"
 * // decodeUtf8Strict(new Uint8Array([0x43, 0x61, 0x66, 0xe9]), { label: "a.jsonc" }) throws:
 * // "a.jsonc: not UTF-8 text (byte 0xE9 at line 1, column 4); save it as UTF-8."
 * ```
 */
export function decodeUtf8Strict(
  bytes: Uint8Array,
  { label, start = { offset: 0, line: 1 } }: Utf8Source,
): string {
  const bad = firstInvalidUtf8(bytes);
  if (bad < 0) return new TextDecoder().decode(bytes);
  const before = new TextDecoder().decode(bytes.subarray(0, bad));
  const lines = before.split("\n");
  const line = start.line + lines.length - 1;
  const column = [...lines[lines.length - 1]].length + 1;
  const hex = bytes[bad].toString(16).toUpperCase().padStart(2, "0");
  if (label === "<stdin>") {
    throw CliError.invalidInput(
      `<stdin>: not UTF-8 text (byte 0x${hex} at offset ${
        start.offset + bad
      }: line ${line}, column ${column}); ` +
        "pipe it as UTF-8 (e.g. through 'iconv -f windows-1252 -t utf-8').",
    );
  }
  throw CliError.invalidInput(
    `${label}: not UTF-8 text (byte 0x${hex} at line ${line}, column ${column}); save it as UTF-8.`,
  );
}
