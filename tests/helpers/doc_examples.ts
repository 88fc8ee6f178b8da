/**
 * Test helper: the JSDoc examples of a source file, turned into modules that run in the test's own isolate.
 *
 * `deno test --doc` extracts each fenced code block of a JSDoc comment into a pseudo-module beside the
 * documented file (imports hoisted, every export of the documented module imported, the rest wrapped in a test
 * function) and runs each one in a fresh isolate. That costs about 140 ms of CPU per example, mostly loading the
 * library's module graph again; with 200 examples it was a third of `deno task test`. This helper builds the
 * same pseudo-module, so tests/docs/examples_test.ts can run every example in one isolate that loads the graph
 * once. Type-checking stays with Deno (`deno test --doc --no-run`, in the test and check tasks), and
 * `deno task test:doc` still runs Deno's own one-isolate-per-example runner in CI.
 *
 * Rules, as Deno's: only `/** … *\/` comments count; a fence's first word is its language, and an absent one
 * means the documented file's own; `ignore` among the attributes skips the block; blocks in languages other
 * than JavaScript/TypeScript are skipped.
 */

import { isDeepStrictEqual } from "node:util";
import { stderrQueue } from "../../src/util/stderr_queue.ts";

/** One code block of a JSDoc comment. */
export interface DocExample {
  /** 1-based line of the opening fence in the documented file. */
  startLine: number;
  /** 1-based line of the closing fence. */
  endLine: number;
  /** The code, with the comment's leading `*` removed. */
  code: string;
}

const RUNNABLE = new Set(["js", "javascript", "mjs", "cjs", "jsx", "ts", "typescript", "mts", "cts", "tsx"]);

/** The runnable code blocks of every JSDoc comment in `source`, in order. */
export function extractExamples(source: string): DocExample[] {
  const examples: DocExample[] = [];
  const lines = source.split("\n");
  let inDoc = false;
  let fence: { startLine: number; run: boolean; code: string[] } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!inDoc) {
      const open = line.indexOf("/**");
      if (open < 0 || line.slice(0, open).trim() !== "") continue;
      inDoc = true;
      if (line.indexOf("*/", open + 3) >= 0) inDoc = false; // a one-line comment holds no fence
      continue;
    }
    if (line.trimStart().startsWith("*/")) {
      if (fence) {
        throw new Error(`line ${fence.startLine}: code block not closed before the comment ends`);
      }
      inDoc = false;
      continue;
    }
    const text = line.replace(/^\s*\*( |$)/, "");
    if (!fence) {
      const m = /^```(.*)$/.exec(text.trimEnd());
      if (m) {
        const words = m[1].trim().split(/[\s,]+/).filter(Boolean);
        const lang = words[0] ?? "ts";
        fence = { startLine: i + 1, run: RUNNABLE.has(lang) && !words.includes("ignore"), code: [] };
      }
      continue;
    }
    if (text.trimEnd() === "```") {
      if (fence.run) {
        examples.push({ startLine: fence.startLine, endLine: i + 1, code: fence.code.join("\n") });
      }
      fence = undefined;
      continue;
    }
    fence.code.push(text);
  }
  return examples;
}

/** An example split into its leading import declarations and the statements after them. */
export interface SplitExample {
  /** Each import declaration, as written. */
  imports: { statement: string; specifier: string; names: string[] }[];
  /** Everything after the imports. */
  body: string;
}

