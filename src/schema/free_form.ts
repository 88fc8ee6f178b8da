/**
 * Objects of a schema that list no `properties`, and what the model in use makes of them: the on-device and
 * scripted models generate exactly the properties an object lists, so such an object comes back as `{}`
 * whatever the prompt asks; a `llama` model fills one that takes any members (`{"type": "object"}`,
 * `additionalProperties: true`); an `openai` model gets the JSON Schema as written. One warning text for every
 * method that shows them, true for the model it is shown for.
 * @module
 */

/** An object of a schema with no `properties` whose members are not forbidden (`additionalProperties` is not `false`). */
export interface FreeFormObject {
  /** Its schema path (`#/properties/stats`). */
  path: string;
  /** True when it names `additionalProperties` (`true` or a schema); false for a bare `{"type": "object"}`. */
  additional: boolean;
  /** True when it takes any members (nothing but annotations besides `type`): a `llama` model fills it. */
  open: boolean;
}

/** What the warnings are for. */
export interface FreeFormWarningOptions {
  /**
   * The kind of the model that generates the schema (`LanguageModel.kind`: `system`, `scripted`, `llama`,
   * `openai`, a host's own), or undefined when no model is known (`schema/validate`, a tool definition).
   */
  model?: string;
  /**
   * Whether a bare `{"type": "object"}` is warned about too (a response schema), or only one that names
   * `additionalProperties` (a tool's parameters, where `{"type": "object"}` is a tool without arguments).
   */
  plainObjects: boolean;
}

/** How a model kind generates an object without properties. */
function fills(model: string | undefined, object: FreeFormObject): "empty" | "filled" | "unknown" {
  if (model === undefined) return "unknown";
  if (model === "system" || model === "scripted" || model.startsWith("scripted ")) return "empty";
  if (model === "openai") return "filled";
  if (model === "llama") return object.open ? "filled" : "empty";
  return "unknown";
}

/**
 * One warning per object of `objects` the model in use generates as `{}` (in their order), worded for what
 * is known of it: "is generated as {}" for the on-device and scripted models (and a `llama` model's object
 * that does not take any members), what the on-device and scripted models do when no model is known, none
 * for an object the model fills.
 *
 * @example
 * ```ts
 * import { freeFormWarnings } from "./free_form.ts";
 * const stats = { path: "#/properties/stats", additional: false, open: true };
 * freeFormWarnings([stats], { model: "system", plainObjects: true });
 * // ["#/properties/stats: object without 'properties' is generated as {}; list the properties it should have"]
 * freeFormWarnings([stats], { model: "llama", plainObjects: true }); // []
 * ```
 */
export function freeFormWarnings(
  objects: readonly FreeFormObject[],
  options: FreeFormWarningOptions,
): string[] {
  const out: string[] = [];
  for (const object of objects) {
    if (!object.additional && !options.plainObjects) continue;
    const what = object.additional
      ? "free-form object (additionalProperties without properties)"
      : "object without 'properties'";
    switch (fills(options.model, object)) {
      case "empty":
        out.push(`${object.path}: ${what} is generated as {}; list the properties it should have`);
        break;
      case "unknown":
        out.push(
          `${object.path}: ${what}: the on-device and scripted models generate it as {}; list the properties it ` +
            "should have",
        );
        break;
    }
  }
  return out;
}
