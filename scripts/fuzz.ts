/**
 * Long fuzz run against the bridge (issue #7): seeded malformed and adversarial lines, with the invariants
 * checked after every line (see tests/fuzz/fuzz_harness.ts).
 *
 * ```sh
 * deno run -A scripts/fuzz.ts --lines 200000 --seed 7            # in-process engine (fast)
 * deno run -A scripts/fuzz.ts --lines 20000 --seed 7 --process   # the real `deno run cli.ts stdio`
 * ```
 *
 * Prints progress and a JSON report; exits 1 when an invariant broke (the findings say which line and seed).
 * @module
 */
import { parseArgs } from "node:util";
import { runFuzz } from "../tests/fuzz/fuzz_harness.ts";
import { InProcessTarget, ProcessTarget } from "../tests/fuzz/fuzz_target.ts";
import { Rng } from "../tests/fuzz/rng.ts";

const { values } = parseArgs({
  // `deno task <name> -- <flags>` passes the `--` through; there are no positional arguments.
  args: Deno.args.filter((a) => a !== "--"),
  options: {
    lines: { type: "string", default: "200000" },
    seed: { type: "string", default: String(Date.now() % 100000) },
    process: { type: "boolean", default: false },
    "max-line-bytes": { type: "string", default: String(1 << 20) },
    "big-lines": { type: "boolean", default: false },
    "check-every": { type: "string", default: "1000" },
  },
});
const seed = Number(values.seed);
const lines = Number(values.lines);
const maxLineBytes = Number(values["max-line-bytes"]);
const log = (text: string) => Deno.stderr.writeSync(new TextEncoder().encode(text + "\n"));
log(`fuzz: seed ${seed}, ${lines} lines, ${values.process ? "process" : "in-process"}`);
const target = values.process
  ? new ProcessTarget([
    "--max-line-bytes",
    String(maxLineBytes),
    "--tool-timeout",
    "1",
    "--log-level",
    "warning",
  ])
  : new InProcessTarget(new Rng(seed + 1), maxLineBytes, { toolTimeoutSeconds: 1 });
const report = await runFuzz({
  seed,
  lines,
  target,
  maxLineBytes,
  bigLines: values["big-lines"],
  checkEvery: Number(values["check-every"]),
  progress: log,
});
Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(report, null, 2) + "\n"));
Deno.exit(report.findings.length === 0 ? 0 : 1);
