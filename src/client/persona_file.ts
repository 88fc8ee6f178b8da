/**
 * Persona files: an NPC described in a JSON or JSONC file (the keys of `npc/create`, as `oam npc` reads
 * them) with an optional matching step script beside it (`<name>.steps.json`).
 * @module
 */
import type { ParseError } from "npm:jsonc-parser@3.3.1";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { shown } from "./checks.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { idleStepMembers, knownStepMembers } from "../protocol/script_keys.ts";
import type { NpcMemory, NpcOptions, Persona } from "./game_types.ts";
import { withKnownKeys } from "./npc_keys.ts";
import type { ScriptStep, ToolDefinition } from "./types.ts";

/**
 * An NPC file, loaded.
 *
 * @example
 * ```ts
 * import { Bridge, type PersonaFile, loadPersona } from "@open-apple-models/bridge";
 * // The package's personas/ folder (from JSR an https: URL: run with --allow-net=jsr.io)
 * const personas = new URL("./personas/", import.meta.resolve("@open-apple-models/bridge"));
 * const sage: PersonaFile = await loadPersona(new URL("sage.jsonc", personas));
 * await using bridge = await Bridge.open();
 * const wenna = await bridge.createNpc(sage.persona, {
 *   npc: sage.npc, // "wenna": the file's id, as `oam npc` gives it
 *   memory: sage.memory,
 *   options: sage.options,
 *   model: { type: "scripted", steps: sage.steps, fallback: sage.fallback },
 * });
 * (await wenna.talk("Hi, I am Aria.")).line; // "Aria, is it? Sit, mind the nettles."
 * ```
 */
export interface PersonaFile {
  /**
   * The NPC id the file names (`"npc": "mira"`), which `oam npc` gives the NPC. `bridge.createNpc(file.persona,
   * …)` keeps it when it is passed as `npc: file.npc`; without it the bridge names the NPC (`npc1`).
   */
  npc?: string;
  /** Who the NPC is. */
  persona: Persona;
  /** NPC options. */
  options?: NpcOptions;
  /** Client tool definitions (a script registers their handlers with `bridge.tool`). */
  tools?: ToolDefinition[];
  /** Initial memory. */
  memory?: NpcMemory;
  /** A world seed: the initial state of the NPC's world. */
  world?: JsonObject;
  /** An opening situation (for a bark); `""` when the file says `true` (a bark with no situation). */
  greeting?: string;
  /** The matching scripted model's steps (`[]` when there is no `.steps.json` beside the file). */
  steps: ScriptStep[];
  /**
   * The steps file's `fallback` (`{"steps": […], "fallback": step}`), which the scripted model plays when the
   * steps run out (absent when the file has none): `modelFromArgs(Deno.args, file)` passes it on with the
   * steps, as does `model: {type: "scripted", steps: file.steps, fallback: file.fallback}`.
   */
  fallback?: ScriptStep;
}

/**
 * The text of a local file, or of an `http:`/`https:` URL (a package imported from JSR reads its own files
 * over the network); a missing one is `Deno.errors.NotFound` either way.
 */
