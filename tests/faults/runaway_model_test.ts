/**
 * A model that keeps calling tools after the turn disabled them (a scripted `fallback` of tool calls, or a
 * backend that ignores the tool-calling mode) must not hang the bridge. Found by the fuzzer: once the tool
 * budget was used up every further round completed in microtasks only, so the turn looped forever and
 * starved the event loop (no timer, no stdin read, memory growing). Now the turn fails with
 * `-32012 generation_failed` and everything else keeps working. Runs against the real process so that a
 * regression fails on a deadline instead of hanging the test runner.
 */
import assert from "node:assert/strict";
import { BridgeProcess, errorOf } from "../helpers/process.ts";

const DISABLED = "The model kept calling tools after tools were disabled for this turn.";

const loopModel = (name: string) => ({
  type: "scripted",
  steps: [],
  fallback: { toolCalls: [{ name, arguments: {} }] },
});

Deno.test("runaway tool calls end the turn with generation_failed; the bridge keeps serving", async () => {
  const p = new BridgeProcess();
  try {
    // 1. a client tool: 12 calls (maxToolCalls) reach the engine, then budget errors, then the turn fails
    await p.request(1, "session/create", {
      session: "loop",
      tools: [{ name: "look", description: "Looks." }],
      options: { maxToolRounds: 1000 },
      model: loopModel("look"),
    });
    await p.request(2, "session/respond", { session: "loop", prompt: "x" });
    let answered = 0;
    await p.until(
      () => {
        const calls = p.messages.filter((m) => m.method === "tool/call");
        for (; answered < calls.length; answered++) {
          p.send({ id: calls[answered].id as string, result: { output: "a room" } });
        }
        return p.messages.some((m) => m.id === 2 && !("method" in m));
      },
      15_000,
      "the runaway turn to end",
    );
    const e = errorOf(await p.response(2));
    assert.deepEqual(e, { code: -32012, message: DISABLED, data: { code: "generation_failed" } });
    assert.equal(p.messages.filter((m) => m.method === "tool/call").length, 12);

    // 2. an unknown tool never reaches the client and never counts against maxToolCalls: the step limit
    await p.request(3, "session/create", {
      session: "fly",
      tools: [{ name: "look", description: "Looks." }],
      options: { maxToolRounds: 100000, maxToolCalls: 100000 },
      model: loopModel("fly"),
    });
    await p.request(4, "session/respond", { session: "fly", prompt: "x" });
    assert.deepEqual(errorOf(await p.response(4)), {
      code: -32012,
      message: "The turn reached the limit of 256 model steps.",
      data: { code: "generation_failed" },
    });
    assert.equal(p.messages.filter((m) => m.method === "tool/call").length, 12);

    // 3. the decision and content paths (the fuzzer's original case) and an NPC with a local world tool
    const tools = [{ name: "look", description: "Looks." }];
    await p.request(5, "decision/decide", {
      situation: "x",
      options: ["a", "b"],
      tools,
      model: loopModel("look"),
    });
    await p.request(6, "content/generate", {
      prompt: "x",
      schema: { type: "object", properties: { a: { type: "string" } } },
      model: loopModel("nope"),
    });
    await p.request(7, "world/create", { world: "w", state: { a: 1 } });
    await p.request(8, "npc/create", {
      npc: "n",
      persona: { name: "N" },
      world: "w",
      options: { replyFormat: "text", toolChoice: "auto", maxToolRounds: 100000, maxToolCalls: 100000 },
      model: loopModel("read_world_state"),
    });
    await p.request(9, "npc/talk", { npc: "n", line: "hi" });
    answered = p.messages.filter((m) => m.method === "tool/call").length;
    await p.until(
      () => {
        const calls = p.messages.filter((m) => m.method === "tool/call");
        for (; answered < calls.length; answered++) {
          p.send({ id: calls[answered].id as string, result: { output: "seen" } });
        }
        return [5, 6, 9].every((id) => p.messages.some((m) => m.id === id && !("method" in m)));
      },
      15_000,
      "the decision, content and NPC turns to end",
    );
    const steps = "The turn reached the limit of 256 model steps.";
    for (const [id, message] of [[5, DISABLED], [6, DISABLED], [9, steps]] as const) {
      assert.deepEqual(errorOf(await p.response(id)), {
        code: -32012,
        message,
        data: { code: "generation_failed" },
      });
    }
    await p.request(10, "ping");
    assert.deepEqual(await p.response(10), { jsonrpc: "2.0", id: 10, result: {} });
    await p.closeInput();
    assert.equal(await p.exit(10_000), 0);
  } finally {
    await p.kill();
  }
});
