/**
 * `oam models pull|list` against a local HTTP server (never the internet): a full download, a resumed one
 * (the server sees the range request), a server without range support, a partial file that is already
 * complete, size and checksum failures that leave no model file, a file that is not GGUF, HTTP errors and
 * interruptions that keep the partial file, the cached case with and without `--sha256` and `--force`,
 * where `HF_TOKEN` goes, `hf:` names, and the listing. The real fixture model is pulled and used in the GGUF
 * tier (`tests/llama/gguf/gguf_wire_test.ts`).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type ModelSource, pullModel, resolveModelSource } from "../../src/cli/models_pull.ts";
import { CliError } from "../../src/cli/cli_error.ts";
import { oam, OAM_TASK_PERMISSIONS } from "./cli_helper.ts";

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
  /** Every request: its path and the headers the download sends. */
  requests: { path: string; range: string | null; authorization: string | null }[];
  close(): Promise<void>;
}

interface ServeOptions {
  /** Paths that send only that many bytes of their body, then break the connection. */
  truncate?: Record<string, number>;
  /** Paths that send that many bytes of their body, then nothing more until the server closes. */
  stall?: Record<string, number>;
  /** Paths answered with this HTTP status and no body. */
  status?: Record<string, number>;
  /** The ETag (a SHA-256, quoted). */
  etag?: string;
  /** The raw `X-Linked-ETag` header (Hugging Face's for LFS files). */
  linkedEtag?: string;
  /** False: Range headers are ignored (every answer is a 200 with the whole file). */
  acceptRanges?: boolean;
  /** The total size a 206 announces in its Content-Range (default: the file's). */
  announceTotal?: number;
  /** False: a 416 does not name the file's length (`Content-Range: bytes *\/<length>`). */
  rangeLength?: boolean;
}

/** Serves `files` with range support, shaped by `options`. */
function serve(files: Record<string, Uint8Array>, options: ServeOptions = {}): Server {
  const ranges: string[] = [];
  const requests: Server["requests"] = [];
  const stalled: ReadableStreamDefaultController<Uint8Array>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    requests.push({
      path,
      range: request.headers.get("range"),
      authorization: request.headers.get("authorization"),
    });
    const status = options.status?.[path];
    if (status !== undefined) return new Response(null, { status });
    const body = Object.hasOwn(files, path) ? files[path] : undefined;
    if (body === undefined) return new Response("no such file", { status: 404 });
    const headers = new Headers(options.acceptRanges === false ? {} : { "accept-ranges": "bytes" });
    if (options.etag) headers.set("etag", `"${options.etag}"`);
    if (options.linkedEtag) headers.set("x-linked-etag", options.linkedEtag);
    const range = options.acceptRanges === false ? null : request.headers.get("range");
    let start = 0;
    let code = 200;
    if (range !== null) {
      ranges.push(range);
      start = Number(/bytes=(\d+)-/.exec(range)![1]);
      if (start >= body.length) {
        if (options.rangeLength !== false) headers.set("content-range", `bytes */${body.length}`);
        return new Response(null, { status: 416, headers });
      }
      code = 206;
      const total = options.announceTotal ?? body.length;
      headers.set("content-range", `bytes ${start}-${body.length - 1}/${total}`);
    }
    const part = body.subarray(start);
    const cut = options.truncate?.[path];
    if (cut !== undefined) {
      // Announce the full length, send less, then end the stream (a broken connection). Ended with close(), not
      // error(): the body falls short of its Content-Length all the same, and Deno prints no error for it.
      headers.set("content-length", String(part.length));
      return new Response(
        new ReadableStream(
          {
            pulls: 0,
            pull(controller) {
              // The first part goes out; the connection breaks on the next read.
              if (this.pulls++ === 0) controller.enqueue(part.slice(0, cut));
              else controller.close();
            },
          } as UnderlyingDefaultSource<Uint8Array> & { pulls: number },
        ),
        { status: code, headers },
      );
    }
    const stall = options.stall?.[path];
    if (stall !== undefined) {
      headers.set("content-length", String(part.length));
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            // The first part goes out; the rest never comes (closed when the server closes).
            controller.enqueue(part.slice(0, stall));
            stalled.push(controller);
          },
        }),
        { status: code, headers },
      );
    }
    return new Response(part.slice(), { status: code, headers });
  });
  const port = (server.addr as Deno.NetAddr).port;
  return {
    url: `http://127.0.0.1:${port}`,
    ranges,
    requests,
    close: () => {
      for (const controller of stalled) {
        try {
          controller.close(); // short of its Content-Length: the connection breaks, and nothing is printed
        } catch {
          // the client went away first
        }
      }
      return server.shutdown();
    },
  };
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

