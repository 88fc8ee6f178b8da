/**
 * Japanese and Chinese take about a token a character, English about a token for every 3–4. The bridge's
 * estimates of how full the context is (history trimming, NPC compaction) must not count a Japanese
 * conversation as a third of its size, or the real model overflows before the bridge trims or summarizes.
 */
import assert from "node:assert/strict";
import { WireClient } from "../helpers/wire.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import type { LanguageModel, StepRequest, StepResult } from "../../src/models/language_model.ts";
import { segmentsText } from "../../src/protocol/transcript.ts";
import { summaryRequest } from "../../src/game/npc/instructions.ts";
import { captureWithContext, NpcClient } from "../game/npc/npc_helpers.ts";
import { Agent } from "../../src/agent/agent.ts";
import { entryText } from "../../src/agent/entry_text.ts";
import { ScriptedModel } from "../../src/models/scripted.ts";
import { estimateTokens } from "../../src/models/system_request.ts";

/** A model that trims history like the system model; it counts a token a character (as for Japanese). */
class JapaneseModel implements LanguageModel {
  readonly kind = "system";
  readonly trimsHistory = true;
  readonly requests: StepRequest[] = [];
  counted = 0;
  constructor(readonly contextSize: number, readonly counts: boolean) {}
  availability() {
    return Promise.resolve({ available: true, contextSize: this.contextSize, supportedLanguages: ["ja"] });
  }
  step(request: StepRequest): Promise<StepResult> {
    this.requests.push({ ...request, history: [...request.history] });
    return Promise.resolve({ kind: "text", text: "はい。", usage: null });
  }
  countTokens?: (request: Omit<StepRequest, "signal">) => Promise<number> = (request) => {
    this.counted += 1;
    let n = (request.instructions ?? "").length + request.prompt.length;
    for (const e of request.history) if (!("toolCalls" in e)) n += segmentsText(e.contents).length;
    return Promise.resolve(n);
  };
}

for (const counts of [true, false]) {
  Deno.test(
    `history trimming: a Japanese conversation past the context is trimmed (${
      counts ? "the model counts tokens" : "estimated, the model cannot count"
    })`,
    async () => {
      const model = new JapaneseModel(4096, counts);
      if (!counts) delete model.countTokens;
      const c = new WireClient({ systemModel: () => model });
      await c.call("session/create", { session: "gen", options: { reservedResponseTokens: 0 } });
      // Five prompts of 1,000 kanji: about 5,000 tokens, past the 4,096-token context.
      for (let i = 0; i < 5; i++) {
        await c.call("session/respond", { session: "gen", prompt: `${i}: ${"鍛冶屋の話".repeat(200)}` });
      }
      const r = await c.call("session/respond", { session: "gen", prompt: "最後に一言。" });
      const trimmed = (r.steps as JsonObject[])[0].trimmedEntries as number;
      assert.ok(trimmed > 0, JSON.stringify(r.steps));
      const seen = model.requests.at(-1)!.history;
      assert.equal(seen.length, 10 - trimmed);
      let tokens = 0;
      for (const e of seen) tokens += segmentsText(e.contents).length;
      assert.ok(tokens <= 4096, `the model was shown ${tokens} characters of kanji`);
      if (counts) assert.ok(model.counted > 0);
      await c.close();
    },
  );
}

Deno.test("NPC compaction: a conversation in Japanese is summarized when it fills the context, as one in English is", async () => {
  // A 3,000-token context: summaries start past half of the 1,976 tokens after the answer's 1,024. Three
  // answers of about 300 tokens each get there, whether 900 letters or 300 kanji.
  for (const long of ["x".repeat(900), "鉄".repeat(300)]) {
    const c = new NpcClient();
    await c.call("npc/create", {
      npc: "gen",
      persona: { name: "Gen" },
      options: { replyFormat: "text", compactAfterTurns: 3, keepRecentTurns: 1 },
      model: captureWithContext(
        3000,
        { text: `[happy] 一 ${long}` },
        { text: `[happy] 二 ${long}` },
        { text: `[happy] 三 ${long}` },
        { text: "三回会った。" },
        { text: "[happy] 四。" },
      ),
    });
    for (const line of ["1", "2", "3", "4"]) await c.call("npc/talk", { npc: "gen", line });
    const reqs = c.models[0].requests;
    assert.equal(reqs[3].prompt, summaryRequest("Gen"), `${long.slice(0, 3)}: ${reqs[3].prompt}`);
    await c.close();
  }
});

/**
 * Plays `turns` mixed-script turns on an agent bounded to 10 entries, checking its kept UTF-8 length against
 * a fresh measure after each turn `measuredAfter` picks; returns the entries the bounds dropped.
 */
async function checkHistoryBytes(turns: number, measuredAfter: (turn: number) => boolean): Promise<number> {
  const agent = new Agent({
    model: new ScriptedModel({ steps: [], fallback: { text: "はい、そうです。🙂" } }),
  });
  agent.maxEntries = 10;
  const policy = { choice: "auto" as const, maxToolRounds: 4, maxToolCalls: 12, enabledTools: null };
  const sink = { event: () => {}, callClientTool: () => Promise.resolve({ output: "", isError: false }) };
  const measure = () => agent.entries.reduce((n, e) => n + new TextEncoder().encode(entryText(e)).length, 0);
  for (let i = 0; i < turns; i++) {
    await agent.runTurn(
      { prompt: `${i} مرحبا 鍛冶屋 Grüße`, schema: null, policy, stream: false },
      sink,
      new AbortController().signal,
    );
    if (measuredAfter(i)) assert.equal(agent.historyBytes(), measure(), `turn ${i}`);
  }
  return agent.droppedEntries;
}

Deno.test("agent: the UTF-8 length it keeps for context estimates follows the history through a bound's cut", async () => {
  assert.ok(await checkHistoryBytes(8, () => true) > 0);
});

Deno.test("agent: the UTF-8 length measured only now and then is right after bounds cut unmeasured entries", async () => {
  // Measured after turns 2, 9 and 15: bounds cut in between, some of what they drop was never measured.
  assert.ok(await checkHistoryBytes(16, (i) => i === 2 || i === 9 || i === 15) > 10);
});

Deno.test("system model: the token estimate used when the plugin cannot count takes a kanji for a token", () => {
  const line = "鍛冶屋のゲンは今日も鉄を打つ。".repeat(20); // 300 characters
  const estimate = estimateTokens({
    instructions: "あなたは村の鍛冶屋です。",
    tools: [],
    toolCallingMode: "allowed",
    history: [{ id: "e1", role: "user", contents: [{ type: "text", id: "s1", text: line }], options: {} }],
    prompt: line,
    responseSchema: null,
    options: {},
    stream: false,
  });
  assert.ok(estimate >= 600, `${estimate} tokens for 612 characters of Japanese`);
});
