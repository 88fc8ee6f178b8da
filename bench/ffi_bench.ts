/**
 * FFI benchmark with the C test double (build it first: `deno task build:double`):
 *
 *   deno run -A bench/ffi_bench.ts [--snapshots 10000] [--steps 2000]
 *
 * 1. 10,000 streamed text snapshots through `oamfm_poll` into `onText`, with the double's coalescing (the
 *    default) and without it (every snapshot delivered): events/second.
 * 2. Per-step overhead: sequential trivial steps through the system model (submit → worker thread → poll →
 *    JSON → StepResult) versus a trivial in-process LanguageModel step.
 * @module
 */
import { parseArgs } from "node:util";
import { closeSystemModels, createSystemModel, systemModelsIdle } from "../src/models/system.ts";
import type { LanguageModel, StepRequest, StepResult } from "../src/models/language_model.ts";
import type { JsonValue } from "../src/protocol/json.ts";

const { values } = parseArgs({
  // `deno task <name> -- <flags>` passes the `--` through; there are no positional arguments.
  args: Deno.args.filter((a) => a !== "--"),
  options: { snapshots: { type: "string", default: "10000" }, steps: { type: "string", default: "2000" } },
});
const SNAPSHOTS = Number(values.snapshots);
const STEPS = Number(values.steps);
const LIBRARY = decodeURIComponent(new URL("../.build/libfm_double.so", import.meta.url).pathname);

function print(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
}

function request(onText?: (s: string) => void): StepRequest {
  return {
    instructions: null,
    tools: [],
    toolCallingMode: "disallowed",
    history: [],
    prompt: "bench",
    responseSchema: null,
    options: {},
    stream: true,
    signal: new AbortController().signal,
    onText,
  };
}

function modelWith(script: (op: string) => JsonValue | undefined): LanguageModel {
  return createSystemModel({
    libraryPath: LIBRARY,
    decorateRequest: (body) => {
      const s = script(body.op as string);
      if (s !== undefined) body["x-double"] = s;
    },
  });
}

async function streamRun(coalesce: boolean): Promise<void> {
  let delivered = 0;
  let lastLength = 0;
  const model = modelWith((op) =>
    op === "step"
      ? { stream: { count: SNAPSHOTS, chunk: "x" }, coalesce, result: { kind: "text", text: "done" } }
      : undefined
  );
  await model.availability();
  const start = performance.now();
  await model.step(request((s) => {
    delivered++;
    lastLength = s.length;
  }));
  const ms = performance.now() - start;
  if (lastLength !== SNAPSHOTS) {
    throw new Error(`last snapshot has ${lastLength} chars, expected ${SNAPSHOTS}`);
  }
  const label = coalesce ? "coalesced" : "every snapshot";
  print(
    `stream (${label}): ${SNAPSHOTS} snapshots produced in ${ms.toFixed(1)} ms ` +
      `= ${Math.round(SNAPSHOTS / (ms / 1000)).toLocaleString("en")} snapshots/s; ` +
      `${delivered} delivered to onText (${
        Math.round(delivered / (ms / 1000)).toLocaleString("en")
      } events/s)`,
  );
}

async function timeSteps(model: LanguageModel, n: number): Promise<number> {
  for (let i = 0; i < Math.min(50, n); i++) await model.step(request()); // warm-up
  const start = performance.now();
  for (let i = 0; i < n; i++) await model.step(request());
  return (performance.now() - start) / n;
}

const inProcess: LanguageModel = {
  kind: "trivial",
  contextSize: 4096,
  trimsHistory: false,
  availability: () => Promise.resolve({ available: true, contextSize: 4096, supportedLanguages: [] }),
  step: (): Promise<StepResult> => Promise.resolve({ kind: "text", text: "ok", usage: null }),
};

try {
  Deno.statSync(LIBRARY);
} catch {
  print(`${LIBRARY} is missing: run 'deno task build:double' first.`);
  Deno.exit(1);
}

print(`deno ${Deno.version.deno} on ${Deno.build.os}/${Deno.build.arch}`);
await streamRun(true);
await streamRun(false);
const ffiStep = modelWith((op) =>
  op === "step" ? { result: { kind: "text", text: "ok", usage: null } } : undefined
);
await ffiStep.availability();
const ffiMs = await timeSteps(ffiStep, STEPS);
const localMs = await timeSteps(inProcess, STEPS);
print(
  `step overhead (${STEPS} sequential steps): FFI ${(ffiMs * 1000).toFixed(1)} µs/step, ` +
    `in-process ${(localMs * 1000).toFixed(2)} µs/step, difference ${
      ((ffiMs - localMs) * 1000).toFixed(1)
    } µs/step`,
);
closeSystemModels();
await systemModelsIdle();
