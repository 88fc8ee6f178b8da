/**
 * How domain code (NPC turns, decisions) runs an agent turn without knowing the transport: the host hands it
 * a {@link TurnDriver}, which supplies the {@link TurnSink} that carries client tool calls to wherever they
 * are executed. The JSON-RPC adapters build one from `BridgeRequest.drive`.
 * @module
 */
import type { TurnSink } from "./types.ts";

/**
 * Runs `run` with the host's turn sink and resolves with its result. The host routes client tool calls
 * (for example as `tool/call` requests) and cancels the calls still pending when `run` ends.
 *
 * @example
 * ```ts
 * import type { TurnDriver } from "./turn_host.ts";
 * const direct: TurnDriver = (run) =>
 *   run({
 *     event: () => {},
 *     callClientTool: () => Promise.resolve({ output: "No tools here.", isError: true }),
 *   });
 * ```
 */
export type TurnDriver = <T>(run: (sink: TurnSink) => Promise<T>) => Promise<T>;
