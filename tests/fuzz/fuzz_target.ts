/**
 * Where fuzz lines go: an in-process engine fed through the stdio transport's LineSplitter (fast, sees the
 * engine's logs and the JS prototypes), or the real `deno run cli.ts stdio` process through the tests'
 * process harness (sees the exit code and stderr). Both collect every output line as a parsed message.
 */
import { BridgeEngine } from "../../src/composition.ts";
import type { BridgeConfiguration } from "../../src/engine/configuration.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { LineSplitter } from "../../src/transports/line_io.ts";
import type { Logger } from "../../src/util/logger.ts";
import type { Rng } from "./rng.ts";
import { BridgeProcess } from "../helpers/process.ts";

/** A bridge under test. */
export interface FuzzTarget {
  /** "in-process" or "process". */
  readonly kind: string;
  /** Every output message, in order. */
  readonly messages: JsonObject[];
  /** Output lines that were not a JSON object on one line. */
  readonly badOutput: string[];
  /** Log lines (in-process: "<level>: <message>"; process: stderr lines). */
  readonly logs: string[];
  /** Sends bytes (one or more lines, newline included). */
  write(bytes: Uint8Array): Promise<void>;
  /** Waits until `messages.length > index`, or the timeout; returns whether it happened. */
  waitForCount(count: number, timeoutMs: number): Promise<boolean>;
  /** Lets timers and deferred work run (in-process). */
  yield(): Promise<void>;
  /** Ends the input and waits for the end: exit code (process) or 0. */
  close(timeoutMs: number): Promise<number | null>;
  /** Checks the JS prototypes (in-process only): a list of problems. */
  prototypeProblems(): string[];
}

/** Shared message collection and waiting. */
abstract class Collector {
  readonly messages: JsonObject[] = [];
  readonly badOutput: string[] = [];
  readonly logs: string[] = [];
  #waiters: Array<() => void> = [];

  protected accept(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      value = undefined;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value) || line.includes("\n")) {
      this.badOutput.push(line.slice(0, 300));
    } else this.messages.push(value as JsonObject);
    this.wake();
  }

  protected wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  async waitForCount(count: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        timer = setTimeout(resolve, Math.min(left, 50));
      });
      clearTimeout(timer);
    }
    return true;
  }
}

const PROTOTYPES: Array<[string, object]> = [
  ["Object.prototype", Object.prototype],
  ["Array.prototype", Array.prototype],
  ["Function.prototype", Function.prototype],
  ["String.prototype", String.prototype],
];
const baseline = new Map(PROTOTYPES.map(([n, p]) => [n, Object.getOwnPropertyNames(p).sort().join(",")]));

/** An engine in this process, fed through a LineSplitter exactly like `oam stdio` feeds it. */
export class InProcessTarget extends Collector implements FuzzTarget {
  readonly kind = "in-process";
  readonly engine: BridgeEngine;
  readonly #splitter: LineSplitter;
  readonly #rng: Rng;

  /** `rng` chooses the chunk boundaries. */
  constructor(rng: Rng, maxLineBytes: number, config: Partial<BridgeConfiguration> = {}) {
    super();
    this.#rng = rng;
    const logs = this.logs;
    const log = (level: string) => (message: string) => logs.push(`${level}: ${message}`);
    const logger: Logger = {
      debug: () => {},
      info: log("info"),
      warning: log("warning"),
      error: log("error"),
    };
    this.engine = new BridgeEngine({ logger, ...config }, (line) => this.accept(line));
    this.#splitter = new LineSplitter(
      maxLineBytes,
      (line) => this.engine.receive(line),
      (error) => this.engine.reportInvalid(error),
    );
  }

  write(bytes: Uint8Array): Promise<void> {
    // Random chunk boundaries: a line may arrive in pieces or glued to nothing.
    let at = 0;
    while (at < bytes.length) {
      const n = this.#rng.chance(0.7) ? bytes.length - at : 1 + this.#rng.int(bytes.length - at);
      this.#splitter.push(bytes.subarray(at, at + n));
      at += n;
    }
    return Promise.resolve();
  }

  async yield(): Promise<void> {
    await new Promise((r) => setTimeout(r, 0));
  }

  async close(): Promise<number | null> {
    this.#splitter.end();
    await this.engine.shutdown();
    return 0;
  }

  prototypeProblems(): string[] {
    const out: string[] = [];
    // deno-lint-ignore no-explicit-any
    if (({} as any).polluted !== undefined) out.push("({}).polluted is defined");
    // deno-lint-ignore no-explicit-any
    if (([] as any).polluted !== undefined) out.push("[].polluted is defined");
    for (const [name, proto] of PROTOTYPES) {
      const now = Object.getOwnPropertyNames(proto).sort().join(",");
      if (now !== baseline.get(name)) out.push(`${name} gained or lost properties`);
    }
    return out;
  }
}

/** The real `deno run cli.ts stdio` process (the tests' process harness, keeping lines that are not JSON). */
export class ProcessTarget implements FuzzTarget {
  readonly kind = "process";
  readonly process: BridgeProcess;

  /** Spawns `deno run <flags> cli.ts stdio <args>` (flags default to the stdio task's). */
  constructor(args: string[], options: { flags?: string[]; env?: Record<string, string> } = {}) {
    this.process = new BridgeProcess(args, { ...options, tolerateBadLines: true });
  }

  get messages(): JsonObject[] {
    return this.process.messages;
  }

  get badOutput(): string[] {
    const bad = this.process.badLines.map((l) => l.slice(0, 300));
    if (this.process.trailing !== "") bad.push(`unterminated: ${this.process.trailing.slice(0, 300)}`);
    return bad;
  }

  /** stderr lines. */
  get logs(): string[] {
    const lines = this.process.stderr.split("\n");
    if (lines.at(-1) === "") lines.pop();
    return lines;
  }

  async write(bytes: Uint8Array): Promise<void> {
    await this.process.write(bytes);
  }

  async waitForCount(count: number, timeoutMs: number): Promise<boolean> {
    try {
      await this.process.until(() => this.process.messages.length >= count, timeoutMs, `${count} messages`);
      return true;
    } catch {
      return false;
    }
  }

  async yield(): Promise<void> {}

  /** Ends the input and waits for the exit; null when the process had to be killed after `timeoutMs`. */
  async close(timeoutMs: number): Promise<number | null> {
    await this.process.closeInput();
    try {
      return await this.process.exit(timeoutMs);
    } catch {
      return null;
    }
  }

  prototypeProblems(): string[] {
    return [];
  }
}
