/** The tools renamed in the editor since the running NPC took them: its old names lead to the names now. */
import assert from "node:assert/strict";
import { ToolRenames } from "../../../src/serve/playground/page/tool_renames.ts";

Deno.test("a tool renamed twice: the NPC's name leads to the last name; a reset (Apply) forgets them", () => {
  const renames = new ToolRenames();
  assert.equal(renames.nameNow("check_stock"), "check_stock");
  renames.renamed("check_stock", "stock_check");
  renames.renamed("stock_check", "look_up_stock");
  assert.equal(renames.nameNow("check_stock"), "look_up_stock");
  assert.equal(renames.nameNow("weather"), "weather", "a tool not renamed keeps its name");
  renames.reset();
  assert.equal(renames.nameNow("check_stock"), "check_stock");
});

Deno.test("a tool renamed back: the NPC's name is its name again", () => {
  const renames = new ToolRenames();
  renames.renamed("check_stock", "stock");
  renames.renamed("stock", "check_stock");
  assert.equal(renames.nameNow("check_stock"), "check_stock");
});
