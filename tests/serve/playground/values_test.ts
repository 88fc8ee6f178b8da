/**
 * How the playground reads what is typed: numbers and lists of the form (bad input kept as typed), tool
 * answers (JSON, text, or a JSON that does not parse: a problem, nothing sent), world values, and a
 * `world/changed` applied to the tree's snapshot.
 */
import assert from "node:assert/strict";
import {
  answerValue,
  applyChange,
  errorText,
  listFrom,
  numberFrom,
  typedValue,
} from "../../../src/serve/playground/page/values.ts";

Deno.test("numbers: typed numbers become numbers, anything else stays as typed, empty is absent", () => {
  assert.equal(numberFrom(" 12 "), 12);
  assert.equal(numberFrom("-2.5e1"), -25);
  assert.equal(numberFrom("two"), "two");
  assert.equal(numberFrom("1,5"), "1,5");
  assert.equal(numberFrom("   "), undefined);
});

Deno.test("caught errors: an Error's message, anything else as text", () => {
  assert.equal(errorText(new Error("The socket closed.")), "The socket closed.");
  assert.equal(errorText("timeout"), "timeout");
  assert.equal(errorText(undefined), "undefined");
});

Deno.test("lists: one item per line, blank lines dropped, none is absent", () => {
  assert.deepEqual(listFrom("Sell ale\n\n  Keep the peace  \n"), ["Sell ale", "  Keep the peace"]);
  assert.equal(listFrom("\n \n"), undefined);
});

Deno.test("tool answers: JSON when it parses (or when asked), text otherwise; bad JSON asked as JSON is a problem", () => {
  assert.deepEqual(answerValue('{"stock": 3}', "auto"), { value: { stock: 3 } });
  assert.deepEqual(answerValue("3 left", "auto"), { value: "3 left" });
  assert.deepEqual(answerValue('{"stock": 3}', "text"), { value: '{"stock": 3}' });
  assert.deepEqual(answerValue("42", "json"), { value: 42 });
  assert.deepEqual(answerValue('{"stock": 3', "json"), {
    problem: "The answer is not valid JSON: a closing } was expected on line 1, column 12. Nothing was sent.",
  });
});

Deno.test("world values: JSON when it parses, else text", () => {
  assert.equal(typedValue("16"), 16);
  assert.equal(typedValue("true"), true);
  assert.deepEqual(typedValue('{"a": [1]}'), { a: [1] });
  assert.equal(typedValue("Aria"), "Aria");
});

Deno.test("a world change applied to a snapshot: set, create on the way, remove, list items; the input is not touched", () => {
  const state = { player: { gold: 20, bag: ["rope"] } };
  assert.deepEqual(applyChange(state, { path: "player.gold", newValue: 16 }), {
    player: { gold: 16, bag: ["rope"] },
  });
  assert.deepEqual(applyChange(state, { path: "quest.ring", newValue: "found" }), {
    player: { gold: 20, bag: ["rope"] },
    quest: { ring: "found" },
  });
  assert.deepEqual(applyChange(state, { path: "player.gold" }), { player: { bag: ["rope"] } });
  assert.deepEqual(applyChange(state, { path: "player.bag.1", newValue: "torch" }), {
    player: { gold: 20, bag: ["rope", "torch"] },
  });
  assert.deepEqual(applyChange(state, { path: "player.bag.0" }), { player: { gold: 20, bag: [] } });
  assert.deepEqual(applyChange(state, { path: "nothing.here" }), state);
  assert.deepEqual(applyChange(state, { path: "", newValue: { a: 1 } }), { a: 1 });
  assert.deepEqual(state, { player: { gold: 20, bag: ["rope"] } });
});
