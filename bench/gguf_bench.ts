/**
 * The llama backend against node-llama-cpp's own `LlamaChatSession` driven directly, on the same GGUF file:
 * a 12-turn session (`session/respond`) and a 12-turn NPC dialogue (`npc/talk`; text replies, or structured
 * ones under a JSON-Schema grammar with `--structured` on a model that can write them). The bridge runs in-process (`BridgeEngine`), so the comparison is the bridge's work
 * per turn plus its prompt rendering, not a pipe.
 *
 *   deno task bench:gguf                                  # the fixture model, 3 repeats
 *   deno run --no-lock -A bench/gguf_bench.ts --model path/to/model.gguf --repeats 5 --threads 4
 *   deno task bench:gguf --rss --turns 300                # the bridge process's memory over long runs
 *
 * `--rss` instead drives the real `cli.ts stdio --model gguf:…` process for `--turns` turns per phase and reads
 * its VmRSS every `--every` turns (see `gguf_rss.ts`).
 *
 * The direct baseline gets exactly the messages the bridge gave the model: every step the bridge runs is
 * recorded (instructions, prompt, response schema) and replayed, right after the bridge's turn (so both see
 * the same machine load), into a `LlamaChatSession` with the same system prompt, chat template, grammar,
 * sampling (greedy) and token limit. Per turn it prints the median
 * latency of both and the prompt tokens each evaluated (the sequence's token meter: what the KV cache did not
 * already hold), then the ratios bridge ÷ direct. NPC compaction is off (`compactAfterTurns: 0`) and the NPC
 * has no tools, so every talk is one model step.
 */
// deno-lint-ignore-file no-console
import { parseArgs } from "node:util";
import { BridgeEngine } from "../engine.ts";
import type { LanguageModel, StepRequest } from "../src/models/language_model.ts";
import type { LlamaContextSequence } from "../src/models/llama_api.ts";
import type { LlamaModelConfig } from "../src/models/llama_config.ts";
import { createLlamaModel } from "../src/models/llama_model.ts";
import { closeLlamaModels, openLlamaRuntime } from "../src/models/llama_runtime.ts";
import { responseGrammarPlan } from "../src/models/llama_schema.ts";
import type { JsonObject } from "../src/protocol/json.ts";
import { runRssBench } from "./gguf_rss.ts";

const { values } = parseArgs({
  args: Deno.args.filter((a) => a !== "--"),
  options: {
    model: { type: "string" },
    repeats: { type: "string", default: "3" },
    threads: { type: "string", default: "1" },
    turns: { type: "string", default: "12" },
    structured: { type: "boolean", default: false },
    rss: { type: "boolean", default: false },
    every: { type: "string", default: "25" },
    reset: { type: "string", default: "20" },
    phases: { type: "string", default: "respond,talk,sessions,npcs,schemas" },
  },
});
const REPEATS = Number(values.repeats);
const TURNS = Number(values.turns);
const MAX_TOKENS = 48;

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

const config: LlamaModelConfig = {
  path: values.model ?? await fixturePath(),
  gpu: false,
  threads: Number(values.threads),
  contextSize: 4096,
  sequences: 2,
};

const SESSION_LINES = [
  "Hello",
  "What is the capital of France?",
  "Count to five.",
  "What is the weather in Oslo?",
  "Thank you.",
  "What is the capital of Japan?",
];
// Lines the fixture model was trained on (it answers them with text rather than a stray tool call).
const NPC_LINES = [
  "Hello",
  "What is the capital of France?",
  "Count to five.",
  "Thank you.",
  "What is the capital of Japan?",
  "Hello",
];
const line = (lines: string[], i: number) => lines[i % lines.length];

interface Turn {
  /** Wall time of the turn. */
  ms: number;
  /** Prompt tokens evaluated (not served from the KV cache). */
  evaluated: number;
  /** Tokens generated. */
  output: number;
}

/** The steps the bridge ran: the requests (replayed by the direct baseline) and their durations. */
interface StepLog {
  requests: StepRequest[];
  stepMs: number[];
}

