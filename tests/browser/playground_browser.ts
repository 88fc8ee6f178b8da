/// <reference lib="dom" />
/**
 * The NPC playground end to end in a real headless Chromium: a designer edits a persona field, talks, sees
 * the line stream in with the emotion first, answers a tool call by hand, sees the NPC's world change
 * appear, saves the state, reloads the page, restores and talks again; cancels a reply mid-turn, lets a call
 * time out, answers one with an error, barks, picks a player option; and bad input (invalid JSON, an
 * unknown field, a bridge that went away, a `--script` written for another persona) shows a clear inline
 * message and loses nothing typed.
 * Screenshots of the main states go to tests/browser/screenshots/ (git-ignored); `deno task screenshot:playground`
 * also writes the world-change state as the README's docs/playground.png.
 *
 *   deno task test:browser      (needs Chromium: apt-get install -y chromium, or OAM_CHROMIUM=<path>)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import {
  file,
  loaded,
  npcReady,
  openPage,
  readmeScreenshot,
  screenshot,
  servePlayground,
  withPlayground,
} from "./browser_fixture.ts";
import { sayUntilCall, startScriptNpc } from "./script_npc.ts";

/** A persona with a client tool, a world the NPC may write and memory tools; text replies stream in pieces. */
const PERSONA = `// The innkeeper, for the browser test.
{
  "npc": "mira",
  "persona": {
    "name": "Mira", // her name
    "role": "the innkeeper"
  },
  "options": {
    "replyFormat": "text",
    "memoryTools": "all",
    "worldWritable": ["player.gold"]
  },
  "tools": [
    {
      "name": "check_stock",
      "description": "How many of an item the inn has left.",
      "parameters": { "type": "object", "properties": { "item": { "type": "string" } }, "required": ["item"] }
    }
  ],
  "world": { "player": { "name": "Aria", "gold": 20 } }
}
`;

/** Turn 1: a tool round, then a streamed line; turn 2: a world write and a relationship change. */
const SCRIPT = [
  { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
  { template: "[happy] We have {toolOutput} for you, Aria. What will it be tonight?", chunks: 6 },
  {
    toolCalls: [
      { name: "update_world_state", arguments: { path: "player.gold", value: 16 } },
      { name: "change_relationship", arguments: { delta: 5, reason: "paid up front" } },
    ],
  },
  { text: "[grateful] Thank you kindly, love.", chunks: 3 },
];

async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).last().textContent()) ?? "";
}

/**
 * Waits until the last element `selector` matches has the text `expected` (or matches it), for text the page
 * fills in from an answer of the bridge that comes after what the test waited for: the model's availability
 * is asked for once the connection is open, so "· availability unknown" shows until its answer is in (seen
 * with the page's messages delayed). Fails with the text it had when the wait ran out.
 */
async function textBecomes(page: Page, selector: string, expected: string | RegExp): Promise<void> {
  try {
    await page.waitForFunction(
      ([sel, want, isRegExp]) => {
        const found = document.querySelectorAll(sel);
        const actual = found.length === 0 ? "" : found[found.length - 1].textContent ?? "";
        return isRegExp ? new RegExp(want).test(actual) : actual === want;
      },
      [
        selector,
        typeof expected === "string" ? expected : expected.source,
        typeof expected !== "string",
      ] as const,
    );
  } catch (error) {
    const actual = await text(page, selector);
    if (typeof expected === "string") assert.equal(actual, expected);
    else assert.match(actual, expected);
    throw error; // (the text came just now)
  }
}

/**
 * The accessible description Chromium computes for the element `selector` (what a screen reader reads after
 * its name), from the browser's accessibility tree.
 */
async function accessibleDescription(page: Page, selector: string): Promise<string> {
  return await accessible(page, selector, "description");
}

/** The accessible name Chromium computes for the element `selector` (from its label, as a screen reader reads it). */
async function accessibleName(page: Page, selector: string): Promise<string> {
  return await accessible(page, selector, "name");
}

async function accessible(page: Page, selector: string, what: "name" | "description"): Promise<string> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { root } = await cdp.send("DOM.getDocument", { depth: 0 });
    const { nodeId } = await cdp.send("DOM.querySelector", { nodeId: root.nodeId, selector });
    const { nodes } = await cdp.send("Accessibility.getPartialAXTree", { nodeId, fetchRelatives: false });
    return String(nodes[0]?.[what]?.value ?? "");
  } finally {
    await cdp.detach();
  }
}

/** Waits for the conversation's turn `n` to finish (its NPC part no longer busy). */
async function turnDone(page: Page, n: number): Promise<void> {
  await page.locator(`.turn[data-turn="${n}"] .npc[aria-busy="false"]`).waitFor();
}

/** Records every (emotion, line) the NPC bubble of the next turn shows, as the DOM changes. */
async function watchTurn(page: Page, n: number): Promise<void> {
  await page.evaluate((turn) => {
    const seen: { emotion: string; line: string }[] = [];
    (globalThis as unknown as { seen: typeof seen }).seen = seen;
    const list = document.querySelector("ol.turns")!;
    new MutationObserver(() => {
      const li = document.querySelector(`.turn[data-turn="${turn}"]`);
      if (!li) return;
      const emotion = li.querySelector(".npc .emotion")?.textContent ?? "";
      const line = li.querySelector(".npc .line")?.textContent ?? "";
      const last = seen[seen.length - 1];
      if (!last || last.emotion !== emotion || last.line !== line) seen.push({ emotion, line });
    }).observe(list, { subtree: true, childList: true, characterData: true });
  }, n);
}

async function seen(page: Page): Promise<{ emotion: string; line: string }[]> {
  return await page.evaluate(() =>
    (globalThis as unknown as { seen: { emotion: string; line: string }[] }).seen
  );
}

