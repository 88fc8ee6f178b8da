/**
 * `oam schema convert <file|->`: converts a JSON Schema to the model's generation schema (`schema/validate`)
 * without running the model. Exit 2 on an invalid schema.
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import { boolFlag, parseFlags, stringFlag, wantsHelp } from "./args.ts";
import { CliError, EXIT, type OutputMode, reportError } from "./cli_error.ts";
import { oamHelpLine } from "./invocation.ts";
import { readSchemaFile, schemaProblemInFile, schemaWarningInFile } from "./schema_file.ts";
import { LocalBridge } from "./local_bridge.ts";
import { stderrStyle, writeErr, writeOut } from "./tty.ts";

/** Help text of `oam schema`. */
export const SCHEMA_HELP = `oam schema convert — show how a JSON Schema reaches the model

Usage: oam schema convert [options] <file|->

Reads a JSON Schema (JSON or JSONC; '-' = stdin) and prints the generation schema the model is
constrained with. Constraints the model cannot enforce (pattern, format, minLength, …) become warnings.
Problems and warnings name the file, the part of the schema and its line ('mood.json: #/properties/a
(line 3, column 9): …').

Options:
  --name <name>   root type name (default Response)
  --json          print {"warnings": [...], "generationSchema": {...}} on one line
  -h, --help      show this help

Exit codes: 0 converted (also when stdout's reader stops early, as with '| head'), 2 invalid schema, a
missing or malformed file, or usage (invalid_schema, invalid_input, usage), 1 any other failure.

Example:
  echo '{"type":"object","properties":{"mood":{"enum":["calm","angry"]}}}' | oam schema convert -
`;

const FLAGS = {
  name: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Runs `oam schema <subcommand>`; resolves with the exit code. */
export async function runSchema(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    writeErr(SCHEMA_HELP); // no subcommand: a usage error, so the help goes to stderr
    return EXIT.usage;
  }
  if (sub === "-h" || sub === "--help" || sub === "help") {
    writeOut(SCHEMA_HELP);
    return EXIT.ok;
  }
  if (sub !== "convert") {
    return reportError(
      CliError.usage(`Unknown subcommand 'schema ${sub}'; try '${oamHelpLine("schema convert")}'.`),
      {
        mode: "human",
        style: stderrStyle(),
      },
    );
  }
  return await runSchemaConvert(rest);
}

/** Runs `oam schema convert`. */
export async function runSchemaConvert(args: string[]): Promise<number> {
  if (wantsHelp(args)) {
    writeOut(SCHEMA_HELP);
    return EXIT.ok;
  }
  const mode: OutputMode = args.includes("--json") ? "json" : "human";
  try {
    const { values, positionals } = parseFlags(args, {
      command: "schema convert",
      flags: FLAGS,
      positionals: true,
    });
    if (positionals.length !== 1) {
      throw CliError.usage("oam schema convert needs exactly one schema file (or '-' for stdin).");
    }
    const file = await readSchemaFile(positionals[0]);
    const bridge = new LocalBridge({});
    const params: JsonObject = { schema: file.schema };
    const name = stringFlag(values, "name");
    if (name !== undefined) {
      if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) {
        throw CliError.usage(`--name must be a type name of letters, digits and '_'; got '${name}'.`);
      }
      params.name = name;
    }
    const result = await bridge.call("schema/validate", params).catch((error) => {
      throw schemaProblemInFile(error, file);
    }) as JsonObject;
    const warnings = Array.isArray(result.warnings) ? result.warnings.map(String) : [];
    if (boolFlag(values, "json")) {
      writeOut(`${JSON.stringify({ warnings, generationSchema: result.generationSchema })}\n`);
    } else {
      const s = stderrStyle();
      for (const w of warnings) writeErr(`${s.yellow("warning:")} ${schemaWarningInFile(w, file)}\n`);
      writeOut(`${JSON.stringify(result.generationSchema, null, 2)}\n`);
    }
    return EXIT.ok;
  } catch (error) {
    return reportError(error, { mode, style: stderrStyle() });
  }
}
