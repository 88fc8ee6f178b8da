/**
 * Exhaustive wrong types (issue #7): every parameter of every method in `initialize`'s
 * `capabilities.methods` — and every field of the nested `options`, `persona`, `memory` and `model` objects —
 * gets each value of a pool of wrong-typed and extreme values, with the other parameters valid. Each request
 * must get exactly one response, never `-32603` and never an "Unexpected failure" in the log (an error the
 * code did not anticipate), the bridge must keep answering, and no prototype may be polluted.
 */
import assert from "node:assert/strict";
import { ERROR_CODES } from "../../src/protocol/errors.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { jsonText, type Node, Raw } from "./json_text.ts";
import { EXCLUDED_METHODS, METHOD_PARAMS } from "./method_params.ts";
import { InProcessTarget } from "./fuzz_target.ts";
import { Rng } from "./rng.ts";

/** Wrong-typed and extreme values (raw JSON text). */
const WRONG = [
  "null",
  "true",
  "0",
  "-1",
  "1.5",
  "1e308",
  "1e400",
  "-1e400",
  "9007199254740993",
  '""',
  '"x"',
  '"\\u0000"',
  "[]",
  "[null]",
  '[1,"a",{}]',
  "{}",
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '"' + "a".repeat(20_000) + '"',
  "[".repeat(90) + "]".repeat(90),
];

/** Nested objects and their fields (PROTOCOL.md §5/§6). */
const NESTED: Record<string, Record<string, string[]>> = {
  "session/create": {
    options: [
      "toolChoice",
      "maxToolRounds",
      "maxToolCalls",
      "enabledTools",
      "temperature",
      "maxResponseTokens",
      "sampling",
      "toolTimeoutSeconds",
      "trimHistory",
      "reservedResponseTokens",
      "maxAttempts",
    ],
    model: ["type", "steps", "fallback"],
  },
  "npc/create": {
    persona: [
      "name",
      "role",
      "personality",
      "speakingStyle",
      "backstory",
      "goals",
      "knowledge",
      "secrets",
      "defaultEmotion",
      "maxSentences",
    ],
    options: [
      "replyFormat",
      "groundingTool",
      "toolChoice",
      "maxToolRounds",
      "maxToolCalls",
      "toolTimeoutSeconds",
      "worldReadable",
      "worldWritable",
      "worldContextPaths",
      "memoryTools",
      "maxFacts",
      "maxRelationshipChange",
      "secretsUnlockAtRelationship",
      "emotions",
      "playerOptionCount",
      "canEndConversation",
      "extraInstructions",
      "compactAfterTurns",
      "keepRecentTurns",
      "fallbackOnGuardrail",
      "fallbackLines",
      "temperature",
      "maximumResponseTokens",
      "barkMaximumTokens",
    ],
    memory: ["facts", "relationship", "summary"],
  },
  "npc/update": {
    persona: ["name", "goals"],
    options: ["replyFormat", "maxFacts"],
    memory: ["relationship"],
  },
  "decision/decide": { actor: ["name", "role"], model: ["type", "steps"] },
  "content/generate": { model: ["type", "steps"] },
};

const CODES = new Map<string, number>(Object.entries(ERROR_CODES));
/**
 * A model whose answer is valid for plain turns, decisions and schema turns with {@link FAST_SCHEMA} (a
 * scripted answer outside the schema would fail and be retried after 300 ms).
 */
const FAST_MODEL = {
  type: "scripted",
  steps: [],
  fallback: { json: { reasoning: "r", choice: "a", confidence: 5 } },
};
/** The schema of the valid params of schema turns (`session/respond`, `content/generate`). */
const FAST_SCHEMA = {
  type: "object",
  properties: { reasoning: { type: "string" }, choice: { type: "string" }, confidence: { type: "integer" } },
};
const NPC_MODEL = { type: "scripted", steps: [], fallback: { text: "[happy] Aye." } };

