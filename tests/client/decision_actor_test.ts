/**
 * A decision's `actor` takes the NPC handle `createNpc` returned, as an NPC's `world` takes a World: the
 * bridge gets its id and decides as that NPC. Passing the handle used to compile only with a cast and then
 * fail on the wire with "Missing required parameter 'actor.name'".
 */
import assert from "node:assert/strict";
import { Bridge, InProcessTransport, type JsonObject, type JsonRpcMessage } from "../../mod.ts";

const STEP = { json: { reasoning: "Too slow to chase.", choice: "shout", confidence: 70 } };

Deno.test("decide and decideMany take an NPC handle as the actor and send its id", async () => {
  const sent: JsonObject[] = [];
  const transport = new InProcessTransport();
  const send = transport.send.bind(transport);
  transport.send = (message: JsonRpcMessage) => {
    if ("method" in message && message.method.startsWith("decision/")) {
      sent.push(message.params as JsonObject);
    }
    return send(message);
  };
  await using bridge = await Bridge.connect(transport, { onWarning: () => {} });
  const gorm = await bridge.createNpc({ name: "Gorm", personality: "Gruff." }, {
    npc: "gorm",
    model: "scripted",
  });
  const one = await bridge.decide("A thief grabs a sword.", ["chase", "shout"], {
    actor: gorm,
    model: { type: "scripted", steps: [STEP] },
  });
  assert.equal(one.optionID, "shout");
  const [many] = await bridge.decideMany(
    [{ situation: "A thief grabs a sword.", options: ["chase", "shout"], actor: gorm }],
    { model: { type: "scripted", steps: [STEP] } },
  );
  assert.ok(!("error" in many) && many.optionID === "shout");
  assert.equal(sent[0].actor, "gorm");
  assert.equal((sent[1].requests as JsonObject[])[0].actor, "gorm");
  // A persona and an id go as they are.
  await bridge.decide("x", ["a", "b"], {
    actor: { name: "Snik" },
    model: { type: "scripted", steps: [STEP] },
  })
    .catch(() => {});
  await bridge.decide("x", ["a", "b"], { actor: "gorm", model: { type: "scripted", steps: [STEP] } })
    .catch(() => {});
  assert.deepEqual([sent[2].actor, sent[3].actor], [{ name: "Snik" }, "gorm"]);
});

Deno.test("an NPC named by its persona's name where its id goes is told the id", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  await bridge.createNpc({ name: "Bram", role: "the gate guard" }, { npc: "bram", model: "scripted" });
  const model = { type: "scripted" as const, steps: [STEP] };
  await assert.rejects(
    bridge.decide("A thief runs.", ["chase", "shout"], { actor: "Bram", model }),
    (e: Error) => {
      assert.equal(
        e.message,
        "No NPC with id 'Bram'. NPC 'bram' is named Bram: pass its id ('bram') or its handle (an NPC's id is " +
          "not its persona's name).",
      );
      return true;
    },
  );
  await assert.rejects(
    bridge.npc("Bram").talk("Hello."),
    (e: Error) =>
      e.message.startsWith("No NPC with id 'Bram'. NPC 'bram' is named Bram: pass its id ('bram')"),
  );
  // No NPC of that name: the message stays as it was.
  await assert.rejects(
    bridge.npc("Mira").talk("Hello."),
    (e: Error) => e.message === "No NPC with id 'Mira'.",
  );
});
