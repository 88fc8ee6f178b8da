/**
 * A small Server-Sent Events reader (WHATWG event-stream rules: `data:` lines joined with `\n`, comments,
 * `event:` names, CRLF / CR / LF line ends, events dispatched on a blank line).
 * @module
 */

/** One dispatched event. */
export interface SseEvent {
  /** The `event:` name, `"message"` when absent. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

/** Incremental SSE parser: feed decoded text, collect complete events. */
export class SseParser {
  #buffer = "";
  #data: string[] = [];
  #event = "";
  #hasData = false;

  /** Adds text; returns the events completed by it. */
  push(text: string): SseEvent[] {
    this.#buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.#buffer.length; i++) {
      const ch = this.#buffer[i];
      if (ch !== "\n" && ch !== "\r") continue;
      // A CR at the very end may be the first half of CRLF: wait for more text.
      if (ch === "\r" && i === this.#buffer.length - 1) break;
      this.#line(this.#buffer.slice(start, i), events);
      if (ch === "\r" && this.#buffer[i + 1] === "\n") i++;
      start = i + 1;
    }
    this.#buffer = this.#buffer.slice(start);
    return events;
  }

  /** Ends the stream: a pending CR ends its line; an event without the final blank line is dropped (spec). */
  finish(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.#buffer.endsWith("\r")) {
      this.#line(this.#buffer.slice(0, -1), events);
      this.#buffer = "";
    }
    return events;
  }

  /** Text received after the last complete line (non-empty means the stream was cut mid-line). */
  get pending(): string {
    return this.#buffer;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === "") {
      if (this.#hasData) {
        events.push({ event: this.#event === "" ? "message" : this.#event, data: this.#data.join("\n") });
      }
      this.#data = [];
      this.#event = "";
      this.#hasData = false;
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") {
      this.#data.push(value);
      this.#hasData = true;
    } else if (field === "event") {
      this.#event = value;
    } else if (field === "error") {
      // Older llama.cpp servers wrote `error: {json}` lines instead of a `data:` error object.
      this.#data.push(value);
      this.#hasData = true;
      this.#event = "error";
    }
  }
}
