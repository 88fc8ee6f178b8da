/**
 * The committed page assets are what the page's sources build: a change to the page (or to the typed client
 * it bundles) without `deno task build:playground` fails here, naming the command.
 */
import assert from "node:assert/strict";
import { ASSETS_MODULE, buildAssets } from "../../../scripts/build_playground.ts";

Deno.test("assets.generated.ts is up to date with the page's sources (deno task build:playground)", async () => {
  const committed = await Deno.readTextFile(new URL(`../../../${ASSETS_MODULE}`, import.meta.url));
  const built = await buildAssets();
  assert.ok(
    committed === built,
    `${ASSETS_MODULE} is out of date with src/serve/playground/ or the client code it bundles: ` +
      "run 'deno task build:playground' and commit the result.",
  );
  assert.ok(!/\/(?:root|home|Users|tmp|work)\//.test(built), "no machine paths in the bundle's comments");
});
