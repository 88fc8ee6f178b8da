/**
 * What a designer is told when the file a GGUF model names cannot be a model, decided before node-llama-cpp
 * would load: where a missing file was looked for and what that folder holds, a folder given for a file, and
 * what a file that is not GGUF is instead (a web page or a Git LFS pointer a download saved, a zip, a
 * safetensors model, an empty file). Each message names the problem and what to do.
 */
import assert from "node:assert/strict";
import { CHECKOUT_OAM } from "../helpers/messages.ts";
import { relative } from "node:path";
import { checkModelFile } from "../../src/models/gguf_file.ts";
import { BridgeError } from "../../src/protocol/errors.ts";

/** The message `checkModelFile(path)` fails with (a `model_unavailable` naming the path). */
async function refusal(path: string): Promise<string> {
  try {
    await checkModelFile(path);
  } catch (error) {
    assert.ok(error instanceof BridgeError, String(error));
    assert.equal(error.dataCode, "model_unavailable");
    assert.deepEqual(error.data, { path });
    return error.message;
  }
  assert.fail(`expected '${path}' to be refused`);
}

async function inTempDir(files: Record<string, string | Uint8Array>, run: (dir: string) => Promise<void>) {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    for (const [name, content] of Object.entries(files)) {
      if (typeof content === "string") await Deno.writeTextFile(`${dir}/${name}`, content);
      else await Deno.writeFile(`${dir}/${name}`, content);
    }
    await run(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("gguf file: a missing file names the folder it was looked for in and the models that folder has", async () => {
  await inTempDir({ "tiny-chat.gguf": "GGUF…", "notes.txt": "x" }, async (dir) => {
    assert.equal(
      await refusal(`${dir}/tiny_chat.gguf`),
      `The model file '${dir}/tiny_chat.gguf' does not exist; the folder ${dir} has: tiny-chat.gguf.`,
    );
    // A relative path starts in the working folder, which `deno task` sets to the repository's.
    const rel = `./${relative(Deno.cwd(), dir)}/tiny_chat.gguf`;
    assert.equal(
      await refusal(rel),
      `The model file '${rel}' (${dir}/tiny_chat.gguf) does not exist; the folder ${dir} has: tiny-chat.gguf.`,
    );
    await Deno.remove(`${dir}/tiny-chat.gguf`);
    assert.equal(
      await refusal(`${dir}/tiny-chat.gguf`),
      `The model file '${dir}/tiny-chat.gguf' does not exist; the folder ${dir} has no .gguf file.`,
    );
    assert.equal(
      await refusal(`${dir}/models/tiny-chat.gguf`),
      `The model file '${dir}/models/tiny-chat.gguf' does not exist; there is no folder ${dir}/models.`,
    );
  });
});

Deno.test("gguf file: a '~' in a model object is not the home folder, and the message says so", async () => {
  const message = await refusal("~/oam-no-such-model.gguf");
  assert.match(
    message,
    /^The model file '~\/oam-no-such-model\.gguf' \(.+\/~\/oam-no-such-model\.gguf\) does not exist; /,
  );
  assert.match(message, / A '~' is not your home folder here: write the full path\.$/);
});

Deno.test("gguf file: a folder is refused with the models in it", async () => {
  await inTempDir({ "b.gguf": "GGUF", "a.gguf": "GGUF", "c.gguf": "GGUF", "d.gguf": "GGUF" }, async (dir) => {
    assert.equal(
      await refusal(dir),
      `The model path '${dir}' is a folder, not a file: give a .gguf file in it (it has: a.gguf, b.gguf, c.gguf ` +
        "and 1 more).",
    );
    await Deno.mkdir(`${dir}/empty`);
    assert.equal(
      await refusal(`${dir}/empty`),
      `The model path '${dir}/empty' is a folder, not a file: give a .gguf file (it has none).`,
    );
  });
});

Deno.test("gguf file: a file that is not GGUF says what it is instead and what to do", async () => {
  const safetensors = new Uint8Array([
    0x20,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    ...new TextEncoder().encode('{"__metadata__":{}}'),
  ]);
  await inTempDir({
    "page.gguf": "\n<!DOCTYPE html><html><body>Sign in</body></html>",
    "pointer.gguf": "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 85429984\n",
    "model.zip": new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4]),
    "model.safetensors": safetensors,
    "empty.gguf": "",
    "notes.txt": "hello",
  }, async (dir) => {
    assert.equal(
      await refusal(`${dir}/page.gguf`),
      `The model file '${dir}/page.gguf' is not a GGUF file: it is a web page (HTML), such as an error or ` +
        `sign-in page a download saved. Download the model again ('${CHECKOUT_OAM} models pull <url>' checks what it saves).`,
    );
    assert.equal(
      await refusal(`${dir}/pointer.gguf`),
      `The model file '${dir}/pointer.gguf' is not a GGUF file: it is a Git LFS pointer, not the model. Fetch ` +
        `the model itself (git lfs pull), or download it with '${CHECKOUT_OAM} models pull <url>'.`,
    );
    assert.equal(
      await refusal(`${dir}/model.zip`),
      `The model file '${dir}/model.zip' is not a GGUF file: it is a zip archive. Unpack it first and give ` +
        "the .gguf file inside.",
    );
    assert.equal(
      await refusal(`${dir}/model.safetensors`),
      `The model file '${dir}/model.safetensors' is not a GGUF file: it is a safetensors model, which ` +
        "llama.cpp cannot load. Use the model's GGUF build (on Hugging Face, a repository named …-GGUF).",
    );
    assert.equal(
      await refusal(`${dir}/empty.gguf`),
      `The model file '${dir}/empty.gguf' is not a GGUF file: it is empty (an interrupted download?). ` +
        "Download it again.",
    );
    assert.equal(
      await refusal(`${dir}/notes.txt`),
      `The model file '${dir}/notes.txt' is not a GGUF file: it does not start with 'GGUF'. Give a model in ` +
        `GGUF format (a .gguf file, such as one '${CHECKOUT_OAM} models pull <url>' downloads).`,
    );
  });
});
