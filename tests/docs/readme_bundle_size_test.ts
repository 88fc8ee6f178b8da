/**
 * The README's sizes of the client bundled for a web page are what `deno bundle` makes of mod.ts today: what a
 * page that connects over WebSocket loads (mod.js and the chunks it imports statically), the engine's chunk
 * that only `Bridge.open()` loads, and the single file without `--code-splitting`. A web developer weighs the
 * client by them; a day after they were measured the page already loaded a fifth more than the README said.
 * Each documented size must be within 10 % of the measured one (sizes in KB of 1,000 bytes, gzip level 6).
 */
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";

const ROOT = new URL("../../", import.meta.url);
const README = await Deno.readTextFile(new URL("README.md", ROOT));

/** Bundles mod.ts for the browser into a fresh folder; returns the folder and its files' contents. */
async function bundle(split: boolean): Promise<Map<string, Uint8Array>> {
  const out = await Deno.makeTempDir({ prefix: "oam-bundle-" });
  try {
    const args = [
      "bundle",
      "--quiet",
      "--platform",
      "browser",
      "--minify",
      ...(split ? ["--code-splitting"] : []),
    ];
    const result = await new Deno.Command(Deno.execPath(), {
      args: [...args, "--outdir", out, "mod.ts"],
      cwd: ROOT,
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(result.code, 0, new TextDecoder().decode(result.stderr));
    const files = new Map<string, Uint8Array>();
    for await (const entry of Deno.readDir(out)) {
      if (entry.name.endsWith(".js")) files.set(entry.name, await Deno.readFile(`${out}/${entry.name}`));
    }
    return files;
  } finally {
    await Deno.remove(out, { recursive: true });
  }
}

/** The files `entry` loads before it runs: itself and what it imports statically, transitively. */
function staticClosure(files: Map<string, Uint8Array>, entry: string): string[] {
  const reached = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (reached.has(name)) continue;
    reached.add(name);
    const code = new TextDecoder().decode(files.get(name));
    // `from"./x.js"` and a bare `import"./x.js"`; `import("./x.js")` is dynamic and not followed.
    for (const m of code.matchAll(/(?:from|import)\s*["']\.\/([^"']+\.js)["']/g)) queue.push(m[1]);
  }
  return [...reached];
}

/** Raw and gzipped size of `names`, in KB. */
function size(files: Map<string, Uint8Array>, names: string[]): { raw: number; gzip: number } {
  let raw = 0, gzip = 0;
  for (const name of names) {
    raw += files.get(name)!.length;
    gzip += gzipSync(files.get(name)!).length;
  }
  return { raw: raw / 1000, gzip: gzip / 1000 };
}

/** The number the README gives where `pattern` matches (its first group). */
function documented(pattern: RegExp): number {
  const match = pattern.exec(README.replace(/\s+/g, " "));
  assert.ok(match, `the README says ${pattern}`);
  return Number(match[1]);
}

function near(what: string, said: number, measured: number): string | null {
  return Math.abs(said - measured) <= measured * 0.1
    ? null
    : `${what}: the README says about ${said} KB, the bundle has ${measured.toFixed(1)} KB`;
}

Deno.test("README: the bundled client's sizes for a web page are the bundle's, within 10 %", async () => {
  const split = await bundle(true);
  const page = staticClosure(split, "mod.js");
  const engine = [...split.keys()].filter((name) => name.startsWith("composition-"));
  assert.equal(engine.length, 1, [...split.keys()].join(", "));
  assert.ok(!page.includes(engine[0]), `a WebSocket page loads the engine: ${page.join(", ")}`);
  const pageSize = size(split, page);
  const engineSize = size(split, engine);
  const single = await bundle(false);
  const singleSize = size(single, ["mod.js"]);
  const problems = [
    near("a WebSocket page, minified", documented(/loads about (\d+) KB minified/), pageSize.raw),
    near("a WebSocket page, gzipped", documented(/minified \((\d+) KB gzipped/), pageSize.gzip),
    near("the engine chunk", documented(/a chunk of its own \(about (\d+) KB/), engineSize.raw),
    near(
      "the engine chunk, gzipped",
      documented(/a chunk of its own \(about \d+ KB, (\d+) KB gzipped/),
      engineSize.gzip,
    ),
    near("one file", documented(/one file holds both \(about (\d+) KB\)/), singleSize.raw),
  ].filter((problem) => problem !== null);
  assert.deepEqual(problems, []);
});
