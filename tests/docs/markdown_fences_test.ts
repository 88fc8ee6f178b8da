/**
 * Every Markdown file of the repository closes each code block with a fence line of its own. A closing fence
 * with text after it (```` ``` Process code sits behind … ````) is not a closing fence in CommonMark or on
 * GitHub: the block runs on, and the prose after it (bindings/README.md's whole Windows section) was shown as
 * code. The link and snippet tests also cut the documents at their fences, so they read such a file wrong too.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

/** The problems of `markdown`'s fenced code blocks: a fence line with text after a closing fence, or a block never closed. */
function fenceProblems(markdown: string): string[] {
  const problems: string[] = [];
  let open: { line: number; fence: string } | null = null;
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const match = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(lines[i]);
    if (!match) continue;
    const [, fence, rest] = match;
    if (open === null) {
      if (fence[0] === "`" && rest.includes("`")) continue; // inline code such as ``` `x` ```, not a fence
      open = { line: i + 1, fence };
    } else if (fence[0] === open.fence[0] && fence.length >= open.fence.length) {
      if (rest.trim() === "") open = null;
      else {problems.push(
          `line ${i + 1}: text after the fence that should close the block of line ${open.line}`,
        );}
    }
  }
  if (open) problems.push(`line ${open.line}: the code block is never closed`);
  return problems;
}

Deno.test("fenceProblems: a closing fence with text after it, and a block left open", () => {
  assert.deepEqual(fenceProblems("```sh\nls\n```\ntext\n"), []);
  assert.deepEqual(fenceProblems("````md\n```\n````\n"), []);
  assert.deepEqual(fenceProblems("```c\nx;\n``` More prose.\n\n```sh\nls\n```\n"), [
    "line 3: text after the fence that should close the block of line 1",
    "line 5: text after the fence that should close the block of line 1", // the prose ran on to here
  ]);
  assert.deepEqual(fenceProblems("```ts\nx;\n"), ["line 1: the code block is never closed"]);
});

Deno.test("docs: every Markdown file closes its code blocks with a fence line of its own", async () => {
  const files = new TextDecoder().decode(
    (await new Deno.Command("git", { args: ["ls-files", "*.md"], cwd: ROOT, stdout: "piped" }).output())
      .stdout,
  ).split("\n").filter(Boolean);
  assert.ok(files.includes("bindings/README.md") && files.includes("docs/scripting.md"), files.join(", "));
  const problems: string[] = [];
  for (const file of files) {
    for (const problem of fenceProblems(await Deno.readTextFile(new URL(file, ROOT)))) {
      problems.push(`${file}: ${problem}`);
    }
  }
  assert.deepEqual(problems, []);
});
