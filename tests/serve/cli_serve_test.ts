/**
 * `oam serve` as a user runs it: a child process with the documented (minimal) permissions, the scripted
 * model from OAM_SCRIPT, the banner with the port and a ready-to-paste curl, server command tools from
 * `--tools`, a Unix socket, refusals at start, and SIGTERM stopping it cleanly with a request in flight.
 */
import assert from "node:assert/strict";
import { banner } from "../../src/cli/serve.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const DEADLINE_MS = 30_000;

/** The permissions `deno task serve` documents, with the net grant scoped to the loopback host. */
const PERMISSIONS = [
  "--no-prompt",
  "--allow-net=127.0.0.1",
  "--allow-env=OAM_FM_LIBRARY,OAM_SCRIPT,OAM_API_KEY,OAM_MODEL",
  "--allow-read",
];

function env(extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ["PATH", "HOME", "DENO_DIR", "TMPDIR"]) {
    const v = Deno.env.get(k);
    if (v !== undefined) out[k] = v;
  }
  return { ...out, ...extra };
}

/** Rejects after `ms` with `what` (so a hang fails with a message instead of stalling the suite). */
function within<T>(promise: Promise<T>, what: string, ms = DEADLINE_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)),
  ]).finally(() => clearTimeout(timer));
}

/** A running `oam serve` child with its banner read. */
class ServeProcess {
  readonly child: Deno.ChildProcess;
  banner = "";
  /** Everything written to stderr so far. */
  stderr = "";
  readonly #stderrDone: Promise<void>;
  #stderrWaiters: Array<() => void> = [];
  #stdout: ReadableStreamDefaultReader<Uint8Array>;

  private constructor(child: Deno.ChildProcess) {
    this.child = child;
    this.#stdout = child.stdout.getReader();
    this.#stderrDone = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stderr) {
        this.stderr += decoder.decode(chunk, { stream: true });
        for (const w of this.#stderrWaiters.splice(0)) w();
      }
    })();
  }

  /** Waits until stderr contains a match of `pattern` (a log line). */
  logged(pattern: RegExp): Promise<void> {
    return within(
      (async () => {
        while (!pattern.test(this.stderr)) {
          await new Promise<void>((resolve) => this.#stderrWaiters.push(resolve));
        }
      })(),
      `a log line ${pattern}`,
    );
  }

  static spawn(
    args: string[],
    extraEnv: Record<string, string> = {},
    permissions = PERMISSIONS,
    cwd?: string,
  ): ServeProcess {
    return new ServeProcess(
      new Deno.Command(Deno.execPath(), {
        args: ["run", "--quiet", ...permissions, CLI, "serve", ...args],
        ...(cwd === undefined ? {} : { cwd }),
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        clearEnv: true,
        env: env(extraEnv),
      }).spawn(),
    );
  }

  /** Reads stdout until the banner's last line. */
  async ready(): Promise<this> {
    const decoder = new TextDecoder();
    await within(
      (async () => {
        while (!this.banner.includes("Press Ctrl-C to stop.")) {
          const { value, done } = await this.#stdout.read();
          if (done) {
            await this.#stderrDone;
            throw new Error(`oam serve ended before its banner:\n${this.banner}\n${this.stderr}`);
          }
          this.banner += decoder.decode(value, { stream: true });
        }
      })(),
      "the banner",
    );
    return this;
  }

  get port(): number {
    return Number(/listening on http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(this.banner)![1]);
  }

  /** Waits for the exit; returns the code and stderr. */
  async exit(): Promise<{ code: number; stderr: string }> {
    this.#stdout.releaseLock();
    await this.child.stdout.cancel().catch(() => {});
    const status = await within(this.child.status, "the process to exit");
    await this.#stderrDone;
    return { code: status.code, stderr: this.stderr };
  }
}

async function tempDir(): Promise<string> {
  return await Deno.makeTempDir({ prefix: "oam-serve-test-" });
}

async function writeJson(dir: string, name: string, value: unknown): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, JSON.stringify(value));
  return path;
}