async function readText(path: string | URL): Promise<string> {
  const url = path instanceof URL ? path : /^https?:\/\//i.test(path) ? new URL(path) : null;
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return await Deno.readTextFile(path);
  }
  const response = await fetch(url);
  if (response.status === 404) {
    await response.body?.cancel();
    throw new Deno.errors.NotFound(`${url}: not found (HTTP 404).`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url}: HTTP ${response.status} ${response.statusText}`.trim());
  }
  return await response.text();
}

/**
 * The NotFound of a missing local NPC file, saying where a relative path was looked for: the folder deno runs
 * in, not the script's, which a designer running `deno run game/tavern.ts` from another folder does not expect.
 */
function missingFile(path: string | URL): Deno.errors.NotFound {
  const relative = typeof path === "string" && !/^([a-z][a-z0-9+.-]*:|[/\\])/i.test(path);
  let where = "";
  if (relative) {
    const beside = path.startsWith(".") ? path : `./${path}`;
    let cwd = "the current folder";
    try {
      cwd = Deno.cwd();
    } catch { /* no read permission for it: name it in words */ }
    where = ` in ${cwd}, the folder deno runs in. A relative path starts there, not beside your script: ` +
      `new URL("${beside}", import.meta.url) names the file beside it`;
  }
  const own = packagePersona(path);
  const copy = own === null ? "" : ` This package has a persona of that name, ${own.path}: load it from ` +
    `there, or copy it (with ${stepsPath(own.name)}, its script) beside your script.`;
  return new Deno.errors.NotFound(`loadPersona: there is no file '${path}'${where}.${copy}`);
}

/**
 * This package's own persona file of the name a missing file has, when the package is a local checkout and
 * reading it is granted (nothing is asked for), or null: an example copied into another folder loads
 * `new URL("../personas/shopkeeper.jsonc", import.meta.url)`, which is beside the example no more.
 */
function packagePersona(missing: string | URL): { path: string; name: string } | null {
  const folder = new URL("../../personas/", import.meta.url);
  const name = String(missing).split(/[\\/]/).pop() ?? "";
  if (folder.protocol !== "file:" || !/\.jsonc?$/.test(name)) return null;
  const url = new URL(encodeURIComponent(name), folder);
  if (url.href === String(missing)) return null;
  let path = decodeURIComponent(url.pathname);
  if (Deno.build.os === "windows") path = path.replace(/^\/([A-Za-z]:)/, "$1").replaceAll("/", "\\");
  try {
    if (Deno.permissions.querySync({ name: "read", path }).state !== "granted") return null;
    return Deno.statSync(path).isFile ? { path, name } : null;
  } catch {
    return null;
  }
}

async function readJsonc(path: string | URL): Promise<JsonValue> {
  const read = await readText(path);
  // A byte order mark (Windows Notepad and some editors save UTF-8 with one) is not part of the JSON.
  const text = read.startsWith("\ufeff") ? read.slice(1) : read;
  // Loaded here, not with mod.ts: the package is CommonJS, ≈ 70 ms of every script's start that loads no file.
  const { parse, printParseErrorCode } = await import("npm:jsonc-parser@3.3.1");
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0];
    const line = text.slice(0, e.offset).split("\n").length;
    throw new SyntaxError(`${path}: ${printParseErrorCode(e.error)} on line ${line}.`);
  }
  return value;
}

/**
 * The scripted steps file beside a persona file: `guard.jsonc` → `guard.steps.json` (also `.json`; another name
 * gets `.steps.json` added), as a URL for a URL.
 *
 * @example
 * ```ts
 * import { stepsPath } from "./persona_file.ts";
 * stepsPath("personas/guard.jsonc"); // "personas/guard.steps.json"
 * ```
 */
export function stepsPath(path: string | URL): string | URL {
  const text = String(path);
  const replaced = /\.jsonc?$/.test(text) ? text.replace(/\.jsonc?$/, ".steps.json") : `${text}.steps.json`;
  return path instanceof URL ? new URL(replaced) : replaced;
}

function hasPersona(value: JsonValue): value is JsonObject & { persona: Persona } {
  return isJsonObject(value) && isJsonObject(value.persona) && typeof value.persona.name === "string";
}

function isSteps(value: JsonValue): value is JsonObject[] & ScriptStep[] {
  return Array.isArray(value) && value.every(isJsonObject);
}

/** What a step plays: every step holds one of these (spec §10). */
const STEP_KINDS = ["text", "toolCalls", "json", "template", "error"];

/**
 * Throws a TypeError naming the steps file, the step (counted from 1) and the kind its keys most likely
 * misspell, for a step that holds none of {@link STEP_KINDS} (`{"txt": …}`); the bridge would refuse it when
 * the NPC is created, naming `model.steps[1]` and neither the file nor the kind.
 */
function checkStepKinds(path: string | URL, steps: readonly JsonObject[], label = stepLabel): void {
  for (const [index, step] of steps.entries()) {
    const kind = STEP_KINDS.some((k) =>
      k === "json" ? Object.hasOwn(step, k) : step[k] !== undefined && step[k] !== null
    );
    if (kind) continue;
    const meant = Object.keys(step).map((key) => nearestName(key, STEP_KINDS)).find((k) => k !== undefined);
    throw new TypeError(
      `${path}: ${label(index)} has none of 'text', 'toolCalls', 'json', 'template' or 'error'` +
        `${didYouMean(meant)}; got ${shown(step)}.`,
    );
  }
}

/** How the messages name the step at `index`: counted from 1. */
function stepLabel(index: number): string {
  return `step ${index + 1}`;
}

/** How the messages name the steps file's `fallback`. */
const fallbackLabel = (): string => "fallback";

/**
 * The steps without the members the bridge does not read, each a warning naming the steps file and the step
 * (counted from 1, as {@link checkStepKinds} counts them): the bridge would name `model.steps[0].delay`, a path
 * the designer never wrote.
 */
function knownSteps(
  path: string | URL,
  steps: readonly JsonObject[],
  onWarning: (warning: string) => void,
  label = stepLabel,
): ScriptStep[] {
  return steps.map((step, index) => {
    const known = knownStepMembers(step);
    for (const { member, meant } of known.unknown) {
      onWarning(
        `${path}: ${label(index)}: unknown key '${member}' was ignored${didYouMean(meant)}.`,
      );
    }
    for (const { member, why } of idleStepMembers(step)) {
      onWarning(`${path}: ${label(index)}: '${member}' has no effect: ${why}.`);
      delete known.step[member];
    }
    return known.step as ScriptStep;
  });
}

/** The keys of an NPC file (those of `npc/create`, a world seed and a greeting), as `oam npc` reads them. */
const FILE_KEYS = ["npc", "persona", "options", "tools", "memory", "world", "greeting"];

/** The warning of an unknown key, with the file key it most likely meant. */
function unknownKeyWarning(path: string | URL, key: string): string {
  const meant = nearestName(key, FILE_KEYS);
  return `${path}: unknown key '${key}' was ignored${didYouMean(meant)}; ` +
    `an NPC file's keys are ${FILE_KEYS.join(", ")}.`;
}

