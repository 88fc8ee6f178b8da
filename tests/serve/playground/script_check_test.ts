/** The Model tab's script: why it cannot be used, and the `model` it gives new NPCs. */
import assert from "node:assert/strict";
import {
  notAScript,
  scriptModel,
  scriptNotes,
  scriptProblem,
} from "../../../src/serve/playground/page/script_check.ts";

Deno.test("scriptProblem says why a script cannot be used, and null for one that can", () => {
  assert.equal(scriptProblem('[{"text": "Hello."}]'), null);
  assert.equal(scriptProblem('{"steps": [{"json": {}}], "fallback": {"text": "…"}}'), null);
  assert.equal(scriptProblem("  "), "The script is empty: add steps, or use the bridge's model.");
  assert.equal(
    scriptProblem('"Hello."'),
    'The script must be a list of steps or {"steps": […], "fallback": step}.',
  );
  assert.equal(
    scriptProblem('[{"text": "a"}, {"say": "b"}]'),
    "The script: 'script[1]' must contain one of 'text', 'toolCalls', 'json', 'template' or 'error'.",
  );
  assert.equal(
    scriptProblem('{"steps":[{"text": 3}]}'),
    "The script: 'script.steps[0].text' must be a string.",
  );
  assert.match(scriptProblem("[{") ?? "", /^The script /);
});

Deno.test("scriptNotes: what the bridge will warn about at Start, and nothing for a script with a problem", () => {
  assert.deepEqual(scriptNotes('{"step": [{"text": "Hi"}]}'), [
    "Unknown parameter 'script.step' was ignored (did you mean 'steps'?).",
  ]);
  assert.deepEqual(scriptNotes('[{"text": "Hi"}]'), []);
  assert.deepEqual(scriptNotes('[{"text": 3, "delay": 1}]'), []);
});

Deno.test("scriptModel gives a list of steps or a script object as a scripted model", () => {
  assert.deepEqual(scriptModel('[{"text": "Hi."}]'), { type: "scripted", steps: [{ text: "Hi." }] });
  assert.deepEqual(scriptModel('{"steps": [], "fallback": {"text": "…"}}'), {
    type: "scripted",
    steps: [],
    fallback: { text: "…" },
  });
  assert.equal(scriptModel('"just text"'), undefined);
});

Deno.test("notAScript: a persona file and a save state are not scripts; a script, or text to fix, is loaded", () => {
  assert.equal(notAScript('{"npc": "gorm", "persona": {"name": "Gorm"}}'), "persona");
  assert.equal(notAScript('{"npc": "gorm", "state": {"persona": {"name": "Gorm"}}}'), "state");
  assert.equal(notAScript('{"persona": {"name": "Gorm"}, "transcript": {"entries": []}}'), "state");
  assert.equal(notAScript('[{"text": "Rain again."}]'), null);
  assert.equal(notAScript('{"steps": [{"text": "Rain again."}]}'), null);
  // A script with a syntax error goes to the box, where its problem is shown to be fixed.
  assert.equal(notAScript('{"steps": [{"text": "Rain'), null);
});
