/**
 * The reference JSR generates from mod.ts and engine.ts (what `deno doc` shows): a user copies its examples
 * into their own project, so every example imports the package by its name (`@open-apple-models/bridge`,
 * `@open-apple-models/bridge/engine`), never a path inside the repository (`../../mod.ts`, `./errors.ts`).
 * Every export of both has an example (the project's rule for its public API).
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const NAME = JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT))).name as string;

/** `deno doc --json <entry>`. */
async function docOf(entry: string): Promise<{ moduleDoc: unknown; symbols: { name: string }[] }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", entry],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const nodes = JSON.parse(new TextDecoder().decode(out.stdout)).nodes;
  const node = nodes[new URL(entry, ROOT).href];
  return { moduleDoc: node.module_doc, symbols: node.symbols };
}

/** Every `@example` in a `deno doc --json` tree (symbols, their members, the module doc), with where it is. */
function examples(value: unknown, where: string, out: { where: string; code: string }[] = []) {
  if (Array.isArray(value)) {
    for (const v of value) examples(v, where, out);
  } else if (value !== null && typeof value === "object") {
    const node = value as Record<string, unknown>;
    const location = node.location as { filename: string; line: number } | undefined;
    const here = location ? `${location.filename.slice(ROOT.href.length)}:${location.line}` : where;
    if (node.kind === "example" && typeof node.doc === "string") out.push({ where: here, code: node.doc });
    for (const [key, v] of Object.entries(node)) if (key !== "location") examples(v, here, out);
  }
  return out;
}

