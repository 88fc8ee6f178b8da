/**
 * Type names of generation schemas: sanitising, de-duplication and tool argument names.
 * @module
 */

/**
 * Sanitises a raw name to `[A-Za-z0-9_]` (other characters become `_`), prefixing `_` when it starts with a
 * digit; an empty name becomes `_`.
 *
 * @example
 * ```ts
 * sanitizeTypeName("3d-point"); // "_3d_point"
 * ```
 */
export function sanitizeTypeName(raw: string): string {
  let name = raw.replace(/[^A-Za-z0-9_]/g, "_");
  if (name === "") name = "_";
  if (/^[0-9]/.test(name)) name = `_${name}`;
  return name;
}

/**
 * The generation-schema type name of a tool's arguments: `<PascalCaseToolName>Arguments`.
 *
 * @example
 * ```ts
 * toolArgumentsTypeName("open_gate"); // "OpenGateArguments"
 * ```
 */
export function toolArgumentsTypeName(toolName: string): string {
  const pascal = toolName
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== "")
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join("");
  return sanitizeTypeName(`${pascal}Arguments`);
}

/**
 * Allocates unique type names: the first use of a (sanitised) name is kept as is, later uses get the numeric
 * suffixes 2, 3, … (`Pet`, `Pet2`, `Pet3`).
 */
export class TypeNameRegistry {
  #used = new Set<string>();

  /** Reserves and returns a unique sanitised name derived from `base`. */
  allocate(base: string): string {
    const name = sanitizeTypeName(base);
    if (!this.#used.has(name)) {
      this.#used.add(name);
      return name;
    }
    for (let n = 2;; n++) {
      const candidate = `${name}${n}`;
      if (!this.#used.has(candidate)) {
        this.#used.add(candidate);
        return candidate;
      }
    }
  }
}
