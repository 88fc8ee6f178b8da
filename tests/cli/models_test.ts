/**
 * `oam models pull|list` against a local HTTP server (never the internet): a full download, a resumed one
 * (the server sees the range request), size and checksum failures that leave no model file, a file that is
 * not GGUF, the cached case, `hf:` names, and the listing. The real fixture model is pulled and used in the
 * GGUF tier (`tests/llama/gguf/gguf_cli_test.ts`).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { pullModel, resolveModelSource } from "../../src/cli/models_pull.ts";
import { CliError } from "../../src/cli/cli_error.ts";
import { oam } from "./cli_helper.ts";

/** A fake model: the GGUF magic and some bytes. */
function fakeModel(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  bytes.set(new TextEncoder().encode("GGUF"));
  for (let i = 4; i < size; i++) bytes[i] = (i * 31) % 251;
  return bytes;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

interface Server {
  url: string;
  ranges: string[];
  close(): Promise<void>;
}

/** Serves `files` with range support; `truncate` makes a path send only that many bytes of its body. */
function serve(
  files: Record<string, Uint8Array>,
  options: { truncate?: Record<string, number>; etag?: string } = {},
): Server {
  const ranges: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    const body = Object.hasOwn(files, path) ? files[path] : undefined;
    if (body === undefined) return new Response("no such file", { status: 404 });
    const headers = new Headers({ "accept-ranges": "bytes" });
    if (options.etag) headers.set("etag", `"${options.etag}"`);
    const range = request.headers.get("range");
    let start = 0;
    let status = 200;
    if (range !== null) {
      ranges.push(range);
      start = Number(/bytes=(\d+)-/.exec(range)![1]);
      if (start >= body.length) return new Response(null, { status: 416, headers });
      status = 206;
      headers.set("content-range", `bytes ${start}-${body.length - 1}/${body.length}`);
    }
    const part = body.subarray(start);
    const cut = options.truncate?.[path];
    if (cut !== undefined) {
      // Announce the full length, send less, then end the stream (a broken connection).
      headers.set("content-length", String(part.length));
      return new Response(
        new ReadableStream(
          {
            pulls: 0,
            pull(controller) {
              // The first part goes out; the connection breaks on the next read.
              if (this.pulls++ === 0) controller.enqueue(part.slice(0, cut));
              else controller.error(new Error("connection reset"));
            },
          } as UnderlyingDefaultSource<Uint8Array> & { pulls: number },
        ),
        { status, headers },
      );
    }
    return new Response(part.slice(), { status, headers });
  });
  const port = (server.addr as Deno.NetAddr).port;
  return { url: `http://127.0.0.1:${port}`, ranges, close: () => server.shutdown() };
}

async function rejection(promise: Promise<unknown>): Promise<CliError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof CliError, String(error));
    return error;
  }
  assert.fail("expected a failure");
}

Deno.test("models: hf: names and URLs resolve to a URL and a safe file name", () => {
  assert.deepEqual(
    resolveModelSource("hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf"),
    {
      url:
        "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf",
      name: "qwen2.5-1.5b-instruct-q4_k_m.gguf",
    },
  );
  assert.equal(
    resolveModelSource("hf:u/r/sub/m.gguf#dev").url,
    "https://huggingface.co/u/r/resolve/dev/sub/m.gguf",
  );
  assert.deepEqual(resolveModelSource("http://127.0.0.1:1/x/model", "mine"), {
    url: "http://127.0.0.1:1/x/model",
    name: "mine.gguf",
  });
  assert.throws(() => resolveModelSource("hf:user/repo"), /hf:<user>\/<repo>\/<file.gguf>/);
  assert.throws(() => resolveModelSource("ftp://host/m.gguf"), /http\(s\) URL/);
  assert.throws(() => resolveModelSource("http://h/m.gguf", "../evil.gguf"), /cannot be a model file name/);
});

