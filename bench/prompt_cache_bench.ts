// deno-lint-ignore-file no-console -- a benchmark script prints its report on stdout
/**
 * Prompt-cache benchmark: how many prompt tokens the model evaluates per turn (what its KV cache did not
 * already hold) in six 12-turn scenarios, next to an ideal append-only client sending the same conversation.
 *
 *   deno task bench:cache                                     # both backends, 12 turns
 *   deno run -A --no-lock bench/prompt_cache_bench.ts --backend openai --scenario world,compaction
 *   … --bridge-only                                          # no ideal client (e.g. on an older checkout)
 *   … --verbose                                              # every llama-server request: prompt_n / cache_n
 *
 * Backends: `openai` runs the OpenAI-compatible backend against llama.cpp's `llama-server` of the
 * `test:llama` tier (`scripts/llama/build.sh`; one slot, 4096 tokens) and counts the server's own
 * `timings.prompt_n` of every request; `gguf` runs the in-process GGUF backend on the same fixture model and
 * counts its sequence's evaluated tokens (`usage.inputTokens - cachedInputTokens` per step).
 *
 * Scenarios: a plain session; an NPC with memory tools and a hidden secret whose memory the game changes every
 * third turn; an NPC whose relationship rises by 10 a turn and crosses the secret threshold (50) at turn 5;
 * an NPC reaching `compactAfterTurns` (8; the summary request counts for the bridge); an NPC with a grounding
 * client tool (two steps a turn); an NPC with `worldContextPaths` whose world changes every turn. NPC replies
 * are text (`[emotion] line`): the fixture model rambles inside JSON strings until the token limit.
 *
 * The ideal client gets what the bridge sent, made append-only: the bridge's first instructions and tool
 * list kept for every request, each turn's prompt exactly as the bridge sent it (so the state lines the
 * bridge added are in it too), the same tool choice, sampling and token limit on every step, its own answers
 * and tool calls appended as they came (tool outputs copied from the bridge's turn), and nothing else: no
 * summary requests, nothing dropped or rewritten. Both start from an empty cache. The report gives, per turn,
 * the bridge's and the ideal client's evaluated tokens and their ratio, and the totals of turns 2–12.
 * Goal (issue 18): every ratio from turn 2 on, and the total, at most 1.2.
 */
import { parseArgs } from "node:util";
import { BridgeEngine } from "../src/composition.ts";
import { Agent } from "../src/agent/agent.ts";
import { RESPOND_DIRECTLY } from "../src/agent/step_policy.ts";
import type { AgentTool, ToolChoice, ToolPolicy } from "../src/agent/types.ts";
import type { LanguageModel, StepRequest, StepResult, StepTool } from "../src/models/language_model.ts";
import { createOpenAIModel } from "../src/models/openai_model.ts";
import { createLlamaModel } from "../src/models/llama_model.ts";
import { closeLlamaModels } from "../src/models/llama_runtime.ts";
import type { LlamaModelConfig } from "../src/models/llama_config.ts";
import type { JsonObject, JsonValue } from "../src/protocol/json.ts";
import { segmentsText } from "../src/protocol/transcript.ts";
import { type LlamaServer, startLlamaServer } from "../tests/llama/llama_server.ts";

const { values } = parseArgs({
  args: Deno.args.filter((a) => a !== "--"),
  options: {
    backend: { type: "string", default: "both" },
    turns: { type: "string", default: "12" },
    scenario: { type: "string" },
    json: { type: "string" },
    "bridge-only": { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
  },
});
const TURNS = Number(values.turns);
const MAX_TOKENS = 48;
const backends = values.backend === "both" ? ["openai", "gguf"] : [values.backend!];

// ---- what was evaluated, per request ----

type Who = "bridge" | "ideal";
let phase: { who: Who; turn: number } = { who: "bridge", turn: 0 };

interface StepRecord {
  who: Who;
  turn: number;
  request: Omit<StepRequest, "signal" | "onText" | "onPartial">;
  result: StepResult | null;
  /** Evaluated prompt tokens by the backend's own count (GGUF), or null. */
  evaluated: number | null;
}
interface HttpRecord {
  who: Who;
  turn: number;
  promptN: number;
  cacheN: number;
}
const steps: StepRecord[] = [];
const http: HttpRecord[] = [];

/** Records llama-server's `timings` of every chat completion (the OpenAI backend uses the global fetch). */
const realFetch = globalThis.fetch;
globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
  const at = { ...phase };
  const response = await realFetch(input, init);
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (!url.endsWith("/chat/completions") || !response.ok) return response;
  const body = await response.clone().json().catch(() => null) as JsonObject | null;
  const timings = body?.timings as JsonObject | undefined;
  if (timings) {
    http.push({ ...at, promptN: timings.prompt_n as number, cacheN: timings.cache_n as number });
  }
  return response;
};

