/**
 * Test helper: runs `oam` (cli.ts) as a child process with piped stdio, and writes fixtures to a temp dir.
 */
import type { JsonValue } from "../../src/protocol/json.ts";
import { DEADLINE_MS, statusWithin, withDeadline } from "../helpers/deadline.ts";

/** Path of cli.ts. */
export const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/**
 * The permissions `deno task oam` grants (read from its command in deno.json): a run with them is a run of that
 * task from the repository's folder, whose hints name the task.
 */
export const OAM_TASK_PERMISSIONS: string[] = JSON.parse(
  Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)),
).tasks.oam.split(" ").filter((flag: string) => flag.startsWith("--allow-"));

/** What a finished run produced. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link oam}. */
export interface RunOptions {
  /** Text piped to stdin (stdin is closed after it); null stdin when absent. */
  stdin?: string;
  /** Bytes piped to stdin (stdin is closed after them), for input that is not UTF-8 text. */
  stdinBytes?: Uint8Array;
  /**
   * Extra environment; OAM_SCRIPT, OAM_MODEL, NO_COLOR and INIT_CWD are unset unless given here, and OAM_MODELS_DIR
   * points at an empty folder (no cached GGUF model changes what a command picks).
   */
  env?: Record<string, string>;
  /** Deno permission flags (default -A). */
  permissions?: string[];
  cwd?: string;
  /** Deadline of the whole run (default 30 s): past it the process is killed and the call throws. */
  timeoutMs?: number;
}

/** A models folder that does not exist (one per test process). */
let noModelsDir: string | undefined;

/**
 * The environment of a child `oam`: this one's without OAM_SCRIPT, OAM_MODEL, NO_COLOR and INIT_CWD, OAM_MODELS_DIR an
 * empty folder, then `extra`.
 */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    // INIT_CWD: `deno task test` typed in another folder would change how oam shows relative paths.
    if (k !== "OAM_SCRIPT" && k !== "OAM_MODEL" && k !== "NO_COLOR" && k !== "INIT_CWD") env[k] = v;
  }
  noModelsDir ??= `${Deno.makeTempDirSync()}/no-models`;
  env.OAM_MODELS_DIR = noModelsDir;
  return { ...env, ...extra };
}

/** The command running `oam <args>`. */
export function oamCommand(
  args: string[],
  options: RunOptions = {},
  stdin: "piped" | "null" = "piped",
): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...(options.permissions ?? ["-A"]), CLI, ...args],
    stdin,
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: childEnv(options.env),
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
}

/** Runs `oam <args>` to completion (bounded by `options.timeoutMs`). */
export async function oam(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const piped = options.stdin !== undefined || options.stdinBytes !== undefined;
  const child = oamCommand(args, options, piped ? "piped" : "null").spawn();
  const output = child.output();
  const what = `'oam ${args.join(" ")}' to exit`;
  try {
    if (piped) {
      const writer = child.stdin.getWriter();
      await withDeadline(
        writer.write(options.stdinBytes ?? new TextEncoder().encode(options.stdin)),
        what,
        options.timeoutMs ?? 30_000,
      );
      await writer.close();
    }
    await statusWithin(child, what, options.timeoutMs ?? 30_000);
  } finally {
    await output.catch(() => {}); // consumes stdout and stderr also when the process was killed
  }
  const out = await output;
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** A temp dir with helpers to write fixture files. */
export class Fixtures {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** A fresh temp dir. */
  static async create(): Promise<Fixtures> {
    return new Fixtures(await Deno.makeTempDir({ prefix: "oam-cli-test-" }));
  }

  /** Path of `name` inside the dir. */
  path(name: string): string {
    return `${this.dir}/${name}`;
  }

  /** Writes JSON (or raw text) and returns the path. */
  async write(name: string, content: JsonValue | string): Promise<string> {
    const path = this.path(name);
    await Deno.writeTextFile(path, typeof content === "string" ? content : JSON.stringify(content));
    return path;
  }

  /** Reads a JSON file. */
  async read(name: string): Promise<JsonValue> {
    return JSON.parse(await Deno.readTextFile(this.path(name)));
  }

  /** Removes the dir. */
  async remove(): Promise<void> {
    await Deno.remove(this.dir, { recursive: true });
  }
}

/** Parses JSON lines. */
export function jsonLines(text: string): JsonValue[] {
  return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}

/** Reads a child's stdout until `predicate` matches the text so far (or the stream ends, or a deadline). */
export class StreamWatcher {
  text = "";
  readonly #reader: ReadableStreamDefaultReader<string>;
  #done = false;
  /** A read still running after a deadline passed (the next wait continues it). */
  #pending: Promise<ReadableStreamReadResult<string>> | null = null;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  }

  async #read(deadline: number, what: string): Promise<void> {
    this.#pending ??= this.#reader.read();
    const left = Math.max(0, deadline - Date.now());
    const { value, done } = await withDeadline(this.#pending, `${what}; output so far:\n${this.text}`, left);
    this.#pending = null;
    if (done) this.#done = true;
    else this.text += value;
  }

  /** Waits until the output matches; throws on end of stream without a match, or after `timeoutMs`. */
  async until(predicate: (text: string) => boolean, timeoutMs = DEADLINE_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.text)) {
      if (this.#done) throw new Error(`output ended without a match:\n${this.text}`);
      await this.#read(deadline, "a match");
    }
  }

  /** Reads to the end (throws after `timeoutMs`). */
  async rest(timeoutMs = DEADLINE_MS): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#done) await this.#read(deadline, "the end of the output");
    return this.text;
  }
}
