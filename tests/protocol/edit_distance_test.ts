/** The one "did you mean" of the project: where its hint goes, and that it says nothing without a name. */
import assert from "node:assert/strict";
import { didYouMean, nearestName } from "../../src/protocol/edit_distance.ts";

Deno.test("didYouMean: an aside by default, a clause or a sentence when asked, the name always quoted", () => {
  assert.equal(
    `Unknown key 'nmae'${didYouMean(nearestName("nmae", ["name"]))}.`,
    "Unknown key 'nmae' (did you mean 'name'?).",
  );
  assert.equal(
    `Unknown command 'chta'${didYouMean("chat", { as: "clause" })} Run 'oam --help'.`,
    "Unknown command 'chta'; did you mean 'chat'? Run 'oam --help'.",
  );
  assert.equal(
    `Unknown parameter 'x' was ignored.${didYouMean("y", { as: "sentence" })}`,
    "Unknown parameter 'x' was ignored. Did you mean 'y'?",
  );
  for (const as of ["aside", "clause", "sentence"] as const) assert.equal(didYouMean(undefined, { as }), "");
});
