/**
 * The playground page's reading of the bridge's messages: which of the editor's fields a message is about.
 *
 *   deno test tests/serve/playground/bridge_paths_test.ts
 */
import assert from "node:assert/strict";
import { asEditorNames, pathsIn } from "../../../src/serve/playground/page/bridge_paths.ts";

Deno.test("pathsIn names the editor's paths a message names, not the same names inside a state's path", () => {
  assert.deepEqual(pathsIn("Parameter 'options.maxToolRounds' must be an integer."), [
    "options.maxToolRounds",
  ]);
  assert.deepEqual(pathsIn("'tools[1].name' must not be 'remember_fact'."), ["tools[1].name"]);
  assert.deepEqual(pathsIn("'model.steps[0].text' must be a string."), ["model.steps"]);
  // Before: ["options.maxToolRounds"], which marked the editor's field with a restore's error about its file.
  assert.deepEqual(pathsIn("Parameter 'state.options.maxToolRounds' must be an integer."), []);
  assert.deepEqual(pathsIn("'state.tools[0].name' must be a string; 'state.persona' too."), []);
  // Named as the editor names it, it is the editor's path again.
  assert.deepEqual(pathsIn(asEditorNames("Parameter 'state.options.maxToolRounds' must be an integer.")), [
    "options.maxToolRounds",
  ]);
});

Deno.test("pathsIn does not take a file's name for a path: options.json, persona.jsonc, my-model.gguf", () => {
  // Before: ["options.json"], and "model.gguf" marked the Model tab with an error about a file.
  assert.deepEqual(pathsIn("Could not read options.json: not valid JSON."), []);
  assert.deepEqual(pathsIn("'persona.jsonc' cannot be read; 'model.json' neither."), []);
  assert.deepEqual(pathsIn("Cannot open models/my-model.gguf."), []);
  // A path next to a file name is still found.
  assert.deepEqual(pathsIn("'options.mood' in options.json is not an option."), ["options.mood"]);
  assert.deepEqual(pathsIn("'model' must be an object (see model.json)."), ["model"]);
});

Deno.test("pathsIn does not take a bare word of the prose for a path: only a quoted 'model' is the Model tab", () => {
  // Before: ["model"] and ["file"], which marked the Model tab with an error about something else.
  assert.deepEqual(pathsIn("The model is not available on this machine: pick another model."), []);
  assert.deepEqual(pathsIn("Could not read the file: it is not valid JSON."), []);
  assert.deepEqual(pathsIn("The persona has no name; its options and memory are fine."), []);
  // Quoted, the bare name is the editor's key.
  assert.deepEqual(pathsIn("Parameter 'model' must be an object."), ["model"]);
  assert.deepEqual(pathsIn("'persona' must be an object; the model is fine."), ["persona"]);
  assert.deepEqual(pathsIn('"options" must be an object.'), ["options"]);
  // A path with its key is found quoted or not.
  assert.deepEqual(pathsIn("model.steps[2].text must be a string."), ["model.steps"]);
});