/** A model wrapper recording every step with the phase it ran in. */
function recorded(model: LanguageModel): LanguageModel {
  return {
    kind: model.kind,
    get contextSize() {
      return model.contextSize;
    },
    trimsHistory: model.trimsHistory,
    availability: () => model.availability(),
    async step(request) {
      const { signal: _s, onText: _t, onPartial: _p, ...rest } = request;
      const record: StepRecord = { ...phase, request: structuredClone(rest), result: null, evaluated: null };
      steps.push(record);
      const result = await model.step(request);
      record.result = result;
      if (result.usage) record.evaluated = result.usage.inputTokens - result.usage.cachedInputTokens;
      return result;
    },
  };
}

// ---- scenarios ----

type Call = (method: string, params: JsonObject) => Promise<JsonValue>;

interface Scenario {
  name: string;
  /** Creates the session or NPC (model `{"type": "bench"}`). */
  setup(call: Call): Promise<void>;
  /** Runs turn `i` (from 0), with whatever the game changes before it. */
  turn(call: Call, i: number): Promise<void>;
  /** Saves after the last turn (`npc/state`), when there is something to save. */
  save?(call: Call): Promise<void>;
}

const LINES = [
  "Hello",
  "What is the capital of France?",
  "Count to five.",
  "Thank you.",
  "What is the capital of Japan?",
  "Hello again.",
];
const line = (i: number) => LINES[i % LINES.length];
const PERSONA = {
  name: "Gorm",
  role: "the village blacksmith",
  personality: "Gruff but fair; proud of his work.",
  speakingStyle: "Short, plain sentences.",
  secrets: ["He deserted from the king's army."],
};
const NPC_OPTIONS = { replyFormat: "text", temperature: 0, maximumResponseTokens: MAX_TOKENS };

function npcScenario(
  name: string,
  create: JsonObject,
  before: (call: Call, i: number) => Promise<void> = () => Promise.resolve(),
): Scenario {
  return {
    name,
    async setup(call) {
      await call("npc/create", { npc: "gorm", persona: PERSONA, model: { type: "bench" }, ...create });
    },
    async turn(call, i) {
      await before(call, i);
      await call("npc/talk", { npc: "gorm", line: line(i) });
    },
    async save(call) {
      await call("npc/state", { npc: "gorm" });
    },
  };
}

