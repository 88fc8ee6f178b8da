/**
 * The first load of a model says so in one line when it starts (a typed-API script otherwise waits seconds
 * in silence); a load running or done says nothing, a failed one is started and said again. With a fake,
 * slow loader: node-llama-cpp and a real model are the GGUF tier's (`gguf_load_notice_test.ts`).
 */
import assert from "node:assert/strict";
import { loadOnce } from "../../src/models/load_once.ts";

/** A load that finishes when the test says. */
function slowLoad<T>(): { load: () => Promise<T>; finish: (value: T) => void; fail: (error: Error) => void } {
  const { promise, resolve, reject } = Promise.withResolvers<T>();
  return { load: () => promise, finish: resolve, fail: reject };
}

Deno.test("loadOnce: the line is said when a load starts, not while it runs or once it is done", async () => {
  const said: string[] = [];
  const loads = new Map<string, Promise<string>>();
  const slow = slowLoad<string>();
  let started = 0;
  const start = {
    key: "tiny.gguf",
    load: () => (started++, slow.load()),
    notice: "[oam] Loading the model 'tiny.gguf'…",
    say: (line: string) => said.push(line),
  };
  const first = loadOnce(loads, start);
  assert.deepEqual(said, ["[oam] Loading the model 'tiny.gguf'…\n"]); // at once, before the load ends
  const second = loadOnce(loads, start); // while it runs
  slow.finish("model");
  assert.deepEqual(await Promise.all([first, second]), ["model", "model"]);
  assert.equal(await loadOnce(loads, start), "model"); // done
  assert.equal(started, 1);
  assert.equal(said.length, 1);
});

Deno.test("loadOnce: a failed load is forgotten; the next one is started and said again", async () => {
  const said: string[] = [];
  const loads = new Map<string, Promise<string>>();
  const broken = slowLoad<string>();
  const say = (line: string) => said.push(line);
  const failing = loadOnce(loads, { key: "k", load: broken.load, notice: "Loading k…", say });
  broken.fail(new Error("no such file"));
  await assert.rejects(failing, /no such file/);
  assert.equal(loads.has("k"), false);
  const again = await loadOnce(loads, {
    key: "k",
    load: () => Promise.resolve("ok"),
    notice: "Loading k…",
    say,
  });
  assert.equal(again, "ok");
  assert.deepEqual(said, ["Loading k…\n", "Loading k…\n"]);
  // No notice: nothing said.
  await loadOnce(new Map(), { key: "k", load: () => Promise.resolve(1), notice: null, say });
  assert.equal(said.length, 2);
});

Deno.test("loadOnce: the line goes to stderr, never to stdout (a stdio bridge's protocol)", async () => {
  const module = new URL("../../src/models/load_once.ts", import.meta.url).href;
  const code = `import { loadOnce } from ${JSON.stringify(module)};\n` +
    "const value = await loadOnce(new Map(), { key: 'm', load: () => new Promise((r) => setTimeout(() => r('loaded'), 1)), notice: '[oam] Loading the model \\'m\\'…' });\n" +
    "await Deno.stdout.write(new TextEncoder().encode(value));\n";
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", code],
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.equal(new TextDecoder().decode(out.stdout), "loaded");
  assert.equal(new TextDecoder().decode(out.stderr), "[oam] Loading the model 'm'…\n");
});