Deno.test("models: a full download is checked, renamed into place and noted", async () => {
  const model = fakeModel(300_000);
  const server = serve({ "/m.gguf": model });
  const dir = await Deno.makeTempDir();
  try {
    const progress: number[] = [];
    const result = await pullModel({ ...resolveModelSource(`${server.url}/m.gguf`), label: "m" }, {
      dir,
      sha256: sha256(model),
      onProgress: (p) => {
        assert.equal(p.total, model.length);
        progress.push(p.received);
      },
    });
    assert.deepEqual(
      { ...result, path: result.path.slice(dir.length) },
      { path: "/m.gguf", size: model.length, sha256: sha256(model), resumedFrom: 0, alreadyCached: false },
    );
    assert.deepEqual(await Deno.readFile(`${dir}/m.gguf`), model);
    assert.equal(progress.at(-1), model.length);
    const note = JSON.parse(await Deno.readTextFile(`${dir}/m.gguf.json`));
    assert.equal(note.sha256, sha256(model));
    assert.equal(note.source, "m");
    // Cached: nothing is downloaded again.
    const again = await pullModel({ ...resolveModelSource(`${server.url}/m.gguf`), label: "m" }, { dir });
    assert.equal(again.alreadyCached, true);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: a broken download keeps its partial file, and the next pull resumes with a range request", async () => {
  const model = fakeModel(200_000);
  const broken = serve({ "/m.gguf": model }, { truncate: { "/m.gguf": 70_000 } });
  const dir = await Deno.makeTempDir();
  try {
    const error = await rejection(
      pullModel({ ...resolveModelSource(`${broken.url}/m.gguf`), label: "m" }, { dir }),
    );
    assert.equal(error.code, "io_error");
    assert.match(error.message, /run the same command to resume/);
    await assert.rejects(() => Deno.stat(`${dir}/m.gguf`), Deno.errors.NotFound);
    const kept = (await Deno.stat(`${dir}/m.gguf.partial`)).size;
    assert.ok(kept > 0 && kept <= 70_000);
    await broken.close();

    const good = serve({ "/m.gguf": model }, { etag: sha256(model) });
    try {
      const result = await pullModel({ ...resolveModelSource(`${good.url}/m.gguf`), label: "m" }, { dir });
      assert.equal(result.resumedFrom, kept);
      assert.deepEqual(good.ranges, [`bytes=${kept}-`]);
      assert.deepEqual(await Deno.readFile(`${dir}/m.gguf`), model);
      await assert.rejects(() => Deno.stat(`${dir}/m.gguf.partial`), Deno.errors.NotFound);
    } finally {
      await good.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: a checksum mismatch, an HTTP error or a non-GGUF file leave no model behind", async () => {
  const model = fakeModel(50_000);
  const server = serve({ "/m.gguf": model, "/page.gguf": new TextEncoder().encode("<html>sign in</html>") }, {
    etag: "0".repeat(64),
  });
  const dir = await Deno.makeTempDir();
  try {
    const corrupt = await rejection(
      pullModel({ ...resolveModelSource(`${server.url}/m.gguf`), label: "m" }, { dir }),
    );
    assert.match(corrupt.message, /is corrupt: SHA-256 [0-9a-f]{64}, expected 0{64}/);
    const missing = await rejection(
      pullModel({ ...resolveModelSource(`${server.url}/nope.gguf`), label: "nope" }, { dir }),
    );
    assert.equal(missing.message, "Cannot download nope: the server answered HTTP 404.");
    const page = await rejection(
      pullModel({ ...resolveModelSource(`${server.url}/page.gguf`), label: "page" }, {
        dir,
        sha256: sha256(new TextEncoder().encode("<html>sign in</html>")),
      }),
    );
    assert.equal(page.message, "page is not a GGUF model file.");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), []);
    assert.equal(
      (await rejection(pullModel({ url: server.url, name: "x.gguf", label: "x" }, { dir, sha256: "xyz" })))
        .code,
      "usage",
    );
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oam models pull and list: progress on stderr, the path on stdout, then listed", async () => {
  const model = fakeModel(120_000);
  const server = serve({ "/files/tiny.gguf": model });
  const dir = await Deno.makeTempDir();
  try {
    const pulled = await oam(["models", "pull", `${server.url}/files/tiny.gguf`], {
      env: { OAM_MODELS_DIR: dir },
    });
    assert.equal(pulled.code, 0, pulled.stderr);
    assert.match(pulled.stderr, /100% 0\.1 MB of 0\.1 MB/);
    assert.ok(pulled.stdout.includes(`${dir}/tiny.gguf`));
    assert.match(pulled.stdout, /Use it: --model gguf:tiny/);
    const listed = await oam(["models", "list", "--json"], { env: { OAM_MODELS_DIR: dir } });
    assert.equal(listed.code, 0, listed.stderr);
    const models = JSON.parse(listed.stdout);
    assert.equal(models.length, 1);
    assert.equal(models[0].name, "tiny.gguf");
    assert.equal(models[0].size, model.length);
    assert.equal(models[0].sha256, sha256(model));
    const human = await oam(["models", "list"], { env: { OAM_MODELS_DIR: dir } });
    assert.match(human.stdout, /tiny\.gguf {2}0\.1 MB/);
    const bad = await oam(["models", "fetch"], { env: { OAM_MODELS_DIR: dir } });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Unknown 'oam models' command 'fetch'/);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