/** `section` without the keys the bridge does not read, each a warning naming the file ({@link withKnownKeys}). */
function knownKeys(
  path: string | URL,
  name: "persona" | "options" | "memory",
  section: object,
  onWarning: (warning: string) => void,
): JsonObject {
  const { known, warnings } = withKnownKeys(name, section);
  for (const warning of warnings) onWarning(`${path}: ${warning}`);
  return known as JsonObject;
}

/** Throws a TypeError unless the file's `key` is absent or passes `ok`. */
function expect(
  path: string | URL,
  value: JsonObject,
  key: string,
  what: string,
  ok: (v: JsonValue) => boolean,
): void {
  if (value[key] !== undefined && !ok(value[key])) {
    throw new TypeError(`${path}: '${key}' must be ${what}; got ${shown(value[key])}.`);
  }
}

/**
 * Options of {@link loadPersona}.
 *
 * @example
 * ```ts
 * import { loadPersona, type LoadPersonaOptions } from "@open-apple-models/bridge";
 * const warnings: string[] = [];
 * const options: LoadPersonaOptions = { onWarning: (warning) => warnings.push(warning) };
 * const personas = new URL("./personas/", import.meta.resolve("@open-apple-models/bridge"));
 * await loadPersona(new URL("guard.jsonc", personas), options);
 * warnings; // []
 * ```
 */
export interface LoadPersonaOptions {
  /** Receives each warning about the file (an unknown key, ignored). Default: printed to stderr. */
  onWarning?: (warning: string) => void;
}

function printWarning(warning: string): void {
  // deno-lint-ignore no-console
  console.warn(`warning (loadPersona): ${warning}`);
}

/**
 * Loads an NPC file (JSON or JSONC: `persona`, `options`, `tools`, `memory`, `world`, `greeting`, `npc`)
 * and the step script beside it (`shopkeeper.jsonc` → `shopkeeper.steps.json`: an array of steps, or
 * `{"steps": […]}`). The bridge validates the values when the NPC is created; a key of the wrong kind (e.g.
 * `options` that is not an object) is a TypeError here, and an unknown key (a typo such as `optoins`) is
 * ignored with a warning to `options.onWarning` (default: stderr), as `oam npc` does. So is an unknown key of
 * `persona`, `options` or `memory` (`persona.personalty`): it is left out of the result, with a warning that
 * names the file and the key it most likely meant, and the bridge does not warn about it again. So is a
 * step member nothing reads (`{"text": "Hi", "delay": 500}`: `guard.steps.json: step 1: unknown key 'delay'
 * was ignored (did you mean 'delayMs'?).`). A step with none of `text`, `toolCalls`, `json`, `template` or
 * `error` (`{"txt": …}`) is a TypeError naming the steps file, the step and the kind it meant. Needs
 * `--allow-read`.
 *
 * `path` is a local file (a path or a `file:` URL) or an `http:`/`https:` URL (needs `--allow-net` for its
 * host). A relative path starts in the folder deno runs in; `new URL("./mira.jsonc", import.meta.url)` names
 * a file beside the script wherever it is run from. A missing file is `Deno.errors.NotFound`. The package's own `personas/` load either way:
 * `new URL("./personas/guard.jsonc", import.meta.resolve("@open-apple-models/bridge"))` is a file in a
 * checkout and an `https:` URL when the package comes from JSR.
 *
 * @example
 * ```ts
 * import { loadPersona } from "@open-apple-models/bridge";
 * // The package's personas/ folder (from JSR an https: URL: run with --allow-net=jsr.io)
 * const personas = new URL("./personas/", import.meta.resolve("@open-apple-models/bridge"));
 * const shopkeeper = await loadPersona(new URL("shopkeeper.jsonc", personas));
 * shopkeeper.persona.name; // "Mira"
 * shopkeeper.steps.length > 0; // true
 * ```
 */