Deno.test("the designer's loop: edit, talk (streamed, emotion first), answer a tool by hand, see the world change, save, reload, restore, talk again", async () => {
  await withPlayground("failed-designers-loop", async (browser) => {
    const { page } = browser;
    await screenshot(page, "01-first-visit");
    // Load the persona file and its script (one multi-file pick, as a designer does).
    await page.setInputFiles("#load-persona", [file("mira.jsonc", PERSONA), file("mira.steps.json", SCRIPT)]);
    await page.locator("#start-result").filter({
      hasText: "Loaded mira.jsonc and the script mira.steps.json (new NPCs run on it).",
    }).waitFor();
    assert.equal(await page.locator("#model-script").isChecked(), true);

    // Edit a persona field in the form: the JSONC text follows, its comments intact.
    await page.fill("[name='persona.name']", "Mirabel");
    await page.click("#tab-jsonc");
    const jsonc = await page.inputValue("#jsonc");
    assert.match(jsonc, /"name": "Mirabel", \/\/ her name\n/);
    assert.match(jsonc, /^\/\/ The innkeeper, for the browser test\.\n/);
    await page.click("#tab-persona");

    // The status line: ready to start; once the NPC runs it says so (and what an edit would block).
    assert.equal(await text(page, "#editor-status .summary"), "Ready to start.");
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mirabel" }).waitFor();
    await npcReady(page);
    assert.equal(
      await text(page, "#editor-status .summary"),
      "Mirabel is running; ready to apply or restart.",
    );
    await page.fill("[name='persona.name']", "");
    // (The name emptied: the editor no longer has her as she runs, and cannot be applied as it is.)
    assert.equal(
      await text(page, "#editor-status .summary"),
      "Mirabel is running, not as the editor has it now; 1 problem to fix before applying or restarting:",
    );
    await page.fill("[name='persona.name']", "Mirabel");
    assert.equal(
      await text(page, "#editor-status .summary"),
      "Mirabel is running; ready to apply or restart.",
    );

    // Talk: the tool call waits for the designer.
    await watchTurn(page, 1);
    await page.fill("#player-line", "An ale, please.");
    await page.press("#player-line", "Enter");
    const call = page.locator('.tool-call.pending[data-tool="check_stock"]');
    await call.waitFor();
    assert.equal(await text(page, '.tool-call[data-tool="check_stock"] .args'), '{"item":"ale"}');
    assert.equal(await page.inputValue("#player-line"), "", "the sent line left the input");
    await screenshot(page, "02-tool-call-by-hand");
    await call.locator("textarea").fill('{"ale": 3}');
    await call.getByRole("button", { name: "Send answer" }).click();
    await turnDone(page, 1);
    const line = 'We have {"ale":3} for you, Aria. What will it be tonight?';
    assert.equal(await text(page, '.turn[data-turn="1"] .npc .line'), line);
    assert.equal(await text(page, '.turn[data-turn="1"] .npc .emotion'), "happy");
    assert.equal(await text(page, ".portrait"), "happy");
    // Streamed: the emotion showed while the line was still partial, and the line grew in several pieces.
    const frames = await seen(page);
    assert.ok(
      frames.some((f) => f.emotion === "happy" && f.line.length < line.length),
      `the emotion came before the whole line: ${JSON.stringify(frames)}`,
    );
    const partial = new Set(frames.map((f) => f.line).filter((l) => l !== "" && l !== line));
    assert.ok(partial.size >= 2, `the line arrived in pieces: ${JSON.stringify(frames)}`);
    assert.equal(await text(page, '.turn[data-turn="1"] .tool-call .tool-result'), '→ {"ale":3}');
    assert.match(
      await text(page, '.turn[data-turn="1"] .tool-status'),
      /^answered by hand · done in \d+ ms$/,
    );
    assert.match(
      await text(page, '.turn[data-turn="1"] .meta'),
      /emotion after \d+ ms · first words \d+ ms · done in \d+ ms · tokens: \d+ in/,
    );

    // Turn 2: the NPC writes the world; the tree shows it live, flagged as the NPC's change.
    await page.click("#tab-state-world");
    await page.fill("#player-line", "Here is the gold.");
    await page.click("#send");
    await turnDone(page, 2);
    assert.equal(await text(page, '[data-path="player.gold"] button.value'), "16");
    assert.match(await text(page, ".world-log li"), /^player\.gold: 20 → 16 · the NPC, during a turn$/);
    await screenshot(page, "03-world-changed");
    await readmeScreenshot(page);
    // The designer edits the world too: a value in place (Enter saves), and a new key.
    await page.click('[data-path="player.gold"] button.value');
    await page.fill('[aria-label="New value of player.gold"]', "30");
    await page.press('[aria-label="New value of player.gold"]', "Enter");
    await page.locator(".world-log li").filter({ hasText: "player.gold: 16 → 30 · you" }).waitFor();
    await page.getByRole("button", { name: "Add a value in player" }).click();
    await page.fill('[aria-label="Key to add in player"]', "bag");
    await page.fill('[aria-label="Value to add in player"]', '["rope"]');
    await page.press('[aria-label="Value to add in player"]', "Enter");
    await page.locator('[data-path="player.bag"]').waitFor();
    assert.equal(await text(page, '[data-path="player.bag.0"] button.value'), '"rope"');
    await page.click("#tab-state-memory");
    assert.match(await text(page, ".relationship-value"), /^5 \(neutral\)/);
    assert.match(
      await page.locator(".relationship-history").textContent() ?? "",
      /turn 2: 5 \(\+5\) — \+5 paid up front/,
    );
    await page.click("#tab-state-turns");
    assert.equal(await page.locator(".turns-table tbody tr").count(), 2);

    // Save the state.
    await page.click("#tab-state-save");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-state")]);
    assert.equal(download.suggestedFilename(), "mira.state.json");
    const savedText = await Deno.readTextFile(await download.path());
    const saved = JSON.parse(savedText);
    assert.equal(saved.npc, "mira");
    assert.equal(saved.state.persona.name, "Mirabel");
    assert.equal(saved.state.memory.relationship, 5);
    assert.deepEqual(saved.world, {
      world: "mira-world",
      state: { player: { name: "Aria", gold: 30, bag: ["rope"] } },
    });

    // The persona file as typed, and the JSON an engine sends for this NPC.
    await page.click("#tab-jsonc");
    const [personaFile] = await Promise.all([page.waitForEvent("download"), page.click("#save-persona")]);
    assert.equal(personaFile.suggestedFilename(), "mira.jsonc");
    assert.equal(await Deno.readTextFile(await personaFile.path()), await page.inputValue("#jsonc"));
    const [exported] = await Promise.all([page.waitForEvent("download"), page.click("#export-persona")]);
    assert.equal(exported.suggestedFilename(), "mira.npc-create.json");
    const engine = JSON.parse(await Deno.readTextFile(await exported.path()));
    assert.deepEqual(engine["world/create"], {
      world: "mira-world",
      state: { player: { name: "Aria", gold: 20 } },
    });
    assert.deepEqual(Object.keys(engine["npc/create"]), [
      "npc",
      "persona",
      "options",
      "tools",
      "world",
      "model",
    ]);
    assert.deepEqual(engine["npc/create"].persona, { name: "Mirabel", role: "the innkeeper" });
    assert.deepEqual(engine["npc/create"].model, { type: "scripted", steps: SCRIPT });

    // Reload: what was typed is still there; the NPC is restored from the file.
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.equal(await page.inputValue("[name='persona.name']"), "Mirabel");
    assert.equal(await text(page, "#editor-status .summary"), "Ready to start.", "a new page runs no NPC");
    await page.click("#tab-state-save");
    await page.setInputFiles("#restore-state", file("mira.state.json", savedText));
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Mirabel from mira.state.json." })
      .waitFor();
    await npcReady(page);
    assert.equal(
      await text(page, "#editor-status .summary"),
      "Mirabel is running; ready to apply or restart.",
    );
    const history = await page.locator("li.restored ol.history li").evaluateAll((items) =>
      items.map((li) => [...li.childNodes].map((n) => n.textContent?.trim()).filter((t) => t).join(" | "))
    );
    assert.deepEqual(history, [
      "Player | An ale, please.",
      'tool | check_stock({"item":"ale"})',
      `Mirabel | happy | ${line}`,
      "Player | Here is the gold.",
      'tool | update_world_state({"path":"player.gold","value":16})',
      'tool | change_relationship({"delta":5,"reason":"paid up front"})',
      "Mirabel | grateful | Thank you kindly, love.",
    ]);
    assert.equal(await text(page, ".portrait"), "grateful");
    await page.click("#tab-state-world");
    assert.equal(await text(page, '[data-path="player.gold"] button.value'), "30");

    // Talk again, the tool answered automatically this time (the script starts over with a fresh model).
    await page.click("#tab-tools");
    await page.locator(".tool-card").getByLabel("automatically with:").check();
    await page.locator(".tool-card textarea.code").last().fill("2 ales");
    await page.fill("#player-line", "Another one?");
    await page.press("#player-line", "Enter");
    await turnDone(page, 1);
    assert.equal(
      await text(page, '.turn[data-turn="1"] .npc .line'),
      "We have 2 ales for you, Aria. What will it be tonight?",
    );
    assert.match(
      await text(page, '.turn[data-turn="1"] .tool-status'),
      /^answered automatically · done in \d+ ms$/,
    );
    assert.equal(await text(page, '.turn[data-turn="1"] .tool-result'), "→ 2 ales");
    await screenshot(page, "04-restored-and-talking");
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a bark on the page's sample script: the line is the turn's JSON step it played, and the page says so and what to do", async () => {
  await withPlayground("failed-sample-bark", async (browser) => {
    const { page } = browser;
    await startScriptNpc(page);
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await page.click("#bark");
    await page.locator("li.bark .meta").waitFor();
    // The bridge gives the step's text back as the line (the sample script's steps are all for turns).
    assert.match(await text(page, "li.bark .line"), /^\{"emotion":"happy","line":"Ale's on tap/);
    // Before: the JSON alone, with nothing to say why or what to do.
    assert.equal(
      await text(page, "li.bark .hint"),
      "This bark played the script's next step, a json reply written for a turn (that reply is used up): " +
        'a bark takes a text step, e.g. {"text": "Rain again."}. Put one in the Model tab\'s script where the ' +
        "bark comes.",
    );
    await screenshot(page, "12-sample-bark");
    assert.deepEqual(browser.errors, []);
  });
});

/** Gorm at the gate: two client tools (one that times out after two seconds), structured replies. */
const GATE = {
  npc: "gorm",
  greeting: "A stranger walks up to the gate.",
  persona: { name: "Gorm", role: "the gate guard" },
  options: { playerOptionCount: 2 },
  tools: [
    { name: "open_gate", description: "Open the gate. Returns whether it opened." },
    { name: "check_stock", description: "Ask the storeroom.", timeoutSeconds: 2 },
  ],
};

const GATE_SCRIPT = [
  { toolCalls: [{ name: "open_gate", arguments: {} }] }, // turn 1: cancelled while the call waits
  { toolCalls: [{ name: "check_stock", arguments: { item: "rope" } }] }, // turn 2: left to time out
  {
    json: {
      emotion: "sad",
      line: "The storeroom did not answer.",
      player_options: ["Try again", "Leave"],
      ends_conversation: false,
    },
  },
  { toolCalls: [{ name: "open_gate", arguments: {} }] }, // turn 3: answered with an error
  {
    json: {
      emotion: "annoyed",
      line: "Blasted gate. Off with you.",
      player_options: ["Bye", "Help"],
      ends_conversation: true,
    },
  },
  { text: "Rain again." }, // the bark
];

Deno.test("turn controls: cancel mid-turn, let a call time out, answer with an error, pick a player option, the end of a conversation, a bark, the raw log", async () => {
  await withPlayground("failed-turn-controls", async (browser) => {
    const { page } = browser;
    await page.setInputFiles("#load-persona", [
      file("gorm.json", GATE),
      file("gorm.steps.json", GATE_SCRIPT),
    ]);
    await loaded(page, "gorm.json");
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Gorm" }).waitFor();
    await npcReady(page);

    // Turn 1: cancelled (Escape in the player's line) while the NPC waits for the game's answer.
    await page.fill("#player-line", "Open up!");
    await page.press("#player-line", "Enter");
    await page.locator('.tool-call.pending[data-tool="open_gate"]').waitFor();
    assert.equal(await page.isDisabled("#cancel"), false);
    await page.focus("#player-line");
    await page.keyboard.press("Escape"); // the same as "Cancel reply"
    await turnDone(page, 1);
    assert.equal(await text(page, '.turn[data-turn="1"] .badge'), "cancelled");
    assert.match(
      await text(page, '.turn[data-turn="1"] .meta'),
      /The reply was cancelled; the turn left no trace/,
    );
    // From the cancel on, the client passes the turn no more events (the bridge's toolCallCompleted for the
    // cancelled call included): the row says what became of the call, with no time or output after it.
    assert.equal(
      await text(page, '.turn[data-turn="1"] .tool-status'),
      "not answered: the turn was cancelled",
    );
    assert.equal(await page.isDisabled("#cancel"), true);

    // Turn 2: the designer lets the call time out; the bridge tells the model and the turn goes on.
    await page.fill("#player-line", "Any rope?");
    await page.press("#player-line", "Enter");
    const waiting = page.locator('.turn[data-turn="2"] .tool-call.pending[data-tool="check_stock"]');
    await waiting.waitFor();
    assert.match(
      await waiting.locator(".tool-status").textContent() ?? "",
      /waiting for your answer: [12] s left/,
    );
    await waiting.locator("textarea").fill('{"rope": 1}');
    await waiting.getByRole("button", { name: "Let it time out" }).click();
    await turnDone(page, 2);
    // The designer chose not to answer: nothing typed is kept as an unsent answer.
    assert.equal(await page.locator('.turn[data-turn="2"] .tool-unsent').count(), 0);
    // The row says the model got an error output instead, and shows it (not the raw "Error: …" it reads).
    assert.match(
      await text(page, '.turn[data-turn="2"] .tool-status'),
      /^not answered: the model got an error output instead · error in \d+ ms$/,
    );
    assert.equal(
      await text(page, '.turn[data-turn="2"] .tool-result'),
      "→ Tool 'check_stock' timed out after 2s.",
    );
    assert.equal(await page.locator('.turn[data-turn="2"] .tool-call.failed').count(), 1);
    assert.equal(await text(page, '.turn[data-turn="2"] .line'), "The storeroom did not answer.");

    // Turn 3: a player option; the call answered with an error; the NPC ends the conversation.
    await page.locator('.turn[data-turn="2"] .player-options').getByRole("button", { name: "Try again" })
      .click();
    const gate = page.locator('.turn[data-turn="3"] .tool-call.pending[data-tool="open_gate"]');
    await gate.waitFor();
    assert.equal(await text(page, '.turn[data-turn="3"] .said'), "Try again");
    await gate.locator("textarea").fill("The chain is jammed.");
    await gate.getByRole("button", { name: "Send as error" }).click();
    await turnDone(page, 3);
    assert.equal(await text(page, '.turn[data-turn="3"] .tool-result'), "→ The chain is jammed.");
    assert.match(
      await text(page, '.turn[data-turn="3"] .tool-status'),
      /^answered with an error · error in \d+ ms$/,
    );
    assert.deepEqual(await page.locator('.turn[data-turn="3"] .badge').allTextContents(), [
      "ends the conversation",
      "relationship 0",
    ]);
    await page.locator("ol.turns li.note").filter({ hasText: "Gorm ended the conversation." }).waitFor();

    // A bark: with no situation typed, the persona file's greeting is the situation.
    await page.click("#bark");
    await page.locator("li.bark:not(.failed) .meta").waitFor();
    assert.equal(await text(page, "li.bark .line"), "Rain again.");
    assert.equal(await text(page, "li.bark .context"), "Situation: A stranger walks up to the gate.");
    await screenshot(page, "05-cancel-timeout-error-bark");

    // The live memory, edited by hand (a value out of range is refused by the page first).
    await page.click("#tab-state-memory");
    await page.getByRole("button", { name: "Edit memory" }).click();
    await page.fill("#memory-relationship", "150");
    await page.fill("#memory-facts", "Aria owes a rope.");
    await page.getByRole("button", { name: "Save memory" }).click();
    assert.equal(
      await text(page, ".memory-edit .message"),
      "The relationship must be a number from -100 to 100.",
    );
    await page.fill("#memory-relationship", "40");
    await page.getByRole("button", { name: "Save memory" }).click();
    await page.locator(".relationship-value").filter({ hasText: "40 (friendly)" }).waitFor();
    assert.deepEqual(await page.locator("ul.facts li").allTextContents(), ["Aria owes a rope."]);

    // Apply an edited persona to the running NPC: its conversation and memory stay; the status line follows
    // the new name.
    assert.equal(await text(page, "#editor-status .summary"), "Gorm is running; ready to apply or restart.");
    await page.fill("[name='persona.role']", "the grumpy gate guard");
    await page.fill("[name='persona.name']", "Old Gorm");
    await page.click("#apply");
    await page.locator("ol.turns li.note").filter({
      hasText: "Applied the editor's persona, options and tools to Old Gorm",
    })
      .waitFor();
    assert.equal(
      await text(page, "#editor-status .summary"),
      "Old Gorm is running; ready to apply or restart.",
    );
    const restored = await page.evaluate(() =>
      (globalThis as unknown as { playground: { log: { entries: { message: Record<string, unknown> }[] } } })
        .playground.log.entries.map((e) => e.message).filter((m) => m.method === "npc/restore").pop()
    ) as { params: { state: { persona: { role: string }; memory: { relationship: number } } } };
    assert.equal(restored.params.state.persona.role, "the grumpy gate guard");
    assert.equal(restored.params.state.memory.relationship, 40);
    await page.locator(".relationship-value").filter({ hasText: "40 (friendly)" }).waitFor();

    // The raw JSON-RPC log: every message, in order; the cancel and the bridge's tool/cancel among them.
    await page.click("#toggle-log");
    assert.equal(await page.getAttribute("#toggle-log", "aria-pressed"), "true");
    await page.fill("#log-filter", "cancel");
    const lines = await page.locator("ol.rpc-lines li .what").allTextContents();
    assert.ok(lines.includes("npc/cancel"), lines.join(", "));
    assert.ok(lines.includes("tool/cancel"), lines.join(", "));
    // The first turn on the wire, in order (other traffic, such as the editor's tools/validate, left out).
    const wire = await page.evaluate(() =>
      (globalThis as unknown as {
        playground: { log: { entries: { direction: string; message: { method?: string; id?: unknown } }[] } };
      })
        .playground.log.entries.map((e) =>
          `${e.direction} ${e.message.method ?? `response ${JSON.stringify(e.message.id)}`}`
        )
    );
    const talk = wire.indexOf("out npc/talk");
    const firstTurn = ["out npc/talk", "in npc/event", "in tool/call", "out npc/cancel", "in tool/cancel"];
    assert.deepEqual(wire.slice(talk).filter((m) => firstTurn.includes(m)).slice(0, 5), firstTurn);
    // The cancelled talk was answered (-32009) before the next talk was sent.
    const talkId = await page.evaluate(() =>
      (globalThis as unknown as {
        playground: { log: { entries: { message: { method?: string; id?: unknown } }[] } };
      })
        .playground.log.entries.find((e) => e.message.method === "npc/talk")?.message.id
    );
    const answered = wire.indexOf(`in response ${JSON.stringify(talkId)}`);
    assert.ok(
      answered > talk && answered < wire.indexOf("out npc/talk", talk + 1),
      "the cancelled talk was answered",
    );
    await page.fill("#log-filter", "");
    await screenshot(page, "06-json-rpc-log");
    // Its count: "1 message", not "1 messages".
    await page.locator(".rpc-log").getByRole("button", { name: "Clear" }).click();
    assert.equal(await text(page, ".rpc-log .hint"), "0 messages");
    await page.evaluate(() =>
      (globalThis as unknown as { playground: { log: { add(entry: unknown): void } } }).playground.log.add({
        direction: "in",
        at: performance.now(),
        message: { jsonrpc: "2.0", method: "ping" },
      })
    );
    assert.equal(await text(page, ".rpc-log .hint"), "1 message");
    assert.deepEqual(browser.errors, []);
  });
});

/** The conversation's entries as [class, text] (notes, turns). */
async function entries(page: Page): Promise<string[][]> {
  return await page.locator("ol.turns > li").evaluateAll((items) =>
    items.map((li) => [li.className, li.textContent ?? ""])
  );
}

/** The page's raw log as "<direction> <method or response id>", in order. */
async function wireOf(page: Page): Promise<string[]> {
  return await page.evaluate(() =>
    (globalThis as unknown as {
      playground: { log: { entries: { direction: string; message: { method?: string; id?: unknown } }[] } };
    })
      .playground.log.entries.map((e) =>
        `${e.direction} ${e.message.method ?? `response ${JSON.stringify(e.message.id)}`}`
      )
  );
}

/** The id of the last `npc/talk` the page sent. */
async function lastTalkId(page: Page): Promise<unknown> {
  return await page.evaluate(() =>
    (globalThis as unknown as {
      playground: { log: { entries: { message: { method?: string; id?: unknown } }[] } };
    })
      .playground.log.entries.filter((e) => e.message.method === "npc/talk").pop()?.message.id
  );
}

Deno.test("a reply still running when the NPC changes: a restore or a start cancels it first and says so in the new conversation; Apply waits until it is answered or cancelled", async () => {
  await withPlayground("failed-replace-mid-turn", async (browser) => {
    const { page } = browser;
    await page.setInputFiles("#load-persona", [
      file("gorm.json", GATE),
      file("gorm.steps.json", GATE_SCRIPT),
    ]);
    await loaded(page, "gorm.json");
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Gorm" }).waitFor();
    await npcReady(page);
    await page.click("#tab-state-save");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-state")]);
    const savedText = await Deno.readTextFile(await download.path());

    // A restore while the NPC waits for open_gate's answer: the reply is cancelled, then the NPC replaced.
    await page.fill("#player-line", "Open up!");
    await page.press("#player-line", "Enter");
    await page.locator('.tool-call.pending[data-tool="open_gate"]').waitFor();
    const talk = await lastTalkId(page);
    await page.setInputFiles("#restore-state", file("gorm.state.json", savedText));
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Gorm from gorm.state.json." })
      .waitFor();
    await npcReady(page);
    assert.deepEqual(await entries(page), [
      [
        "note warning",
        "The reply to “Open up!” was still running: it was cancelled to restore from gorm.state.json.",
      ],
      [
        "note info",
        "Restored Gorm from gorm.state.json. Its script starts from its first step (a restored NPC gets a new " +
        "model).",
      ],
    ]);
    // On the wire: the cancel, the bridge's tool/cancel and the talk's -32009, all before the NPC is deleted.
    let wire = await wireOf(page);
    let sent = wire.lastIndexOf("out npc/talk");
    assert.deepEqual(
      wire.slice(sent).filter((m) =>
        ["out npc/cancel", "in tool/cancel", `in response ${JSON.stringify(talk)}`, "out npc/delete"]
          .includes(m)
      ),
      ["out npc/cancel", "in tool/cancel", `in response ${JSON.stringify(talk)}`, "out npc/delete"],
    );
    await page.click("#tab-state-turns");
    assert.equal(
      await page.locator(".turns-table tbody tr").count(),
      0,
      "the cancelled turn went with its NPC",
    );
    assert.equal(await page.isDisabled("#cancel"), true);
    assert.equal(await page.isDisabled("#send"), false);
    assert.equal(await text(page, "#editor-status .summary"), "Gorm is running; ready to apply or restart.");

    // The same for a start: the running reply is cancelled first, and the new conversation says so.
    await page.fill("#player-line", "Open up, I said!");
    await page.press("#player-line", "Enter");
    await page.locator('.tool-call.pending[data-tool="open_gate"]').waitFor();
    const second = await lastTalkId(page);
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Gorm" }).waitFor();
    await npcReady(page);
    assert.deepEqual(await entries(page), [
      [
        "note warning",
        "The reply to “Open up, I said!” was still running: it was cancelled to start the NPC again.",
      ],
      ["note info", "Started Gorm: tools open_gate, check_stock."],
    ]);
    wire = await wireOf(page);
    sent = wire.lastIndexOf("out npc/talk");
    assert.ok(
      wire.indexOf(`in response ${JSON.stringify(second)}`, sent) < wire.indexOf("out npc/delete", sent),
      "the reply was answered (-32009) before the NPC was deleted",
    );

    // Apply keeps the conversation, so it waits for the running reply, and says so until it ends.
    await page.fill("#player-line", "Open up, please.");
    await page.press("#player-line", "Enter");
    await page.locator('.tool-call.pending[data-tool="open_gate"]').waitFor();
    await page.click("#apply");
    await page.locator("#start-result").filter({
      hasText: "Waiting for the running reply to end (answer or cancel it), then applying…",
    }).waitFor();
    await page.click("#cancel");
    await page.locator("#start-result").filter({ hasText: "Applied to Gorm." }).waitFor();
    assert.deepEqual((await entries(page)).map(([kind]) => kind), [
      "note warning",
      "note info",
      "turn cancelled",
      "note info",
    ]);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("bad input: invalid JSON in a schema and in the persona, an unknown field, a bad tool answer, a bridge that went away — a clear message by it, nothing typed lost", async () => {
  let served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await page.click("#tab-model");
    await page.check("#model-script"); // the sample persona's own script (it calls check_stock)
    // Invalid JSON in a tool's schema: the message says where; the document keeps the last valid schema.
    await page.click("#tab-tools");
    const schema = page.locator(".tool-card textarea.code").first();
    const broken = '{\n  "type": "object",\n  "properties": {\n    "item": {"type": "string"}\n';
    await schema.fill(broken);
    const schemaMessage = page.locator(".tool-card .field.has-error .message").first();
    assert.equal(
      await schemaMessage.textContent(),
      "The schema is not valid JSON: a closing } was expected on line 5, column 1. Nothing was changed.",
    );
    assert.equal(await schema.getAttribute("aria-invalid"), "true");
    await page.click("#tab-jsonc");
    assert.match(
      await page.inputValue("#jsonc"),
      /"required": \["item"\]/,
      "the valid schema stays in the file",
    );

    // Invalid JSONC: the problem with its line and column; the form becomes read-only; the text stays.
    const good = await page.inputValue("#jsonc");
    const bad = good.replace('"name": "Mira",', '"name": "Mira"');
    await page.fill("#jsonc", bad);
    const status = page.locator("#editor-status p.error").first();
    assert.match(
      await status.textContent() ?? "",
      /^The persona file is not valid JSON: a comma was expected on line \d+, column \d+\. Show it$/,
    );
    // The text box's accessible description carries the problem (a screen reader reads it with the box).
    await page.focus("#jsonc");
    assert.match(
      await accessibleDescription(page, "#jsonc"),
      /^The persona file is not valid JSON: a comma was expected on line \d+, column \d+\.$/,
    );
    await page.click("#tab-persona");
    assert.equal(await page.isDisabled("[name='persona.name']"), true);
    assert.match(await text(page, "#panel-persona .banner"), /read-only until the text is fixed/);
    await screenshot(page, "07-invalid-jsonc");

    // Not JSON in the initial world: the same, and the world in the file stays as it was.
    await page.click("#tab-jsonc");
    await page.fill("#jsonc", good);
    assert.equal(await accessibleDescription(page, "#jsonc"), "", "no problem left to describe");
    await page.click("#tab-world");
    await page.fill("#world-seed", '{"player": {"gold": 20,}');
    assert.match(
      await text(page, "#world-seed-message"),
      /^The world is not valid JSON: .* Nothing was changed\.$/,
    );
    await page.click("#tab-jsonc");
    assert.equal(await page.inputValue("#jsonc"), good);
    await page.fill("#jsonc", bad);

    // A reload keeps the broken texts (persona, schema, world), each with its message.
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await page.click("#tab-jsonc");
    assert.equal(await page.inputValue("#jsonc"), bad);
    await page.click("#tab-tools");
    assert.equal(await page.locator(".tool-card textarea.code").first().inputValue(), broken);
    await page.click("#tab-world");
    assert.equal(await page.inputValue("#world-seed"), '{"player": {"gold": 20,}');
    assert.match(await text(page, "#world-seed-message"), /not valid JSON/);

    // Fixed, plus an unknown field: a warning, and the bridge says the same when the NPC starts.
    await page.click("#tab-jsonc");
    await page.fill("#jsonc", good.replace('"name": "Mira",', '"name": "Mira",\n    "mood": "cheerful",'));
    // The World tab's text is still not a world: the status list says so (Start would use the world from before
    // that text, and waits for it to be fixed); fixed, it is written into the file.
    await page.locator("#editor-status li.error").filter({ hasText: /^World: The world is not valid JSON/ })
      .waitFor();
    await page.click("#tab-world");
    await page.fill("#world-seed", '{"player": {"name": "Aria", "gold": 20}, "inn": {"open": true}}');
    await page.click("#tab-jsonc");
    await page.locator("#editor-status li.unknown-fields").filter({ hasText: "Unknown field: persona.mood." })
      .waitFor();
    // Before: "… The bridge ignores them …" for the one field.
    assert.equal(
      await text(page, "#editor-status li.unknown-fields"),
      "Unknown field: persona.mood. The bridge ignores it (with a warning); check the spelling.",
    );
    await page.click("#tab-tools");
    await page.locator(".tool-card textarea.code").first().fill(
      '{"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}',
    );
    await page.click("#start");
    await page.locator("#start-result li.warning").filter({
      hasText: "Unknown parameter 'persona.mood' was ignored.",
    })
      .waitFor();
    await npcReady(page);

    // A tool answer that is not JSON, sent as JSON: nothing is sent, the text stays, then a fixed one goes.
    await page.fill("#player-line", "Hello!");
    await page.press("#player-line", "Enter");
    const call = page.locator(".tool-call.pending").first();
    await call.waitFor();
    await call.getByLabel("Send the answer as").selectOption("json");
    await call.locator("textarea").fill('{"ale": 3');
    await call.getByRole("button", { name: "Send answer" }).click();
    assert.match(
      await call.locator(".message").textContent() ?? "",
      /not valid JSON: .* Nothing was sent\.$/,
    );
    assert.equal(await call.locator("textarea").inputValue(), '{"ale": 3');
    await call.locator("textarea").fill('{"ale": 3}');
    await call.getByRole("button", { name: "Send answer" }).click();
    await turnDone(page, 1);

    // A world key the bridge could not address (a dot): refused in place, what was typed stays.
    await page.click("#tab-state-world");
    await page.getByRole("button", { name: "Add a value in player" }).click();
    await page.fill('[aria-label="Key to add in player"]', "bag.size");
    await page.fill('[aria-label="Value to add in player"]', "3");
    await page.press('[aria-label="Value to add in player"]', "Enter");
    assert.equal(
      await text(page, ".world-edit .message"),
      "Give a key (no dots: they separate the parts of a path).",
    );
    assert.equal(await page.inputValue('[aria-label="Key to add in player"]'), "bag.size");
    await page.locator(".world-edit").getByRole("button", { name: "Cancel" }).click();
    assert.equal(await page.locator(".world-edit").count(), 0);

    // The bridge goes away: a banner says so; what is typed stays; sending says why it cannot.
    assert.equal(
      await text(page, "#editor-status .summary"),
      "Mira is running; ready to apply or restart (1 warning):",
    );
    await lastStateKept(page); // else there is no last state to restore below
    await served.stop();
    await page.locator("#banner").filter({ hasText: "The bridge went away." }).waitFor();
    assert.equal(
      await text(page, "#editor-status .summary"),
      "Ready to start (1 warning):",
      "the NPC went with the connection",
    );
    assert.equal(await page.getAttribute("#connection-status", "data-state"), "closed");
    await page.fill("#player-line", "Are you still there?");
    await page.press("#player-line", "Enter");
    assert.equal(
      await text(page, "#conversation-message"),
      "The bridge is not connected: use Reconnect above. Your line is kept.",
    );
    assert.equal(await page.inputValue("#player-line"), "Are you still there?");
    await page.click("#start");
    assert.match(await text(page, "#start-result"), /not connected to the bridge/);
    await screenshot(page, "08-bridge-gone");

    // It comes back on the same port: reconnect, restore the last state seen, and the line goes out.
    served = await servePlayground(served.port);
    // Reconnect, unless the page's own retry got there first (the button then hides; the retry goes on every
    // 10 s at most, so the connection opens either way).
    await page.locator("#reconnect").click({ timeout: 1000 }).catch(() => {});
    await page.locator("#connection-status[data-state=open]").waitFor();
    await page.click("#tab-state-save");
    await page.click("#restore-last");
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Mira from the last state seen." })
      .waitFor();
    // The restore ends after its note (it reads the restored memory last): a line sent before is kept with
    // "wait a moment" (seen under load).
    await npcReady(page);
    await page.press("#player-line", "Enter");
    await page.locator(".turn .said").filter({ hasText: "Are you still there?" }).waitFor();
    assert.deepEqual(browser.errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(e)), []);
  } catch (error) {
    await screenshot(page, "failed-bad-input").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("a loaded persona with misspelt fields: the load says it has problems (as a warning, not a success), the list and the field say which name was meant", async () => {
  await withPlayground("failed-misspelt-load", async (browser) => {
    const { page } = browser;
    const persona = { npc: "mira", persona: { nmae: "Mira" }, options: { replyFormt: "text" } };
    await page.setInputFiles("#load-persona", [file("mira.jsonc", persona)]);
    // Before: "Loaded mira.jsonc." in green, the color of "all good", above a list of problems.
    const result = page.locator("#start-result p").last();
    assert.equal(
      await result.textContent(),
      "Loaded mira.jsonc with 1 problem and 1 warning: see the list above.",
    );
    assert.equal(await result.getAttribute("class"), "warning");
    // Before: only "Unknown fields: persona.nmae, options.replyFormt."
    assert.equal(
      await text(page, "#editor-status li.unknown-fields"),
      "Unknown fields: persona.nmae (did you mean 'name'?), options.replyFormt (did you mean 'replyFormat'?). " +
        "The bridge ignores them (with a warning); check the spelling.",
    );
    await page.click("#tab-persona");
    assert.equal(
      await text(page, "#panel-persona .field.has-error .message"),
      "Name is required. The file has 'nmae' (ignored): did you mean this field, 'name'?",
    );
    await page.click("#tab-options");
    assert.match(
      await page.locator(".field", { has: page.locator("[name='options.replyFormat']") }).locator(".message")
        .textContent() ?? "",
      /^The file has 'replyFormt' \(ignored\): did you mean this field, 'replyFormat'\?$/,
    );
    await screenshot(page, "12-misspelt-load");
    // Started anyway: the bridge's own warning names the field meant; the page adds no second hint.
    await page.click("#tab-persona");
    await page.fill("[name='persona.name']", "Mira");
    await page.click("#start");
    const bridgeWarning = page.locator("#start-result li.warning").filter({
      hasText: "Unknown parameter 'options.replyFormt' was ignored (did you mean 'replyFormat'?).",
    });
    await bridgeWarning.waitFor();
    assert.equal(await bridgeWarning.locator(".hint").count(), 0);
    await npcReady(page);
    // A clean file loads as a success, as before.
    await page.setInputFiles("#load-persona", [file("gorm.jsonc", { persona: { name: "Gorm" } })]);
    await page.locator("#start-result p.note").filter({ hasText: "Loaded gorm.jsonc." }).waitFor();
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("a persona written from scratch with its fields at the top level: the list and the Name field say to move them into 'persona'", async () => {
  await withPlayground("failed-fields-at-top", async (browser) => {
    const { page } = browser;
    await page.click("#tab-jsonc");
    await page.fill(
      "#jsonc",
      '{\n  "name": "Gorm",\n  "role": "the smith",\n  "persona": {"replyFormat": "text"}\n}\n',
    );
    // Before: "Unknown fields: name, role, persona.replyFormat. … check the spelling." (the spelling was right).
    assert.equal(
      await text(page, "#editor-status li.unknown-fields"),
      "Unknown fields: name (belongs in 'persona'), role (belongs in 'persona'), " +
        "persona.replyFormat (belongs in 'options'). The bridge ignores them (with a warning); " +
        "move each into the section it belongs in.",
    );
    await page.click("#tab-persona");
    assert.equal(
      await text(page, "#panel-persona .field.has-error .message"),
      "Name is required. The file has 'name' at the top level (ignored): move it into 'persona'.",
    );
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("layout: on a 400 px phone the conversation's title is tidy: the name on one line, the model on its own line", async () => {
  await withPlayground("failed-phone-title", async (browser) => {
    const { page } = browser;
    await page.setViewportSize({ width: 400, height: 800 });
    await startScriptNpc(page); // the longest model part: "scripted (the Model tab's script)"
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await page.locator("#conversation").scrollIntoViewIfNeeded();
    await screenshot(page, "13-phone-title");
    const parts = await page.evaluate(() =>
      [".npc-name", ".npc-model"].map((selector) => {
        const el = document.querySelector(selector)!;
        const range = document.createRange();
        range.selectNodeContents(el);
        const tops = new Set(
          [...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)),
        );
        const box = el.getBoundingClientRect();
        const panel = document.querySelector("#conversation")!.getBoundingClientRect();
        return { lines: tops.size, top: Math.round(box.top), inside: box.right <= panel.right + 0.5 };
      })
    );
    // Before: "Mira (mira) · scripted (the Model tab's" / "script)": the model broke across two lines.
    assert.deepEqual(parts.map((p) => [p.lines, p.inside]), [[1, true], [1, true]], JSON.stringify(parts));
    assert.ok(parts[1].top > parts[0].top, "the model is on its own line, under the name");
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("the bridge gone for a while, then back: the banner says to start the playground again, the header and Download state say the NPC went with it, and nothing stale stays after Reconnect", async () => {
  let served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    assert.equal(await text(page, ".npc-title"), "Mira (mira) · the bridge's model");
    await lastStateKept(page); // else there is no last state to restore below
    await served.stop();
    await page.locator("#banner").filter({ hasText: "The bridge went away." }).waitFor();
    // Before: the header still named Mira on her model, as if she ran.
    assert.equal(await text(page, ".npc-title"), "Mira (mira) · not running (the bridge went away)");
    // The page tries again and finds no server. Before: the banner gave a game's advice (allow this page's
    // origin with --allow-origin, an apiKey option), which the playground's own page never needs.
    await page.click("#reconnect");
    await page.locator("#banner").filter({ hasText: "Could not reach" }).waitFor();
    const banner = await text(page, "#banner");
    assert.match(
      banner,
      new RegExp(
        `^The bridge went away\\. Could not reach the playground's server at 127\\.0\\.0\\.1:${served.port}: ` +
          "is `oam playground` still running\\? Start it again on the same port\\. Everything you typed is kept",
      ),
    );
    assert.doesNotMatch(banner, /allow-origin|apiKey/);
    await page.fill("#player-line", "Are you still there?");
    await page.press("#player-line", "Enter");
    assert.equal(
      await text(page, "#conversation-message"),
      "The bridge is not connected: use Reconnect above. Your line is kept.",
    );
    await page.click("#tab-state-save");
    await page.click("#download-state");
    // Before: "Start the NPC first: there is no state to save.", with the NPC's name still in the header.
    assert.equal(
      await text(page, "#state-body .status"),
      "The NPC went with the bridge: there is no state to save. After Reconnect, restore the last state seen.",
    );
    served = await servePlayground(served.port);
    // Reconnect, unless the page's own retry got there first (the button then hides).
    await page.locator("#reconnect").click({ timeout: 1000 }).catch(() => {});
    await page.locator("#connection-status[data-state=open]").waitFor();
    // Before: "The bridge is not connected…" and the failed save stayed on the page after it connected.
    assert.equal(await text(page, "#conversation-message"), "");
    assert.equal(await text(page, "#state-body .status"), "");
    await page.click("#restore-last");
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Mira from the last state seen." })
      .waitFor();
    assert.equal(await text(page, ".npc-title"), "Mira (mira) · the bridge's model");
    assert.deepEqual(browser.errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(e)), []);
  } catch (error) {
    await screenshot(page, "failed-bridge-gone-a-while").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

/**
 * Waits until the page has kept a last state seen. It reads the NPC's state after Start and after each turn
 * without holding anything up, so on a busy machine a bridge stopped right after "Started Mira" could go
 * before it did, and "Restore the last state seen" was then never offered.
 */
async function lastStateKept(page: Page): Promise<void> {
  await page.waitForFunction(() =>
    JSON.parse(localStorage.getItem("oam-playground/v1") ?? "{}").lastState != null
  );
}

/** Where each button of the NPC panel's file toolbar is (rounded), and the NPC panel's right edge. */
async function fileToolbar(page: Page): Promise<{
  buttons: { name: string; top: number; left: number; right: number }[];
  panelRight: number;
  pageScrolls: boolean;
}> {
  return await page.evaluate(() => {
    const bar = document.querySelector("#load-persona")!.closest(".toolbar")!;
    const panel = document.querySelector("#editor")!;
    const buttons = [...bar.children].filter((el) => (el as HTMLElement).offsetParent !== null).map((el) => {
      const box = el.getBoundingClientRect();
      return {
        name: (el.textContent ?? "").trim(),
        top: Math.round(box.top),
        left: Math.round(box.left),
        right: Math.round(box.right),
      };
    });
    return {
      buttons,
      panelRight: Math.round(panel.getBoundingClientRect().right),
      pageScrolls: document.documentElement.scrollWidth > document.documentElement.clientWidth,
    };
  });
}

Deno.test("layout: the NPC panel's file toolbar (Undo load shown) is one row on 1440, 1366 and 1280 px laptops and on a 1024 px screen, and wraps inside the panel on a 400 px phone", async () => {
  await withPlayground("failed-file-toolbar", async (browser) => {
    const { page } = browser;
    await page.setInputFiles("#load-persona", [file("mira.jsonc", PERSONA)]);
    await page.locator("#undo-load").waitFor();
    const names = ["Load file…", "Save persona", "Export for the engine", "Undo load"];
    // Before: at 1440 px, then at 1366 and 1280 px, "Undo load" sat alone on a second row.
    for (const width of [1440, 1366, 1280, 1024]) {
      await page.setViewportSize({ width, height: 900 });
      const { buttons, pageScrolls } = await fileToolbar(page);
      assert.deepEqual(buttons.map((b) => b.name), names);
      assert.deepEqual(
        buttons.map((b) => b.top),
        buttons.map(() => buttons[0].top),
        `one row at ${width} px: ${JSON.stringify(buttons)}`,
      );
      assert.equal(pageScrolls, false, `no sideways scrolling at ${width} px`);
    }
    await page.setViewportSize({ width: 400, height: 800 });
    const { buttons, panelRight, pageScrolls } = await fileToolbar(page);
    assert.deepEqual(buttons.map((b) => b.name), names);
    assert.ok(new Set(buttons.map((b) => b.top)).size > 1, `wraps at 400 px: ${JSON.stringify(buttons)}`);
    for (const button of buttons) {
      assert.ok(button.right <= panelRight, `${button.name} inside the panel at 400 px`);
    }
    assert.equal(pageScrolls, false, "no sideways scrolling at 400 px");
    assert.deepEqual(browser.errors, []);
  });
});

/**
 * The conversation panel's header and Bark row: the lines of the title's text, the title's whole text, and
 * whether the Bark box shows its whole hint (the hint's width in the box's font against the box's inside).
 */
async function conversationHead(page: Page): Promise<{ title: string; lines: number; hintFits: boolean }> {
  return await page.evaluate(() => {
    const title = document.querySelector(".npc-title")!;
    const range = document.createRange();
    range.selectNodeContents(title);
    // Lines: boxes of the text that overlap in height are on one line (its parts differ in size).
    const boxes = [...range.getClientRects()].filter((r) => r.width > 0).sort((a, b) => a.top - b.top);
    let lines = 0;
    let bottom = -Infinity;
    for (const box of boxes) {
      if (box.top >= bottom) lines++;
      bottom = Math.max(box.top >= bottom ? -Infinity : bottom, box.bottom);
    }
    const input = document.querySelector<HTMLInputElement>("#bark-situation")!;
    const style = getComputedStyle(input);
    const canvas = document.createElement("canvas").getContext("2d")!;
    canvas.font = style.font;
    const inside = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return {
      title: title.textContent ?? "",
      lines,
      hintFits: canvas.measureText(input.placeholder).width <= inside,
    };
  });
}

Deno.test("layout: on 1280 and 1366 px laptops the conversation's title is one line (also by a long emotion) and the Bark box shows its whole hint", async () => {
  await withPlayground("failed-conversation-head", async (browser) => {
    const { page } = browser;
    const persona = { npc: "mira", persona: { name: "Mira" } };
    const reply = { emotion: "suspicious", line: "Who sent you?", player_options: ["A", "B", "C"] };
    const script = [{ json: { ...reply, ends_conversation: false } }];
    await page.setInputFiles("#load-persona", [file("mira.jsonc", persona), file("mira.steps.json", script)]);
    await loaded(page, "mira.jsonc");
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    const check = async (emotion: string) => {
      // Before: at 1280 and 1366 px the title took two lines and the hint read "the greeting, or e.g. It starts".
      for (const width of [1440, 1366, 1280]) {
        await page.setViewportSize({ width, height: 800 });
        const head = await conversationHead(page);
        assert.equal(head.title, "Mira (mira) · scripted (the Model tab's script)");
        assert.equal(head.lines, 1, `the title on one line at ${width} px by the emotion ${emotion}`);
        assert.equal(head.hintFits, true, `the Bark box's whole hint shows at ${width} px`);
      }
    };
    await check("–");
    await page.fill("#player-line", "Hello.");
    await page.press("#player-line", "Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    assert.equal(await text(page, ".portrait"), "suspicious");
    await check("suspicious");
    await screenshot(page, "11-laptop-1280");
    assert.deepEqual(browser.errors, []);
  });
});

/**
 * The top bar's visible parts: each one's name, top, right edge and number of text lines (the distinct tops of
 * its text's line boxes), with the bar's rows and height and whether the full text of each pill can still be read.
 */
async function topBar(page: Page): Promise<{
  parts: {
    name: string;
    top: number;
    bottom: number;
    right: number;
    lines: number;
    clipped: boolean;
    title: string;
  }[];
  rows: number;
  height: number;
  pageScrolls: boolean;
}> {
  return await page.evaluate(() => {
    const bar = document.querySelector(".topbar")!;
    const parts = [...bar.children].filter((el) =>
      (el as HTMLElement).offsetParent !== null && (el.textContent ?? "").trim() !== ""
    ).map((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const tops = new Set(
        [...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)),
      );
      const box = el.getBoundingClientRect();
      const html = el as HTMLElement;
      return {
        name: (el.textContent ?? "").trim(),
        top: Math.round(box.top),
        bottom: Math.round(box.bottom),
        right: Math.round(box.right),
        lines: tops.size,
        clipped: html.scrollWidth > html.clientWidth,
        title: html.title,
      };
    });
    // Rows: a part that starts below every part of the row so far begins a new one.
    let rows = 0;
    let bottom = -Infinity;
    for (const part of [...parts].sort((a, b) => a.top - b.top)) {
      if (part.top >= bottom) {
        rows++;
        bottom = part.bottom;
      } else bottom = Math.max(bottom, part.bottom);
    }
    return {
      parts,
      rows,
      height: Math.round(bar.getBoundingClientRect().height),
      pageScrolls: document.documentElement.scrollWidth > document.documentElement.clientWidth,
    };
  });
}

Deno.test("layout: the top bar is one row on a laptop; on a 400 px phone it is two short rows, each part on one line (also with Reconnect)", async () => {
  await withPlayground("failed-top-bar", async (browser, served) => {
    const { page } = browser;
    const names = [
      "oam playground",
      "Model: scripted (test) · available",
      "Connected to the bridge",
      "JSON-RPC log",
    ];
    await textBecomes(page, "#model-status", names[1]); // its width is measured
    const wide = await topBar(page);
    assert.deepEqual(wide.parts.map((p) => p.name), names);
    assert.equal(wide.rows, 1, `one row at 1440 px: ${JSON.stringify(wide)}`);
    // Before: at 400 px the title, both pills and the log button each took two or three lines (a bar 82 px
    // high of squeezed words).
    await page.setViewportSize({ width: 400, height: 800 });
    const { parts, rows, height, pageScrolls } = await topBar(page);
    for (const part of parts) {
      assert.equal(part.lines, 1, `${part.name} on one line at 400 px: ${JSON.stringify(parts)}`);
      assert.ok(part.right <= 400, `${part.name} inside the page at 400 px`);
      // A pill cut short keeps its whole text in its tooltip (a screen reader reads the whole text anyway).
      if (part.clipped) assert.equal(part.title, part.name, `${part.name}: the whole text in the tooltip`);
    }
    assert.ok(rows <= 2, `two rows at most: ${JSON.stringify(parts)}`);
    assert.ok(height <= 80, `the bar is ${height} px high`);
    assert.equal(pageScrolls, false, "no sideways scrolling at 400 px");
    // The pills say the same as before to a screen reader.
    assert.equal(await text(page, "#connection-status"), "Connected to the bridge");
    await textBecomes(page, "#model-status", "Model: scripted (test) · available");
    await screenshot(page, "09-phone-top-bar");
    // The bridge gone: "Not connected" and Reconnect join the second row.
    await served.stop();
    await page.locator("#connection-status[data-state=closed]").waitFor();
    const closed = await topBar(page);
    assert.ok(closed.parts.some((p) => p.name === "Reconnect"), JSON.stringify(closed.parts));
    for (const part of closed.parts) {
      assert.equal(part.lines, 1, `${part.name} on one line at 400 px: ${JSON.stringify(closed.parts)}`);
      assert.ok(part.right <= 400, `${part.name} inside the page at 400 px`);
    }
    assert.ok(closed.rows <= 2, `two rows at most: ${JSON.stringify(closed.parts)}`);
    assert.deepEqual(browser.errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(e)), []);
  });
});

Deno.test("layout: on a phone (one column) a link by Start takes the designer down to the player's line, past the persona form", async () => {
  await withPlayground("failed-phone-talk-link", async (browser) => {
    const { page } = browser;
    await page.setViewportSize({ width: 400, height: 800 });
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    const line = page.locator("#player-line");
    const inView = () =>
      line.evaluate((el) => {
        const box = el.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= innerHeight;
      });
    assert.equal(await inView(), false, "the player's line is far below the persona form");
    // Before: the only way down was scrolling past every persona field (the link showed only to a keyboard).
    const link = page.locator("#editor a.skip-link");
    const box = await link.boundingBox();
    assert.ok(box !== null && box.width > 20 && box.height > 10, `the link shows: ${JSON.stringify(box)}`);
    assert.ok(box.y + box.height <= 800, "next to Start, on the first screen");
    await link.click();
    assert.equal(await page.evaluate(() => document.activeElement?.id), "player-line");
    assert.equal(await inView(), true, "the player's line is on the screen");
    assert.equal(new URL(page.url()).hash, "", "the address stays the same");
    await screenshot(page, "10-phone-talk");
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("layout: on a phone, opening the JSON-RPC log brings it on the screen (it is below every panel)", async () => {
  await withPlayground("failed-phone-log", async (browser) => {
    const { page } = browser;
    await page.setViewportSize({ width: 400, height: 800 });
    await page.click("#toggle-log");
    assert.equal(await page.getAttribute("#toggle-log", "aria-pressed"), "true");
    // Before: the log opened at the foot of a page several screens long; the button seemed to do nothing.
    const top = await page.locator(".rpc-log").evaluate((el) => Math.round(el.getBoundingClientRect().top));
    assert.ok(top >= 0 && top < 800, `the log's top is on the screen: ${top}`);
    assert.equal(await page.evaluate(() => document.activeElement?.id), "toggle-log", "the focus stays");
    // On a laptop the log is a drawer under the panels: nothing scrolls.
    await page.click("#toggle-log");
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.click("#toggle-log");
    assert.equal(await page.evaluate(() => scrollY), 0);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("accessible: every control has a label or a name, tabs work with the keyboard, a line is sent with Enter", async () => {
  await withPlayground("failed-accessible", async (browser) => {
    const { page } = browser;
    for (const tab of ["persona", "options", "tools", "world", "memory", "model", "jsonc"]) {
      await page.click(`#tab-${tab}`);
      const { checked, unnamed } = await page.evaluate(() => {
        const controls = [...document.querySelectorAll<HTMLElement>("input, select, textarea, button")]
          .filter((el) => el.offsetParent !== null || el.classList.contains("visually-hidden"));
        const unnamed = controls.filter((el) => {
          const labelled = (el as HTMLInputElement).labels?.length ||
            el.getAttribute("aria-label") || el.getAttribute("aria-labelledby");
          const named = el.tagName === "BUTTON" && (el.textContent ?? "").trim() !== "";
          return !labelled && !named;
        }).map((el) => el.outerHTML.slice(0, 120));
        return { checked: controls.length, unnamed };
      });
      assert.ok(checked >= 20, `${checked} controls looked at on the ${tab} tab`);
      assert.deepEqual(unnamed, [], `unlabelled controls on the ${tab} tab`);
    }
    // Tabs: arrow keys move the selection and the focus.
    await page.focus("#tab-persona");
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.getAttribute("#tab-options", "aria-selected"), "true");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "tab-options");
    assert.equal(await page.isVisible("#panel-options"), true);
    await page.keyboard.press("End");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "tab-jsonc");
    // The model: the bridge's own (chosen with the keyboard), named in the header with its availability.
    await page.click("#tab-model");
    await page.focus("#model-script");
    await page.keyboard.press("ArrowUp");
    assert.equal(await page.isChecked("#model-bridge"), true);
    await textBecomes(page, "#model-status", "Model: scripted (test) · available");
    await textBecomes(page, "#bridge-model-detail", /^scripted \(test\), available$/);
    // Start with the keyboard, then talk with Enter.
    await page.focus("#start");
    await page.keyboard.press("Enter");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    await page.focus("#player-line");
    await page.keyboard.type("Hello");
    await page.keyboard.press("Enter");
    await turnDone(page, 1);
    assert.equal(await text(page, '.turn[data-turn="1"] .line'), "(the bridge's model)");
    // Back to the script: its first step calls a client tool, answered with the keyboard only.
    await page.click("#tab-model");
    await page.focus("#model-bridge");
    await page.keyboard.press("ArrowDown");
    assert.equal(await page.isChecked("#model-script"), true);
    await page.focus("#start");
    await page.keyboard.press("Enter");
    // (The first start's note is still there until the restart clears the conversation: wait for the result.)
    await page.locator("#start-result .note").filter({ hasText: "Started Mira (mira)." }).waitFor();
    await npcReady(page);
    await page.focus("#player-line");
    await page.keyboard.type("Hello again");
    await page.keyboard.press("Enter");
    await page.locator(".tool-call.pending").waitFor();
    assert.equal(
      await page.evaluate(() => document.activeElement?.tagName),
      "TEXTAREA",
      "focus is in the answer box",
    );
    await page.keyboard.type("3 ales");
    await page.keyboard.press("Tab"); // the "send as" menu
    await page.keyboard.press("Tab"); // Send answer
    await page.keyboard.press("Enter");
    await turnDone(page, 1);
    assert.equal(await text(page, '.turn[data-turn="1"] .tool-result'), "→ 3 ales");
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("the model: a playground started with a model (--script, --model) runs new NPCs on it until the designer chooses; the on-device model's default is the page's script", async () => {
  // Before, the page always started on its own sample script: `oam playground --script x.steps.json` (or
  // --model openai:…) seemed to do nothing until the designer found the Model tab.
  const served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    assert.equal(await page.isChecked("#model-bridge"), true);
    await textBecomes(page, "#model-status", "Model: scripted (test) · available");
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    await page.fill("#player-line", "Hello");
    await page.press("#player-line", "Enter");
    await turnDone(page, 1);
    assert.equal(await text(page, '.turn[data-turn="1"] .line'), "(the bridge's model)");
    // The designer's own choice is kept across a reload, whatever the server runs.
    await page.click("#tab-model");
    await page.check("#model-script");
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.equal(await page.isChecked("#model-script"), true);
    assert.equal(
      await text(page, "#model-status"),
      "Model: scripted (the Model tab's script) · always available",
    );
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-model-default").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
  const onDevice = await servePlayground(0, { name: "system", label: "the on-device model (system)" });
  const fresh = await openPage(onDevice.url);
  try {
    assert.equal(await fresh.page.isChecked("#model-script"), true);
    assert.equal(
      await text(fresh.page, "#model-status"),
      "Model: scripted (the Model tab's script) · always available",
    );
    assert.deepEqual(fresh.errors, []);
  } finally {
    await fresh.close();
    await onDevice.stop();
  }
});

Deno.test("the model: after the playground is restarted with another model, the page that reconnects names the new one", async () => {
  let served = await servePlayground();
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await textBecomes(page, "#model-status", "Model: scripted (test) · available");
    const port = served.port;
    await served.stop();
    await page.locator("#connection-status[data-state=closed]").waitFor();
    served = await servePlayground(port, { name: "openai", label: "openai: http://127.0.0.1:8080/v1#qwen" });
    // Reconnect, unless the page's own retry got there first (the button then hides).
    await page.locator("#reconnect").click({ timeout: 1000 }).catch(() => {});
    await page.locator("#connection-status[data-state=open]").waitFor();
    await page.locator("#model-status").filter({ hasText: "openai: http://127.0.0.1:8080/v1#qwen" })
      .waitFor();
    await textBecomes(page, "#model-status", "Model: openai: http://127.0.0.1:8080/v1#qwen · available");
    await textBecomes(
      page,
      "#bridge-model-detail",
      /^openai: http:\/\/127\.0\.0\.1:8080\/v1#qwen, available$/,
    );
  } catch (error) {
    await screenshot(page, "failed-model-restart").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("the model: with --script, the Model tab says the bridge plays that file and that the page's own script is not used until chosen", async () => {
  // As `oam playground --script personas/shopkeeper.steps.json` serves it.
  const served = await servePlayground(0, {
    name: "scripted",
    label: "scripted (personas/shopkeeper.steps.json)",
    script: "personas/shopkeeper.steps.json",
  });
  const browser = await openPage(served.url);
  const { page } = browser;
  const inUse = "New NPCs run on the bridge's model, which plays the script personas/shopkeeper.steps.json " +
    "(given when the playground started). The page's script below is not used: choose “The page's script” " +
    "above to edit and run it.";
  try {
    await page.click("#tab-model");
    assert.equal(await page.isChecked("#model-bridge"), true);
    // The box is named as the radio button that chooses it (before, its label began "Script:").
    assert.equal(
      await accessibleName(page, "#script"),
      'The page\'s script: a list of steps, or {"steps": […], "fallback": step}',
    );
    // Before: the page's sample script stood in an editable box as if it were what runs.
    assert.equal(await text(page, "#script-in-use"), inUse);
    assert.equal(await page.locator("#script").isEditable(), false);
    assert.match(
      await accessibleDescription(page, "#script"),
      /^New NPCs run on the bridge's model, which plays/,
    );
    // Choosing the page's script: the note goes, the box can be edited, and the header says which runs.
    await page.check("#model-script");
    assert.equal(await page.locator("#script-in-use").isVisible(), false);
    assert.equal(await page.locator("#script").isEditable(), true);
    assert.equal(
      await text(page, "#model-status"),
      "Model: scripted (the Model tab's script) · always available",
    );
    await page.check("#model-bridge");
    assert.equal(await page.locator("#script").isEditable(), false);
    assert.equal(await text(page, "#script-in-use"), inUse);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-model-script-in-use").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
  // Another bridge model (--model): the note names it.
  const openai = await servePlayground(0, { name: "openai", label: "openai: http://127.0.0.1:8080/v1#qwen" });
  const other = await openPage(openai.url);
  try {
    await other.page.click("#tab-model");
    assert.equal(
      await text(other.page, "#script-in-use"),
      "New NPCs run on the bridge's model (openai: http://127.0.0.1:8080/v1#qwen). The page's script below is " +
        "not used: choose “The page's script” above to edit and run it.",
    );
    assert.equal(await other.page.locator("#script").isEditable(), false);
  } finally {
    await other.close();
    await openai.stop();
  }
});

Deno.test("the help's --script example: the page's sample persona fails on the shopkeeper's script and says why, then the shopkeeper's persona plays it", async () => {
  const script = JSON.parse(
    await Deno.readTextFile(new URL("../../personas/shopkeeper.steps.json", import.meta.url)),
  );
  const persona = await Deno.readTextFile(new URL("../../personas/shopkeeper.jsonc", import.meta.url));
  // As `oam playground --script personas/shopkeeper.steps.json` serves it.
  const served = await servePlayground(0, {
    name: "scripted",
    label: "scripted (personas/shopkeeper.steps.json)",
  }, { steps: script });
  const browser = await openPage(served.url);
  const { page } = browser;
  const talk = async (turn: number) => {
    await page.fill("#player-line", "An ale, please.");
    await page.press("#player-line", "Enter");
    await page.locator(`.turn[data-turn="${turn}"] .tool-call.pending textarea`).fill("3 ales at 4 gold.");
    await page.locator(`.turn[data-turn="${turn}"]`).getByRole("button", { name: "Send answer" }).click();
    await turnDone(page, turn);
  };
  try {
    // The page's own sample (Mira, answering in JSON) on the bridge's script, as a first visit starts.
    assert.equal(await page.isChecked("#model-bridge"), true);
    await page.click("#start");
    await page.locator("ol.turns li.note").filter({ hasText: "Started Mira" }).waitFor();
    await npcReady(page);
    await talk(1);
    const shownError = await text(page, '.turn[data-turn="1"] .meta .error');
    assert.match(shownError, /the answer is not valid JSON: \[happy\]/);
    // The bridge's own advice (in the wire's terms) is left out: the page's hint below says it once.
    assert.doesNotMatch(shownError, /A text step played/);
    // Before: the error alone; the help text of `oam playground` was the only place that said why.
    const hint = await text(page, '.turn[data-turn="1"] .meta .hint');
    assert.match(hint, /^A text step played where Mira answers in JSON \(reply format “automatic”\)/);
    assert.match(hint, /personas\/shopkeeper\.steps\.json/);
    assert.match(hint, /personas\/shopkeeper\.jsonc/);
    const announced = await page.locator("#conversation-body > p.visually-hidden[aria-live]").textContent();
    assert.ok(announced?.endsWith(hint), "the hint is announced with the failure");

    // What the hint says to do: load the persona the script was written for.
    await page.setInputFiles("#load-persona", file("shopkeeper.jsonc", persona));
    // The page reads the file asynchronously: Start before it is read would restart the sample persona.
    await page.locator("#start-result").filter({ hasText: "Loaded shopkeeper.jsonc" }).waitFor();
    await page.click("#start");
    // Both personas are named Mira and the first start's note stays until the restart is done: the start's
    // result (it replaced the load's note) says when the new NPC runs and the conversation is fresh.
    await page.locator("#start-result .note").filter({ hasText: "Started Mira (mira)." }).waitFor();
    await npcReady(page);
    await talk(1);
    assert.equal(await text(page, '.turn[data-turn="1"] .line'), "We have 3 ales at 4 gold. What'll it be?");
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-script-mismatch").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("layout: a long word (a URL, a made-up name) in a reply, a line or a tool's arguments wraps inside its bubble", async () => {
  const word = "Supercalifragilistic".repeat(12);
  const reply = {
    emotion: "happy",
    line: `Try ${word}.`,
    player_options: ["A", "B", "C"],
    ends_conversation: false,
  };
  const served = await servePlayground(0, { name: "scripted", label: "scripted (test)" }, {
    steps: [],
    fallback: { json: reply },
  });
  const browser = await openPage(served.url);
  const { page } = browser;
  try {
    await page.click("#start");
    await npcReady(page);
    await page.fill("#player-line", `Is it ${word}?`);
    await page.press("#player-line", "Enter");
    await turnDone(page, 1);
    const overflows = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>(".turn .player, .turn .npc")]
        .filter((box) => box.scrollWidth > box.clientWidth)
        .map((box) => `${box.className}: ${box.scrollWidth} > ${box.clientWidth}`)
    );
    // Before: the word ran out of the bubble (and out of the conversation, clipped at its edge).
    assert.deepEqual(overflows, []);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-long-word").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("reload: the conversation says the last NPC can be brought back, and its Restore button brings it back", async () => {
  await withPlayground("failed-reload-restore", async (browser) => {
    const { page } = browser;
    await page.click("#start");
    await npcReady(page);
    await page.fill("#player-line", "Hello, Mira.");
    await page.press("#player-line", "Enter");
    await turnDone(page, 1);
    // The page keeps the NPC's state once it has read it after the turn.
    await page.waitForFunction(() => JSON.parse(localStorage.getItem("oam-playground/v1") ?? "{}").lastState);

    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    // Before: only "Start the NPC…": the way back was a button in the State panel's Save tab.
    const offer = page.locator("ol.turns li.note").filter({ hasText: "The NPC of your last visit" });
    assert.match(
      (await offer.textContent()) ?? "",
      /^The NPC of your last visit \(Mira, .+\) went with the page's old connection\. Restore it$/,
    );
    await offer.getByRole("button", { name: "Restore it" }).click();
    await page.locator("ol.turns li.note").filter({ hasText: "Restored Mira from the last state seen." })
      .waitFor();
    await npcReady(page);
    const history = await page.locator("li.restored ol.history li").evaluateAll((items) =>
      items.map((li) => [...li.childNodes].map((n) => n.textContent?.trim()).filter((t) => t).join(" | "))
    );
    assert.deepEqual(history, ["Player | Hello, Mira.", "Mira | neutral | (the bridge's model)"]);
    // The offer went with the restore: a second click cannot restore again over the running NPC.
    assert.equal(await offer.count(), 0);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("long replies: a designer who scrolled up to read an earlier turn stays there while a reply comes in; at the bottom, the conversation follows it", async () => {
  const long = (n: number) => ({
    json: {
      emotion: "happy",
      line: `Reply ${n}. ${
        "The rain has not stopped for three days, and the road to the mill is mud. ".repeat(8)
      }`,
      player_options: ["More", "Go on", "Bye"],
      ends_conversation: false,
    },
  });
  const served = await servePlayground(0, { name: "scripted", label: "scripted (test)" }, {
    steps: [
      long(1),
      long(2),
      long(3),
      { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
      long(4),
      { toolCalls: [{ name: "check_stock", arguments: { item: "stew" } }] },
      long(5),
    ],
  });
  const browser = await openPage(served.url);
  const { page } = browser;
  const list = page.locator("ol.turns");
  const atBottom = () => list.evaluate((ol) => ol.scrollHeight - ol.scrollTop - ol.clientHeight < 2);
  try {
    await page.click("#start");
    await npcReady(page);
    for (let n = 1; n <= 4; n++) {
      await page.fill("#player-line", `Line ${n}`);
      await page.press("#player-line", "Enter");
      if (n < 4) await turnDone(page, n);
    }
    // Turn 4 waits for check_stock (a reply that takes its time): the designer scrolls up to read turn 1, and
    // the answer is sent without scrolling the conversation back to it.
    await page.locator(".tool-call.pending").waitFor();
    await list.evaluate((ol) => ol.scrollTop = 0);
    await page.locator(".tool-call.pending button", { hasText: "Send answer" }).evaluate((b) =>
      (b as HTMLButtonElement).click()
    );
    await turnDone(page, 4);
    // Before: every streamed piece and the end of the reply scrolled the conversation to its bottom.
    assert.equal(await list.evaluate((ol) => ol.scrollTop), 0);

    // At the bottom, the conversation follows the reply as it grows.
    await list.evaluate((ol) => ol.scrollTop = ol.scrollHeight);
    await sayUntilCall(page, "Line 5");
    // The answer box took the focus; the page has drawn it (its scroll events are in) before the answer goes.
    await page.evaluate(() =>
      new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))
    );
    // Before: the answer form was added below the bottom and the focus scrolled only its box into view, which
    // read as "scrolled up": the reply after the answer was not followed.
    assert.equal(await atBottom(), true, "the whole answer form is in view");
    await page.locator(".tool-call.pending button", { hasText: "Send answer" }).evaluate((b) =>
      (b as HTMLButtonElement).click()
    );
    await turnDone(page, 5);
    assert.equal(await atBottom(), true);
    assert.deepEqual(browser.errors, []);
  } catch (error) {
    await screenshot(page, "failed-scrolled-up").catch(() => {});
    throw error;
  } finally {
    await browser.close();
    await served.stop();
  }
});

Deno.test("reload in the middle of a turn: the line that was being answered is back in the player's box, and the conversation says so", async () => {
  await withPlayground("failed-reload-mid-turn", async (browser) => {
    const { page } = browser;
    await startScriptNpc(page); // the sample script: the first turn waits for check_stock
    await sayUntilCall(page, "An ale, please, and the news.");
    assert.equal(await page.inputValue("#player-line"), "");

    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    // Before: the box was empty; the line had left it when it was said, and the reload cut its turn off.
    assert.equal(await page.inputValue("#player-line"), "An ale, please, and the news.");
    await page.locator("ol.turns li.note").filter({
      hasText:
        "The reload cut off the reply to “An ale, please, and the news.”: your line is back in the box.",
    }).waitFor();
    // Only once: a second reload has nothing to say about it.
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.equal(await page.locator("ol.turns li.note").filter({ hasText: "The reload cut off" }).count(), 0);
    assert.equal(await page.inputValue("#player-line"), "An ale, please, and the news.");
    assert.deepEqual(browser.errors, []);
  });
});
