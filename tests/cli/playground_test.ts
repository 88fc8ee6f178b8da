/**
 * `oam playground` as a user runs it: a child process with the permissions `deno task playground` grants,
 * the printed URL on 127.0.0.1, the page and what it says about the model, the bridge at `/rpc` playing the
 * `--script` as the system model (driven here by the typed client over WebSocket), `--open` through the
 * platform's opener, a taken port, usage errors, and SIGTERM stopping it cleanly.
 */
import assert from "node:assert/strict";
import { Bridge, WebSocketTransport } from "../../mod.ts";
import { openCommand, PLAYGROUND_HELP } from "../../src/cli/playground.ts";
import { withDeadline } from "../helpers/deadline.ts";
import { completion, json, MockServer } from "../models/openai_mock_server.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/** The permissions of `deno task playground` (deno.json). */
const PERMISSIONS = [
  "--no-prompt",
  "--allow-net=127.0.0.1",
  "--allow-env=OAM_FM_LIBRARY,OAM_SCRIPT,OAM_MODEL",
  "--allow-read",
  "--allow-ffi",
  "--allow-run=xdg-open,open",
];

function env(extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ["PATH", "HOME", "DENO_DIR", "TMPDIR"]) {
    const v = Deno.env.get(k);
    if (v !== undefined) out[k] = v;
  }
  return { ...out, ...extra };
}

/** A running `oam playground` with its first stdout line read. */
class Playground {
  readonly child: Deno.ChildProcess;
  url = "";
  #stdout = "";
  #stderr: Promise<string>;

