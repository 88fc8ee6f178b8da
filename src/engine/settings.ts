/**
 * The engine's limits and switches: the part of the configuration a method handler reads.
 * @module
 */

/**
 * Limits and switches of a bridge. A host sets them through `BridgeConfiguration` (every field has a
 * default), a handler reads them as `ctx.settings`.
 *
 * @example
 * ```ts
 * import type { BridgeSettings } from "@open-apple-models/bridge/engine";
 * function canQueue(settings: BridgeSettings, pending: number): boolean {
 *   return pending < settings.maxQueuedOperations;
 * }
 * ```
 */
export interface BridgeSettings {
  /** Maximum concurrent sessions (default 64). */
  maxSessions: number;
  /** Default time the engine has to answer a `tool/call`, in seconds; 0 = wait forever (default 120). */
  toolTimeoutSeconds: number;
  /** Whether `{"type": "scripted"}` models may be used (default true). */
  allowsScriptedModels: boolean;
  /** Maximum bridge→client requests waiting for a reply (default 1024). */
  maxPendingClientRequests: number;
  /** Maximum queued operations per session or NPC (default 256). */
  maxQueuedOperations: number;
  /**
   * Maximum requests waiting for their response at once (default 16384). Past it, requests fail with
   * `-32010 busy`, except `ping`, `initialize`, `shutdown` and the `…/cancel`, `…/delete`, `…/list` and
   * `…/unsubscribe` methods, which relieve the load.
   */
  maxInFlightRequests: number;
}
