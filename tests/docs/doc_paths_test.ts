/**
 * The files the documents name in code spans (`src/agent/retry_policy.ts`, `tests/release/permissions_test.ts`,
 * `python/open_apple_models.py`) exist, in the repository or beside the document. A reader follows such a path
 * to the code; ffi/README.md (which the JSR package ships) named a design note that is not in the repository.
 * CHANGELOG.md is history and keeps the paths of its time. Paths a document names on purpose outside the
 * repository, or that a build or a run writes, are listed below.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

/** Paths no checkout holds: build and run outputs, a user's folders, and the Swift reference's files. */
const ELSEWHERE = [
  /^\.build\//, // deno task compile, the C build commands
  /^swift\/\.build\//, // swift build
  /^~\//, // a user's home
  /^tests\/browser\/screenshots\/$/, // written by the browser tier (git-ignored)
  /^Sources\/OpenAppleModelsBridge\//, // PROTOCOL.md §11: the Swift reference's layout
  /^Tests\/OpenAppleModelsBridgeTests\//,
];

/** The file paths in the code spans of `markdown`, with their line numbers. */
function namedPaths(markdown: string): { line: number; path: string }[] {
  const out: { line: number; path: string }[] = [];
  let fenced = false;
  for (const [i, line] of markdown.split("\n").entries()) {
    if (/^ {0,3}(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const m of line.matchAll(/`([A-Za-z0-9_~.-]+(?:\/[A-Za-z0-9_.-]+)+(?:\.[a-z]{1,5}|\/))`/g)) {
      // A relative path in an example (`../mod.ts`, `./personas/`) is the example's, not the document's.
      if (m[1].startsWith("./") || m[1].startsWith("../")) continue;
      out.push({ line: i + 1, path: m[1] });
    }
  }
  return out;
}

async function exists(url: URL): Promise<boolean> {
  try {
    await Deno.stat(url);
    return true;
  } catch {
    return false;
  }
}

Deno.test("namedPaths: paths with a folder and an extension (or a trailing slash), outside code blocks", () => {
  assert.deepEqual(
    namedPaths(
      "See `src/a.ts`, `tests/x/`, `npc/talk`, `../mod.ts` and `mod.ts`.\n```sh\ncat `src/b.ts`\n```",
    ),
    [{ line: 1, path: "src/a.ts" }, { line: 1, path: "tests/x/" }],
  );
});

Deno.test("docs: every file a document names in a code span exists, in the repository or beside the document", async () => {
  const files = new TextDecoder().decode(
    (await new Deno.Command("git", { args: ["ls-files", "*.md"], cwd: ROOT, stdout: "piped" }).output())
      .stdout,
  ).split("\n").filter((file) => file !== "" && file !== "CHANGELOG.md");
  const problems: string[] = [];
  let checked = 0;
  for (const file of files) {
    const document = new URL(file, ROOT);
    for (const { line, path } of namedPaths(await Deno.readTextFile(document))) {
      if (ELSEWHERE.some((pattern) => pattern.test(path))) continue;
      checked++;
      if (!await exists(new URL(path, ROOT)) && !await exists(new URL(path, document))) {
        problems.push(`${file}:${line}: ${path}`);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked > 50, `only ${checked} paths found`);
});
