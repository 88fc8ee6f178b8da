/**
 * `oam models pull <url|hf:…>` and `oam models list`: GGUF models for `--model gguf:<name>`.
 * @module
 */
import { boolFlag, parseFlags, stringFlag, wantsHelp } from "./args.ts";
import { oamCommandLineFor } from "./invocation.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { CliError, EXIT, reportError } from "./cli_error.ts";
import { listCachedModels, listPartialDownloads, modelsCacheDir } from "../models/gguf_cache.ts";
import { expectedSha256, pullModel, type PullProgress, resolveModelSource } from "./models_pull.ts";
import { isTerminal, stderrStyle, stdoutStyle, writeErr, writeOut } from "./tty.ts";

/** Help text of `oam models`. */
export const MODELS_HELP = `oam models — GGUF models for --model gguf:<name>

Usage: oam models pull <url | hf:<user>/<repo>/<file.gguf>[#branch]> [options]
       oam models list [--json]

pull downloads a model into the cache folder: progress on stderr, resumable (run the same command
again after an interruption), size and SHA-256 checked (--sha256, or the hash the server publishes),
and the file appears only when complete. list shows what is cached.

Options:
  --name <file.gguf>   file name in the cache (default: the URL's file name)
  --sha256 <hex>       expected SHA-256 of the file
  --force              download again even when cached
  --dir <folder>       cache folder (default: OAM_MODELS_DIR or the platform cache folder)
  --json               list: one JSON array on stdout
  -h, --help           show this help

Environment:
  OAM_MODELS_DIR=<dir> the cache folder
  HF_TOKEN=<token>     sent to huggingface.co (gated models)

Permissions: --allow-net (pull), --allow-read --allow-write --allow-env.

Exit codes: 0 done (a model already cached too), 1 a download that failed, broke off or came out corrupt,
or a file that could not be written (io_error; run the same command again to resume), 2 usage or invalid
input (not a URL, a file on this machine, not a GGUF file), 130 interrupted (Ctrl-C; run it again to resume).

Examples:
  oam models pull hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf
  oam models list
  oam npc persona.jsonc --model gguf:qwen2.5-1.5b-instruct-q4_k_m
`;

const FLAGS = {
  name: { type: "string" },
  sha256: { type: "string" },
  force: { type: "boolean" },
  dir: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** A progress bar on stderr: redrawn in place on a terminal, a line per 10 % otherwise. */
function progressBar(): (progress: PullProgress) => void {
  const terminal = isTerminal(Deno.stderr);
  const started = performance.now();
  let lastTenth = -1;
  let lastDraw = 0;
  return ({ received, total }) => {
    const now = performance.now();
    const rate = received / Math.max((now - started) / 1000, 0.001);
    const fraction = total ? Math.min(received / total, 1) : null;
    const text = fraction === null
      ? `${megabytes(received)}  ${megabytes(rate)}/s`
      : `${(fraction * 100).toFixed(0).padStart(3)}% ${megabytes(received)} of ${megabytes(total!)}  ${
        megabytes(rate)
      }/s`;
    if (terminal) {
      if (now - lastDraw < 100 && fraction !== 1) return;
      lastDraw = now;
      const width = 30;
      const filled = fraction === null ? 0 : Math.round(fraction * width);
      writeErr(`\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${text}\x1b[K`);
      if (fraction === 1) writeErr("\n");
      return;
    }
    const tenth = fraction === null ? -1 : Math.floor(fraction * 10);
    if (tenth > lastTenth) {
      lastTenth = tenth;
      writeErr(`${text}\n`);
    }
  };
}

function cacheDir(flag: string | undefined): string {
  const dir = flag ?? modelsCacheDir();
  if (dir === null) throw CliError.usage("No cache folder is known: set OAM_MODELS_DIR or pass --dir.");
  return dir;
}

async function pull(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { command: "models", flags: FLAGS, positionals: true });
  if (positionals.length !== 1) throw CliError.usage("oam models pull needs one URL or hf: name.");
  const source = resolveModelSource(positionals[0], stringFlag(values, "name"));
  const dir = cacheDir(stringFlag(values, "dir"));
  expectedSha256(stringFlag(values, "sha256")); // a bad --sha256 is reported before anything is downloaded
  const controller = new AbortController();
  const stop = () => controller.abort();
  try {
    Deno.addSignalListener("SIGINT", stop);
  } catch {
    // no signals here
  }
  try {
    writeErr(`Downloading ${positionals[0]} → ${dir}\n`);
    const result = await pullModel({ ...source, label: positionals[0] }, {
      dir,
      ...(stringFlag(values, "sha256") !== undefined ? { sha256: stringFlag(values, "sha256")! } : {}),
      force: boolFlag(values, "force"),
      signal: controller.signal,
      onProgress: progressBar(),
    });
    const o = stdoutStyle();
    if (result.alreadyCached) writeErr(`Already cached (use --force to download again).\n`);
    else if (result.resumedFrom > 0) writeErr(`Resumed from ${megabytes(result.resumedFrom)}.\n`);
    writeOut(`${o.bold(result.path)}\n  ${megabytes(result.size)}  sha256 ${result.sha256}\n`);
    writeOut(`Use it: --model gguf:${source.name.replace(/\.gguf$/i, "")}\n`);
    return EXIT.ok;
  } finally {
    try {
      Deno.removeSignalListener("SIGINT", stop);
    } catch {
      // no signals here
    }
  }
}

