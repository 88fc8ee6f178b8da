/**
 * `oam available`: is the model usable here? Human output or `--json`; exit 3 when unavailable.
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import { boolFlag, parseFlags, stringFlag } from "./args.ts";
import { EXIT, type OutputMode } from "./cli_error.ts";
import { runSubcommand } from "./subcommand.ts";
import {
  LocalBridge,
  MODEL_ENV_HELP,
  MODEL_FLAGS_HELP,
  resolveModelChoice,
  unavailableMessage,
} from "./local_bridge.ts";
import { isTerminal, Spinner, stdoutStyle, writeOut } from "./tty.ts";

/** Help text of `oam available`. */
export const AVAILABLE_HELP = `oam available — check whether the model can run here

Usage: oam available [options]

Options:
  --json                  print {"available", "reason"?, "model", "contextSize", "variant"?,
                          "supportedLanguages"}
  --compact               with --json: one line (implies --json)
${MODEL_FLAGS_HELP}
  -h, --help              show this help

Exit codes: 0 available, 3 unavailable (the output says why and what to do), 2 usage.

${MODEL_ENV_HELP}

Examples:
  oam available
  oam available --json | jq .reason
`;

const FLAGS = {
  json: { type: "boolean" },
  compact: { type: "boolean" },
  model: { type: "string" },
  script: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Runs `oam available`; resolves with the exit code. */
export function runAvailable(args: string[]): Promise<number> {
  const mode: OutputMode = args.includes("--json") || args.includes("--compact") ? "json" : "human";
  return runSubcommand(args, { help: AVAILABLE_HELP, mode, run: () => available(args, mode) });
}

/** Asks the chosen model whether it is available and prints the answer. */
async function available(args: string[], mode: OutputMode): Promise<number> {
  const { values } = parseFlags(args, { command: "available", flags: FLAGS, positionals: false });
  const choice = await resolveModelChoice({
    model: stringFlag(values, "model"),
    script: stringFlag(values, "script"),
  });
  const bridge = new LocalBridge(choice);
  const spinner = new Spinner(mode === "human" && isTerminal(Deno.stderr));
  spinner.start("asking the model");
  const a = await bridge.call("model/availability").finally(() => spinner.stop()) as JsonObject;
  const out: JsonObject = { available: a.available === true };
  if (a.reason !== undefined) out.reason = a.reason;
  out.model = choice.name;
  out.contextSize = a.contextSize ?? null;
  if (a.variant !== undefined) out.variant = a.variant;
  out.supportedLanguages = a.supportedLanguages ?? [];
  if (a.detail !== undefined) out.detail = a.detail;
  if (mode === "json") {
    writeOut(`${boolFlag(values, "compact") ? JSON.stringify(out) : JSON.stringify(out, null, 2)}\n`);
  } else {
    const s = stdoutStyle();
    if (out.available) {
      writeOut(`${s.green("✓")} ${s.bold("The model is available.")}\n`);
    } else {
      writeOut(
        `${s.red("✗")} ${
          s.bold(
            unavailableMessage(String(out.reason ?? "unknown"), {
              detail: typeof out.detail === "string" ? out.detail : undefined,
              choice: choice,
            }),
          )
        }\n`,
      );
    }
    const languages = Array.isArray(out.supportedLanguages) ? out.supportedLanguages.map(String) : [];
    const shown = languages.length > 12
      ? `${languages.slice(0, 12).join(", ")}, … (${languages.length})`
      : languages.join(", ");
    writeOut(
      `  model      ${choice.label}${out.variant !== undefined ? ` — ${out.variant}` : ""}\n` +
        `  context    ${out.contextSize} tokens\n` +
        `  languages  ${shown || "(not reported)"}\n` +
        (out.detail !== undefined && choice.name === "system" ? `  detail     ${out.detail}\n` : ""),
    );
  }
  return out.available ? EXIT.ok : EXIT.unavailable;
}
