/**
 * Lists import cycles among the modules under `src/` (and `mod.ts`, `cli.ts`), from Deno's own module graph
 * (`deno info --json`). Runtime imports and type-only imports both count. Exits 1 when a cycle exists that
 * is not in {@link KNOWN_TYPE_CYCLES}.
 *
 * Usage: deno run --allow-run --allow-read --allow-write scripts/import_cycles.ts
 * @module
 */

/** Cycles tolerated for now (none: any cycle fails). */
export const KNOWN_TYPE_CYCLES: string[][] = [];

interface GraphModule {
  specifier: string;
  dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
}

/** Module graph edges (file path relative to `root` → imported paths), runtime and type imports both. */
export async function importGraph(root: URL): Promise<Map<string, string[]>> {
  const entries = ["mod.ts", "engine.ts", "cli.ts"];
  for await (const path of walk(new URL("src/", root))) entries.push(path.slice(root.pathname.length));
  // `deno info` takes one root module: a temporary one that imports every module.
  const dir = await Deno.makeTempDir();
  const entry = `${dir}/all.ts`;
  await Deno.writeTextFile(entry, entries.map((e) => `import "${new URL(e, root).href}";\n`).join(""));
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", new URL("deno.json", root).pathname, entry],
    cwd: root.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output().finally(() => Deno.remove(dir, { recursive: true }));
  if (!output.success) throw new Error(new TextDecoder().decode(output.stderr));
  const graph = new Map<string, string[]>();
  const local = (specifier: string) =>
    specifier.startsWith(root.href) ? specifier.slice(root.href.length) : null;
  for (const module of (JSON.parse(new TextDecoder().decode(output.stdout)).modules as GraphModule[])) {
    const from = local(module.specifier);
    if (from === null) continue;
    const to: string[] = [];
    for (const d of module.dependencies ?? []) {
      for (const target of [d.code?.specifier, d.type?.specifier]) {
        const path = target === undefined ? null : local(target);
        if (path !== null && !to.includes(path)) to.push(path);
      }
    }
    graph.set(from, to);
  }
  return graph;
}

async function* walk(dir: URL): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) yield* walk(url);
    else if (entry.name.endsWith(".ts")) yield url.pathname;
  }
}

/** Strongly connected components with more than one module (each is an import cycle), sorted. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0] < b[0] ? -1 : 1);
}

/**
 * The graph between the top folders of `src/` (`src/agent`, `src/util`, …; a file directly under `src/` is its
 * own node): a cycle here (say protocol/ → util/ → protocol/) is a layering mistake even when no two files
 * import each other in a circle.
 */
export function folderGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const folder = (path: string) => {
    const parts = path.split("/");
    return parts[0] === "src" && parts.length > 2 ? `${parts[0]}/${parts[1]}` : path;
  };
  const out = new Map<string, string[]>();
  for (const [from, to] of graph) {
    const a = folder(from);
    const edges = out.get(a) ?? [];
    out.set(a, edges);
    for (const b of to.map(folder)) if (b !== a && !edges.includes(b)) edges.push(b);
  }
  return out;
}

/** The cycles that are not known ones. */
export function unexpectedCycles(found: string[][]): string[][] {
  const known = new Set(KNOWN_TYPE_CYCLES.map((c) => c.join(" ")));
  return found.filter((c) => !known.has(c.join(" ")));
}

if (import.meta.main) {
  const say = (line: string) => Deno.stderr.writeSync(new TextEncoder().encode(line + "\n"));
  const graph = await importGraph(new URL("../", import.meta.url));
  const found = cycles(graph);
  const bad = unexpectedCycles(found);
  for (const c of found) say(`${bad.includes(c) ? "cycle" : "known type-only cycle"}: ${c.join(" → ")}`);
  const folders = cycles(folderGraph(graph));
  for (const c of folders) say(`folder cycle: ${c.join(" → ")}`);
  if (bad.length > 0 || folders.length > 0) Deno.exit(1);
  say(found.length === 0 ? "no import cycles" : "no import cycles beyond the known ones");
}
