/**
 * NativeSessions: which live plugin session a system-model step may continue (pure logic, no plugin).
 */
import assert from "node:assert/strict";
import type { StepRequest, StepResult } from "../../src/models/language_model.ts";
import { NativeSessions, parseNativeReport, sessionSignature } from "../../src/models/system_sessions.ts";
import type { ConversationEntry } from "../../src/protocol/transcript.ts";

type Req = Pick<StepRequest, "instructions" | "tools" | "history" | "prompt" | "responseSchema">;

function req(history: ConversationEntry[], prompt = "p", overrides: Partial<Req> = {}): Req {
  return { instructions: "I.", tools: [], history, prompt, responseSchema: null, ...overrides };
}

const user = (text: string, id = "u"): ConversationEntry => ({
  id,
  role: "user",
  contents: [{ type: "text", id: `${id}s`, text }],
  options: {},
});
const answer = (text: string, id = "a"): ConversationEntry => ({
  id,
  role: "response",
  contents: [{ type: "text", id: `${id}s`, text }],
  assets: [],
});
const textResult = (text: string): StepResult => ({ kind: "text", text, usage: null });
const kept = (key: string) => ({ key, rebuilt: true, reason: "new", evaluatedEntries: 1, kept: true });

Deno.test("native sessions table: the next history must be the old one plus the prompt and the answer", () => {
  const sessions = new NativeSessions();
  const first = req([], "Hello");
  const claim = sessions.claim(first);
  assert.deepEqual(claim, { key: "n1", continue: false });
  sessions.settle(claim, first, textResult("Halt!"), kept("n1"));
  assert.equal(sessions.size, 1);

  // Exactly extended: continue (and the record is taken while the step runs).
  const next = req([user("Hello", "u1"), answer("Halt!", "a1")], "Open.");
  assert.deepEqual(sessions.claim(next), { key: "n1", continue: true });
  assert.equal(sessions.size, 0);
  assert.deepEqual(sessions.claim(next), { key: "n2", continue: false }, "a second claim gets a new key");
});

Deno.test("native sessions table: any edit rebuilds", () => {
  const base = [user("Hi", "u0"), answer("Yes", "a0")];
  const cases: Array<[string, Req]> = [
    ["the answer was rewritten", req([...base, user("Hello"), answer("Halt.")], "x")],
    ["the prompt differs", req([...base, user("Hello!"), answer("Halt!")], "x")],
    ["an earlier entry changed", req([user("Hi", "u0"), answer("No", "a0"), user("Hello"), answer("Halt!")])],
    [
      "an earlier id changed",
      req([user("Hi", "other"), answer("Yes", "a0"), user("Hello"), answer("Halt!")]),
    ],
    ["an entry more", req([...base, user("Hello"), answer("Halt!"), user("more")])],
    ["other instructions", req([...base, user("Hello"), answer("Halt!")], "x", { instructions: "J." })],
    [
      "a schema format on the prompt",
      req([
        ...base,
        { ...user("Hello"), responseFormat: { name: "R", schema: {} } } as ConversationEntry,
        answer("Halt!"),
      ]),
    ],
  ];
  for (const [why, next] of cases) {
    const sessions = new NativeSessions();
    const first = req(structuredClone(base), "Hello");
    sessions.settle(sessions.claim(first), first, textResult("Halt!"), kept("n1"));
    assert.equal(sessions.claim(next).continue, false, why);
    assert.equal(sessions.size, 1, `${why}: the record stays`);
  }
});

Deno.test("native sessions table: nothing is remembered unless the plugin kept a text or structured answer", () => {
  const sessions = new NativeSessions();
  const r = req([], "Hello");
  sessions.settle(sessions.claim(r), r, textResult("x"), null);
  sessions.settle(sessions.claim(r), r, textResult("x"), { ...kept("n2"), kept: false });
  sessions.settle(sessions.claim(r), r, textResult("x"), kept("other"));
  const calls: StepResult = { kind: "toolCalls", calls: [{ name: "t", arguments: {} }], usage: null };
  sessions.settle(sessions.claim(r), r, calls, kept("n4"));
  const empty = req([], "");
  sessions.settle(sessions.claim(empty), empty, textResult("x"), kept("n5"));
  assert.equal(sessions.size, 0);
});

Deno.test("native sessions table: structured answers compare as JSON text; capacity drops the oldest", () => {
  const sessions = new NativeSessions(2);
  const schema = { name: "R", generationSchema: {}, jsonSchema: {} };
  const first = req([], "Decide.", { responseSchema: schema });
  const claim = sessions.claim(first);
  sessions.settle(
    claim,
    first,
    { kind: "structured", value: { a: 1, b: 2 }, text: "", usage: null },
    kept("n1"),
  );
  const structured = (content: Record<string, number>): ConversationEntry => ({
    id: "a",
    role: "response",
    contents: [{ type: "structure", id: "s", structure: { source: "R", content } }],
    assets: [],
  });
  const prompt = { ...user("Decide."), responseFormat: { name: "R", schema: {} } } as ConversationEntry;
  assert.equal(sessions.claim(req([prompt, structured({ b: 2, a: 1 })])).continue, false, "key order counts");
  assert.equal(sessions.claim(req([prompt, structured({ a: 1, b: 2 })])).continue, true);

  assert.equal(sessions.size, 0);
  for (const p of ["one", "two", "three"]) {
    const r = req([], p);
    const c = sessions.claim(r);
    sessions.settle(c, r, textResult(p), kept(c.key));
  }
  assert.equal(sessions.size, 2);
  assert.equal(
    sessions.claim(req([user("one"), answer("one")], "x")).continue,
    false,
    "the oldest was dropped",
  );
  assert.equal(sessions.claim(req([user("three"), answer("three")], "x")).continue, true);
});

Deno.test("native sessions table: signature and report parsing", () => {
  const tool = {
    name: "t",
    description: "d",
    parameters: { type: "object" },
    jsonSchema: { type: "object" },
  };
  assert.notEqual(
    sessionSignature({ instructions: "I.", tools: [] }),
    sessionSignature({ instructions: "I.", tools: [tool] }),
  );
  assert.equal(
    sessionSignature({ instructions: "I.", tools: [tool] }),
    sessionSignature({ instructions: "I.", tools: [{ ...tool, jsonSchema: {} }] }),
    "the client's JSON Schema is not part of the native session",
  );
  assert.deepEqual(
    parseNativeReport({ native: { key: "n1", rebuilt: false, evaluatedEntries: 1, kept: true } }),
    {
      key: "n1",
      rebuilt: false,
      reason: "continued",
      evaluatedEntries: 1,
      kept: true,
    },
  );
  for (
    const bad of [null, {}, { native: [] }, {
      native: { key: "n1", rebuilt: "no", evaluatedEntries: 1, kept: true },
    }, { native: { key: "n1", rebuilt: true, evaluatedEntries: -1, kept: true } }]
  ) {
    assert.equal(parseNativeReport(bad), null, JSON.stringify(bad));
  }
});