async function list(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { command: "models", flags: FLAGS, positionals: true });
  if (positionals.length > 0) throw CliError.usage(`Unexpected argument '${positionals[0]}'.`);
  const dir = cacheDir(stringFlag(values, "dir"));
  const models = await listCachedModels(dir);
  if (boolFlag(values, "json")) {
    writeOut(
      `${JSON.stringify(models.map((m) => ({ ...m, modified: m.modified?.toISOString() ?? null })))}\n`,
    );
    return EXIT.ok;
  }
  const o = stdoutStyle();
  if (models.length === 0) {
    writeOut(`No models in ${dir}. Get one with '${oamCommandLineFor("models pull <url>")}'.\n`);
  } else writeOut(`${o.dim(dir)}\n`);
  for (const m of models) {
    writeOut(`${o.bold(m.name)}  ${megabytes(m.size)}${m.source ? `  ${o.dim(m.source)}` : ""}\n`);
  }
  for (const name of await listPartialDownloads(dir)) {
    writeOut(`${o.dim(`${name} (incomplete; run the same pull again to resume)`)}\n`);
  }
  return EXIT.ok;
}

/**
 * Runs `oam models <pull|list>`; resolves with the exit code. The help is printed for `--help` before or
 * after the subcommand and for `oam models help`; a subcommand that does not exist is a usage error, with
 * `--help` too (as `oam schema` and `oam tools` do).
 */
export async function runModels(args: string[]): Promise<number> {
  if (args.length === 0) {
    writeErr(MODELS_HELP); // no subcommand: a usage error, so the help goes to stderr
    return EXIT.usage;
  }
  const [sub, ...rest] = args;
  const known = sub === "pull" || sub === "list";
  if (sub === "help" || (wantsHelp(args) && (known || sub.startsWith("-")))) {
    writeOut(MODELS_HELP);
    return EXIT.ok;
  }
  try {
    if (sub === "pull") return await pull(rest);
    if (sub === "list") return await list(rest);
    const meant = nearestName(sub, ["pull", "list"]);
    if (meant !== undefined) {
      throw CliError.usage(
        `Unknown 'oam models' command '${sub}'${didYouMean(meant, { as: "clause" })} Use pull or list.`,
      );
    }
    throw CliError.usage(`Unknown 'oam models' command '${sub}': use pull or list.`);
  } catch (error) {
    return reportError(error, { mode: "human", style: stderrStyle() });
  }
}
