/**
 * What Load file… takes a file for, by its shape: save states, scripts and persona files as before, and the
 * other JSON a designer may pick by mistake refused with what it looks like.
 */
import assert from "node:assert/strict";
import { loadKind, notAScriptLooks } from "../../../src/serve/playground/page/load_kind.ts";

Deno.test("loadKind: persona files, scripts and save states are taken as before", () => {
  assert.deepEqual(loadKind("mira.jsonc", '{"persona": {"name": "Mira"}} // notes'), { kind: "persona" });
  assert.deepEqual(loadKind("mira.jsonc", '{"name": "Mira"}'), { kind: "persona" }); // the editor says to move it
  assert.deepEqual(loadKind("mira.jsonc", '{"persona": {"name": "Mira"'), { kind: "persona" }); // a syntax error
  assert.deepEqual(loadKind("mira.steps.json", '[{"text": "Hi"'), { kind: "script" });
  assert.deepEqual(loadKind("a.json", '[{"text": "Hi"}, {"toolCalls": []}]'), { kind: "script" });
  assert.deepEqual(loadKind("a.json", '[{"txt": "Hi"}, {"text": "Ho"}]'), { kind: "script" }); // the box says 'txt'
  assert.deepEqual(loadKind("a.json", '{"steps": [], "fallback": {"text": "Hm."}}'), { kind: "script" });
  assert.deepEqual(loadKind("a.json", '{"npc": "mira", "state": {}, "world": null}'), { kind: "state" });
  assert.deepEqual(loadKind("a.json", '{"transcript": {}}'), { kind: "state" });
});

Deno.test("loadKind: other JSON is refused with what it looks like and what Load file… takes", () => {
  const refused = (name: string, text: string) => {
    const kind = loadKind(name, text);
    assert.ok("refused" in kind, `${text} was taken as ${JSON.stringify(kind)}`);
    assert.match(kind.refused, /Load file… takes a persona file .* Nothing was changed\.$/);
    return kind.refused.slice(0, kind.refused.indexOf(", not a file"));
  };
  assert.equal(
    refused("tools.json", '[{"name": "check_stock", "parameters": {}}]'),
    'tools.json looks like a list of tools (1 item with a "name" and "parameters")',
  );
  assert.equal(
    refused(
      "tools.json",
      '[{"type": "function", "function": {"name": "f"}}, {"name": "g", "description": ""}]',
    ),
    'tools.json looks like a list of tools (2 items with a "name" and "parameters")',
  );
  assert.equal(
    refused("w.json", '{"player": {"gold": 5}, "weather": "rain", "a": 1, "b": 2, "c": 3}'),
    'w.json looks like an object with "player", "weather", "a", "b", … (a world snapshot or other data?)',
  );
  assert.equal(refused("s.json", '[{"state": {}}]'), "s.json looks like a list of save states (1 item)");
  assert.equal(
    refused("p.json", '[{"name": "Gorm", "role": "smith"}]'),
    "p.json looks like a list of persona files or personas (1 item)",
  );
  assert.equal(refused("e.json", "[]"), "e.json looks like an empty list");
  assert.equal(refused("e.json", "{}"), "e.json looks like an empty object");
  assert.equal(refused("n.json", '[1, "a"]'), "n.json looks like a list of numbers and strings (2 items)");
  assert.equal(refused("n.json", "42"), "n.json looks like a number");
  assert.equal(refused("n.json", '"hi"'), "n.json looks like a string");
  assert.equal(refused("n.json", "null"), "n.json looks like a null");
});

Deno.test("loadKind and notAScriptLooks: a script object with 'steps' misspelled is a script, for its box to say so", () => {
  assert.deepEqual(loadKind("a.json", '{"step": [{"text": "Hi"}]}'), { kind: "script" });
  assert.equal(notAScriptLooks('{"step": [{"text": "Hi"}]}'), null);
  assert.equal(notAScriptLooks('[{"text": "Hi"}]'), null);
  assert.equal(notAScriptLooks('[{"text": "Hi"'), null);
  assert.equal(notAScriptLooks('{"persona": {"name": "Gorm"}}'), null); // named by notAScript
  assert.equal(
    notAScriptLooks('[{"name": "check_stock", "parameters": {}}]'),
    'a list of tools (1 item with a "name" and "parameters")',
  );
  assert.equal(
    notAScriptLooks('{"player": {"gold": 5}}'),
    'an object with "player" (a world snapshot or other data?)',
  );
});