  constructor(args: string[], extraEnv: Record<string, string> = {}) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", ...PERMISSIONS, CLI, "playground", ...args],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      clearEnv: true,
      env: env(extraEnv),
    }).spawn();
    this.#stderr = new Response(this.child.stderr).text();
  }

  /** Waits for the printed URL. */
  async ready(): Promise<this> {
    const reader = this.child.stdout.getReader();
    const decoder = new TextDecoder();
    await withDeadline(
      (async () => {
        while (!this.#stdout.includes("Press Ctrl-C to stop.\n")) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`oam playground ended early:\n${this.#stdout}\n${await this.#stderr}`);
          this.#stdout += decoder.decode(value, { stream: true });
        }
      })(),
      "the playground's URL",
    );
    reader.releaseLock();
    this.url = /^oam playground: (http:\/\/127\.0\.0\.1:\d+\/) {2}\(model: .+\)\n/.exec(this.#stdout)![1];
    return this;
  }

  get stdout(): string {
    return this.#stdout;
  }

  /** Stops it with SIGTERM; resolves with the exit code and stderr. */
  async stop(): Promise<{ code: number; stderr: string }> {
    this.child.kill("SIGTERM");
    const status = await withDeadline(this.child.status, "the playground to exit");
    await this.child.stdout.cancel().catch(() => {});
    return { code: status.code, stderr: await this.#stderr };
  }
}

Deno.test("oam playground: prints its URL on 127.0.0.1, serves the page, and the bridge at /rpc plays --script", async () => {
  const dir = await Deno.makeTempDir({ prefix: "oam-playground-test-" });
  try {
    const script = `${dir}/steps.json`;
    await Deno.writeTextFile(script, JSON.stringify([{ text: "[happy] Welcome to the Rusty Tankard." }]));
    const p = await new Playground(["--port", "0", "--script", script]).ready();
    assert.equal(
      p.stdout,
      `oam playground: ${p.url}  (model: scripted (${script}))\nPress Ctrl-C to stop.\n`,
    );
    const page = await fetch(p.url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>oam playground<\/title>/);
    const info = await (await fetch(`${p.url}playground/info.json`)).json();
    // The page's Model tab names the file the bridge plays.
    assert.deepEqual(info.model, { name: "scripted", label: `scripted (${script})`, script });

    const rpc = `${p.url.replace("http:", "ws:")}rpc`;
    const bridge = await Bridge.connect(new WebSocketTransport(rpc), { onWarning: () => {} });
    const mira = await bridge.createNpc({ name: "Mira" }, { options: { replyFormat: "text" } });
    const emotions: string[] = [];
    const reply = await mira.talk("Hello", { onEmotion: (e) => emotions.push(e) });
    assert.deepEqual([emotions, reply.line], [["happy"], "Welcome to the Rusty Tankard."]);
    await bridge.close();

    const { code, stderr } = await p.stop();
    assert.equal(code, 0, stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oam playground --model openai:…: the page names the model, and NPCs on the bridge's model use the server", async () => {
  const server = new MockServer((request) =>
    request.path === "/v1/models"
      ? json({ object: "list", data: [{ id: "m", object: "model" }] })
      : json(completion("[happy] Hello from the model server."))
  );
  try {
    const p = await new Playground(["--port", "0", "--model", `openai:${server.baseURL}#m`]).ready();
    const info = await (await fetch(`${p.url}playground/info.json`)).json();
    assert.deepEqual(info.model, { name: "openai", label: `openai: ${server.baseURL}#m` });
    const bridge = await Bridge.connect(new WebSocketTransport(`${p.url.replace("http:", "ws:")}rpc`), {
      onWarning: () => {},
    });
    assert.equal((await bridge.availability()).available, true);
    const mira = await bridge.createNpc({ name: "Mira" }, {
      options: { replyFormat: "text", toolChoice: "none" },
    });
    const reply = await mira.talk("Hello");
    assert.deepEqual([reply.emotion, reply.line], ["happy", "Hello from the model server."]);
    await bridge.close();
    const { code, stderr } = await p.stop();
    assert.equal(code, 0, stderr);
  } finally {
    await server.close();
  }
});

Deno.test({
  name: "oam playground --open: runs the platform's opener with the URL (a stand-in xdg-open on PATH)",
  ignore: Deno.build.os !== "linux", // the stand-in is a shell script named like the Linux opener
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "oam-playground-open-" });
    try {
      const opened = `${dir}/opened.txt`;
      await Deno.writeTextFile(`${dir}/xdg-open`, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
      await Deno.chmod(`${dir}/xdg-open`, 0o755);
      // The opener runs after the URL is printed: wait for the file it writes (a file event; bounded).
      const watcher = Deno.watchFs(dir);
      const p = await new Playground(["--port", "0", "--open"], {
        PATH: `${dir}:${Deno.env.get("PATH") ?? ""}`,
      }).ready();
      const read = () => Deno.readTextFile(opened).catch(() => "");
      const url = await withDeadline(
        (async () => {
          let text = await read();
          if (text !== "") return text;
          for await (const _event of watcher) {
            text = await read();
            if (text !== "") break;
          }
          return text;
        })(),
        "the stand-in opener to be run",
      ).finally(() => watcher.close());
      assert.equal(url, p.url);
      const { code } = await p.stop();
      assert.equal(code, 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("openCommand: the default browser's opener on each platform", () => {
  assert.deepEqual(openCommand("http://127.0.0.1:1977/", "linux"), ["xdg-open", ["http://127.0.0.1:1977/"]]);
  assert.deepEqual(openCommand("http://127.0.0.1:1977/", "darwin"), ["open", ["http://127.0.0.1:1977/"]]);
  assert.deepEqual(openCommand("http://127.0.0.1:1977/", "windows"), [
    "cmd",
    ["/c", "start", "", "http://127.0.0.1:1977/"],
  ]);
});

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await withDeadline(
    new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", ...PERMISSIONS, CLI, "playground", ...args],
      stdin: "null",
      clearEnv: true,
      env: env(),
    }).output(),
    `oam playground ${args.join(" ")}`,
  );
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

Deno.test("oam playground: --help, a usage error, and a port that is taken", async () => {
  const help = await run(["--help"]);
  assert.deepEqual([help.code, help.stdout], [0, PLAYGROUND_HELP]);
  const bad = await run(["--host", "0.0.0.0"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Unknown option '--host'/);
  const badPort = await run(["--port", "99999"]);
  assert.equal(badPort.code, 2);
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const busy = await run(["--port", String(taken.addr.port)]);
  assert.equal(busy.code, 1);
  assert.match(
    busy.stderr,
    new RegExp(`could not start on 127\\.0\\.0\\.1:${taken.addr.port}: .*\\(use --port 0`),
  );
});