export async function loadPersona(
  path: string | URL,
  options: LoadPersonaOptions = {},
): Promise<PersonaFile> {
  const value = await readJsonc(path).catch((error) => {
    throw error instanceof Deno.errors.NotFound && !/^https?:/i.test(String(path))
      ? missingFile(path)
      : error;
  });
  if (!hasPersona(value)) {
    // A persona written at the top level ({"name": "Mira", "role": …}) is the likely mistake.
    const flat = isJsonObject(value) && value.persona === undefined && typeof value.name === "string";
    // A misspelt name (`"nme"`) is the other.
    const misspelt = isJsonObject(value) && isJsonObject(value.persona)
      ? Object.keys(value.persona).find((key) => nearestName(key, ["name"]) === "name")
      : undefined;
    throw new TypeError(
      `${path}: expected an object with a 'persona' that has a 'name'` +
        (flat
          ? ` (the persona's fields go under 'persona': {"persona": {"name": "${value.name}", …}}).`
          : misspelt !== undefined
          ? `; the persona has '${misspelt}'${didYouMean("name")}.`
          : "."),
    );
  }
  const onWarning = options.onWarning ?? printWarning;
  for (const key of Object.keys(value)) if (!FILE_KEYS.includes(key)) onWarning(unknownKeyWarning(path, key));
  expect(path, value, "npc", "a string (the NPC id)", (v) => typeof v === "string");
  for (const key of ["options", "memory", "world"]) expect(path, value, key, "an object", isJsonObject);
  expect(path, value, "tools", "an array of tool definitions", Array.isArray);
  expect(
    path,
    value,
    "greeting",
    "a string (the situation of an opening bark)",
    (v) => typeof v === "string" || v === true,
  );
  let steps: ScriptStep[] = [];
  const scriptPath = stepsPath(path);
  let script: JsonValue | undefined;
  try {
    script = await readJsonc(scriptPath);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  let fallback: ScriptStep | undefined;
  if (script !== undefined) {
    const list = isJsonObject(script) ? script.steps : script;
    if (list === undefined || !isSteps(list)) {
      throw new TypeError(`${scriptPath}: expected an array of steps or {"steps": […]}.`);
    }
    if (isJsonObject(script)) fallback = scriptFallback(scriptPath, script, onWarning);
    checkStepKinds(scriptPath, list);
    steps = knownSteps(scriptPath, list, onWarning);
  }
  const out: PersonaFile = {
    persona: knownKeys(path, "persona", value.persona, onWarning) as JsonObject & Persona, // has its name
    steps,
  };
  if (fallback !== undefined) out.fallback = fallback;
  if (typeof value.npc === "string") out.npc = value.npc;
  if (isJsonObject(value.options)) out.options = knownKeys(path, "options", value.options, onWarning);
  if (Array.isArray(value.tools)) {
    const bad = value.tools.findIndex((t) => !isTool(t));
    if (bad >= 0) throw new TypeError(`${path}: tools[${bad}] is not a tool definition with a 'name'.`);
    out.tools = value.tools.filter(isTool);
  }
  if (isJsonObject(value.memory)) out.memory = knownKeys(path, "memory", value.memory, onWarning);
  if (isJsonObject(value.world)) out.world = value.world;
  if (typeof value.greeting === "string") out.greeting = value.greeting;
  else if (value.greeting === true) out.greeting = ""; // as `oam npc` reads it: a bark with no situation
  return out;
}

/** The keys of a steps file written as an object (PROTOCOL.md §10's scripted model). */
const SCRIPT_KEYS = ["steps", "fallback"];

/**
 * The `fallback` of a steps file written as `{"steps": […], "fallback": step}`, checked as a step is (a
 * TypeError naming the file when it is not a step, a warning for a member nothing reads); a warning for any
 * other key of the file (`fallbak`), which nothing reads.
 */
function scriptFallback(
  path: string | URL,
  script: JsonObject,
  onWarning: (warning: string) => void,
): ScriptStep | undefined {
  for (const key of Object.keys(script)) {
    if (SCRIPT_KEYS.includes(key)) continue;
    const meant = nearestName(key, SCRIPT_KEYS);
    onWarning(
      `${path}: unknown key '${key}' was ignored${didYouMean(meant)}; ` +
        `a steps file is an array of steps or {"steps": […], "fallback"?: step}.`,
    );
  }
  const fallback = script.fallback;
  if (fallback === undefined) return undefined;
  if (!isJsonObject(fallback)) {
    throw new TypeError(`${path}: 'fallback' must be a step object; got ${shown(fallback)}.`);
  }
  checkStepKinds(path, [fallback], fallbackLabel);
  return knownSteps(path, [fallback], onWarning, fallbackLabel)[0];
}

function isTool(value: JsonValue): value is JsonObject & ToolDefinition {
  return isJsonObject(value) && typeof value.name === "string";
}