const IMPORT = /^\s*(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']/gm;

for (const entry of ["mod.ts", "engine.ts"]) {
  Deno.test(`every example of ${entry}'s reference imports the package by name, not a repository path`, async () => {
    const doc = await docOf(entry);
    const found = examples([doc.moduleDoc, doc.symbols], entry);
    assert.ok(found.length > 30, `${found.length} examples`);
    const byPath: string[] = [];
    for (const { where, code } of found) {
      for (const [, from, bare] of code.matchAll(IMPORT)) {
        const specifier = from ?? bare;
        if (specifier.startsWith(".") || specifier.startsWith("/")) byPath.push(`${where}: ${specifier}`);
      }
    }
    assert.deepEqual([...new Set(byPath)], []);
    // Nor a file by its place in the repository (`new URL("../../personas/…", import.meta.url)`).
    const repositoryFiles = found.filter(({ code }) => /["'`]\.\.\//.test(code)).map(({ where }) => where);
    assert.deepEqual([...new Set(repositoryFiles)], []);
    const modulePackage = entry === "mod.ts" ? NAME : `${NAME}/engine`;
    assert.ok(
      examples(doc.moduleDoc, entry).some(({ code }) => code.includes(`from "${modulePackage}"`)),
      `the module doc's example imports "${modulePackage}"`,
    );
  });
}

for (const entry of ["mod.ts", "engine.ts"]) {
  Deno.test(`every export of ${entry} has an example`, async () => {
    const { symbols } = await docOf(entry);
    const without = symbols.filter((symbol) => examples(symbol, entry).length === 0).map((s) => s.name);
    assert.deepEqual(without, []);
  });
}

Deno.test("Bridge's decide, decideMany and generate each show a call of their own in an example", async () => {
  const { symbols } = await docOf("mod.ts");
  type Method = { name: string; jsDoc?: { tags?: { kind: string; doc?: string }[] } };
  const bridge = symbols.find((s) => s.name === "Bridge") as unknown as {
    declarations: { kind: string; def: { methods: Method[] } }[];
  };
  const methods = bridge.declarations.find((d) => d.kind === "class")!.def.methods;
  const without = ["decide", "decideMany", "generate"].filter((name) =>
    !methods.some((m) =>
      m.name === name &&
      (m.jsDoc?.tags ?? []).some((t) => t.kind === "example" && t.doc?.includes(`bridge.${name}(`))
    )
  );
  assert.deepEqual(without, []);
});

/** The properties of object types in a `deno doc --json` tree that the reference shows with no type at all. */
function untypedProperties(value: unknown, where: string, out: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const v of value) untypedProperties(v, where, out);
  } else if (value !== null && typeof value === "object") {
    const node = value as Record<string, unknown>;
    if (node.kind === "typeLiteral") {
      const properties = (node.value as { properties?: { name: string; tsType?: unknown }[] }).properties ??
        [];
      for (const p of properties) if (p.tsType == null) out.push(`${where}.${p.name}`);
    }
    for (const [key, v] of Object.entries(node)) {
      if (key !== "location" && key !== "jsDoc") untypedProperties(v, where, out);
    }
  }
  return out;
}

for (const entry of ["mod.ts", "engine.ts"]) {
  Deno.test(`the reference of ${entry} shows every property with its type (an \`as const\` table's codes)`, async () => {
    const { symbols } = await docOf(entry);
    assert.deepEqual(symbols.flatMap((symbol) => untypedProperties(symbol, symbol.name)), []);
  });
}

/** The public members of the exported classes that the reference lists with no description. */
function undocumentedMembers(symbols: { name: string }[]): string[] {
  const out: string[] = [];
  for (const symbol of symbols as { name: string; declarations?: { kind: string; def?: unknown }[] }[]) {
    for (const declaration of symbol.declarations ?? []) {
      if (declaration.kind !== "class") continue;
      const def = declaration.def as Record<
        string,
        { name: string; accessibility?: string; jsDoc?: { doc?: string } }[]
      >;
      const members = [...def.methods ?? [], ...def.properties ?? []].filter((m) =>
        m.accessibility !== "private"
      );
      // An overload's implementation signature has no doc of its own; the overloads have.
      const documented = new Set(members.filter((m) => m.jsDoc?.doc?.trim()).map((m) => m.name));
      for (const m of members) if (!documented.has(m.name)) out.push(`${symbol.name}.${m.name}`);
    }
  }
  return [...new Set(out)];
}

for (const entry of ["mod.ts", "engine.ts"]) {
  Deno.test(`the reference of ${entry} describes every public member of its classes`, async () => {
    assert.deepEqual(undocumentedMembers((await docOf(entry)).symbols), []);
  });
}

/** The package's names that `code` uses but neither imports nor declares (comments and strings left out). */
function unimported(example: string, names: ReadonlySet<string>): string[] {
  const code = [...example.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]).join("\n");
  const imported = new Set(
    [...code.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}/g)].flatMap((m) =>
      m[1].split(",").map((n) => n.replace(/\btype\s+/, "").split(/\s+as\s+/).at(-1)!.trim())
    ),
  );
  const bare = code.replace(/\/\/[^\n]*/g, "").replace(
    /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`/g,
    '""',
  );
  const declared = new Set(
    [...bare.matchAll(/\b(?:const|let|var|function|class|type|interface)\s+(\w+)/g)].map((m) => m[1]),
  );
  const used = new Set([...bare.matchAll(/(?<![.\w])([A-Za-z_]\w*)\b/g)].map((m) => m[1]));
  return [...used].filter((n) => names.has(n) && !imported.has(n) && !declared.has(n)).sort();
}

Deno.test("every example of the reference imports the package's names it uses (a reader copies it whole)", async () => {
  const docs = await Promise.all(["mod.ts", "engine.ts"].map(docOf));
  const names = new Set(docs.flatMap((doc) => doc.symbols.map((s) => s.name)));
  const problems = new Set<string>();
  for (const [i, doc] of docs.entries()) {
    for (const { where, code } of examples([doc.moduleDoc, doc.symbols], i === 0 ? "mod.ts" : "engine.ts")) {
      const missing = unimported(code, names);
      if (missing.length > 0) problems.add(`${where}: ${missing.join(", ")}`);
    }
  }
  assert.deepEqual([...problems], []);
});