Deno.test("models: a file of this machine is not pulled; the error says how to use it as it is", () => {
  const useIt = (path: string) => `use it where it is, with --model gguf:${path}`;
  for (const source of ["/home/me/models/tiny.gguf", "./tiny.gguf", "tiny.gguf"]) {
    assert.throws(
      () => resolveModelSource(source),
      (error: Error) => {
        assert.equal(
          error.message,
          `'${source}' is not a URL or an hf:<user>/<repo>/<file.gguf> name; a GGUF file on this machine ` +
            `needs no pull: ${useIt(source)}.`,
        );
        return true;
      },
    );
  }
  assert.throws(
    () => resolveModelSource("file:///home/me/models/tiny.gguf"),
    (error: Error) => {
      assert.equal(
        error.message,
        `'file:///home/me/models/tiny.gguf' is a file on this machine, which needs no pull: ` +
          `${useIt("/home/me/models/tiny.gguf")}.`,
      );
      return true;
    },
  );
  // not a file name: the message stays as it was
  assert.throws(() => resolveModelSource("qwen"), (error: Error) => {
    assert.equal(error.message, "'qwen' is not a URL or an hf:<user>/<repo>/<file.gguf> name.");
    return true;
  });
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

/** The source of `path` on `server`, labelled with the file's name. */
function sourceOf(server: Server, path: string): ModelSource & { label: string } {
  return { ...resolveModelSource(`${server.url}${path}`), label: path.slice(1) };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

Deno.test("models: a cached model is used without a request unless its SHA-256 differs or --force is given", async () => {
  const old = fakeModel(40_000);
  const model = fakeModel(60_000);
  const server = serve({ "/m.gguf": model });
  const parent = await Deno.makeTempDir();
  const dir = `${parent}/cache/models`; // created by the pull
  try {
    await pullModel(sourceOf(server, "/m.gguf"), { dir });
    assert.equal(server.requests.length, 1);
    // A model copied in by hand (no note): its hash is computed, nothing is downloaded.
    await Deno.writeFile(`${dir}/m.gguf`, old);
    await Deno.remove(`${dir}/m.gguf.json`);
    const cached = await pullModel(sourceOf(server, "/m.gguf"), { dir, sha256: sha256(old).toUpperCase() });
    assert.deepEqual(
      { ...cached, path: cached.path.slice(dir.length) },
      { path: "/m.gguf", size: old.length, sha256: sha256(old), resumedFrom: 0, alreadyCached: true },
    );
    assert.equal(server.requests.length, 1);
    // Another --sha256: the cached file is not that model, so it is downloaded and replaced.
    const replaced = await pullModel(sourceOf(server, "/m.gguf"), { dir, sha256: sha256(model) });
    assert.equal(replaced.alreadyCached, false);
    assert.deepEqual(await Deno.readFile(`${dir}/m.gguf`), model);
    assert.equal(server.requests.length, 2);
    // --force downloads again from the start, even with a partial file lying around.
    await Deno.writeFile(`${dir}/m.gguf.partial`, model.slice(0, 1000));
    const forced = await pullModel(sourceOf(server, "/m.gguf"), { dir, force: true });
    assert.deepEqual([forced.alreadyCached, forced.resumedFrom], [false, 0]);
    assert.deepEqual(server.requests.slice(2), [{ path: "/m.gguf", range: null, authorization: null }]);
    assert.deepEqual(await Deno.readFile(`${dir}/m.gguf`), model);
    assert.equal(await exists(`${dir}/m.gguf.partial`), false);
    // A note that is not one (no object, or no SHA-256 text in it): the hash is computed again.
    for (const note of ["null", '{"sha256": 42}', "not json"]) {
      await Deno.writeTextFile(`${dir}/m.gguf.json`, note);
      const again = await pullModel(sourceOf(server, "/m.gguf"), { dir });
      assert.deepEqual([again.alreadyCached, again.sha256], [true, sha256(model)], note);
    }
    assert.equal(server.requests.length, 3);
  } finally {
    await server.close();
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("models: resuming from a server without range support starts over instead of appending", async () => {
  const model = fakeModel(80_000);
  const server = serve({ "/m.gguf": model }, { acceptRanges: false });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/m.gguf.partial`, model.slice(0, 30_000));
    const result = await pullModel(sourceOf(server, "/m.gguf"), { dir, sha256: sha256(model) });
    assert.deepEqual(server.requests.map((r) => r.range), ["bytes=30000-"]);
    assert.deepEqual([result.resumedFrom, result.size], [0, model.length]);
    assert.deepEqual(await Deno.readFile(`${dir}/m.gguf`), model);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: a partial file that is already complete (HTTP 416) is checked and kept", async () => {
  const model = fakeModel(30_000);
  const server = serve({ "/m.gguf": model, "/n.gguf": model });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/m.gguf.partial`, model);
    const result = await pullModel(sourceOf(server, "/m.gguf"), { dir, sha256: sha256(model) });
    assert.deepEqual(server.ranges, [`bytes=${model.length}-`]);
    assert.deepEqual(
      { ...result, path: result.path.slice(dir.length) },
      {
        path: "/m.gguf",
        size: model.length,
        sha256: sha256(model),
        resumedFrom: model.length,
        alreadyCached: false,
      },
    );
    assert.deepEqual(await Deno.readFile(`${dir}/m.gguf`), model);
    // The same with a --sha256 it does not have: removed, so the next pull starts over.
    await Deno.writeFile(`${dir}/n.gguf.partial`, model);
    const corrupt = await rejection(pullModel(sourceOf(server, "/n.gguf"), { dir, sha256: "1".repeat(64) }));
    assert.equal(
      corrupt.message,
      `The download of n.gguf is corrupt: SHA-256 ${sha256(model)}, expected ${"1".repeat(64)}.`,
    );
    assert.equal(await exists(`${dir}/n.gguf.partial`), false);
    assert.equal(await exists(`${dir}/n.gguf`), false);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: a partial file longer than the server's file (HTTP 416 naming its length) starts over", async () => {
  const model = fakeModel(30_000);
  const longer = new Uint8Array(40_000);
  longer.set(model);
  const server = serve({ "/m.gguf": model });
  const dir = await Deno.makeTempDir();
  try {
    // A partial left by an older, longer version of the file.
    await Deno.writeFile(`${dir}/m.gguf.partial`, longer);
    const result = await pullModel(sourceOf(server, "/m.gguf"), { dir });
    assert.deepEqual(server.requests.map((r) => r.range), ["bytes=40000-", null]);
    assert.deepEqual(
      { ...result, path: result.path.slice(dir.length) },
      { path: "/m.gguf", size: model.length, sha256: sha256(model), resumedFrom: 0, alreadyCached: false },
    );
    assert.deepEqual(await Deno.readFile(`${dir}/m.gguf`), model);
    assert.equal(await exists(`${dir}/m.gguf.partial`), false);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: a 416 that does not name the file's length keeps a partial file that checks out", async () => {
  const model = fakeModel(30_000);
  const server = serve({ "/m.gguf": model }, { rangeLength: false });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/m.gguf.partial`, model);
    const result = await pullModel(sourceOf(server, "/m.gguf"), { dir });
    assert.deepEqual(server.requests.map((r) => r.range), [`bytes=${model.length}-`]);
    assert.equal(result.resumedFrom, model.length);
    assert.deepEqual(await Deno.readFile(`${dir}/m.gguf`), model);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: a body shorter than the size the server announced is not a model (the partial is kept)", async () => {
  const model = fakeModel(50_000);
  const server = serve({ "/m.gguf": model }, { announceTotal: 64_000 });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/m.gguf.partial`, model.slice(0, 10_000));
    const error = await rejection(pullModel(sourceOf(server, "/m.gguf"), { dir }));
    assert.equal(error.code, "io_error");
    assert.equal(
      error.message,
      "The download of m.gguf ended at 50000 of 64000 bytes; run the same command to resume.",
    );
    assert.equal(await exists(`${dir}/m.gguf`), false);
    assert.deepEqual(await Deno.readFile(`${dir}/m.gguf.partial`), model);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: an HTTP error or an unreachable server while resuming keeps the partial file", async () => {
  const model = fakeModel(20_000);
  const server = serve({}, { status: { "/m.gguf": 503 } });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/m.gguf.partial`, model.slice(0, 5_000));
    const unavailable = await rejection(pullModel(sourceOf(server, "/m.gguf"), { dir }));
    assert.deepEqual(
      [unavailable.code, unavailable.message],
      ["io_error", "Cannot download m.gguf: the server answered HTTP 503."],
    );
    // Nothing listens on port 1: the connection is refused.
    const unreachable = await rejection(
      pullModel({ ...resolveModelSource("http://127.0.0.1:1/m.gguf"), label: "m.gguf" }, { dir }),
    );
    assert.equal(unreachable.code, "io_error");
    assert.match(unreachable.message, /^Cannot download m\.gguf: .+/);
    // It says what to do: try again when the network is back, or use a GGUF file already on disk.
    assert.match(unreachable.message, /run the same command again to resume/);
    assert.ok(
      unreachable.message.includes(
        `--model gguf:<path to the file>, or copy it into ${dir} to use it by name`,
      ),
      unreachable.message,
    );
    assert.deepEqual(await Deno.readFile(`${dir}/m.gguf.partial`), model.slice(0, 5_000));
    assert.equal(await exists(`${dir}/m.gguf`), false);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: an interrupted download (the signal) keeps its partial file and resumes from it", async () => {
  const model = fakeModel(100_000);
  const stalling = serve({ "/m.gguf": model }, { stall: { "/m.gguf": 25_000 } });
  const dir = await Deno.makeTempDir();
  try {
    // Interrupted before the request: nothing is written.
    const early = await rejection(
      pullModel(sourceOf(stalling, "/m.gguf"), { dir, signal: AbortSignal.abort() }),
    );
    assert.deepEqual(
      [early.code, early.message],
      ["interrupted", "The download was interrupted; run the same command to resume."],
    );
    assert.deepEqual([...Deno.readDirSync(dir)], []);
    // Interrupted once the bytes the server sent are on disk (Ctrl-C during the download).
    const controller = new AbortController();
    const stopped = await rejection(pullModel(sourceOf(stalling, "/m.gguf"), {
      dir,
      signal: controller.signal,
      onProgress: ({ received }) => {
        if (received === 25_000) controller.abort();
      },
    }));
    assert.deepEqual(
      [stopped.code, stopped.message],
      ["interrupted", "The download stopped at 25000 bytes; run the same command to resume."],
    );
    assert.equal(await exists(`${dir}/m.gguf`), false);
    assert.deepEqual(await Deno.readFile(`${dir}/m.gguf.partial`), model.slice(0, 25_000));
    await stalling.close();

    const good = serve({ "/m.gguf": model });
    try {
      const result = await pullModel(sourceOf(good, "/m.gguf"), { dir, sha256: sha256(model) });
      assert.deepEqual(good.ranges, ["bytes=25000-"]);
      assert.equal(result.resumedFrom, 25_000);
      assert.deepEqual(await Deno.readFile(`${dir}/m.gguf`), model);
    } finally {
      await good.close();
    }
  } finally {
    await stalling.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: --sha256 wins over the server's ETag; Hugging Face's X-Linked-ETag (weak too) is checked", async () => {
  const model = fakeModel(20_000);
  const tagged = serve({ "/m.gguf": model }, { etag: "0".repeat(64) });
  const linked = serve({ "/m.gguf": model }, { etag: "abc", linkedEtag: `W/"${"2".repeat(64)}"` });
  const dir = await Deno.makeTempDir();
  try {
    const result = await pullModel(sourceOf(tagged, "/m.gguf"), { dir, sha256: sha256(model) });
    assert.equal(result.sha256, sha256(model));
    const corrupt = await rejection(pullModel(sourceOf(linked, "/m.gguf"), { dir, force: true }));
    assert.equal(
      corrupt.message,
      `The download of m.gguf is corrupt: SHA-256 ${sha256(model)}, expected ${"2".repeat(64)}.`,
    );
    assert.equal(await exists(`${dir}/m.gguf.partial`), false);
  } finally {
    await tagged.close();
    await linked.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: HF_TOKEN goes to huggingface.co only", async () => {
  const model = fakeModel(20_000);
  const server = serve({ "/m.gguf": model });
  const dir = await Deno.makeTempDir();
  const saved = Deno.env.get("HF_TOKEN");
  const realFetch = globalThis.fetch;
  try {
    Deno.env.set("HF_TOKEN", "hf_secret");
    await pullModel(sourceOf(server, "/m.gguf"), { dir });
    assert.deepEqual(server.requests.map((r) => r.authorization), [null]);
    // huggingface.co itself is not reached from the tests: the request is caught before it leaves.
    const sent: Request[] = [];
    globalThis.fetch = (input, init) => {
      sent.push(new Request(input, init));
      return Promise.resolve(new Response("gated", { status: 401 }));
    };
    const gated = await rejection(
      pullModel({ ...resolveModelSource("hf:org/gated/g.gguf"), label: "hf:org/gated/g.gguf" }, { dir }),
    );
    assert.equal(gated.message, "Cannot download hf:org/gated/g.gguf: the server answered HTTP 401.");
    assert.deepEqual(
      sent.map((r) => [r.url, r.headers.get("authorization")]),
      [["https://huggingface.co/org/gated/resolve/main/g.gguf", "Bearer hf_secret"]],
    );
  } finally {
    globalThis.fetch = realFetch;
    if (saved === undefined) Deno.env.delete("HF_TOKEN");
    else Deno.env.set("HF_TOKEN", saved);
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
    const typo = await oam(["models", "lst"], { env: { OAM_MODELS_DIR: dir } });
    assert.deepEqual([typo.code, typo.stdout, typo.stderr], [
      2,
      "",
      "Error: Unknown 'oam models' command 'lst'; did you mean 'list'? Use pull or list. [usage]\n",
    ]);
    // A bad --sha256 is a usage error before any download starts (no "Downloading …" line).
    const badSum = await oam(["models", "pull", "--sha256", "xyz", `${server.url}/files/tiny.gguf`], {
      env: { OAM_MODELS_DIR: dir },
    });
    assert.deepEqual(
      [badSum.code, badSum.stdout, badSum.stderr],
      [2, "", "Error: --sha256 must be 64 hexadecimal digits. [usage]\n"],
    );
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: a server that cannot be reached: the download error says why, not just 'fetch failed'", async () => {
  // A port nothing listens on: the connection is refused.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const dir = await Deno.makeTempDir();
  try {
    const refused = await rejection(
      pullModel({ ...resolveModelSource(`http://127.0.0.1:${port}/m.gguf`), label: "m" }, { dir }),
    );
    assert.equal(refused.code, "io_error");
    assert.match(
      refused.message,
      /^Cannot download m: fetch failed: client error \(Connect\): .*Connection refused/,
    );
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: oam models pull without network access names the task that has it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await oam(["models", "pull", "--dir", dir, "http://127.0.0.1:8099/m.gguf"], {
      permissions: ["--allow-read", "--allow-write", "--allow-env"],
    });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(
      r.stderr.split("\n").filter((l) => l.startsWith("Error:")).join("\n"),
      `Error: Cannot download http://127.0.0.1:8099/m.gguf: Requires net access to "127.0.0.1:8099", run again with ` +
        `the --allow-net flag. 'deno task models pull …' has network access. [io_error]`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: pull without network access, from a folder of the user's own, names a command that works there", async () => {
  // No deno.json there: 'deno task models' would find no task. The command printed is cli.ts run by its path
  // with the network; run as printed it gets past the permission (here to a port nothing listens on).
  const dir = await Deno.makeTempDir();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  try {
    const url = `http://127.0.0.1:${port}/m.gguf`;
    const r = await oam(["models", "pull", "--dir", dir, url], {
      cwd: dir,
      permissions: ["--allow-read", "--allow-write", "--allow-env"],
    });
    assert.equal(r.code, 1, r.stderr);
    const error = r.stderr.split("\n").find((l) => l.startsWith("Error:")) ?? "";
    const command = /run again with the --allow-net flag\. '([^']+) models pull …' has network access\./.exec(
      error,
    )
      ?.[1];
    assert.ok(command !== undefined, error);
    assert.match(command, /^deno run --allow-read --allow-write --allow-net --allow-env \/\S+\/cli\.ts$/);
    const again = await new Deno.Command(Deno.execPath(), {
      args: [...command.split(" ").slice(1), "models", "pull", "--dir", dir, url],
      cwd: dir,
      stdin: "null",
      env: { NO_COLOR: "1" },
    }).output();
    const stderr = new TextDecoder().decode(again.stderr);
    assert.equal(again.code, 1, stderr);
    assert.match(stderr, /Connection refused/);
    assert.doesNotMatch(stderr, /Requires net access/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("models: an empty 'oam models list' without network access names the task that can pull", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // The `oam` task's grants: no network, so 'deno task oam models pull' could not download.
    const r = await oam(["models", "list", "--dir", dir], {
      permissions: OAM_TASK_PERMISSIONS,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `No models in ${dir}. Get one with 'deno task models pull <url>'.\n`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