Deno.test("every parameter of every method, and every nested field, with every wrong value", async () => {
  const rng = new Rng(1);
  const target = new InProcessTarget(rng, 1 << 20, { toolTimeoutSeconds: 1 });
  let id = 0;
  const send = async (method: string, params: Node): Promise<JsonObject[]> => {
    const rid = `w${++id}`;
    const before = target.messages.length;
    await target.write(
      new TextEncoder().encode(jsonText({ jsonrpc: "2.0", id: rid, method, params }) + "\n"),
    );
    await target.write(new TextEncoder().encode(`{"jsonrpc":"2.0","id":"p${id}","method":"ping"}\n`));
    const ok = await target.waitForCount(before + 2, 5000);
    assert.ok(ok, `no answer to ${method}`);
    // The ping answers at once; the request may be deferred (a turn): answer its tool calls, wait for it.
    const deadline = Date.now() + 5000;
    let seen = before;
    while (!target.messages.some((m, i) => i >= before && m.id === rid && !("method" in m))) {
      for (; seen < target.messages.length; seen++) {
        const m = target.messages[seen];
        if (m.method !== "tool/call") continue;
        const reply = { jsonrpc: "2.0", id: m.id, result: { output: "ok" } };
        await target.write(new TextEncoder().encode(JSON.stringify(reply) + "\n"));
      }
      if (Date.now() > deadline) break;
      await target.waitForCount(target.messages.length + 1, 20);
    }
    return target.messages.slice(before).filter((m) => m.id === rid && !("method" in m));
  };
  // Objects the valid params refer to.
  const setup = [
    ["world/create", { world: "fz-w1", state: { player: { gold: 60 }, list: [1, 2] } }],
    ["session/create", { session: "fz-s1", model: FAST_MODEL }],
    ["npc/create", {
      npc: "fz-n1",
      persona: { name: "N" },
      options: { replyFormat: "text" },
      model: NPC_MODEL,
    }],
  ] as const;
  for (const [method, params] of setup) await send(method, params as Node);

  await send("initialize", {});
  const init = target.messages.find((m) => m.id === `w${id}`)!;
  const methods = ((init.result as JsonObject).capabilities as JsonObject).methods as string[];
  let requests = 0;
  const problems: string[] = [];
  for (const method of methods) {
    if (EXCLUDED_METHODS.has(method)) continue;
    assert.ok(Object.hasOwn(METHOD_PARAMS, method), `no param table for ${method}`);
    const table = METHOD_PARAMS[method];
    const valid = (): { [k: string]: Node } => {
      const out: { [k: string]: Node } = {};
      for (const [name, gen] of Object.entries(table.params)) out[name] = gen(rng);
      // Keep the targets stable: the ids name the set-up objects.
      if ("session" in out) out.session = "fz-s1";
      if ("npc" in out) out.npc = "fz-n1";
      if ("world" in out) out.world = "fz-w1";
      // Answers every kind of turn at once (a failed JSON answer would be retried after 300 ms).
      if ("model" in out) out.model = FAST_MODEL;
      if ("schema" in out && (method === "session/respond" || method === "content/generate")) {
        out.schema = FAST_SCHEMA;
      }
      if (method === "decision/decide") out.options = ["a", "b"];
      if (method === "decision/decideMany") {
        out.requests = [{ situation: "x", options: ["a", "b"] }, { situation: "y", options: ["a", "b"] }];
      }
      return out;
    };
    const cases: Array<[string, { [k: string]: Node }]> = [];
    for (const name of Object.keys(table.params)) {
      for (const w of WRONG) cases.push([name, { ...valid(), [name]: new Raw(w) }]);
    }
    for (const [object, fields] of Object.entries(NESTED[method] ?? {})) {
      for (const field of fields) {
        for (const w of WRONG) {
          const params = valid();
          const base = params[object];
          const inner =
            base !== null && typeof base === "object" && !Array.isArray(base) && !(base instanceof Raw)
              ? { ...(base as { [k: string]: Node }) }
              : {};
          inner[field] = new Raw(w);
          params[object] = inner;
          cases.push([`${object}.${field}`, params]);
        }
      }
    }
    for (const [what, params] of cases) {
      requests++;
      const logs = target.logs.length;
      const responses = await send(method, params);
      if (responses.length !== 1) problems.push(`${method} ${what}: ${responses.length} responses`);
      const e = responses[0]?.error as JsonObject | undefined;
      if (e) {
        const name = (e.data as JsonObject)?.code as string;
        if (CODES.get(name) !== e.code || e.code === -32603) {
          problems.push(`${method} ${what}: ${JSON.stringify(e).slice(0, 200)}`);
        }
      }
      for (const l of target.logs.slice(logs)) {
        if (l.startsWith("error:")) problems.push(`${method} ${what}: log ${l.slice(0, 300)}`);
      }
      // Re-create what a case may have deleted or replaced.
      if (method.endsWith("/delete") || method === "npc/restore" || method === "session/create") {
        for (const [m, p] of setup) await send(m, p as Node);
      }
    }
  }
  problems.push(...target.prototypeProblems());
  assert.deepEqual(problems.slice(0, 20), []);
  assert.ok(requests >= 3000, `${requests} requests`);
  await target.close();
});