/** A model wrapper recording the requests the bridge makes and how long each step took. */
function recording(model: LanguageModel, log: StepLog): LanguageModel {
  return {
    kind: model.kind,
    get contextSize() {
      return model.contextSize;
    },
    trimsHistory: model.trimsHistory,
    availability: () => model.availability(),
    async step(request) {
      log.requests.push(request);
      const started = performance.now();
      try {
        return await model.step(request);
      } finally {
        log.stepMs.push(performance.now() - started);
      }
    },
  };
}

function turnOf(started: number, usage: JsonObject): Turn {
  return {
    ms: performance.now() - started,
    evaluated: (usage.inputTokens as number) - (usage.cachedInputTokens as number),
    output: usage.outputTokens as number,
  };
}

/** A scenario: sets up the bridge side and returns a function running turn `i` through it. */
type Scenario = (log: StepLog) => Promise<{ turn(i: number): Promise<JsonObject>; close(): Promise<void> }>;

const sessionScenario: Scenario = async (log) => {
  const engine = new BridgeEngine({ systemModel: () => recording(createLlamaModel(config), log) });
  await engine.call("session/create", {
    session: "s",
    instructions: "You are a helpful assistant.",
    options: { sampling: "greedy", maxResponseTokens: MAX_TOKENS },
  });
  return {
    turn: async (i) =>
      (await engine.call("session/respond", { session: "s", prompt: line(SESSION_LINES, i) }) as JsonObject)
        .usage as JsonObject,
    close: () => engine.shutdown(),
  };
};

const npcScenario: Scenario = async (log) => {
  const engine = new BridgeEngine({ systemModel: () => recording(createLlamaModel(config), log) });
  await engine.call("npc/create", {
    npc: "gorm",
    persona: {
      name: "Gorm",
      role: "the village blacksmith",
      personality: "Gruff but fair; proud of his work.",
      speakingStyle: "Short, plain sentences.",
    },
    options: {
      // Text replies: the fixture model rambles inside JSON strings until any token limit cuts the JSON off,
      // so structured replies cannot be timed on it (they are tested in tests/llama/gguf/).
      replyFormat: values.structured ? "structured" : "text",
      toolChoice: "none",
      compactAfterTurns: 0,
      maximumResponseTokens: MAX_TOKENS,
    },
  });
  return {
    turn: async (i) =>
      (await engine.call("npc/talk", { npc: "gorm", line: line(NPC_LINES, i) }) as JsonObject)
        .usage as JsonObject,
    close: () => engine.shutdown(),
  };
};

/** node-llama-cpp's LlamaChatSession on its own sequence, replaying the bridge's requests. */
async function directSession(instructions: string | null) {
  const runtime = await openLlamaRuntime(config);
  const context = await runtime.model.createContext({
    contextSize: 4096,
    sequences: 1,
    threads: config.threads,
  });
  const sequence: LlamaContextSequence = context.getSequence();
  const session = new runtime.module.LlamaChatSession({
    contextSequence: sequence,
    chatWrapper: runtime.chatWrapper,
    ...(instructions ? { systemPrompt: instructions } : {}),
  });
  return {
    async replay(request: StepRequest): Promise<Turn> {
      const before = sequence.tokenMeter.usedInputTokens;
      const outputBefore = sequence.tokenMeter.usedOutputTokens;
      const started = performance.now();
      const schema = request.responseSchema;
      const grammar = schema ? await runtime.grammar(responseGrammarPlan(schema)) : undefined;
      await session.prompt(request.prompt, {
        temperature: 0,
        maxTokens: request.options.maximumResponseTokens ?? MAX_TOKENS,
        ...(grammar ? { grammar } : {}),
      });
      return {
        ms: performance.now() - started,
        evaluated: sequence.tokenMeter.usedInputTokens - before,
        output: sequence.tokenMeter.usedOutputTokens - outputBefore,
      };
    },
    async close() {
      session.dispose();
      await context.dispose();
    },
  };
}

interface Run {
  bridge: Turn[];
  steps: number[];
  direct: Turn[];
}

