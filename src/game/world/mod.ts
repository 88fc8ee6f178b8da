/**
 * World state domain: a shared JSON blackboard (`WorldState`), world paths, the NPC world tools
 * (`read_world_state`, `update_world_state`) and the prompt summary. No JSON-RPC here.
 * @module
 */

export type { JsonObject, JsonValue } from "../../protocol/json.ts";
export {
  arrayIndex,
  canonicalWorldPath,
  formatWorldPath,
  invalidPathMessage,
  isInside,
  isPrefix,
  isSamePath,
  parseWorldPath,
  type PathRelation,
  pathRelation,
  pathsOverlap,
  toSegments,
  type WorldPathInput,
} from "./path.ts";
export { WorldError } from "./world_error.ts";
export { MAX_WORLD_DEPTH, type ReadonlyJsonObject, type ReadonlyJsonValue } from "./world_values.ts";
export { MAX_NOTIFICATION_BYTES, MAX_WORLD_SIZE } from "./world_size.ts";
export {
  ROOT_NOT_OBJECT_MESSAGE,
  ROOT_WRITE_MESSAGE,
  type WorldChange,
  type WorldListener,
  type WorldReadResult,
  type WorldRemoveResult,
  WorldState,
  type WorldStateOptions,
} from "./world_state.ts";
export {
  coerceWorldValue,
  READ_OUTPUT_LIMIT,
  READ_WORLD_STATE_TOOL,
  readWorldStateTool,
  SHORTENED_NOTE,
  shortenForModel,
  summarizeWorld,
  UPDATE_WORLD_STATE_TOOL,
  updateWorldStateTool,
  type WorldTool,
  type WorldToolResult,
  worldTools,
} from "./world_tools.ts";