function chat(port: number, body: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

Deno.test("oam serve: banner with the port, curl and SDK base URL; OAM_SCRIPT plays; SIGTERM stops it cleanly mid-request", async () => {
  const dir = await tempDir();
  try {
    const scriptPath = await writeJson(dir, "steps.json", [{ text: "Halt!" }, {
      text: "never",
      delayMs: 60_000,
    }]);
    const p = await ServeProcess.spawn(["--port", "0", "--log-level", "debug"], { OAM_SCRIPT: scriptPath })
      .ready();
    const port = p.port;
    assert.ok(port > 0);
    assert.ok(
      p.banner.startsWith(`oam serve listening on http://127.0.0.1:${port}/v1  (model: system = scripted`),
    );
    assert.ok(p.banner.includes(`bridge protocol over WebSocket: ws://127.0.0.1:${port}/rpc\n`));
    assert.ok(p.banner.includes(`  curl http://127.0.0.1:${port}/v1/chat/completions \\\n`));
    assert.ok(
      p.banner.includes(`Any OpenAI SDK works: base_url=http://127.0.0.1:${port}/v1, api_key=anything`),
    );
    const first = await chat(port, { model: "system", messages: [{ role: "user", content: "Hello" }] });
    assert.equal((await first.json()).choices[0].message.content, "Halt!");
    // A request in flight (its step waits a minute) when SIGTERM arrives: answered, and the process exits 0.
    const inFlight = chat(port, {
      model: "system",
      stream: true,
      messages: [{ role: "user", content: "x" }],
    });
    await p.logged(/Completion started \(streamed; 1 active, 0 queued\)/);
    p.child.kill("SIGTERM");
    const response = await inFlight;
    assert.deepEqual([response.status, (await response.json()).error.code], [503, "server_shutting_down"]);
    const { code, stderr } = await p.exit();
    assert.equal(code, 0, stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oam serve: --tools command tools run in the server and never show; a tool without x-oam is refused", async () => {
  const dir = await tempDir();
  try {
    const tools = await writeJson(dir, "tools.json", [{
      type: "function",
      function: {
        name: "get_temp",
        description: "Temperature in a city",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
      "x-oam": { command: ["sh", "-c", `printf '{"temp": 21, "args": %s}' "$OAM_TOOL_ARGUMENTS"`] },
    }]);
    const scriptPath = await writeJson(dir, "steps.json", [
      { toolCalls: [{ name: "get_temp", arguments: { city: "Paris" } }] },
      { template: "Now: {toolOutput}" },
    ]);
    const p = await ServeProcess.spawn(
      ["--port", "0", "--tools", tools, "--log-level", "off"],
      { OAM_SCRIPT: scriptPath },
      [...PERMISSIONS, "--allow-run"],
    ).ready();
    assert.ok(p.banner.includes("\nserver tools: get_temp\n"));
    const response = await chat(p.port, { messages: [{ role: "user", content: "Temperature?" }] });
    const message = (await response.json()).choices[0].message;
    assert.deepEqual(message, {
      role: "assistant",
      content: 'Now: {"temp":21,"args":{"city":"Paris"}}',
      refusal: null,
      annotations: [],
    });
    p.child.kill("SIGINT");
    assert.equal((await p.exit()).code, 0);

    const external = await writeJson(dir, "external.json", [{
      name: "open_gate",
      description: "Opens a gate.",
    }]);
    const refused = await ServeProcess.spawn(["--port", "0", "--tools", external], { OAM_SCRIPT: scriptPath })
      .exit();
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /server tool 'open_gate' has no "x-oam" command/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oam serve: refuses a network bind without an API key, a busy port, and a non-socket file", async () => {
  const dir = await tempDir();
  try {
    const scriptPath = await writeJson(dir, "steps.json", [{ text: "x" }]);
    const open = await ServeProcess.spawn(["--host", "0.0.0.0"], { OAM_SCRIPT: scriptPath }).exit();
    assert.equal(open.code, 2);
    assert.match(open.stderr, /--host 0\.0\.0\.0 makes the server reachable from the network: set --api-key/);

    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const busy = await ServeProcess.spawn(["--port", String(listener.addr.port)], {
        OAM_SCRIPT: scriptPath,
      })
        .exit();
      assert.equal(busy.code, 1);
      assert.match(
        busy.stderr,
        new RegExp(
          `The server could not start on 127\\.0\\.0\\.1:${listener.addr.port}: .*in use.*` +
            "\\(another program listens there: use another --port, or --port 0 for a free one\\) \\[server_start_failed\\]",
        ),
      );
      // `deno task serve` grants its port only: "another --port" alone would be refused for lack of a grant.
      const task = await ServeProcess.spawn(["--port", String(listener.addr.port)], {
        OAM_SCRIPT: scriptPath,
      }, [
        ...PERMISSIONS.filter((f) => !f.startsWith("--allow-net")),
        `--allow-net=127.0.0.1:${listener.addr.port}`,
      ]).exit();
      assert.equal(task.code, 1);
      assert.match(
        task.stderr,
        new RegExp(
          "\\(another program listens there: use another --port, or --port 0 for a free one; this process may " +
            `listen on 127\\.0\\.0\\.1:${listener.addr.port} only, so grant the new one: ` +
            "deno run --allow-net=127\\.0\\.0\\.1:0 \\[your other flags\\] cli\\.ts serve --port 0\\)",
        ),
      );
    } finally {
      listener.close();
    }

    // The net grant is scoped to the bind address: another port is refused at start, without a prompt.
    const scoped = await ServeProcess.spawn(["--port", "0"], { OAM_SCRIPT: scriptPath }, [
      ...PERMISSIONS.filter((f) => !f.startsWith("--allow-net")),
      "--allow-net=127.0.0.1:1",
    ]).exit();
    assert.equal(scoped.code, 1);
    assert.match(
      scoped.stderr,
      // What to type: the task that grants every port of this machine, or the grant for this one.
      /The server could not start on 127\.0\.0\.1:0: Requires net access to "127\.0\.0\.1:0".*\(`deno task serve` grants 127\.0\.0\.1:1976 only: for another port on this machine use 'deno task oam:local serve --port 0 …', else grant this one: deno run --allow-net=127\.0\.0\.1:0 \[your other flags\] cli\.ts serve --port 0\)/,
    );

    // A Unix socket without its grants (as under every task): the two flags it needs, spelt out.
    const sock = `${dir}/oam.sock`;
    const ungranted = await ServeProcess.spawn(["--socket", sock], { OAM_SCRIPT: scriptPath }, PERMISSIONS)
      .exit();
    assert.equal(ungranted.code, 1);
    assert.ok(
      ungranted.stderr.includes(
        `(a Unix socket needs --allow-net=unix:${sock} --allow-write=${sock}, which no task grants: deno run ` +
          `--allow-net=unix:${sock} --allow-write=${sock} [your other flags] cli.ts serve --socket ${sock}) ` +
          "[server_start_failed]",
      ),
      ungranted.stderr,
    );

    const file = `${dir}/not-a-socket`;
    await Deno.writeTextFile(file, "keep me");
    const clobber = await ServeProcess.spawn(["--socket", file], { OAM_SCRIPT: scriptPath }, [
      ...PERMISSIONS,
      "--allow-write",
    ]).exit();
    assert.equal(clobber.code, 1);
    assert.match(clobber.stderr, /is not a socket; refusing to replace it/);
    assert.equal(await Deno.readTextFile(file), "keep me");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oam serve --model openai: a server it may not reach fails at once; one that is down asks to retry later", async () => {
  // `deno task serve` grants the network of its own port only; here 127.0.0.1, so a server named
  // `localhost` is a grant this process lacks (waiting cannot bring it): the 503 tells an SDK not to retry.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closed = listener.addr.port;
  listener.close();
  const cases: Array<[string, RegExp, string | null, string | null]> = [
    [`localhost:${closed}`, new RegExp(`Requires net access to "localhost:${closed}"`), null, "false"],
    [`127.0.0.1:${closed}`, /Cannot reach the model server at http:\/\/127\.0\.0\.1:/, "30", null],
  ];
  for (const [host, why, retryAfter, shouldRetry] of cases) {
    const serve = await ServeProcess.spawn(["--port", "0", "--model", `openai:http://${host}/v1#m`]).ready();
    try {
      const response = await chat(serve.port, {
        model: "system",
        messages: [{ role: "user", content: "x" }],
      });
      const body = await response.json();
      assert.deepEqual(
        [response.status, response.headers.get("retry-after"), response.headers.get("x-should-retry")],
        [503, retryAfter, shouldRetry],
        JSON.stringify(body),
      );
      assert.match(body.error.message, why);
    } finally {
      serve.child.kill("SIGTERM");
      await serve.exit();
    }
  }
});

Deno.test("oam serve --model gguf: under the narrow task's flags, the start warning says a restart is needed, not a wait", async () => {
  // `deno task serve` leaves out node-llama-cpp's permissions: the model can never become available in this
  // process, so "until it is available" would have the designer wait for nothing.
  const dir = await tempDir();
  try {
    const file = `${dir}/model.gguf`;
    // A GGUF header: the file is read before the permissions are checked, and never loaded.
    await Deno.writeFile(file, new Uint8Array([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0, 0, 0, 0, 0]));
    const serve = await ServeProcess.spawn(["--port", "0", "--model", `gguf:${file}`]).ready();
    try {
      await serve.logged(/warning: The model \S*model\.gguf is unavailable: .*\n/);
      assert.match(serve.stderr, /deno task oam:local serve --model gguf:/);
      assert.match(
        serve.stderr,
        /Waiting cannot make it available: completions answer 503 until the server is started again with what it lacks\./,
      );
      assert.doesNotMatch(serve.stderr, /until it is available/);
    } finally {
      serve.child.kill("SIGTERM");
      await serve.exit();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oam serve warns at start about --allow-origin values that open it to any page or match no page", async () => {
  const dir = await tempDir();
  try {
    const scriptPath = await writeJson(dir, "steps.json", [{ text: "x" }]);
    const p = await ServeProcess.spawn(
      [
        "--port",
        "0",
        "--allow-origin",
        "*",
        "--allow-origin",
        "null",
        "--allow-origin",
        "http://Game.example:80/",
      ],
      { OAM_SCRIPT: scriptPath },
    ).ready();
    await p.logged(/http:\/\/Game/);
    p.child.kill("SIGTERM");
    const { stderr } = await p.exit();
    // Before: not a word, and a page on http://game.example was refused with no hint why.
    assert.match(
      stderr,
      /warning: --allow-origin \* without an API key: any web page open in a browser on this machine can use this server/,
    );
    assert.match(
      stderr,
      /warning: --allow-origin null: sandboxed frames and local files of any site send 'null'/,
    );
    assert.match(
      stderr,
      /warning: --allow-origin http:\/\/Game\.example:80\/ matches no page: a browser sends http:\/\/game\.example/,
    );
    const keyed = await ServeProcess.spawn(
      ["--port", "0", "--allow-origin", "*", "--allow-origin", "http://localhost:5173"],
      { OAM_SCRIPT: scriptPath, OAM_API_KEY: "k" },
    ).ready();
    keyed.child.kill("SIGTERM");
    assert.doesNotMatch((await keyed.exit()).stderr, /warning: --allow-origin/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oam serve --socket: serves over a Unix socket only, mode 0600, Host checked; removed at stop", async () => {
  const dir = await tempDir();
  try {
    const scriptPath = await writeJson(dir, "steps.json", [{ text: "Over the socket." }]);
    const path = `${dir}/oam.sock`;
    const p = await ServeProcess.spawn(["--socket", path], { OAM_SCRIPT: scriptPath }, [
      ...PERMISSIONS.filter((f) => !f.startsWith("--allow-net")),
      `--allow-net=unix:${path}`,
      `--allow-write=${path}`,
    ]).ready();
    assert.ok(p.banner.startsWith(`oam serve listening on unix:${path}  (model: system = scripted`));
    assert.ok(p.banner.includes(`curl --unix-socket ${path} http://localhost/v1/chat/completions`));
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const request = async (host: string) => {
      const conn = await Deno.connect({ transport: "unix", path });
      const body = JSON.stringify({ messages: [{ role: "user", content: "x" }] });
      await conn.write(new TextEncoder().encode(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      ));
      const text = await new Response(conn.readable).text();
      return { status: Number(text.split(" ")[1]), body: text.slice(text.indexOf("\r\n\r\n") + 4) };
    };
    assert.equal((await request("evil.example")).status, 421);
    const ok = await request("localhost");
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.body).choices[0].message.content, "Over the socket.");
    p.child.kill("SIGTERM");
    assert.equal((await p.exit()).code, 0);
    assert.equal(await Deno.stat(path).then(() => "exists", () => "gone"), "gone");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oam serve --socket ./oam.sock: the banner shows the clean absolute path, and its curl works as pasted", async () => {
  const dir = await tempDir();
  try {
    // A folder whose name has a space: the pasted curl must still reach the socket.
    const room = `${dir}/game room`;
    await Deno.mkdir(room);
    const scriptPath = await writeJson(dir, "steps.json", [
      { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
    ]);
    const path = `${room}/oam.sock`;
    const p = await ServeProcess.spawn(
      ["--socket", "./oam.sock"],
      { OAM_SCRIPT: scriptPath },
      [
        ...PERMISSIONS.filter((f) => !f.startsWith("--allow-net")),
        `--allow-net=unix:${path}`,
        `--allow-write=${path}`,
      ],
      room,
    ).ready();
    const lines = p.banner.split("\n");
    assert.equal(lines[0].split("  (model:")[0], `oam serve listening on unix:${path}`);
    // The curl command as printed: from its line to the end of its -d '…' argument, run by sh elsewhere.
    const start = lines.findIndex((line) => line.trimStart().startsWith("curl "));
    const end = lines.findIndex((line, i) => i > start && line.endsWith("}}}]}'"));
    const curl = lines.slice(start, end + 1).join("\n");
    const out = await new Deno.Command("sh", { args: ["-c", curl + " --silent --show-error"], cwd: "/" })
      .output();
    const body = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, `${curl}\n${new TextDecoder().decode(out.stderr)}`);
    assert.equal(JSON.parse(body).choices[0].message.tool_calls[0].function.name, "get_weather", body);
    p.child.kill("SIGTERM");
    assert.equal((await p.exit()).code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oam serve's banner says which browser origins may use /rpc, and the flag when none may", () => {
  const options = {
    host: "127.0.0.1",
    port: 1976,
    socket: null,
    model: "system",
    apiKey: false,
    rpc: true,
    tools: [],
  };
  const none = banner({ ...options, allowedOrigins: [] }).split("\n");
  const at = none.indexOf("bridge protocol over WebSocket: ws://127.0.0.1:1976/rpc");
  assert.equal(
    none[at + 1],
    "  browser pages: none allowed; start with --allow-origin <the page's origin> (e.g. http://localhost:5173)",
  );
  const some = banner({ ...options, allowedOrigins: ["http://127.0.0.1:5173", "http://localhost:5173"] })
    .split("\n");
  assert.equal(
    some[some.indexOf("bridge protocol over WebSocket: ws://127.0.0.1:1976/rpc") + 1],
    "  browser pages allowed from: http://127.0.0.1:5173, http://localhost:5173",
  );
  const any = banner({ ...options, allowedOrigins: ["*"] }).split("\n");
  assert.equal(
    any[any.indexOf("bridge protocol over WebSocket: ws://127.0.0.1:1976/rpc") + 1],
    "  browser pages allowed from: any origin (*)",
  );
});

/** Opens a WebSocket to `url`; resolves with it once open, or with null when the server refused it. */
function openSocket(url: string): Promise<WebSocket | null> {
  const ws = new WebSocket(url);
  return new Promise((resolve) => {
    ws.addEventListener("open", () => resolve(ws));
    ws.addEventListener("error", () => resolve(null));
  });
}

Deno.test("oam serve --max-connections: more game rooms than the default can connect; the refusal names the flag", async () => {
  const p = await ServeProcess.spawn(["--port", "0", "--max-connections", "2", "--log-level", "warning"])
    .ready();
  const url = `ws://127.0.0.1:${p.port}/rpc`;
  const rooms = [await openSocket(url), await openSocket(url)];
  assert.ok(rooms.every((ws) => ws !== null), "two rooms connect");
  assert.equal(await openSocket(url), null, "the third is over the limit");
  await p.logged(/GET \/rpc → 503 .*Too many open bridge connections \(2\)/);
  assert.match(p.stderr, /start the server with a higher --max-connections/);
  for (const ws of rooms) {
    const closed = new Promise((resolve) => ws!.addEventListener("close", resolve));
    ws!.close();
    await closed;
  }
  p.child.kill("SIGTERM");
  assert.equal((await p.exit()).code, 0);
});

Deno.test("oam serve's banner names where the key comes from: $OAM_API_KEY, or the --api-key value", () => {
  const options = {
    host: "127.0.0.1",
    port: 1976,
    socket: null,
    model: "system",
    rpc: true,
    tools: [],
    allowedOrigins: [],
  };
  const fromEnv = banner({ ...options, apiKey: true }).split("\n");
  assert.ok(fromEnv.includes(`    -H "Authorization: Bearer $OAM_API_KEY" \\`), fromEnv.join("\n"));
  // Started with --api-key, a shell's $OAM_API_KEY is empty: the pasted curl would be refused with 401.
  const fromFlag = banner({ ...options, apiKey: true, apiKeyFromFlag: true }).split("\n");
  assert.ok(
    fromFlag.includes(`    -H "Authorization: Bearer <the --api-key value>" \\`),
    fromFlag.join("\n"),
  );
  assert.ok(
    fromFlag.includes(
      `Any OpenAI SDK works: base_url=http://127.0.0.1:1976/v1, api_key=<the --api-key value>, model="system".`,
    ),
  );
});

Deno.test("deno task serve grants OAM_MODEL, as the stdio and playground tasks do: the served model is the one it names, and the help lists it", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url))).tasks;
  const grant = (task: string) => /--allow-env=(\S+)/.exec(tasks[task])?.[1].split(",") ?? [];
  for (const task of ["stdio", "playground", "serve"]) {
    assert.ok(
      grant(task).includes("OAM_MODEL"),
      `deno task ${task}'s --allow-env lacks OAM_MODEL: ${tasks[task]}`,
    );
  }
  const permissions = [
    "--no-prompt",
    "--allow-net=127.0.0.1",
    `--allow-env=${grant("serve").join(",")}`,
    "--allow-read",
  ];
  const p = await ServeProcess.spawn(
    ["--port", "0"],
    { OAM_MODEL: "openai:http://127.0.0.1:9/v1#m" },
    permissions,
  )
    .ready();
  try {
    assert.ok(
      p.banner.startsWith(
        `oam serve listening on http://127.0.0.1:${p.port}/v1  (model: system = http://127.0.0.1:9/v1#m)`,
      ),
      p.banner,
    );
  } finally {
    p.child.kill("SIGTERM");
    await p.exit();
  }
  const { SERVE_HELP } = await import("../../src/cli/serve.ts");
  assert.match(SERVE_HELP, /\n {2}OAM_MODEL=<spec> {8}default for --model \(OAM_SCRIPT wins over it\)\n/);
  assert.match(SERVE_HELP, /--allow-env=OAM_API_KEY,OAM_SCRIPT,OAM_MODEL \(plus OAM_FM_LIBRARY\)/);
});