const IMPORT_FROM = /^import\s+(type\s+)?([\s\S]*?)\s*from\s*(["'])([^"']+)\3\s*;?/;
const IMPORT_BARE = /^import\s*(["'])([^"']+)\1\s*;?/;

/** Splits off the import declarations an example starts with (blank lines and line comments may separate them). */
export function splitImports(code: string): SplitExample {
  const imports: SplitExample["imports"] = [];
  let rest = code;
  for (;;) {
    const skipped = rest.replace(/^(\s+|\/\/[^\n]*)+/, "");
    const from = IMPORT_FROM.exec(skipped);
    const bare = from ? null : IMPORT_BARE.exec(skipped);
    if (!from && !bare) break;
    if (from) imports.push({ statement: from[0], specifier: from[4], names: boundNames(from[2]) });
    else imports.push({ statement: bare![0], specifier: bare![2], names: [] });
    rest = skipped.slice((from ?? bare)![0].length);
  }
  return { imports, body: rest.replace(/^\s*\n/, "") };
}

/** The local names an import clause binds: `a, { b, c as d, type E }` → a, b, d, E; `* as ns` → ns. */
function boundNames(clause: string): string[] {
  const names: string[] = [];
  const braces = /\{([^}]*)\}/.exec(clause);
  for (const part of braces ? braces[1].split(",") : []) {
    const words = part.trim().split(/\s+/).filter((w) => w !== "type");
    if (words.length) names.push(words[words.length - 1]);
  }
  const outside = clause.replace(/\{[^}]*\}/, "").split(",").map((s) => s.trim()).filter(Boolean);
  for (const part of outside) names.push(part.split(/\s+/).pop()!);
  return names.filter((n) => /^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(n));
}

/**
 * The module that runs one example of the file at `fileUrl`: its imports hoisted (relative ones resolved
 * against the documented file, as if the module sat beside it), the documented module's runtime exports that
 * the example does not import itself, and the rest as the default-exported async function. `import.meta`
 * in the example reads as the documented file's (`import.meta.resolve` of a bare specifier, such as the
 * package's name, goes through the import map).
 */
export function exampleModule(example: DocExample, fileUrl: string, exportNames: string[]): string {
  const { imports, body } = splitImports(example.code);
  const own = new Set(imports.flatMap((i) => i.names));
  const hoisted = imports.map(({ statement, specifier }) =>
    specifier.startsWith("./") || specifier.startsWith("../")
      ? statement.replace(specifier, new URL(specifier, fileUrl).href)
      : statement
  );
  const implicit = exportNames.filter((n) => n !== "default" && !own.has(n));
  if (implicit.length) hoisted.push(`import { ${implicit.join(", ")} } from ${JSON.stringify(fileUrl)};`);
  // A relative or absolute specifier resolves against the documented file; a bare one (the package's name)
  // through the import map and the package's exports, as Deno resolves it in the documented file.
  const meta = `{ url: ${JSON.stringify(fileUrl)}, main: false, resolve: (s: string) => ` +
    `/^(\\.{0,2}\\/|[a-z][a-z0-9+.-]*:)/i.test(s) ? new URL(s, ${
      JSON.stringify(fileUrl)
    }).href : import.meta.resolve(s) }`;
  return [
    ...hoisted,
    `const __docMeta = ${meta};`,
    "export default async function example(): Promise<void> {",
    body.replace(/\bimport\.meta\b/g, "__docMeta"),
    "}",
    "",
  ].join("\n");
}

/** A `data:` URL that imports as the TypeScript module `code`. */
export function moduleUrl(code: string): string {
  return `data:application/typescript,${encodeURIComponent(code)}`;
}

/**
 * Runs `run` with what it prints (console, `Deno.stdout`, `Deno.stderr` and the bridge's queued stderr lines)
 * kept back. The examples print what they demonstrate; in the test run that output only got in the way. When
 * `run` throws, what it printed is written to stderr before the error goes on, so a failing example shows it.
 */
export async function quietly(run: () => Promise<void>): Promise<void> {
  let printed = "";
  const decoder = new TextDecoder();
  const keep = (bytes: Uint8Array) => {
    printed += decoder.decode(bytes);
    return bytes.length;
  };
  const methods = ["log", "info", "warn", "error", "debug"] as const;
  // The one place that stands in for the console (not printing to it): the examples' own calls land here.
  const out = console;
  const consoleWas = methods.map((method) => out[method]);
  const streams = [Deno.stdout, Deno.stderr];
  const streamsWere = streams.map((stream) => ({ write: stream.write, writeSync: stream.writeSync }));
  for (const method of methods) {
    out[method] = (...args: unknown[]) => {
      printed += args.map((arg) => typeof arg === "string" ? arg : Deno.inspect(arg)).join(" ") + "\n";
    };
  }
  for (const stream of streams) {
    stream.writeSync = keep;
    stream.write = (bytes: Uint8Array) => Promise.resolve(keep(bytes));
  }
  let failed = false;
  try {
    await run();
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await stderrQueue.flush(1_000); // lines a logger queued go to the stand-in, not after it
    methods.forEach((method, i) => out[method] = consoleWas[i]);
    streams.forEach((stream, i) => Object.assign(stream, streamsWere[i]));
    if (failed && printed) Deno.stderr.writeSync(new TextEncoder().encode(printed));
  }
}

/** The global a checked example line calls (see {@link withValueChecks}). */
export const VALUE_CHECK = "__docValueCheck";

/**
 * `code` with each line `expr; // value` whose comment is a whole JavaScript literal (a string, number,
 * array, object, `null`, `true`) made a check that `expr` gives `value`: a call of `globalThis[VALUE_CHECK]`
 * with both and `where(line)` (`line` 0-based in `code`). A comment that is words (`// fine`, `// e.g. …`,
 * `// null: it was cancelled`) is left alone, and so is a line that declares (`const x = …; // 3`), returns,
 * or ends a bracket opened above. Returns the code and how many lines it checks.
 *
 * @example
 * ```ts
 * import { withValueChecks } from "./doc_examples.ts";
 * withValueChecks("add(1, 2); // 3\nsay(); // prints", (line) => `x.ts:${line}`).checks; // 1
 * ```
 */
export function withValueChecks(
  code: string,
  where: (line: number) => string,
): { code: string; checks: number } {
  let checks = 0;
  const lines = code.split("\n").map((line, i) => {
    const m =
      /^(\s*)(?!\s|const |let |var |if |return |await using |using |import |type |[})\]])(.+?);\s*\/\/\s*(.+?)\s*$/
        .exec(line);
    if (!m || !isLiteral(m[3])) return line;
    checks++;
    return `${m[1]}(globalThis as Record<string, any>).${VALUE_CHECK}(${m[2]}, ${m[3]}, ${
      JSON.stringify(where(i))
    });`;
  });
  return { code: lines.join("\n"), checks };
}

/** True when `text` is a whole JavaScript literal value (evaluated alone, it gives a value, not a function). */
function isLiteral(text: string): boolean {
  if (!/^["'`\[{\d-]|^(null|true|false)$/.test(text)) return false;
  try {
    const value = new Function(`"use strict"; return (${text});`)();
    return value !== undefined && typeof value !== "function";
  } catch {
    return false;
  }
}

/**
 * Whether an example's `got` is the `want` its comment shows: deep equality, where a string's `…` or `<word>`
 * stands for any text (`"<path>: #/properties/mood (line 2, column 26)"`, `"npc.update(): … is Infinity, …"`).
 */
export function docValueMatches(got: unknown, want: unknown): boolean {
  if (typeof want === "string" && typeof got === "string" && /…|<[a-z]+>/.test(want)) {
    const parts = want.split(/…|<[a-z]+>/);
    let at = 0;
    for (const [i, part] of parts.entries()) {
      const found = i === 0 ? (got.startsWith(part) ? 0 : -1) : got.indexOf(part, at);
      if (found === -1) return false;
      at = found + part.length;
    }
    return parts.at(-1) === "" || got.endsWith(parts.at(-1)!);
  }
  return isDeepStrictEqual(got, want);
}
