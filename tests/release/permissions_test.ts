/**
 * Least privilege (issue #7): `cli.ts stdio` runs with exactly the permissions each mode needs, and
 * `--no-prompt` so a missing one can never turn into an interactive prompt on the protocol stream:
 *
 * | Mode | Flags |
 * |---|---|
 * | scripted / engine only | none |
 * | on-device plugin named by OAM_FM_LIBRARY | `--allow-env=OAM_FM_LIBRARY --allow-ffi` |
 * | OAM_SCRIPT | `--allow-env=OAM_SCRIPT --allow-read=<script>` |
 * | OpenAI-compatible backend | `--allow-net=<host:port>` |
 *
 * `--allow-ffi` cannot be scoped to the plugin's path: Deno lets a path-scoped grant open the library, but
 * its pointer functions (which read the plugin's results) need the unscoped permission. With a scoped grant
 * the bridge used to crash on the first poll; now the model reports itself unavailable and says why. No mode
 * needs write access, and only the OpenAI mode needs the network.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { requireDouble } from "../ffi/double.ts";
import { BridgeProcess } from "../helpers/process.ts";
import { completion, json, MockServer } from "../models/openai_mock_server.ts";

/** The flags recommended for the `stdio` and `compile` tasks. */
export const TASK_FLAGS = [
  "--no-prompt",
  "--allow-env=OAM_FM_LIBRARY,OAM_SCRIPT,OAM_MODEL,OAM_EXIT_WITH_PARENT",
  "--allow-read",
  "--allow-ffi",
];

/** Runs a full exchange; returns the availability and the text of a turn on the default ("system") model. */
async function exchange(p: BridgeProcess): Promise<{ availability: JsonObject; system: JsonObject }> {
  await p.request(1, "initialize", { client: { name: "perm" }, protocolVersion: "1.0" });
  await p.request(2, "model/availability");
  await p.request(3, "session/create", {
    session: "guard",
    tools: [{ name: "open_gate", description: "Opens a gate." }],
    model: {
      type: "scripted",
      steps: [{ toolCalls: [{ name: "open_gate" }] }, { template: "{toolOutput}" }],
    },
  });
  await p.request(4, "session/respond", { session: "guard", prompt: "open", stream: true });
  const call = await p.toolCall(1);
  await p.send({ id: call.id as string, result: { output: "opened" } });
  assert.equal(((await p.response(4)).result as JsonObject).text, "opened");
  await p.request(5, "world/create", { world: "w", state: { gold: 1 } });
  await p.request(6, "npc/create", {
    npc: "n",
    persona: { name: "N" },
    world: "w",
    options: { replyFormat: "text", toolChoice: "auto", worldWritable: ["gold"] },
    model: {
      type: "scripted",
      steps: [{ toolCalls: [{ name: "update_world_state", arguments: { path: "gold", value: "2" } }] }, {
        text: "[happy] Done.",
      }],
    },
  });
  await p.request(7, "npc/talk", { npc: "n", line: "pay" });
  assert.equal(((await p.response(7)).result as JsonObject).line, "Done.");
  await p.request(8, "session/create", { session: "sys" });
  await p.request(9, "session/respond", { session: "sys", prompt: "hello" });
  const availability = (await p.response(2)).result as JsonObject;
  const system = await p.response(9);
  await p.closeInput();
  assert.equal(await p.exit(10_000), 0);
  return { availability, system };
}

const linux = Deno.build.os === "linux";

Deno.test("no permissions at all: every method works, the system model is unavailable, no prompt", async () => {
  const p = new BridgeProcess([], { flags: ["--no-prompt"] });
  try {
    const r = await exchange(p);
    assert.equal(r.availability.available, false);
    assert.equal(((r.system.error as JsonObject).data as JsonObject).code, "model_unavailable");
    assert.equal(p.stderr, "");
  } finally {
    await p.kill();
  }
});

Deno.test({
  name: "plugin via OAM_FM_LIBRARY: --allow-env=OAM_FM_LIBRARY --allow-ffi is enough (no read)",
  ignore: !linux,
  fn: async () => {
    const double = requireDouble();
    const p = new BridgeProcess([], {
      flags: ["--no-prompt", "--allow-env=OAM_FM_LIBRARY", "--allow-ffi"],
      env: { OAM_FM_LIBRARY: double },
    });
    try {
      const r = await exchange(p);
      assert.equal(r.availability.available, true);
      assert.equal(typeof ((r.system.result as JsonObject).text), "string");
      assert.equal(p.stderr, "");
    } finally {
      await p.kill();
    }
  },
});

