/**
 * A running turn seen as an async iterator of its events, plus its result.
 * @module
 */

/**
 * The events of one turn, in wire order, as an async iterator; `result` is the turn's result. Iteration
 * ends when the response arrives (after the last event); when the turn failed, the iterator throws its
 * error after the events that came before it. Leaving the loop early does not cancel the turn (pass a
 * `signal` for that); `result` still settles.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const npc = await bridge.createNpc({ name: "Gorm" }, {
 *   options: { replyFormat: "text" },
 *   model: { type: "scripted", steps: [{ text: "[proud] Finest steel in the valley." }] },
 * });
 * const turn = npc.talkStream("Any swords?");
 * let line = "";
 * for await (const event of turn) {
 *   if (event.type === "lineDelta") line += event.delta;
 * }
 * const reply = await turn.result;
 * ```
 */
export class TurnStream<Event, Result> implements AsyncIterable<Event> {
  /** The turn's result (the same error as the iterator when it fails). */
  readonly result: Promise<Result>;
  #queue: Event[] = [];
  #wake: (() => void) | null = null;
  #done = false;
  #error: { value: unknown } | null = null;
  #iterating = false;

  /** Starts the turn: `run` gets a function to push each event and returns the result. */
  constructor(run: (push: (event: Event) => void) => Promise<Result>) {
    this.result = run((event) => {
      if (this.#done) return;
      this.#queue.push(event);
      this.#signal();
    });
    this.result.then(
      () => this.#end(null),
      (error) => this.#end({ value: error }),
    );
  }

  #end(error: { value: unknown } | null): void {
    this.#done = true;
    this.#error = error;
    this.#signal();
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** The events (one iteration per stream). */
  [Symbol.asyncIterator](): AsyncIterator<Event> {
    if (this.#iterating) throw new Error("A turn's events can be iterated once.");
    this.#iterating = true;
    return {
      next: async (): Promise<IteratorResult<Event>> => {
        for (;;) {
          if (this.#queue.length > 0) return { done: false, value: this.#queue.shift()! };
          if (this.#done) {
            const error = this.#error;
            this.#error = null;
            if (error) throw error.value;
            return { done: true, value: undefined };
          }
          await new Promise<void>((resolve) => this.#wake = resolve);
        }
      },
      return: (): Promise<IteratorResult<Event>> => {
        this.#queue = [];
        this.#done = true;
        this.#error = null;
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }
}
