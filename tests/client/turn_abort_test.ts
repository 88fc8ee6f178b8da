/**
 * A game loop that gives up on turns, over every transport: once the player walked away (the turn's signal
 * aborted) or a callback threw, the turn's callbacks get no more events, and the call still settles; what
 * else of the NPC the protocol cancels with it says why.
 */
import assert from "node:assert/strict";
import {
  BridgeError,
  type JsonObject,
  type NpcEvent,
  type ScriptedModelSpec,
  type ScriptStep,
} from "../../mod.ts";
import { collecting, TRANSPORTS } from "./transports.ts";

function scripted(...steps: ScriptStep[]): ScriptedModelSpec {
  return { type: "scripted", steps };
}

/** The line of a text reply, streamed in 8 pieces. */
const LONG_LINE = {
  text: "[happy] The road north is long, so take bread and a good cloak with you.",
  chunks: 8,
};

for (const t of TRANSPORTS) {
  const quiet = collecting().options;

  Deno.test(`${t.name}: once a talk's signal aborts, onLine, onEmotion and onEvent get no more events`, async () => {
    await using bridge = await t.open(quiet);
    const npc = await bridge.createNpc({ name: "Mira" }, {
      options: { replyFormat: "text" },
      model: scripted(LONG_LINE, { text: "[sad] Farewell then." }),
    });
    const walkedAway = new AbortController();
    const seen: string[] = [];
    const turn = npc.talk("Where does this road go?", {
      signal: walkedAway.signal,
      onEvent: (event: NpcEvent) => seen.push(event.type),
      onLine: (delta) => {
        seen.push(`line ${delta}`);
        walkedAway.abort(); // the player walks away after the first words
      },
    });
    // The turn had finished when the cancel came (a scripted line streams at once): the reply is the truth.
    const outcome = await turn.then((reply) => reply.line, (error: unknown) => error);
    const afterAbort = seen.slice(seen.findIndex((s) => s.startsWith("line ")) + 1);
    assert.deepEqual(afterAbort, [], `events after the abort: ${afterAbort.join(", ")}`);
    assert.ok(
      typeof outcome === "string" || (outcome instanceof BridgeError && outcome.dataCode === "cancelled"),
      String(outcome),
    );
  });

  Deno.test(`${t.name}: once a respond's signal aborts, onText and onEvent get no more events`, async () => {
    await using bridge = await t.open(quiet);
    const session = await bridge.createSession({
      model: scripted({ text: "One two three four five six.", chunks: 6 }),
    });
    const controller = new AbortController();
    const seen: string[] = [];
    const turn = session.respond("Count.", {
      onEvent: (event) => seen.push(event.type),
      onText: (delta) => {
        seen.push(`text ${delta}`);
        controller.abort();
      },
      signal: controller.signal,
    });
    await turn.catch(() => {});
    const afterAbort = seen.slice(seen.findIndex((s) => s.startsWith("text ")) + 1);
    assert.deepEqual(afterAbort, [], `events after the abort: ${afterAbort.join(", ")}`);
  });

  Deno.test(`${t.name}: once npc.cancel() is called, the talk's onLine, onEmotion and onEvent get no more events`, async () => {
    await using bridge = await t.open(quiet);
    const npc = await bridge.createNpc({ name: "Mira" }, {
      options: { replyFormat: "text" },
      model: scripted(LONG_LINE, { text: "[sad] Farewell then." }),
    });
    const seen: string[] = [];
    let cancelled: Promise<number> | null = null;
    const turn = npc.talk("Where does this road go?", {
      onEvent: (event: NpcEvent) => seen.push(event.type),
      onEmotion: (emotion) => seen.push(`emotion ${emotion}`),
      onLine: (delta) => {
        seen.push(`line ${delta}`);
        cancelled ??= npc.cancel(); // the player walks away after the first words
      },
    });
    // The turn had finished when the cancel came (a scripted line streams at once): the reply is the truth.
    const outcome = await turn.then((reply) => reply.line, (error: unknown) => error);
    const afterCancel = seen.slice(seen.findIndex((s) => s.startsWith("line ")) + 1);
    assert.deepEqual(afterCancel, [], `events after the cancel: ${afterCancel.join(", ")}`);
    assert.ok(
      typeof outcome === "string" || (outcome instanceof BridgeError && outcome.dataCode === "cancelled"),
      String(outcome),
    );
    assert.ok(cancelled !== null);
    assert.ok((await cancelled) >= 0);
    // The next talk is shown in full.
    const next: string[] = [];
    assert.equal((await npc.talk("Bye.", { onLine: (_d, line) => next.push(line) })).line, "Farewell then.");
    assert.equal(next.at(-1), "Farewell then.");
  });

  Deno.test(`${t.name}: once session.cancel() is called, the turn's onText and onEvent get no more events`, async () => {
    await using bridge = await t.open(quiet);
    const session = await bridge.createSession({
      model: scripted({ text: "One two three four five six.", chunks: 6 }),
    });
    const seen: string[] = [];
    let cancelled: Promise<number> | null = null;
    const turn = session.respond("Count.", {
      onEvent: (event) => seen.push(event.type),
      onText: (delta) => {
        seen.push(`text ${delta}`);
        cancelled ??= session.cancel();
      },
    });
    await turn.catch(() => {});
    const afterCancel = seen.slice(seen.findIndex((s) => s.startsWith("text ")) + 1);
    assert.deepEqual(afterCancel, [], `events after the cancel: ${afterCancel.join(", ")}`);
    assert.ok(cancelled !== null);
    await cancelled;
  });

  Deno.test(`${t.name}: once npc.delete() is called, the talk's onLine, onEmotion and onEvent get no more events`, async () => {
    await using bridge = await t.open(quiet);
    const npc = await bridge.createNpc({ name: "Mira" }, {
      options: { replyFormat: "text" },
      model: scripted({ ...LONG_LINE, delayMs: 20 }),
    });
    const seen: string[] = [];
    let deleted: Promise<void> | null = null;
    const turn = npc.talk("Where does this road go?", {
      onEvent: (event: NpcEvent) => seen.push(event.type),
      onEmotion: (emotion) => seen.push(`emotion ${emotion}`),
      onLine: (delta) => {
        seen.push(`line ${delta}`);
        deleted ??= npc.delete(); // the NPC is killed while it talks
      },
    });
    const outcome = await turn.then((reply) => reply.line, (error: unknown) => error);
    const afterDelete = seen.slice(seen.findIndex((s) => s.startsWith("line ")) + 1);
    assert.deepEqual(afterDelete, [], `events after the delete: ${afterDelete.join(", ")}`);
    assert.ok(
      typeof outcome === "string" || (outcome instanceof BridgeError && outcome.dataCode === "cancelled"),
      String(outcome),
    );
    assert.ok(deleted !== null);
    await deleted;
    assert.deepEqual(await bridge.listNpcs(), []);
  });

  Deno.test(`${t.name}: once npc.restore() is called, the talk's onLine, onEmotion and onEvent get no more events`, async () => {
    await using bridge = await t.open(quiet);
    const model = scripted({ ...LONG_LINE, delayMs: 20 }, { text: "[sad] Farewell then." });
    const npc = await bridge.createNpc({ name: "Mira" }, { options: { replyFormat: "text" }, model });
    const save = await npc.state();
    const seen: string[] = [];
    let restored: Promise<unknown> | null = null;
    const turn = npc.talk("Where does this road go?", {
      onEvent: (event: NpcEvent) => seen.push(event.type),
      onEmotion: (emotion) => seen.push(`emotion ${emotion}`),
      onLine: (delta) => {
        seen.push(`line ${delta}`);
        restored ??= npc.restore(save); // the player loads a save while the NPC talks
      },
    });
    const outcome = await turn.then((reply) => reply.line, (error: unknown) => error);
    const afterRestore = seen.slice(seen.findIndex((s) => s.startsWith("line ")) + 1);
    assert.deepEqual(afterRestore, [], `events after the restore: ${afterRestore.join(", ")}`);
    assert.ok(
      typeof outcome === "string" || (outcome instanceof BridgeError && outcome.dataCode === "cancelled"),
      String(outcome),
    );
    assert.ok(restored !== null);
    await restored;
    // The restored NPC's next talk is shown in full.
    const next: string[] = [];
    const reply = await npc.talk("Hello?", { onLine: (_d, line) => next.push(line) });
    assert.equal(next.at(-1), reply.line);
  });

  Deno.test(`${t.name}: once session.delete() is called, the turn's onText and onEvent get no more events`, async () => {
    await using bridge = await t.open(quiet);
    const session = await bridge.createSession({
      model: scripted({ text: "One two three four five six.", chunks: 6, delayMs: 20 }),
    });
    const seen: string[] = [];
    let deleted: Promise<void> | null = null;
    const turn = session.respond("Count.", {
      onEvent: (event) => seen.push(event.type),
      onText: (delta) => {
        seen.push(`text ${delta}`);
        deleted ??= session.delete();
      },
    });
    await turn.catch(() => {});
    const afterDelete = seen.slice(seen.findIndex((s) => s.startsWith("text ")) + 1);
    assert.deepEqual(afterDelete, [], `events after the delete: ${afterDelete.join(", ")}`);
    assert.ok(deleted !== null);
    await deleted;
  });

  for (const method of ["npc/delete", "npc/cancel"] as const) {
    Deno.test(`${t.name}: once bridge.request("${method}") is sent by hand, the talk's onLine and onEvent get no more events, as with the method`, async () => {
      await using bridge = await t.open(quiet);
      const npc = await bridge.createNpc({ name: "Mira" }, {
        npc: "mira",
        options: { replyFormat: "text" },
        model: scripted({ ...LONG_LINE, delayMs: 20 }),
      });
      const seen: string[] = [];
      let sent: Promise<unknown> | null = null;
      const turn = npc.talk("Where does this road go?", {
        onEvent: (event: NpcEvent) => seen.push(event.type),
        onLine: (delta) => {
          seen.push(`line ${delta}`);
          sent ??= bridge.request(method, { npc: "mira" }); // the game's own code, by hand
        },
      });
      const outcome = await turn.then((reply) => reply.line, (error: unknown) => error);
      const after = seen.slice(seen.findIndex((s) => s.startsWith("line ")) + 1);
      assert.deepEqual(after, [], `events after the ${method}: ${after.join(", ")}`);
      assert.ok(
        typeof outcome === "string" || (outcome instanceof BridgeError && outcome.dataCode === "cancelled"),
        String(outcome),
      );
      assert.ok(sent !== null);
      await sent;
    });
  }

  Deno.test(`${t.name}: once bridge.request("session/cancel") is sent by hand, the turn's onText gets no more events`, async () => {
    await using bridge = await t.open(quiet);
    const session = await bridge.createSession({
      session: "guide",
      model: scripted({ text: "One two three four five six.", chunks: 6, delayMs: 20 }),
    });
    const seen: string[] = [];
    let sent: Promise<unknown> | null = null;
    const turn = session.respond("Count.", {
      onEvent: (event) => seen.push(event.type),
      onText: (delta) => {
        seen.push(`text ${delta}`);
        sent ??= bridge.request("session/cancel", { session: "guide" });
      },
    });
    await turn.catch(() => {});
    const after = seen.slice(seen.findIndex((s) => s.startsWith("text ")) + 1);
    assert.deepEqual(after, [], `events after the cancel: ${after.join(", ")}`);
    assert.ok(sent !== null);
    await sent;
  });

  for (const method of ["npc/delete", "npc/cancel"] as const) {
    Deno.test(`${t.name}: once bridge.notify("${method}") is sent, the talk's onLine and onEvent get no more events, as with a request`, async () => {
      await using bridge = await t.open(quiet);
      const npc = await bridge.createNpc({ name: "Mira" }, {
        npc: "mira",
        options: { replyFormat: "text" },
        model: scripted({ ...LONG_LINE, delayMs: 20 }),
      });
      const seen: string[] = [];
      let sent: Promise<unknown> | null = null;
      const turn = npc.talk("Where does this road go?", {
        onEvent: (event: NpcEvent) => seen.push(event.type),
        onLine: (delta) => {
          seen.push(`line ${delta}`);
          sent ??= bridge.notify(method, { npc: "mira" }); // a notification: no answer comes
        },
      });
      const outcome = await turn.then((reply) => reply.line, (error: unknown) => error);
      const after = seen.slice(seen.findIndex((s) => s.startsWith("line ")) + 1);
      assert.deepEqual(after, [], `events after the ${method}: ${after.join(", ")}`);
      assert.ok(
        typeof outcome === "string" || (outcome instanceof BridgeError && outcome.dataCode === "cancelled"),
        String(outcome),
      );
      assert.ok(sent !== null);
      await sent;
    });
  }

  Deno.test(`${t.name}: once bridge.notify("session/cancel") is sent, the turn's onText gets no more events`, async () => {
    await using bridge = await t.open(quiet);
    const session = await bridge.createSession({
      session: "guide",
      model: scripted({ text: "One two three four five six.", chunks: 6, delayMs: 20 }),
    });
    const seen: string[] = [];
    let sent: Promise<unknown> | null = null;
    const turn = session.respond("Count.", {
      onEvent: (event) => seen.push(event.type),
      onText: (delta) => {
        seen.push(`text ${delta}`);
        sent ??= bridge.notify("session/cancel", { session: "guide" });
      },
    });
    await turn.catch(() => {});
    const after = seen.slice(seen.findIndex((s) => s.startsWith("text ")) + 1);
    assert.deepEqual(after, [], `events after the cancel: ${after.join(", ")}`);
    assert.ok(sent !== null);
    await sent;
  });

  // The deletes sent by hand, as requests and as notifications: the cancelled turns say which ended them.
  for (const via of ["request", "notification"] as const) {
    const title = via === "request"
      ? "a turn that a hand-sent npc/delete or session/delete cancelled says so"
      : "a turn that an npc/delete or session/delete notification cancelled says so";
    Deno.test(`${t.name}: ${title}`, async () => {
      await using bridge = await t.open(quiet);
      const npc = await bridge.createNpc({ name: "Mira" }, {
        npc: "mira",
        options: { replyFormat: "text" },
        model: scripted({ text: "[happy] Zzz.", delayMs: 60_000 }),
      });
      const session = await bridge.createSession({
        session: "guide",
        model: scripted({ text: "The road north…", delayMs: 60_000 }),
      });
      const talking = npc.talk("Wake up.").catch((e: unknown) => e);
      const answering = session.respond("Which way?").catch((e: unknown) => e);
      const send = (method: string, params: JsonObject) =>
        via === "request" ? bridge.request(method, params) : bridge.notify(method, params);
      await send("npc/delete", { npc: "mira" });
      await send("session/delete", { session: "guide" });
      // Each is cancelled, and its message says which delete did it, and how it was sent.
      const cancelledBy = async (work: Promise<unknown>, why: string) => {
        const e = await work;
        assert.ok(e instanceof BridgeError && e.code === -32009, String(e));
        assert.match(e.message, new RegExp(`^The (turn|request) was cancelled[^.]*\\. ${why}$`));
      };
      await cancelledBy(
        talking,
        `'npc/talk' was cancelled with the rest of NPC 'mira''s work when an 'npc/delete' ${via} deleted the NPC\\.`,
      );
      await cancelledBy(
        answering,
        `'session/respond' was cancelled with the rest of session 'guide''s work when a 'session/delete' ${via} ` +
          "deleted the session\\.",
      );
    });
  }

  Deno.test(`${t.name}: a turn that npc.delete() cancelled rejects with -32009 cancelled`, async () => {
    await using bridge = await t.open(quiet);
    const npc = await bridge.createNpc({ name: "Mira" }, {
      npc: "mira",
      options: { replyFormat: "text" },
      model: scripted({ text: "[happy] Zzz.", delayMs: 60_000 }),
    });
    const seen: string[] = [];
    const talking = npc.talk("Wake up.", { onEvent: (event) => seen.push(event.type) }).catch((e: unknown) =>
      e
    );
    await npc.delete();
    const error = await talking;
    assert.ok(error instanceof BridgeError && error.dataCode === "cancelled", String(error));
    assert.equal(error.code, -32009);
    assert.deepEqual(seen, []);
    // It says why, as after a restore.
    assert.match(
      error.message,
      /^The (turn|request) was cancelled[^.]*\. 'npc\/talk' was cancelled with the rest of NPC 'mira''s work when npc\.delete\(\) deleted the NPC\.$/,
    );
  });

  Deno.test(`${t.name}: a turn that session.delete() cancelled says so`, async () => {
    await using bridge = await t.open(quiet);
    const session = await bridge.createSession({
      session: "guide",
      model: scripted({ text: "The road north…", delayMs: 60_000 }),
    });
    const answering = session.respond("Which way?").catch((e: unknown) => e);
    await session.delete(); // the level ends while the guide answers
    const error = await answering;
    assert.ok(error instanceof BridgeError && error.dataCode === "cancelled", String(error));
    assert.equal(error.code, -32009);
    assert.match(
      error.message,
      /^The (turn|request) was cancelled[^.]*\. 'session\/respond' was cancelled with the rest of session 'guide''s work when session\.delete\(\) deleted the session\.$/,
    );
  });

  Deno.test(`${t.name}: a callback that throws gets no more events, and the talk rejects with its error`, async () => {
    await using bridge = await t.open(quiet);
    const npc = await bridge.createNpc({ name: "Mira" }, {
      options: { replyFormat: "text" },
      model: scripted(LONG_LINE, { text: "[happy] Still here." }),
    });
    let calls = 0;
    const uiCrash = new Error("the dialog box was already destroyed");
    await assert.rejects(
      npc.talk("Hello.", {
        onLine: () => {
          calls++;
          throw uiCrash;
        },
      }),
      (error) => error === uiCrash,
    );
    assert.equal(calls, 1);
    // The NPC goes on.
    assert.equal((await npc.talk("Still there?")).line, "Still here.");
  });

  Deno.test(`${t.name}: a save queued behind a turn its signal cancelled says why it was cancelled too`, async () => {
    await using bridge = await t.open(quiet);
    const started = Promise.withResolvers<void>();
    bridge.tool({ name: "look_around", description: "Looks." }, (_args, ctx) => {
      started.resolve();
      return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve("gone")));
    });
    const npc = await bridge.createNpc({ name: "Mira" }, {
      npc: "mira",
      tools: ["look_around"],
      options: { replyFormat: "text", compactAfterTurns: 0 },
      model: scripted({ toolCalls: [{ name: "look_around", arguments: {} }] }, { text: "[happy] Hm." }),
    });
    const walkedAway = new AbortController();
    const turn = npc.talk("What is that?", { signal: walkedAway.signal });
    const save = npc.state(); // the autosave, queued behind the turn
    await started.promise;
    walkedAway.abort();
    await assert.rejects(turn, (e) => e instanceof BridgeError && e.message === "The turn was cancelled.");
    await assert.rejects(save, (e) => {
      assert.ok(e instanceof BridgeError);
      assert.equal(e.dataCode, "cancelled");
      assert.match(
        e.message,
        /^The request was cancelled before it started\. 'npc\/state' was cancelled with the rest of NPC 'mira''s work when the signal or timeoutMs of its 'npc\/talk' aborted: .* Send it again if you still need it\.$/,
      );
      return true;
    });
    // Sent again, it saves.
    assert.equal((await npc.state()).npc, "mira");
  });

  Deno.test(`${t.name}: a turn running when a later queued turn's signal aborts says why it was cancelled`, async () => {
    await using bridge = await t.open(quiet);
    const started = Promise.withResolvers<void>();
    bridge.tool({ name: "look_around", description: "Looks." }, (_args, ctx) => {
      started.resolve();
      return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve("gone")));
    });
    const session = await bridge.createSession({
      session: "guide",
      tools: ["look_around"],
      model: scripted({ toolCalls: [{ name: "look_around", arguments: {} }] }, { text: "Hm." }),
    });
    const first = session.respond("Look around.");
    const queued = new AbortController();
    const second = session.respond("And then?", { signal: queued.signal });
    await started.promise;
    queued.abort();
    await assert.rejects(first, (e) => {
      assert.ok(e instanceof BridgeError && e.dataCode === "cancelled", String(e));
      assert.match(e.message, /'session\/respond' was cancelled with the rest of session 'guide''s work/);
      return true;
    });
    await assert.rejects(second, (e) => e instanceof BridgeError && !e.message.includes("rest of"));
  });

  Deno.test(`${t.name}: turns that close() cancelled say that this program closed the bridge`, async () => {
    const bridge = await t.open(quiet);
    const npc = await bridge.createNpc({ name: "Mira" }, {
      options: { replyFormat: "text" },
      model: scripted({ text: "[happy] Zzz.", delayMs: 60_000 }),
    });
    const running = npc.talk("Wake up.").catch((e: unknown) => e);
    const queued = npc.talk("Hello?").catch((e: unknown) => e);
    await bridge.close(); // the level unloads
    for (const error of [await running, await queued]) {
      assert.ok(error instanceof BridgeError && error.dataCode === "cancelled", String(error));
      assert.match(
        error.message,
        / It was cancelled because this program closed the bridge \(close\(\), or the end of the block or function that opened it with 'await using'\)\.$/,
      );
    }
  });

  Deno.test(`${t.name}: a turn that a load (npc.restore) cancelled says so`, async () => {
    await using bridge = await t.open(quiet);
    const model = scripted({ text: "[happy] Zzz.", delayMs: 60_000 });
    const npc = await bridge.createNpc({ name: "Mira" }, {
      npc: "mira",
      options: { replyFormat: "text" },
      model,
    });
    const save = await npc.state();
    const talking = npc.talk("Wake up.").catch((e: unknown) => e);
    await npc.restore(save); // the player loads a save meanwhile
    const error = await talking;
    assert.ok(error instanceof BridgeError && error.dataCode === "cancelled", String(error));
    assert.match(
      error.message,
      /^The (turn|request) was cancelled[^.]*\. 'npc\/talk' was cancelled with the rest of NPC 'mira''s work when npc\.restore\(\) replaced the NPC \(it deletes it first\)\.$/,
    );
  });

  Deno.test(`${t.name}: a tool handler that waits for its own NPC's save is told why its tool timed out`, async () => {
    const { warnings, options } = collecting();
    await using bridge = await t.open(options);
    bridge.tool({ name: "save_game", description: "Saves the game." }, async () => {
      await mira.state(); // waits for the turn, which waits for this handler
      return "saved";
    });
    const mira = await bridge.createNpc({ name: "Mira" }, {
      npc: "mira",
      tools: ["save_game"],
      options: { replyFormat: "text", toolTimeoutSeconds: 0.1 },
      model: scripted({ toolCalls: [{ name: "save_game", arguments: {} }] }, {
        template: "[sad] {toolOutput}",
      }),
    });
    const reply = await mira.talk("Save, please.");
    assert.match(reply.line, /timed out/);
    assert.deepEqual(warnings.filter((w) => w.includes("save_game")), [
      "Tool 'save_game' timed out while 'npc/state' of its own NPC 'mira', sent while the handler ran, " +
      "waited for the turn that made the call: a handler that waits for its own NPC's (or session's) queued " +
      "work (state(), talk, update) waits until the tool timeout. Inside a tool handler, save with " +
      "npc.state({ settle: false }), or do that work once the turn is over.",
    ]);
  });
}

for (const t of TRANSPORTS) {
  Deno.test(`${t.name}: a cancelled call's error carries the signal's reason as its cause`, async () => {
    await using bridge = await t.open(collecting().options);
    const npc = await bridge.createNpc({ name: "Mira" }, {
      options: { replyFormat: "text" },
      model: scripted({ text: "Never said.", delayMs: 60_000 }),
    });
    const walkedAway = new Error("the player walked away");
    const controller = new AbortController();
    const turn = npc.talk("Hello?", { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(walkedAway);
    const error = await turn;
    assert.ok(error instanceof BridgeError && error.dataCode === "cancelled", String(error));
    assert.equal(error.cause, walkedAway);
    // A call the protocol cannot cancel stops waiting at once, with the same cause.
    const barkStopped = new AbortController();
    const bark = npc.bark("The player walks past.", { signal: barkStopped.signal }).catch((e: unknown) => e);
    barkStopped.abort(walkedAway);
    const barkError = await bark;
    assert.ok(barkError instanceof BridgeError && barkError.dataCode === "cancelled", String(barkError));
    assert.equal(barkError.cause, walkedAway);
  });
}
