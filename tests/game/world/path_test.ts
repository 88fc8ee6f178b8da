import assert from "node:assert/strict";
import {
  arrayIndex,
  canonicalWorldPath,
  formatWorldPath,
  isInside,
  isPrefix,
  isSamePath,
  parseWorldPath,
  pathRelation,
  pathsOverlap,
  toSegments,
} from "../../../src/game/world/path.ts";
import { WorldError } from "../../../src/game/world/world_error.ts";

const invalid = (p: string) => `'${p}' is not a valid path. Use dot-separated keys such as 'player.gold'.`;

Deno.test("parseWorldPath: root spellings", () => {
  for (const root of ["", "  ", "$", "/", ".", " $ ", " / ", "\t.\n", "$."]) {
    assert.deepEqual(parseWorldPath(root), [], JSON.stringify(root));
  }
});

Deno.test("parseWorldPath: dot, bracket, slash and prefixed forms", () => {
  const cases: [string, string[]][] = [
    ["player.gold", ["player", "gold"]],
    ["  player.gold  ", ["player", "gold"]],
    ["party.0.name", ["party", "0", "name"]],
    ["party[0].name", ["party", "0", "name"]],
    ["party[0][1]", ["party", "0", "1"]],
    ["[0].name", ["0", "name"]],
    ["[0]", ["0"]],
    ["$.player.gold", ["player", "gold"]],
    ["$.party[2]", ["party", "2"]],
    ["/player/gold", ["player", "gold"]],
    ["player/gold", ["player", "gold"]],
    ["/a[1]/b", ["a", "1", "b"]],
    ["gold", ["gold"]],
    ["__proto__.x", ["__proto__", "x"]],
    ["with space.k ey", ["with space", "k ey"]],
    ["$x", ["$x"]],
  ];
  for (const [input, expected] of cases) assert.deepEqual(parseWorldPath(input), expected, input);
});

Deno.test("parseWorldPath: empty segments fail with the exact message and the raw path", () => {
  for (
    const bad of ["a..b", "a.", ".a", "a[]", "a.[0]", "//", "$..a", "a/", "[[0]]", "a.b.", "..", "$.$..x"]
  ) {
    assert.throws(() => parseWorldPath(bad), (error: unknown) => {
      assert.ok(error instanceof WorldError, bad);
      assert.equal(error.message, invalid(bad));
      assert.equal(error.path, bad);
      return true;
    });
  }
});

Deno.test("formatWorldPath / canonicalWorldPath", () => {
  assert.equal(formatWorldPath([]), "");
  assert.equal(formatWorldPath(["a", "0", "b"]), "a.0.b");
  assert.equal(canonicalWorldPath(" $.a[0].b "), "a.0.b");
  assert.equal(canonicalWorldPath("/"), "");
  assert.throws(() => canonicalWorldPath("a..b"), WorldError);
});

Deno.test("toSegments copies arrays and parses strings", () => {
  const input = ["a", "b"];
  const out = toSegments(input);
  assert.deepEqual(out, input);
  assert.notEqual(out, input);
  assert.deepEqual(toSegments("a[1]"), ["a", "1"]);
});

Deno.test("path relations", () => {
  assert.ok(isPrefix([], ["a"]));
  assert.ok(isPrefix(["a"], ["a"]));
  assert.ok(isPrefix(["a"], ["a", "b"]));
  assert.ok(!isPrefix(["a", "b"], ["a"]));
  assert.ok(!isPrefix(["a"], ["ab"]));
  assert.ok(!isPrefix(["A"], ["a"]));
  assert.ok(isInside(["a", "b"], ["a"]));
  assert.ok(!isInside(["a"], ["a"]));
  assert.ok(isSamePath(["a", "b"], ["a", "b"]));
  assert.ok(!isSamePath(["a"], ["a", "b"]));
  assert.equal(pathRelation(["a"], ["a"]), "same");
  assert.equal(pathRelation(["a", "b"], ["a"]), "inside");
  assert.equal(pathRelation([], ["a"]), "above");
  assert.equal(pathRelation(["a"], ["b"]), "unrelated");
  // "a.b" as one key is not the path a.b: segment-wise comparison.
  assert.equal(pathRelation(["a.b"], ["a", "b"]), "unrelated");
  assert.ok(pathsOverlap(["a"], ["a", "b"]));
  assert.ok(pathsOverlap(["a", "b"], ["a"]));
  assert.ok(!pathsOverlap(["a", "b"], ["a", "c"]));
});

Deno.test("arrayIndex", () => {
  assert.equal(arrayIndex("0"), 0);
  assert.equal(arrayIndex("12"), 12);
  assert.equal(arrayIndex("01"), 1);
  assert.equal(arrayIndex("-1"), undefined);
  assert.equal(arrayIndex("+1"), undefined);
  assert.equal(arrayIndex("1e3"), undefined);
  assert.equal(arrayIndex("x"), undefined);
  assert.equal(arrayIndex(""), undefined);
  assert.equal(arrayIndex("99999999999999999999"), undefined);
});