/** One run: each bridge turn is followed at once by the same turn replayed directly (same load for both). */
async function pairedRun(setup: Scenario): Promise<Run> {
  const log: StepLog = { requests: [], stepMs: [] };
  const scenario = await setup(log);
  const bridge: Turn[] = [];
  const direct: Turn[] = [];
  let baseline: Awaited<ReturnType<typeof directSession>> | undefined;
  for (let i = 0; i < TURNS; i++) {
    const started = performance.now();
    const usage = await scenario.turn(i);
    bridge.push(turnOf(started, usage));
    if (log.requests.length !== i + 1) {
      throw new Error(`expected one model step per turn, got ${log.requests.length} after ${i + 1} turns`);
    }
    baseline ??= await directSession(log.requests[0].instructions);
    direct.push(await baseline.replay(log.requests[i]));
  }
  await scenario.close();
  await baseline?.close();
  return { bridge, steps: log.stepMs, direct };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function ratio(a: number, b: number): string {
  return (b === 0 ? (a === 0 ? 1 : Infinity) : a / b).toFixed(2);
}

async function scenario(name: string, setup: Scenario): Promise<void> {
  const runs: Run[] = [];
  for (let r = 0; r <= REPEATS; r++) {
    const run = await pairedRun(setup);
    await closeLlamaModels(); // every repeat starts cold: a fresh context for both
    if (r > 0) runs.push(run); // the first run warms up
  }
  const bridge = runs.map((r) => r.bridge);
  const steps = runs.map((r) => r.steps);
  const baseline = runs.map((r) => r.direct);
  console.log(`\n${name}: ${TURNS} turns, median of ${REPEATS} runs (${config.path.split("/").pop()})`);
  console.log(
    "turn  bridge ms (step)    direct ms  ratio   eval bridge/direct  ratio   out bridge/direct",
  );
  let bSum = 0, dSum = 0, sSum = 0, bTok = 0, dTok = 0;
  for (let i = 0; i < TURNS; i++) {
    const bm = median(bridge.map((t) => t[i].ms));
    const sm = median(steps.map((t) => t[i]));
    const dm = median(baseline.map((t) => t[i].ms));
    const be = median(bridge.map((t) => t[i].evaluated));
    const de = median(baseline.map((t) => t[i].evaluated));
    const bo = median(bridge.map((t) => t[i].output));
    const dout = median(baseline.map((t) => t[i].output));
    bSum += bm;
    dSum += dm;
    sSum += sm;
    if (i > 0) {
      bTok += be;
      dTok += de;
    }
    console.log(
      `${String(i + 1).padStart(4)}  ${bm.toFixed(1).padStart(9)} (${sm.toFixed(1).padStart(6)})  ${
        dm.toFixed(1).padStart(9)
      }  ${ratio(bm, dm).padStart(5)}   ${String(be).padStart(8)} /${String(de).padStart(7)}  ${
        ratio(be, de).padStart(5)
      }   ${String(bo).padStart(7)} /${String(dout).padStart(7)}`,
    );
  }
  console.log(
    `total latency ${bSum.toFixed(0)} ms (model steps ${sSum.toFixed(0)} ms) vs ${dSum.toFixed(0)} ms ` +
      `(×${ratio(bSum, dSum)}); tokens evaluated on turns 2-${TURNS}: ${bTok} vs ${dTok} (×${
        ratio(bTok, dTok)
      })`,
  );
  // Paired: each bridge turn against the direct replay of the same turn right after it.
  const paired = runs.flatMap((r) => r.bridge.map((t, i) => t.ms / r.direct[i].ms));
  console.log(
    `per-turn latency ratio (paired, ${paired.length} turns): median ×${median(paired).toFixed(2)}; ` +
      `bridge work outside the model step: median ${
        median(runs.flatMap((r) => r.bridge.map((t, i) => t.ms - r.steps[i]))).toFixed(2)
      } ms per turn`,
  );
}

if (values.rss) {
  await runRssBench({
    model: `gguf:${config.path}`,
    turns: values.turns === "12" ? 300 : TURNS,
    every: Number(values.every),
    reset: Number(values.reset),
    phases: values.phases.split(","),
  });
  Deno.exit(0);
}

await scenario("session/respond", sessionScenario);
await scenario(`npc/talk (${values.structured ? "structured" : "text"} replies)`, npcScenario);
await closeLlamaModels();