Deno.test({
  name: "a path-scoped --allow-ffi: the plugin is not used, the detail says why, the bridge does not crash",
  ignore: !linux,
  fn: async () => {
    const double = requireDouble();
    for (const scope of [double, "/nonexistent"]) {
      const p = new BridgeProcess([], {
        flags: ["--no-prompt", "--allow-env=OAM_FM_LIBRARY", `--allow-ffi=${scope}`],
        env: { OAM_FM_LIBRARY: double },
      });
      try {
        const r = await exchange(p);
        assert.equal(
          r.availability.detail,
          scope === double
            ? `Loading the plugin library '${double}' needs --allow-ffi without a path: Deno's pointer ` +
              `functions, which read the plugin's results, are not path-scoped.`
            : `Loading the plugin library '${double}' needs --allow-ffi.`,
        );
        assert.equal(((r.system.error as JsonObject).data as JsonObject).code, "model_unavailable");
        assert.equal(p.stderr, "");
      } finally {
        await p.kill();
      }
    }
  },
});

Deno.test("OAM_SCRIPT: --allow-env=OAM_SCRIPT --allow-read=<script>; without the read grant a clear start-up error", async () => {
  const dir = await Deno.makeTempDir();
  const script = `${dir}/script.json`;
  await Deno.writeTextFile(script, JSON.stringify([{ text: "From the script." }]));
  try {
    const p = new BridgeProcess([], {
      flags: ["--no-prompt", "--allow-env=OAM_SCRIPT", `--allow-read=${script}`],
      env: { OAM_SCRIPT: script },
    });
    try {
      const r = await exchange(p);
      assert.equal((r.system.result as JsonObject).text, "From the script.");
    } finally {
      await p.kill();
    }
    const q = new BridgeProcess([], {
      flags: ["--no-prompt", "--allow-env=OAM_SCRIPT"],
      env: { OAM_SCRIPT: script },
    });
    try {
      assert.equal(await q.exit(10_000), 2);
      assert.match(q.stderr, /OAM_SCRIPT=.*script\.json needs --allow-read=.*script\.json/);
    } finally {
      await q.kill();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("OpenAI-compatible backend: --allow-net=<host:port> and nothing else", async () => {
  const server = new MockServer(() => json(completion("Hello from the server.")));
  try {
    const port = new URL(server.baseURL).port;
    const p = new BridgeProcess(["--model", `openai:${server.baseURL}#m`], {
      flags: ["--no-prompt", `--allow-net=127.0.0.1:${port}`],
    });
    try {
      const r = await exchange(p);
      assert.equal((r.system.result as JsonObject).text, "Hello from the server.");
      assert.equal(p.stderr, "");
    } finally {
      await p.kill();
    }
  } finally {
    await server.close();
  }
});

Deno.test("the recommended task flags run the bridge", async () => {
  const p = new BridgeProcess([], { flags: TASK_FLAGS });
  try {
    const r = await exchange(p);
    assert.equal(r.availability.available, false);
    assert.equal(p.stderr, "");
  } finally {
    await p.kill();
  }
});

Deno.test("the compile tasks bake the stdio task's flags, so the binary reads the variables its help lists", () => {
  const tasks = JSON.parse(Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)))
    .tasks as Record<
      string,
      string
    >;
  const words = (task: string) => task.split(" ");
  assert.deepEqual(words(tasks.stdio).filter((w) => TASK_FLAGS.includes(w)), TASK_FLAGS);
  for (const name of ["compile", "compile:mac"]) {
    // What follows `scripts/compile.ts` is passed to `deno compile`: the flags baked into the binary.
    const baked = words(tasks[name].slice(tasks[name].indexOf("scripts/compile.ts")));
    for (const flag of TASK_FLAGS) assert.ok(baked.includes(flag), `${name} bakes ${flag}`);
  }
});

Deno.test("with the recommended flags, OAM_MODEL naming a server is read: its turn says the network grant is missing", async () => {
  const p = new BridgeProcess([], {
    flags: TASK_FLAGS,
    env: { OAM_MODEL: "openai:http://127.0.0.1:8080/v1#m" },
  });
  try {
    await p.request(1, "session/create", { session: "a" });
    await p.request(2, "session/respond", { session: "a", prompt: "Hello" });
    const error = (await p.response(2)).error as JsonObject;
    assert.equal((error.data as JsonObject).code, "model_unavailable");
    // In the repository the advice names the task that grants this machine; elsewhere the --allow-net grant.
    assert.match(
      String(error.message),
      /no network access to 127\.0\.0\.1:8080: .*(deno task stdio:local|--allow-net=127\.0\.0\.1:8080)/,
    );
  } finally {
    await p.kill();
  }
});
