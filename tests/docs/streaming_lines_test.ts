/**
 * The typewriter the docs show streams a line the way a designer's terminal should show it: `onLine` also
 * gets a line that was replaced while it streamed (a `lineReset`: quotes around the whole line dropped and then
 * kept, a guardrail retry), and a callback that only appends `delta` printed the new line straight after the
 * old one (`Aye," she laughs, "the stew."Aye," she laughs, "the stew."`). So every `onLine` the docs and
 * examples write takes `isReset`, and the README quickstart's, run on such a turn, ends with the final line.
 * A session's `onText` is the same: it takes the whole answer so far (`text`) or `isReset`.
 */
import assert from "node:assert/strict";
import { Bridge } from "../../mod.ts";

const ROOT = new URL("../../", import.meta.url);

/** README.md, docs/*.md, bindings/README.md, examples/*.ts, mod.ts and the client's sources (its JSDoc examples). */
function documented(): [string, string][] {
  const files = ["README.md", "bindings/README.md", "mod.ts"];
  for (const dir of ["docs", "examples", "src/client"]) {
    for (const entry of Deno.readDirSync(new URL(`${dir}/`, ROOT))) {
      if (entry.isFile && /\.(md|ts)$/.test(entry.name)) files.push(`${dir}/${entry.name}`);
    }
  }
  return files.sort().map((f) => {
    const text = Deno.readTextFileSync(new URL(f, ROOT));
    return [f, f.startsWith("bindings/") ? typeScriptOnly(text) : text];
  });
}

/** The TypeScript code blocks of a Markdown page (the other clients' callbacks get the whole text), other lines blank. */
function typeScriptOnly(markdown: string): string {
  let inTs = false;
  return markdown.split("\n").map((line) => {
    if (line.startsWith("```")) {
      inTs = !inTs && line.trim() === "```ts";
      return "";
    }
    return inTs ? line : "";
  }).join("\n");
}

Deno.test("every onLine the docs and examples write takes isReset (a one-parameter one prints a replaced line after the old)", () => {
  const naive: string[] = [];
  for (const [file, text] of documented()) {
    for (const [i, line] of text.split("\n").entries()) {
      if (/onLine:\s*\(?\s*\w+\s*\)?\s*=>/.test(line)) naive.push(`${file}:${i + 1}: ${line.trim()}`);
    }
  }
  assert.deepEqual(naive, []);
});

Deno.test("every onText the docs and examples write takes the whole text or isReset (a rewritten answer is sent whole in delta)", () => {
  // A session's `text` event with `isReset` carries the whole new answer in `delta`: a callback that only
  // takes `delta` shows it after the old text. The other clients' examples show the whole answer so far.
  const naive: string[] = [];
  for (const [file, text] of documented()) {
    for (const [i, line] of text.split("\n").entries()) {
      if (/onText:\s*\(?\s*\w+\s*\)?\s*=>/.test(line)) naive.push(`${file}:${i + 1}: ${line.trim()}`);
    }
  }
  assert.deepEqual(naive, []);
});

Deno.test("README quickstart: its onLine, on a turn whose line is replaced while it streams, ends with the final line", async () => {
  const readme = Deno.readTextFileSync(new URL("README.md", ROOT));
  const quickstart = readme.slice(readme.indexOf("## Quickstart"));
  const source = quickstart.match(/onLine: (.*?) \}\);/)?.[1];
  assert.ok(source, "the quickstart streams with onLine");
  let printed = "";
  const onLine = new Function("say", `return ${source};`)((text: string) => printed += text);
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const mira = await bridge.createNpc({ name: "Mira" }, {
    options: { playerOptionCount: 0 },
    model: {
      type: "scripted",
      // Streamed without its opening quote (quotes around the whole line would be dropped); the final line
      // keeps both, so it replaces the shown one.
      steps: [{
        json: { emotion: "amused", line: '"Aye," she laughs, "the stew."', ends_conversation: false },
      }],
    },
  });
  printed = "Mira: ";
  const reply = await mira.talk("Food?", { onLine });
  assert.equal(reply.line, '"Aye," she laughs, "the stew."');
  const lines = printed.split("\n");
  assert.ok(
    lines.length > 1,
    `the replaced line is shown again on a line of its own: ${JSON.stringify(printed)}`,
  );
  assert.ok(lines.at(-1)!.endsWith(reply.line), JSON.stringify(printed));
});
