/**
 * src/schema/ajv.generated.js is deno.json's pinned ajv, bundled (scripts/build_ajv.ts): a version change
 * without `deno task build:ajv` fails here, naming the command. The types it re-exports are the same version's.
 */
import assert from "node:assert/strict";
import { AJV_MODULE, buildAjv } from "../../scripts/build_ajv.ts";

const ROOT = new URL("../../", import.meta.url);

Deno.test("ajv.generated.js is what deno.json's ajv builds (deno task build:ajv), with every license", async () => {
  const committed = await Deno.readTextFile(new URL(AJV_MODULE, ROOT));
  const built = await buildAjv();
  assert.ok(
    committed === built,
    `${AJV_MODULE} is not what deno.json's ajv version builds: run 'deno task build:ajv' and commit the result.`,
  );
  for (const name of ["ajv", "fast-deep-equal", "fast-uri", "json-schema-traverse"]) {
    assert.match(built, new RegExp(`^ \\* ${name}@\\d[^:]*:$`, "m"), `${name}'s license`);
  }
  assert.ok(!/\/(?:root|home|Users|tmp|work)\//.test(built), "no machine paths in the bundle");
});

Deno.test("the bundle's type declarations name the version deno.json pins", () => {
  const pinned = JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT))).imports.ajv;
  const types = Deno.readTextFileSync(new URL(AJV_MODULE.replace(/\.js$/, ".d.ts"), ROOT));
  assert.ok(types.includes(`from "${pinned}"`), types);
});

Deno.test("no module of the library loads ajv's CommonJS package at run time", () => {
  const offenders: string[] = [];
  const walk = (dir: URL) => {
    for (const entry of Deno.readDirSync(dir)) {
      const url = new URL(entry.isDirectory ? `${entry.name}/` : entry.name, dir);
      if (entry.isDirectory) walk(url);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
        const text = Deno.readTextFileSync(url);
        if (/^import \{[^}]*\bAjv\b[^}]*\} from "npm:ajv/m.test(text)) offenders.push(url.pathname);
      }
    }
  };
  walk(new URL("src/", ROOT));
  assert.deepEqual(offenders, []);
});
