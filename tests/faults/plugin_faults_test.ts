/**
 * The native plugin failing or missing (issue #7), through the real process: OAM_FM_LIBRARY naming a
 * missing file, a file that is not a library, no --allow-ffi, and the C test double reporting the model
 * unavailable, failing a step, or hanging in a step (a stuck engine: cancel and SIGTERM still work). Every
 * other method keeps working.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { requireDouble } from "../ffi/double.ts";
import { BridgeProcess } from "../helpers/process.ts";

async function systemTurn(
  p: BridgeProcess,
): Promise<{ availability: JsonObject; create: JsonObject; turn: JsonObject }> {
  await p.request(1, "model/availability");
  const availability = (await p.response(1)).result as JsonObject;
  await p.request(2, "session/create", { session: "s" });
  const create = (await p.response(2)).result as JsonObject;
  await p.request(3, "session/respond", { session: "s", prompt: "hi" });
  const turn = (await p.response(3)).error as JsonObject;
  // Everything else still works.
  await p.request(4, "session/create", {
    session: "x",
    model: { type: "scripted", steps: [{ text: "ok" }] },
  });
  await p.request(5, "session/respond", { session: "x", prompt: "hi" });
  assert.equal(((await p.response(5)).result as JsonObject).text, "ok");
  return { availability, create, turn };
}

function unavailable(reason: string, detail?: string) {
  const message = `The system model is unavailable (${reason}).${detail ? ` ${detail}` : ""}`;
  return { code: -32001, message, data: { code: "model_unavailable", reason } };
}

const WARNING = (reason: string, detail?: string) =>
  `The system model is unavailable (${reason}); turns will fail with model_unavailable until it is ready.${
    detail ? ` ${detail}${/[.!?]$/.test(detail) ? "" : "."}` : ""
  }`;

const linux = Deno.build.os === "linux";

Deno.test({
  name: "OAM_FM_LIBRARY at a missing file or a non-library file: unavailable with the load error",
  ignore: !linux,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    const text = `${dir}/notlib.so`;
    await Deno.writeTextFile(text, "not a library\n");
    try {
      for (
        const [path, why] of [[`${dir}/missing.so`, "No such file or directory"], [text, "file too short"]]
      ) {
        const p = new BridgeProcess([], { env: { OAM_FM_LIBRARY: path } });
        try {
          const r = await systemTurn(p);
          const detail = r.availability.detail as string;
          assert.match(detail, new RegExp(`^Could not load the plugin library '${path}': .*${why}$`));
          assert.deepEqual(r.availability, {
            available: false,
            reason: "device_not_eligible",
            contextSize: 4096,
            supportedLanguages: [],
            detail,
          });
          assert.deepEqual(r.create, { session: "s", warnings: [WARNING("device_not_eligible", detail)] });
          assert.deepEqual(r.turn, unavailable("device_not_eligible", detail));
          await p.closeInput();
          assert.equal(await p.exit(), 0);
          assert.equal(p.stderr, "");
        } finally {
          await p.kill();
        }
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "the double without --allow-ffi: unavailable, the load error names the missing permission",
  ignore: !linux,
  fn: async () => {
    const double = requireDouble();
    const p = new BridgeProcess([], {
      flags: ["--allow-read", "--allow-env"],
      env: { OAM_FM_LIBRARY: double },
    });
    try {
      const r = await systemTurn(p);
      const detail = `Loading the plugin library '${double}' needs --allow-ffi.`;
      assert.equal(r.availability.detail, detail);
      assert.deepEqual(r.create, { session: "s", warnings: [WARNING("device_not_eligible", detail)] });
      assert.deepEqual(r.turn, unavailable("device_not_eligible", detail));
    } finally {
      await p.kill();
    }
  },
});

Deno.test({
  name: "the double reporting model_not_ready, then failing a step with a guardrail error",
  ignore: !linux,
  fn: async () => {
    const double = requireDouble();
    const notReady = JSON.stringify({ availability: { available: false, reason: "model_not_ready" } });
    const p = new BridgeProcess([], { env: { OAM_FM_LIBRARY: double, OAM_FM_DOUBLE: notReady } });
    try {
      const r = await systemTurn(p);
      assert.deepEqual(r.availability, {
        available: false,
        reason: "model_not_ready",
        contextSize: 4096,
        supportedLanguages: [],
      });
      assert.deepEqual(r.create, { session: "s", warnings: [WARNING("model_not_ready")] });
      assert.deepEqual(r.turn, unavailable("model_not_ready"));
    } finally {
      await p.kill();
    }
    const failing = JSON.stringify({
      steps: [{ error: { code: "guardrail_violation", message: "Blocked." } }],
    });
    const q = new BridgeProcess([], { env: { OAM_FM_LIBRARY: double, OAM_FM_DOUBLE: failing } });
    try {
      const r = await systemTurn(q);
      assert.equal(r.availability.available, true);
      assert.deepEqual(r.create, { session: "s", warnings: [] });
      assert.deepEqual(r.turn, { code: -32002, message: "Blocked.", data: { code: "guardrail_violation" } });
    } finally {
      await q.kill();
    }
  },
});

Deno.test({
  name: "a step that hangs in the plugin: other requests are served, session/cancel and SIGTERM end it",
  ignore: !linux,
  fn: async () => {
    const double = requireDouble();
    const hang = JSON.stringify({ steps: [{ hang: true }, { hang: true }] });
    const p = new BridgeProcess([], { env: { OAM_FM_LIBRARY: double, OAM_FM_DOUBLE: hang } });
    try {
      await p.request(1, "session/create", { session: "a" });
      await p.response(1);
      await p.request(2, "session/create", { session: "b" });
      await p.response(2);
      await p.request(3, "session/respond", { session: "a", prompt: "hi", stream: true });
      await p.request(4, "session/respond", { session: "b", prompt: "hi", stream: true });
      // Both turns are in their (hanging) model step.
      for (const id of [3, 4]) {
        await p.waitFor((m) => m.method === "session/event" && (m.params as JsonObject).requestId === id);
      }
      await p.request(5, "ping");
      assert.deepEqual(await p.response(5), { jsonrpc: "2.0", id: 5, result: {} });
      await p.request(6, "session/cancel", { session: "a" });
      assert.deepEqual((await p.response(6)).result, { session: "a", cancelled: 1 });
      assert.deepEqual((await p.response(3, 3000)).error, {
        code: -32009,
        message: "The turn was cancelled.",
        data: { code: "cancelled" },
      });
      p.child.kill("SIGTERM");
      assert.equal(await p.exit(), 0); // the step in b hangs forever: the deadline fails a wait for it
      assert.equal(((await p.response(4)).error as JsonObject).code, -32009);
    } finally {
      await p.kill();
    }
  },
});
