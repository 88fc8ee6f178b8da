/**
 * The page's check of its script agrees with the bridge's: over one set of good and bad scripts, the page calls
 * ready exactly those `npc/create` takes with the model the page sends (`scriptModel`), and a refusal says what
 * the bridge says. Before, `{"steps": [{"text": 3}]}` read "Ready to start." and the bridge refused it at Start.
 */
import assert from "node:assert/strict";
import { scriptModel, scriptProblem } from "../../../src/serve/playground/page/script_check.ts";
import { WireClient } from "../../helpers/wire.ts";

/** Scripts as a designer types them in the Model tab. */
const SCRIPTS: string[] = [
  '[{"text": "Hello."}]',
  '{"steps": [{"text": "Hello."}], "fallback": {"text": "…"}}',
  '{"steps": [{"json": {"line": "Hi"}}]}',
  '// a comment\n[{"toolCalls": [{"name": "open_gate", "arguments": {"gate": "north"}}]}, {"template": "{toolOutput}"}]',
  '[{"error": "rate_limited", "message": "Slow down."}]',
  '[{"text": "Hi", "delay": 500}]',
  '{"steps": []}',
  '{"type": "scripted", "steps": [{"text": "Hi"}]}',
  '{"steps": [{"text": 3}]}',
  '[{"text": "a"}, {"say": "b"}]',
  "[1]",
  '[{"text": "Hi", "chunks": 0}]',
  '[{"text": "Hi", "delayMs": -1}]',
  '[{"toolCalls": []}]',
  '[{"toolCalls": [{"name": ""}]}]',
  '[{"toolCalls": [{"name": "x", "arguments": [1]}]}]',
  '[{"toolCalls": "open_gate"}]',
  '[{"template": 1}]',
  '[{"error": "rate_limit"}]',
  '[{"error": "rate_limited", "message": 3}]',
  '{"steps": {"text": "Hi"}}',
  '{"steps": [{"text": "Hi"}], "fallback": {"say": "…"}}',
  '{"type": 3, "steps": [{"text": "Hi"}]}',
];

Deno.test("the page's script check and the bridge's npc/create agree on every script of the set", async () => {
  const bridge = new WireClient();
  try {
    const refusedByBoth: string[] = [];
    for (const text of SCRIPTS) {
      const page = scriptProblem(text);
      const id = bridge.request("npc/create", {
        persona: { name: "Mira" },
        model: scriptModel(text) as never,
      });
      const response = await bridge.response(id);
      const error = "error" in response ? (response.error as { message: string }).message : null;
      assert.equal(
        page === null,
        error === null,
        `${text}\n  page: ${page ?? "ready"}\n  bridge: ${error ?? "created"}`,
      );
      if (page !== null && error !== null) {
        refusedByBoth.push(text);
        // The same words, the member named from the script box rather than the `model` param.
        const said = error.replace(/^'model(\.steps)?/, "").replace(/^Parameter 'model/, "");
        if (!/type/.test(text)) {
          assert.ok(page.endsWith(said), `${text}\n  page: ${page}\n  bridge: ${error}`);
        }
      }
    }
    assert.ok(refusedByBoth.length >= 12, "the set has bad scripts");
    // The page's own check beyond the bridge's: a script object's `type` would replace "scripted" in the model
    // the page sends, and the bridge would run that model (here the bridge's own) instead of the script.
    assert.equal(
      scriptProblem('{"type": "system", "steps": [{"text": "Hi"}]}'),
      `The script: 'script.type' must be "scripted" or left out.`,
    );
  } finally {
    await bridge.close();
  }
});
