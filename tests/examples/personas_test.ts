/**
 * personas/ (issue 12, item 4): every persona file loads with `loadPersona`, its step script plays through
 * the typed client without a single warning (so a scripted reply with camelCase keys or an unknown emotion
 * cannot hide in a shipped file), and the files work unchanged with `oam npc --script`.
 */
import assert from "node:assert/strict";
import { Bridge, type JsonValue, loadPersona, type ToolHandler } from "../../mod.ts";
import { oam } from "../cli/cli_helper.ts";

const DIR = new URL("../../personas/", import.meta.url);

/** What each persona is asked and answers; its client tools' handlers. */
const CASES: Record<string, { tools: Record<string, ToolHandler<never>>; talks: [string, string][] }> = {
  shopkeeper: {
    tools: { check_stock: () => "3 ale left, 4 gold each." },
    talks: [["An ale, please.", "We have 3 ale left, 4 gold each. What'll it be?"]],
  },
  guard: {
    tools: { open_gate: () => ({ opened: true }) },
    talks: [
      ["Hello.", "State your business at the north gate."],
      ["I'm a miner.", "Go on, then. Mind the old mine road."],
    ],
  },
  sage: { tools: {}, talks: [["Hi, I am Aria.", "Aria, is it? Sit, mind the nettles."]] },
};

Deno.test("personas/: every file has a case here, a step script and a matching pair", async () => {
  const names = new Set<string>();
  for await (const entry of Deno.readDir(DIR)) names.add(entry.name);
  const personas = [...names].filter((n) => n.endsWith(".jsonc")).map((n) => n.slice(0, -".jsonc".length));
  assert.deepEqual(personas.sort(), Object.keys(CASES).sort());
  for (const p of personas) assert.ok(names.has(`${p}.steps.json`), `${p}.steps.json`);
  assert.equal(names.size, personas.length * 2, [...names].join(", "));
});

for (const [name, spec] of Object.entries(CASES)) {
  Deno.test(`personas/${name}: loads and plays its script through the typed client without warnings`, async () => {
    const file = await loadPersona(new URL(`${name}.jsonc`, DIR));
    assert.ok(file.steps.length > 0);
    const warnings: string[] = [];
    await using bridge = await Bridge.open({ onWarning: (w) => warnings.push(w) });
    const tools = (file.tools ?? []).map((t) => bridge.tool(t, spec.tools[t.name]));
    assert.deepEqual(tools.map((t) => t.name).sort(), Object.keys(spec.tools).sort());
    const world = file.world ? await bridge.createWorld(file.world) : undefined;
    const npc = await bridge.createNpc(file.persona, {
      npc: file.npc,
      tools,
      world,
      memory: file.memory,
      options: file.options,
      model: { type: "scripted", steps: file.steps },
    });
    const lines: JsonValue[] = [];
    for (const [said] of spec.talks) {
      const reply = await npc.talk(said);
      assert.equal(reply.isFallback, false);
      lines.push(reply.line);
    }
    assert.deepEqual(lines, spec.talks.map(([, answer]) => answer));
    assert.deepEqual(warnings, []);
  });
}

Deno.test("personas/guard works unchanged with `oam npc --script` (the tool answered at the prompt)", async () => {
  const r = await oam(
    ["npc", new URL("guard.jsonc", DIR).pathname, "--script", new URL("guard.steps.json", DIR).pathname],
    { stdin: 'Hello.\n1\n{"opened": true}\n', env: { NO_COLOR: "1" } },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Bram \[suspicious\]: State your business at the north gate\.\n/);
  assert.match(r.stdout, /⚙ open_gate \{"gate":"north"\}/);
  assert.match(r.stdout, /Bram \[neutral\]: Go on, then\. Mind the old mine road\./);
  assert.match(r.stdout, /\(Bram ends the conversation\.\)/);
});
