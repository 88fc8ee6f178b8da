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

/** Whether repository-relative `path` is left out of the JSR package by a `publish.exclude` pattern. */
function excluded(path: string, patterns: readonly string[]): boolean {
  const file = path.replace(/\/$/, "");
  return patterns.some((pattern) => {
    const glob = pattern.replace(/\/$/, "");
    const source = glob.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*");
    return new RegExp(`^${source}(/.*)?$`).test(file);
  });
}

Deno.test("docs: the published documents link only to files the JSR package has", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const patterns: string[] = config.publish.exclude;
  assert.ok(excluded("examples/village.ts", patterns) && excluded("ffi/oam.h", patterns));
  assert.ok(!excluded("ffi/README.md", patterns) && !excluded("personas/", patterns));
  const documents = ["README.md", "CHANGELOG.md", "ffi/README.md"];
  for await (const entry of Deno.readDir(new URL("docs/", ROOT))) {
    if (entry.name.endsWith(".md")) documents.push(`docs/${entry.name}`);
  }
  const problems: string[] = [];
  for (const document of documents) {
    assert.ok(!excluded(document, patterns), `${document} is published`);
    for (const target of links(await Deno.readTextFile(new URL(document, ROOT)))) {
      const path = target.split("#")[0];
      if (path === "") continue;
      const url = new URL(path, new URL(document, ROOT));
      if (!url.href.startsWith(ROOT.href)) {
        problems.push(`${document}: ${target} is outside the package`);
      } else if (excluded(url.href.slice(ROOT.href.length), patterns)) {
        problems.push(`${document}: ${target} is not published (deno.json publish.exclude)`);
      }
    }
  }
  assert.deepEqual(problems, []);
});
