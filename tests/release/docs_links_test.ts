/**
 * The project's own documents link only to files (and headings) that exist: README.md and docs/*.md.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replaceAll(" ", "-");
}

function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const match = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (match) out.add(slug(match[1]));
  }
  return out;
}

/** Relative link targets of `markdown` outside code (`[text](target)`). */
function links(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1])
    .filter((t) => !/^[a-z]+:/i.test(t));
}

Deno.test("docs: every relative link of README.md and docs/*.md names an existing file and heading", async () => {
  const documents = [new URL("README.md", ROOT)];
  for await (const entry of Deno.readDir(new URL("docs/", ROOT))) {
    if (entry.name.endsWith(".md")) documents.push(new URL(`docs/${entry.name}`, ROOT));
  }
  const problems: string[] = [];
  let checked = 0;
  for (const document of documents) {
    const text = await Deno.readTextFile(document);
    for (const target of links(text)) {
      checked++;
      const [path, anchor] = target.split("#");
      const file = path === "" ? document : new URL(path, document);
      let content: string | null = null;
      try {
        const info = await Deno.stat(file);
        if (info.isFile) content = await Deno.readTextFile(file);
      } catch {
        problems.push(`${document.pathname.slice(ROOT.pathname.length)}: ${target} does not exist`);
        continue;
      }
      if (anchor && content !== null && file.pathname.endsWith(".md") && !anchors(content).has(anchor)) {
        problems.push(`${document.pathname.slice(ROOT.pathname.length)}: ${target} names no heading`);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked > 10, `only ${checked} links found`);
});