const SCENARIOS: Scenario[] = [
  {
    name: "session",
    async setup(call) {
      await call("session/create", {
        session: "s",
        instructions: "You are a helpful assistant.",
        options: { sampling: "greedy", maxResponseTokens: MAX_TOKENS },
        model: { type: "bench" },
      });
    },
    async turn(call, i) {
      await call("session/respond", { session: "s", prompt: line(i) });
    },
  },
  npcScenario(
    "memory",
    // `auto`: the fixture model cannot complete a forced call to a memory tool (it writes junk until the
    // token limit); the tools are in the prompt all the same.
    { options: { ...NPC_OPTIONS, memoryTools: "all", toolChoice: "auto", compactAfterTurns: 0 } },
    async (call, i) => {
      if (i > 0 && i % 3 === 0) {
        await call("npc/update", {
          npc: "gorm",
          memory: { facts: Array.from({ length: i / 3 }, (_, k) => `The player bought ${k + 1} swords.`) },
        });
      }
    },
  ),
  npcScenario(
    "relationship",
    { options: { ...NPC_OPTIONS, compactAfterTurns: 0 } },
    async (call, i) => {
      if (i > 0) await call("npc/update", { npc: "gorm", memory: { relationship: Math.min(100, 10 * i) } });
    },
  ),
  npcScenario("compaction", { options: { ...NPC_OPTIONS } }),
  {
    // The fixture model completes a forced call of the tool it was trained on, for the lines it was trained on.
    ...npcScenario("grounding", {
      // Two tools: the forced first step may call only the grounding tool, later steps either.
      tools: [{
        name: "get_weather",
        description: "Get the current weather for a city.",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      }, {
        name: "get_time",
        description: "Get the current time in a city.",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      }],
      options: { ...NPC_OPTIONS, groundingTool: "get_weather", compactAfterTurns: 0 },
    }),
    async turn(call, i) {
      const city = ["Oslo", "Berlin", "Tokyo"][i % 3];
      await call("npc/talk", { npc: "gorm", line: `What is the weather in ${city}?` });
    },
  },
  {
    ...npcScenario(
      "world",
      {
        world: "town",
        options: { ...NPC_OPTIONS, worldContextPaths: ["player", "time"], worldReadable: [] },
      },
      async (call, i) => {
        await call("world/set", { world: "town", path: "time.hour", value: 8 + i });
        await call("world/set", { world: "town", path: "player.gold", value: 100 - 7 * i });
      },
    ),
    name: "world",
    async setup(call) {
      await call("world/create", {
        world: "town",
        state: { player: { name: "Aria", gold: 100, level: 3 }, time: { hour: 8, weather: "rain" } },
      });
      await call("npc/create", {
        npc: "gorm",
        persona: PERSONA,
        model: { type: "bench" },
        world: "town",
        options: {
          ...NPC_OPTIONS,
          worldContextPaths: ["player", "time"],
          worldReadable: [],
          compactAfterTurns: 0,
        },
      });
    },
  },
];

// ---- the bridge run ----

async function bridgeRun(scenario: Scenario, makeModel: () => LanguageModel): Promise<void> {
  const send = (text: string) => {
    const message = JSON.parse(text) as JsonObject;
    if (message.method === "tool/call") {
      const output = "Rain, 4 °C.";
      engine.receive(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { output } }));
    }
  };
  const engine: BridgeEngine = new BridgeEngine({
    modelFactory: (spec) => spec.type === "bench" ? recorded(makeModel()) : undefined,
  }, send);
  const call: Call = async (method, params) => await engine.call(method, params);
  phase = { who: "bridge", turn: 0 };
  await scenario.setup(call);
  for (let i = 0; i < TURNS; i++) {
    phase = { who: "bridge", turn: i };
    try {
      await scenario.turn(call, i);
    } catch (error) {
      console.error(`  bridge turn ${i + 1} failed: ${error instanceof Error ? error.message : error}`);
    }
  }
  // The save after the last turn (it may ask for a due summary); reported on its own line.
  phase = { who: "bridge", turn: TURNS };
  await scenario.save?.(call);
  await engine.shutdown();
}

// ---- the ideal client ----

/** The bridge's steps of a turn: the successful attempt (from its first step) up to its answer. */
function turnAttempt(records: StepRecord[]): StepRecord[] {
  const answer = records.findIndex((r) => r.result !== null && r.result.kind !== "toolCalls");
  const upto = answer < 0 ? records : records.slice(0, answer + 1);
  let start = 0;
  upto.forEach((r, i) => {
    if (r.request.prompt !== "") start = i;
  });
  return upto.slice(start);
}

function policyOf(first: StepRecord, offered: StepTool[]): ToolPolicy {
  const callable = first.request.tools.map((t) => t.name);
  const named = offered.filter((t) => t.name !== RESPOND_DIRECTLY);
  let choice: ToolChoice = "auto";
  if (first.request.toolCallingMode === "disallowed") choice = "none";
  else if (first.request.toolCallingMode === "required") {
    if (callable.includes(RESPOND_DIRECTLY)) choice = "explicit";
    else if (callable.length === 1) choice = { tool: callable[0] };
    else choice = "required";
  }
  return {
    choice,
    maxToolRounds: 2,
    maxToolCalls: 6,
    enabledTools: null,
    showRespondDirectly: named.length < offered.length,
  };
}

