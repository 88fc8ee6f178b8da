/**
 * Edit distance for "did you mean" hints: the functions live in `src/protocol/edit_distance.ts`, where the
 * bridge's own unknown-parameter warnings use them (protocol/ imports nothing from util/).
 * @module
 */
export { editDistance, nearestName } from "../protocol/edit_distance.ts";
