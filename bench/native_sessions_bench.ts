/**
 * Native sessions with the C test double (build it first: `deno task build:double`):
 *
 *   deno run -A bench/native_sessions_bench.ts [--turns 12] [--history 400] [--repeat 2000]
 *
 * 1. A plain conversation of `--turns` turns through the system model, the history growing as the agent grows
 *    it: transcript entries the model had to take in per turn (the plugin's `evaluatedEntries`), with live
 *    sessions kept and with keeping off (`nativeSessions: 0`, every step rebuilt from the whole history).
 * 2. What deciding costs the bridge per step: `NativeSessions.claim` on a history of `--history` entries that
 *    extends the live transcript (the comparison serializes the history prefix).
 * @module
 */
import { parseArgs } from "node:util";
import { closeSystemModels, createSystemModel, systemModelsIdle } from "../src/models/system.ts";
import { NativeSessions } from "../src/models/system_sessions.ts";
import type { StepRequest } from "../src/models/language_model.ts";
import type { ConversationEntry } from "../src/protocol/transcript.ts";

const { values } = parseArgs({
  // `deno task <name> -- <flags>` passes the `--` through; there are no positional arguments.
  args: Deno.args.filter((a) => a !== "--"),
  options: {
    turns: { type: "string", default: "12" },
    history: { type: "string", default: "400" },
    repeat: { type: "string", default: "2000" },
  },
});
const TURNS = Number(values.turns);
const LIBRARY = decodeURIComponent(new URL("../.build/libfm_double.so", import.meta.url).pathname);

function print(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
}

let ids = 0;
const user = (text: string): ConversationEntry => ({
  id: `u${++ids}`,
  role: "user",
  contents: [{ type: "text", id: `s${ids}`, text }],
  options: {},
});
const answer = (text: string): ConversationEntry => ({
  id: `a${++ids}`,
  role: "response",
  contents: [{ type: "text", id: `s${ids}`, text }],
  assets: [],
});

function request(history: ConversationEntry[], prompt: string): StepRequest {
  return {
    instructions: "You are a castle guard. Answer in one sentence.",
    tools: [],
    toolCallingMode: "disallowed",
    history,
    prompt,
    responseSchema: null,
    options: {},
    stream: false,
    signal: new AbortController().signal,
  };
}

async function conversation(nativeSessions: number): Promise<number[]> {
  const evaluated: number[] = [];
  const model = createSystemModel({
    libraryPath: LIBRARY,
    nativeSessions,
    onNativeStep: (info) => evaluated.push(info.evaluatedEntries),
    decorateRequest: (body) => {
      if (body.op === "step") {
        body["x-double"] = { result: { kind: "text", text: `Answer ${ids}.`, usage: null } };
      }
    },
  });
  const history: ConversationEntry[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const prompt = `Question ${turn}?`;
    const result = await model.step(request([...history], prompt));
    if (result.kind !== "text") throw new Error("unexpected result");
    history.push(user(prompt), answer(result.text));
  }
  closeSystemModels();
  await systemModelsIdle();
  return evaluated;
}

const kept = await conversation(8);
const rebuilt = await conversation(0);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
print(`${TURNS} turns, entries evaluated per turn`);
print(`  kept alive: ${kept.join(" ")}  (total ${sum(kept)})`);
print(`  rebuilt:    ${rebuilt.join(" ")}  (total ${sum(rebuilt)})`);

// 2. The claim's cost on a long history.
const HISTORY = Number(values.history);
const REPEAT = Number(values.repeat);
const base: ConversationEntry[] = [];
for (let i = 0; i < HISTORY / 2; i++) {
  base.push(user(`Question number ${i}, a little longer than one word?`), answer(`Answer ${i}.`));
}
const sessions = new NativeSessions();
let sink = 0;
const started = performance.now();
for (let i = 0; i < REPEAT; i++) {
  const first = request(base, "Next?");
  const claim = sessions.claim(first);
  sessions.settle(claim, first, { kind: "text", text: "Ok.", usage: null }, {
    key: claim.key,
    rebuilt: false,
    reason: "continued",
    evaluatedEntries: 1,
    kept: true,
  });
  const next = request([...base, { ...user("Next?"), id: "x" }, { ...answer("Ok."), id: "y" }], "Again?");
  sink += sessions.claim(next).continue ? 1 : 0;
}
const perStep = (performance.now() - started) / REPEAT / 2;
print(`claim + settle on a ${HISTORY}-entry history: ${perStep.toFixed(3)} ms per step (${sink} continued)`);