/** Tool outputs of the bridge's turn, by tool name (what the ideal client's calls get back). */
function outputsOf(attempt: StepRecord[]): Map<string, string> {
  const outputs = new Map<string, string>();
  for (const r of attempt) {
    for (const e of r.request.history) {
      if (e.role === "tool" && !outputs.has(e.toolName)) outputs.set(e.toolName, segmentsText(e.contents));
    }
  }
  return outputs;
}

async function idealRun(makeModel: () => LanguageModel): Promise<void> {
  const bridge = steps.filter((s) => s.who === "bridge");
  const first = bridge[0].request;
  const offered = first.offeredTools ?? first.tools;
  let outputs = new Map<string, string>();
  const tools: AgentTool[] = offered.filter((t) => t.name !== RESPOND_DIRECTLY).map((t) => ({
    name: t.name,
    description: t.description,
    jsonSchema: t.jsonSchema,
    generationSchema: t.parameters,
    execution: "local",
    timeoutMs: null,
    run: () => ({ output: outputs.get(t.name) ?? "OK", isError: false }),
  }));
  const agent = new Agent({
    model: recorded(makeModel()),
    instructions: first.instructions,
    tools,
    settings: { maxAttempts: 1, trimHistory: false },
  });
  const sink = { event: () => {}, callClientTool: () => Promise.resolve({ output: "OK", isError: false }) };
  for (let i = 0; i < TURNS; i++) {
    const attempt = turnAttempt(bridge.filter((s) => s.turn === i));
    if (attempt.length === 0) continue;
    phase = { who: "ideal", turn: i };
    outputs = outputsOf(attempt);
    const start = attempt[0].request;
    agent.settings = { ...agent.settings, options: start.options };
    try {
      await agent.runTurn(
        {
          prompt: start.prompt,
          schema: start.responseSchema,
          policy: policyOf(attempt[0], offered),
          stream: false,
        },
        sink,
        new AbortController().signal,
      );
    } catch (error) {
      console.error(`  ideal turn ${i + 1} failed: ${error instanceof Error ? error.message : error}`);
    }
  }
}

// ---- backends ----

interface Backend {
  makeModel(): LanguageModel;
  /** Empties the model's cache (both runs start cold). */
  reset(): Promise<void>;
  /** Evaluated tokens of `who` in turn `turn`. */
  evaluated(who: Who, turn: number): number;
  close(): Promise<void>;
}

