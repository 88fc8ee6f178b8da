/**
 * Shared immutable values for the entries the agent writes (a long conversation keeps thousands of them;
 * transcript exports copy them, so sharing is invisible outside).
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";

/**
 * The `options` of prompt entries the bridge writes: one shared, frozen empty object (a long conversation
 * keeps thousands of entries; exports copy it).
 */
export const NO_OPTIONS: JsonObject = Object.freeze({}) as JsonObject;

/** The `assets` of response entries the bridge writes: one shared, frozen empty array. */
export const NO_ASSETS: string[] = Object.freeze([]) as unknown as string[];
