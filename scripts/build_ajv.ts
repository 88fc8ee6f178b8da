/**
 * Builds src/schema/ajv.generated.js: the pinned `npm:ajv` (deno.json's version) bundled into one ES module
 * with `deno bundle`, with the licenses of every package it contains.
 *
 * Why: ajv is CommonJS spread over about 70 files. Loading it through Deno's CommonJS support cost every
 * process about 35 ms of CPU (a third of `oam stdio`'s start) and every test isolate about 50 ms; the bundle,
 * one ES module, loads in a fraction of that. The validators it compiles are ajv's own, unchanged. Types come
 * from the npm package (src/schema/ajv.generated.d.ts re-exports them), so type checks still read the pinned
 * version.
 *
 *   deno task build:ajv          # writes the module
 *   deno task build:ajv --check  # fails when the committed module is not what the pinned version builds
 * @module
 */
import { writeOrCheck } from "./generated_file.ts";

const ROOT = new URL("../", import.meta.url);
/** The generated module, relative to the repository. */
export const AJV_MODULE = "src/schema/ajv.generated.js";

/** The pinned `npm:ajv@x.y.z` specifier of deno.json. */
async function pinnedAjv(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const spec = config.imports?.ajv;
  if (typeof spec !== "string" || !/^npm:ajv@\d+\.\d+\.\d+$/.test(spec)) {
    throw new Error(`deno.json must pin ajv as "npm:ajv@<x.y.z>" (found ${JSON.stringify(spec)})`);
  }
  return spec;
}

/** `deno bundle` of an entry re-exporting `Ajv`; paths into the npm cache become `npm:<package>@<version>/…`. */
async function bundle(spec: string): Promise<{ js: string; packages: Map<string, string> }> {
  const dir = await Deno.makeTempDir({ prefix: "oam-ajv-" });
  try {
    await Deno.writeTextFile(`${dir}/entry.ts`, `export { Ajv } from "${spec}";\n`);
    const out = `${dir}/ajv.js`;
    const result = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--no-lock", "--platform", "deno", "--output", out, `${dir}/entry.ts`],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!result.success) throw new Error(`deno bundle failed:\n${new TextDecoder().decode(result.stderr)}`);
    const packages = new Map<string, string>();
    const js = (await Deno.readTextFile(out))
      .replace(/[^\s"']*registry\.npmjs\.org\/([^/]+)\/([^/]+)\/([^\s"']*)/g, (_, name, version, rest) => {
        packages.set(name, version);
        return `npm:${name}@${version}/${rest}`;
      })
      .replace(/^\/\/ entry\.ts\n/m, "");
    if (js.includes(dir) || /\/(root|home)\//.test(js)) {
      throw new Error("the bundle still names a local path");
    }
    return { js, packages };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The license text of an npm package, read from Deno's npm cache (where the bundle came from). */
async function licenseOf(name: string, version: string): Promise<string> {
  const info = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .output();
  const { npmCache } = JSON.parse(new TextDecoder().decode(info.stdout)) as { npmCache: string };
  const dir = `${npmCache}/registry.npmjs.org/${name}/${version}/`;
  for (const file of ["LICENSE", "LICENSE.md", "license", "LICENSE.txt"]) {
    try {
      return (await Deno.readTextFile(`${dir}${file}`)).trim();
    } catch {
      // try the next name
    }
  }
  throw new Error(`npm:${name}@${version} has no license file in ${dir}`);
}

/** The text of the generated module for the pinned version. */
export async function buildAjv(): Promise<string> {
  const spec = await pinnedAjv();
  const { js, packages } = await bundle(spec);
  const notices: string[] = [];
  for (const [name, version] of [...packages].sort(([a], [b]) => a < b ? -1 : 1)) {
    const license = await licenseOf(name, version);
    notices.push(
      ` * ${name}@${version}:`,
      " *",
      ...license.split("\n").map((l) => ` *   ${l}`.trimEnd()),
      " *",
    );
  }
  return [
    "// deno-fmt-ignore-file",
    "// deno-lint-ignore-file",
    '// @ts-self-types="./ajv.generated.d.ts"',
    "/**",
    ` * ${spec} bundled into one ES module by scripts/build_ajv.ts (\`deno bundle\`), so it loads without`,
    " * Deno's CommonJS support. Do not edit: change the version in deno.json and run `deno task build:ajv`.",
    " *",
    " * It contains these packages, under these licenses:",
    " *",
    ...notices,
    " */",
    js,
  ].join("\n");
}

if (import.meta.main) {
  await writeOrCheck(AJV_MODULE, await buildAjv(), {
    args: Deno.args,
    staleMessage: `${AJV_MODULE} is not what deno.json's ajv builds: run 'deno task build:ajv'.`,
  });
}
