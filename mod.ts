/**
 * open-apple-models: a JSON-RPC bridge that lets game engines drive LLM agents with real tool calls.
 * @module
 */
export * from "./src/protocol/json.ts";
