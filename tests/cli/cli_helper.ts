/**
 * Test helper: runs `oam` (cli.ts) as a child process with piped stdio, and writes fixtures to a temp dir.
 */
import type { JsonValue } from "../../src/protocol/json.ts";

/** Path of cli.ts. */
export const CLI = new URL("../../cli.ts", import.meta.url).pathname;

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
  /**
   * Extra environment; OAM_SCRIPT, OAM_MODEL and NO_COLOR are unset unless given here, and OAM_MODELS_DIR
   * points at an empty folder (no cached GGUF model changes what a command picks).
   */
  env?: Record<string, string>;
  /** Deno permission flags (default -A). */
  permissions?: string[];
  cwd?: string;
}

/** A models folder that does not exist (one per test process). */
let noModelsDir: string | undefined;

function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (k !== "OAM_SCRIPT" && k !== "OAM_MODEL" && k !== "NO_COLOR") env[k] = v;
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

/** Runs `oam <args>` to completion. */
export async function oam(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const piped = options.stdin !== undefined;
  const child = oamCommand(args, options, piped ? "piped" : "null").spawn();
  if (piped) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
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

/** Reads a child's stdout until `predicate` matches the text so far (or the stream ends). */
export class StreamWatcher {
  text = "";
  readonly #reader: ReadableStreamDefaultReader<string>;
  #done = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** Waits until the output matches; throws on end of stream without a match. */
  async until(predicate: (text: string) => boolean): Promise<void> {
    while (!predicate(this.text)) {
      if (this.#done) throw new Error(`output ended without a match:\n${this.text}`);
      const { value, done } = await this.#reader.read();
      if (done) this.#done = true;
      else this.text += value;
    }
  }

  /** Reads to the end. */
  async rest(): Promise<string> {
    while (!this.#done) {
      const { value, done } = await this.#reader.read();
      if (done) this.#done = true;
      else this.text += value;
    }
    return this.text;
  }
}
