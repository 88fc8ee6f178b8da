/**
 * `loadPersona` reads `http:`/`https:` URLs too, as a package imported from JSR must to load its own `personas/`:
 * an https package URL failed with "Must be a file URL".
 */
import assert from "node:assert/strict";
import { loadPersona } from "../../mod.ts";

const root = new URL("../../", import.meta.url);

Deno.test("loadPersona: an http URL loads the persona and the steps beside it; a missing steps file is no steps", async () => {
  const served: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const path = new URL(request.url).pathname;
    served.push(path);
    if (path === "/broken.jsonc") {
      return new Response("oops", { status: 500, statusText: "Internal Server Error" });
    }
    if (path === "/solo.jsonc") return new Response('{"persona": {"name": "Solo"}}');
    if (!path.startsWith("/personas/")) return new Response("no", { status: 404 });
    try {
      return new Response(await Deno.readFile(new URL(`.${path}`, root)));
    } catch {
      return new Response("missing", { status: 404 });
    }
  });
  try {
    const base = `http://127.0.0.1:${server.addr.port}`;
    const file = await loadPersona(new URL("/personas/shopkeeper.jsonc", base));
    const local = await loadPersona(new URL("personas/shopkeeper.jsonc", root));
    assert.deepEqual(file, local);
    assert.deepEqual(served, ["/personas/shopkeeper.jsonc", "/personas/shopkeeper.steps.json"]);
    // A string URL works too; no steps file (404) is an empty script, as for a local file.
    assert.deepEqual(await loadPersona(`${base}/solo.jsonc`), { persona: { name: "Solo" }, steps: [] });
    await assert.rejects(
      loadPersona(`${base}/broken.jsonc`),
      (e: Error) => e.message === `${base}/broken.jsonc: HTTP 500 Internal Server Error`,
    );
    await assert.rejects(loadPersona(`${base}/personas/nobody.jsonc`), Deno.errors.NotFound);
  } finally {
    await server.shutdown();
  }
});
