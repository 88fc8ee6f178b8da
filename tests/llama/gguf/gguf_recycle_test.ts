/**
 * A game's scene churn on a llama model, bounded: sessions and NPCs are created, talk (streamed), are cancelled
 * mid-turn, reset, compacted and deleted, a few times over. Afterwards the model still has one context whose
 * pool never grew past its configured sequences, with none left leased or waited for, and every request got an
 * answer (cancelled ones `-32009`). Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { createLlamaModel } from "../../../src/models/llama_model.ts";
import {
  closeLlamaModels,
  loadedLlamaContexts,
  openLlamaRuntime,
} from "../../../src/models/llama_runtime.ts";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { WireClient } from "../../helpers/wire.ts";
import { fixtureConfig, GGUF_ENABLED } from "./fixture.ts";

/** A real model on a shared 2-core machine: loading and generating can take seconds under load. */
const SLOW_MS = 120_000;
const CYCLES = 4;

Deno.test({
  name: "gguf: created, cancelled, reset and deleted sessions and NPCs leave no sequence leased",
  ignore: !GGUF_ENABLED,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const config = await fixtureConfig();
    const client = new WireClient({ systemModel: () => createLlamaModel(config) });
    const errors: string[] = [];
    /** Sends a request and waits for its answer; a cancelled one counts as answered. */
    const answer = async (id: string | number): Promise<JsonObject | null> => {
      const response = await client.response(id, SLOW_MS);
      if (!("error" in response)) return response.result as JsonObject;
      const error = response.error as JsonObject;
      if (error.code !== -32009) errors.push(JSON.stringify(error));
      return null;
    };
    const run = (method: string, params: JsonObject) => answer(client.request(method, params));
    /** Starts a streamed turn, cancels it after its first event (or its end), and waits for its answer. */
    const cancelMidTurn = async (method: string, params: JsonObject, cancel: string, key: JsonObject) => {
      const id = client.request(method, { ...params, stream: true });
      await client.waitFor((m) => {
        const p = m.params as JsonObject | undefined;
        return (p !== undefined && p.requestId === id) || (m.id === id && !("method" in m));
      }, SLOW_MS);
      await run(cancel, key);
      await answer(id);
    };
    const leases = async () => {
      const runtime = await openLlamaRuntime(config);
      return {
        contexts: loadedLlamaContexts(),
        sequencesWithinPool: runtime.pool.sequences().length <= config.sequences!,
        busy: runtime.pool.busy,
        waiting: runtime.pool.waiting,
      };
    };
    const idle = { contexts: 1, sequencesWithinPool: true, busy: 0, waiting: 0 };
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const session = { session: "s" };
        await run("session/create", { ...session, instructions: "You are a helpful assistant." });
        const npc = { npc: "gorm" };
        await run("npc/create", {
          ...npc,
          persona: { name: "Gorm", role: "the village blacksmith" },
          options: { replyFormat: "text", toolChoice: "none", compactAfterTurns: 0 },
        });
        // Both at once, so both sequences are in use; then each is cancelled mid-turn.
        const turn = client.request("session/respond", { ...session, prompt: "Hello", stream: true });
        const talk = client.request("npc/talk", { ...npc, line: "Hello", stream: true });
        await Promise.all([answer(turn), answer(talk)]);
        await cancelMidTurn(
          "session/respond",
          { ...session, prompt: "Count to five." },
          "session/cancel",
          session,
        );
        await cancelMidTurn("npc/talk", { ...npc, line: "Count to five." }, "npc/cancel", npc);
        await run("session/respond", { ...session, prompt: "What is the capital of France?" });
        const compact = client.request("session/compact", { ...session, keepRecentTurns: 0 });
        if (cycle % 2 === 1) await run("session/cancel", session);
        await answer(compact);
        await run("session/reset", session);
        await run("npc/reset", { ...npc, clearMemory: true });
        // A scene unloads mid-turn.
        const last = client.request("session/respond", { ...session, prompt: "Hello", stream: true });
        const lastTalk = client.request("npc/talk", { ...npc, line: "Hello", stream: true });
        await run("session/delete", session);
        await run("npc/delete", npc);
        await Promise.all([answer(last), answer(lastTalk)]);
        assert.deepEqual(await leases(), idle, `after cycle ${cycle + 1}`);
      }
      assert.deepEqual(errors, []);
    } finally {
      await client.close();
      await closeLlamaModels();
    }
  },
});