async function openaiBackend(): Promise<Backend> {
  // `--cache-ram 0`: only the slot's own KV cache counts (no prompt states kept in RAM across requests), so
  // both runs start cold and a miss shows.
  const server: LlamaServer = await startLlamaServer({
    slots: 1,
    contextSize: 4096,
    extraArgs: ["--cache-ram", "0"],
  });
  return {
    makeModel: () => createOpenAIModel({ baseURL: server.baseURL, model: "tiny-chat" }),
    async reset() {
      // Replaces the slot's cache with an unrelated prompt (only the chat template's first tokens are shared).
      const r = await realFetch(`${server.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          model: "tiny-chat",
          messages: [{ role: "user", content: "Count to five." }],
          max_tokens: 1,
        }),
      });
      await r.body?.cancel();
      if (!r.ok) throw new Error(`resetting the cache failed: HTTP ${r.status}`);
    },
    evaluated: (who, turn) =>
      http.filter((h) => h.who === who && h.turn === turn).reduce((n, h) => n + h.promptN, 0),
    close: () => server.stop(),
  };
}

async function fixturePath(): Promise<string> {
  const dir = `${Deno.env.get("HOME") ?? "."}/.cache/oam-gguf-tests`;
  const path = `${dir}/tiny-chat.gguf`;
  try {
    await Deno.stat(path);
    return path;
  } catch {
    await Deno.mkdir(dir, { recursive: true });
    const gz = new URL("../../shared/models/tiny-chat.gguf.gz", import.meta.url).pathname;
    const input = await Deno.open(gz, { read: true });
    const output = await Deno.open(`${path}.tmp`, { write: true, create: true, truncate: true });
    await input.readable.pipeThrough(new DecompressionStream("gzip")).pipeTo(output.writable);
    await Deno.rename(`${path}.tmp`, path);
    return path;
  }
}

async function ggufBackend(): Promise<Backend> {
  const config: LlamaModelConfig = {
    path: await fixturePath(),
    gpu: false,
    threads: 2,
    contextSize: 4096,
    sequences: 2,
  };
  return {
    makeModel: () => createLlamaModel(config),
    reset: () => closeLlamaModels(),
    evaluated: (who, turn) =>
      steps.filter((s) => s.who === who && s.turn === turn).reduce((n, s) => n + (s.evaluated ?? 0), 0),
    close: () => closeLlamaModels(),
  };
}

// ---- report ----

interface Row {
  turn: number;
  bridge: number;
  ideal: number;
  requests: number;
}

function ratio(a: number, b: number): number {
  return b === 0 ? (a === 0 ? 1 : Infinity) : a / b;
}

function report(backend: string, scenario: string, rows: Row[], save: Row): JsonObject {
  console.log(`\n${backend} · ${scenario}`);
  console.log("turn  bridge  ideal  ratio  (bridge requests)");
  for (const r of rows) {
    console.log(
      `${String(r.turn).padStart(4)}  ${String(r.bridge).padStart(6)}  ${String(r.ideal).padStart(5)}  ${
        ratio(r.bridge, r.ideal).toFixed(2).padStart(5)
      }  (${r.requests})`,
    );
  }
  const later = rows.filter((r) => r.turn >= 2);
  const bridge = later.reduce((n, r) => n + r.bridge, 0);
  const ideal = later.reduce((n, r) => n + r.ideal, 0);
  const worst = later.reduce((m, r) => Math.max(m, ratio(r.bridge, r.ideal)), 0);
  console.log(
    `turns 2-${TURNS}: ${bridge} vs ${ideal} tokens (×${ratio(bridge, ideal).toFixed(2)}); worst turn ×${
      worst.toFixed(2)
    }`,
  );
  if (save.requests > 0) {
    console.log(`save after turn ${TURNS} (npc/state): ${save.bridge} tokens in ${save.requests} request(s)`);
  }
  return {
    backend,
    scenario,
    rows: rows as unknown as JsonValue,
    bridge,
    ideal,
    total: ratio(bridge, ideal),
    worst,
    save: save as unknown as JsonValue,
  };
}

const wanted = values.scenario?.split(",");
const results: JsonObject[] = [];
for (const name of backends) {
  const backend = name === "openai" ? await openaiBackend() : await ggufBackend();
  try {
    for (const scenario of SCENARIOS.filter((s) => !wanted || wanted.includes(s.name))) {
      steps.length = 0;
      http.length = 0;
      await backend.reset();
      await bridgeRun(scenario, backend.makeModel);
      await backend.reset();
      if (!values["bridge-only"]) await idealRun(backend.makeModel);
      const rows: Row[] = [];
      for (let i = 0; i < TURNS; i++) {
        const requests = name === "openai"
          ? http.filter((h) => h.who === "bridge" && h.turn === i).length
          : steps.filter((s) => s.who === "bridge" && s.turn === i).length;
        rows.push({
          turn: i + 1,
          bridge: backend.evaluated("bridge", i),
          ideal: backend.evaluated("ideal", i),
          requests,
        });
      }
      const saved = name === "openai"
        ? http.filter((h) => h.who === "bridge" && h.turn === TURNS).length
        : steps.filter((s) => s.who === "bridge" && s.turn === TURNS).length;
      const save = { turn: TURNS + 1, bridge: backend.evaluated("bridge", TURNS), ideal: 0, requests: saved };
      results.push(report(name, scenario.name, rows, save));
      if (values.verbose && name === "openai") {
        for (const h of http) {
          console.log(`  ${h.who} turn ${h.turn + 1}: prompt_n ${h.promptN}, cache_n ${h.cacheN}`);
        }
      }
    }
  } finally {
    await backend.close();
  }
}
if (values.json) await Deno.writeTextFile(values.json, JSON.stringify(results, null, 2));
