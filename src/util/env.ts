/**
 * Environment variables read without failing: a variable that is unset or not permitted is `undefined`.
 * @module
 */

/**
 * A variable's value; undefined when unset or when env access is not permitted.
 *
 * @example
 * ```ts
 * import { envVar } from "./env.ts";
 * envVar("OAM_NOT_SET_ANYWHERE"); // undefined
 * ```
 */
export function envVar(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * A variable's value only when reading it is already permitted: it never prompts (in the bridge, stdin may
 * be the protocol); undefined otherwise.
 *
 * @example
 * ```ts
 * import { grantedEnvVar } from "./env.ts";
 * grantedEnvVar("OAM_NOT_SET_ANYWHERE"); // undefined
 * ```
 */
export function grantedEnvVar(name: string): string | undefined {
  try {
    return Deno.permissions.querySync({ name: "env", variable: name }).state === "granted"
      ? Deno.env.get(name)
      : undefined;
  } catch {
    return undefined;
  }
}
