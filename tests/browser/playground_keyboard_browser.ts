/// <reference lib="dom" />
/**
 * The NPC playground with the keyboard and a screen reader only. After Start, Say, Cancel reply, an answered
 * call, a world or memory edit (saved, cancelled, Escape), a removed value or tool, and putting a restored
 * persona into the editor, the focus lands on a control next to what went away, not on the page's body
 * (where a screen reader loses its place). A call waiting for its answer reads its arguments from the
 * answer box; a failed bark, the end of a conversation, a reply's warnings and a warning note are announced
 * (a restore's warnings once each, a note after a reply after it), and a bridge that went away once (by the
 * alert banner);
 * the focus ring shows on the dark top bar and log; the status dots are not read out; a skip link reaches the
 * player's line from the top of the page and from Start.
 *
 *   deno task test:browser      (needs Chromium: apt-get install -y chromium, or OAM_CHROMIUM=<path>)
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.2";
import { file, loaded, npcReady, screenshot, WAIT_MS, withPlayground } from "./browser_fixture.ts";

/** The focused element, as `tag#id` (`body#` when the focus was lost). */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement;
    return el ? `${el.tagName.toLowerCase()}#${el.id}` : "none";
  });
}

/** What a screen reader names the focused control (`body` when the focus was lost). */
function focusName(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return "body";
    const label = (el as HTMLInputElement).labels?.[0]?.textContent;
    return (el.ariaLabel ?? label ?? el.textContent ?? "").trim();
  });
}

/** The accessible description Chromium computes for the element `selector` (what a screen reader reads). */
async function accessibleDescription(page: Page, selector: string): Promise<string> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { root } = await cdp.send("DOM.getDocument", { depth: 0 });
    const { nodeId } = await cdp.send("DOM.querySelector", { nodeId: root.nodeId, selector });
    const { nodes } = await cdp.send("Accessibility.getPartialAXTree", { nodeId, fetchRelatives: false });
    return String(nodes[0]?.description?.value ?? "");
  } finally {
    await cdp.detach();
  }
}

/** The file chooser a page opened: the id of its `<input type=file>` and whether it takes several files. */
interface OpenedChooser {
  input: string;
  multiple: boolean;
}

/**
 * Runs `open` (which should make the page open a file chooser) and returns the chooser it opened. Chromium is
 * told to intercept file choosers, and has confirmed it, before `open` runs. Playwright's
 * `waitForEvent("filechooser")` switches the interception on without waiting for Chromium's answer: a key
 * press sent right after it could reach the page first, headless Chromium then cancelled the chooser and the
 * event never came.
 */
async function fileChooserOpenedBy(page: Page, open: () => Promise<void>): Promise<OpenedChooser> {
  const cdp = await page.context().newCDPSession(page);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await cdp.send("Page.enable");
    await cdp.send("Page.setInterceptFileChooserDialog", { enabled: true });
    const opened = new Promise<{ backendNodeId?: number; mode: string }>((resolve, reject) => {
      cdp.once("Page.fileChooserOpened", resolve);
      timer = setTimeout(() => reject(new Error("No file chooser opened.")), WAIT_MS);
    });
    const [{ backendNodeId, mode }] = await Promise.all([opened, open()]);
    const { node } = await cdp.send("DOM.describeNode", { backendNodeId });
    const attributes = node.attributes ?? [];
    const id = attributes[attributes.indexOf("id") + 1] ?? "";
    return { input: id, multiple: mode === "selectMultiple" };
  } finally {
    clearTimeout(timer);
    await cdp.send("Page.setInterceptFileChooserDialog", { enabled: false }).catch(() => {});
    await cdp.detach();
  }
}

/** Picks the page's own script in the Model tab (its first step calls check_stock), with the keyboard. */
async function useScript(page: Page): Promise<void> {
  await page.focus("#tab-model");
  await page.keyboard.press("Enter");
  await page.focus("#model-bridge");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.isChecked("#model-script"), true);
}

/** Starts the NPC from the Start button with the keyboard and waits until it runs. */
async function startWithKeyboard(page: Page): Promise<void> {
  await page.focus("#start");
  await page.keyboard.press("Enter");
  await page.locator("#start-result .note").filter({ hasText: "Started Mira (mira)." }).waitFor();
  await npcReady(page);
}

Deno.test("keyboard: the focus stays on Start after it runs, goes to the player's line after an answered call, after Say and after a picked player option; the end of a conversation is announced", async () => {
  await withPlayground("failed-keyboard-focus", async (browser) => {
    const { page } = browser;
    await useScript(page);
    // Before: Start was disabled while it ran, so the focus fell to the page's body and stayed there.
    await startWithKeyboard(page);
    assert.equal(await focused(page), "button#start");

    // Turn 1 waits for check_stock: the answer box is focused and its description reads the arguments.
    await page.focus("#player-line");
    await page.keyboard.type("An ale, please.");
    await page.keyboard.press("Enter");
    await page.locator(".tool-call.pending").waitFor();
    const box = await page.evaluate(() => document.activeElement?.id ?? "");
    assert.match(box, /^answer-/, "focus is in the answer box");
    assert.match(await accessibleDescription(page, `#${box}`), /^\{"item":"ale"\} /);
    await page.keyboard.type("3");
    await page.keyboard.press("Tab"); // the "send as" menu
    await page.keyboard.press("Tab"); // Send answer
    await page.keyboard.press("Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    // Before: the answer form went away with the focus in it, and the focus fell to the body.
    assert.equal(await focused(page), "textarea#player-line");

    // Turn 2 with the Say button: Say is disabled while the reply runs; the focus goes to the player's line.
    await page.keyboard.type("One ale, please.");
    await page.keyboard.press("Tab"); // the turn's context
    await page.keyboard.press("Tab"); // Say
    assert.equal(await focused(page), "button#send");
    await page.keyboard.press("Enter");
    await page.locator('.turn[data-turn="2"] .npc[aria-busy="false"]').waitFor();
    assert.equal(await focused(page), "textarea#player-line");

    // Turn 3 from a player option: its reply ends the conversation, and the announcement says so too.
    await page.focus('.turn[data-turn="2"] .player-options button');
    await page.keyboard.press("Enter");
    // Before: the focus stayed on the picked option, back in turn 2; like Say, the pick hands it to the
    // player's line, where the designer goes on.
    assert.equal(await focused(page), "textarea#player-line");
    await page.locator('.turn[data-turn="3"] .npc[aria-busy="false"]').waitFor();
    assert.equal(await focused(page), "textarea#player-line");
    assert.equal(
      await page.locator("#conversation-body > p.visually-hidden[aria-live]").textContent(),
      "Mira (amused): Off with you, then. Come back when it rains. Mira ended the conversation.",
    );
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("keyboard: Let it time out and Cancel reply hand the focus to the player's line; a failed bark is announced", async () => {
  await withPlayground("failed-keyboard-cancel", async (browser) => {
    const { page } = browser;
    await useScript(page);
    await startWithKeyboard(page);
    await page.focus("#player-line");
    await page.keyboard.type("Hello");
    await page.keyboard.press("Enter");
    await page.locator(".tool-call.pending").waitFor();
    // "Let it time out" removes the answer form it is in: the focus goes to the player's line.
    for (let i = 0; i < 4; i++) await page.keyboard.press("Tab"); // menu, Send answer, Send as error, …
    assert.equal(await focusName(page), "Let it time out");
    await page.keyboard.press("Enter");
    assert.equal(await focused(page), "textarea#player-line");
    await page.focus("#cancel");
    await page.keyboard.press("Enter");
    await page.locator('.turn[data-turn="1"].cancelled').waitFor();
    // Before: Cancel reply was disabled once the turn ended, and the focus fell to the body.
    assert.equal(await focused(page), "textarea#player-line");

    // A bark that fails (the NPC is gone from the bridge): the error is said, not only shown in the list.
    await page.evaluate(() =>
      (globalThis as unknown as { playground: { running: { npc: { delete(): Promise<void> } } } })
        .playground.running.npc.delete()
    );
    await page.focus("#bark-situation");
    await page.keyboard.press("Tab");
    assert.equal(await focused(page), "button#bark");
    await page.keyboard.press("Enter");
    await page.locator("li.bark.failed").waitFor();
    const announced = await page.locator("#conversation-body > p.visually-hidden[aria-live]").textContent();
    assert.match(announced ?? "", /^The bark failed: /);
    assert.deepEqual(browser.errors, []);
  });
});

/** Presses Tab until the focus is on the player's line (at most `max` times); returns how many it took. */
async function tabsToLine(page: Page, max: number): Promise<number> {
  for (let tabs = 1; tabs <= max; tabs++) {
    await page.keyboard.press("Tab");
    if (await focused(page) === "textarea#player-line") return tabs;
    if (await focusName(page) === "Skip to your line") {
      const shown = await page.evaluate(() =>
        (document.activeElement as HTMLElement).getBoundingClientRect().width
      );
      assert.ok(shown > 1, "the skip link shows when it has the focus");
      await page.keyboard.press("Enter");
      assert.equal(await focused(page), "textarea#player-line", "the skip link puts the focus on the line");
      return tabs;
    }
  }
  return Infinity;
}

Deno.test("keyboard: the player's line is two Tabs from Start and one from the top of the page (a skip link)", async () => {
  await withPlayground("failed-keyboard-skip", async (browser) => {
    const { page } = browser;
    // Before: 14 Tabs from Start (Apply, the editor's tabs, every persona field) to the player's line.
    await startWithKeyboard(page);
    assert.equal(await focused(page), "button#start");
    assert.equal(await tabsToLine(page, 20), 2);
    await page.keyboard.type("Hello");
    assert.equal(await page.inputValue("#player-line"), "Hello");
    // From the top of a freshly loaded page: the first Tab.
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    assert.equal(await tabsToLine(page, 20), 1);
    // Hidden until it has the focus: it takes no room on the page.
    await page.keyboard.press("Shift+Tab");
    const hidden = await page.locator("a.skip-link").evaluateAll((links) =>
      links.map((a) => a.getBoundingClientRect().width)
    );
    assert.ok(hidden.length > 0 && hidden.every((w) => w <= 1), `the skip links are hidden: ${hidden}`);
    assert.equal(new URL(page.url()).hash, "", "the address stays the same");
    assert.deepEqual(browser.errors, []);
  });
});

/** What the conversation's live region says now. */
async function announced(page: Page): Promise<string> {
  return (await page.locator("#conversation-body > p.visually-hidden[aria-live]").textContent()) ?? "";
}

Deno.test("screen reader: a reply's warnings and a warning note in the conversation are announced, not only shown", async () => {
  await withPlayground("failed-keyboard-warnings", async (browser) => {
    const { page } = browser;
    const persona = { npc: "mira", persona: { name: "Mira" }, options: { replyFormat: "text" } };
    const script = [
      { text: "[hungover] What do you want?" }, // an unknown tag: the reply carries a warning
      { text: "[happy] Hello again.", delayMs: 60_000 }, // still running when the NPC is started again
    ];
    await page.setInputFiles("#load-persona", [file("mira.jsonc", persona), file("mira.steps.json", script)]);
    await loaded(page, "mira.jsonc");
    await startWithKeyboard(page);
    await page.focus("#player-line");
    await page.keyboard.type("Hello");
    await page.keyboard.press("Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    const warning = (await page.locator('.turn[data-turn="1"] li.warning').textContent()) ?? "";
    assert.match(warning, /hungover/);
    // Before: only the line was said; the warning under it was for sighted users alone.
    assert.equal(await announced(page), `Mira (neutral): What do you want? Warning: ${warning}`);

    // A warning note of the conversation: the running reply was cancelled by a new start.
    await page.keyboard.type("Again");
    await page.keyboard.press("Enter");
    await page.locator('.turn[data-turn="2"]').waitFor();
    await page.focus("#start");
    await page.keyboard.press("Enter");
    const note = page.locator("ol.turns li.note.warning");
    await note.waitFor();
    assert.match(await note.textContent() ?? "", /^The reply to “Again” was still running/);
    // Before: "Reply cancelled." was the last thing said; the note that says why was not read.
    assert.match(await announced(page), /The reply to “Again” was still running: it was cancelled/);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("screen reader: each file button is one control with a clear name, and opens the file chooser from the keyboard", async () => {
  await withPlayground("failed-keyboard-file-buttons", async (browser) => {
    const { page } = browser;
    await page.focus("#tab-state-save");
    await page.keyboard.press("Enter");
    await page.focus("#tab-model");
    await page.keyboard.press("Enter");
    // Before: the visually hidden <input type=file> was a button "Load…" and its label was read again as text.
    const controls = [
      ["#load-persona", "Load file…"],
      ["#load-script", "Load script…"],
      ["#restore-state", "Restore from file…"],
    ];
    for (const [input, name] of controls) {
      const snapshot = await page.locator(input).locator("xpath=..").ariaSnapshot();
      assert.equal(snapshot, `- button "${name}"`, `${input} is one button`);
    }
    // One Tab stop each: Tab from the top bar's last button goes to Load, then to Save persona.
    await page.focus("#toggle-log");
    await page.keyboard.press("Tab");
    assert.equal(await focusName(page), "Load file…");
    const chooser = await fileChooserOpenedBy(page, () => page.keyboard.press("Enter"));
    assert.deepEqual(chooser, { input: "load-persona", multiple: true });
    await page.setInputFiles("#load-persona", [
      file("gorm.jsonc", { npc: "gorm", persona: { name: "Gorm" } }),
    ]);
    await page.locator("#start-result").filter({ hasText: "Loaded gorm.jsonc." }).waitFor();
    await page.keyboard.press("Tab");
    assert.equal(await focused(page), "button#save-persona");
    assert.deepEqual(browser.errors, []);
  });
});

/** WCAG's contrast ratio of two `rgb(…)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (css: string) => {
    const [r, g, b] = (css.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

Deno.test("keyboard: the focus ring stands out on the dark top bar and log; the status dots are not read out", async () => {
  await withPlayground("failed-keyboard-ring", async (browser) => {
    const { page } = browser;
    await page.keyboard.press("Tab");
    assert.equal(await focusName(page), "Skip to your line"); // shown over the top bar
    await page.keyboard.press("Tab");
    assert.equal(await focused(page), "button#toggle-log");
    await page.keyboard.press("Enter"); // opens the log
    const rings = await page.evaluate(() => {
      const ring = (el: Element, on: Element) => ({
        outline: getComputedStyle(el).outlineColor,
        style: getComputedStyle(el).outlineStyle,
        background: getComputedStyle(on).backgroundColor,
      });
      const log = document.querySelector("#rpc-log")!;
      const logButton = log.querySelector("button")!;
      logButton.focus({ focusVisible: true } as FocusOptions);
      const inLog = ring(logButton, log);
      const skip = document.querySelector("a.skip-link.top") as HTMLElement;
      skip.focus({ focusVisible: true } as FocusOptions);
      const skipLink = ring(skip, document.querySelector(".topbar")!);
      (document.querySelector("#toggle-log") as HTMLElement).focus({ focusVisible: true } as FocusOptions);
      return {
        topbar: ring(document.querySelector("#toggle-log")!, document.querySelector(".topbar")!),
        inLog,
        skipLink,
      };
    });
    for (const [where, ring] of Object.entries(rings)) {
      assert.equal(ring.style, "solid", `a focus ring in the ${where}`);
      const ratio = contrast(ring.outline, ring.background);
      assert.ok(ratio >= 3, `the focus ring in the ${where} has contrast ${ratio.toFixed(2)} (3 needed)`);
    }
    // The coloured "●" before each status is decoration: the text says the state.
    const header = await page.locator("header").ariaSnapshot();
    assert.match(header, /status: Connected to the bridge/);
    assert.doesNotMatch(header, /●/);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("keyboard: after editing a world value, removing one, editing the memory or removing a tool the focus lands on a control", async () => {
  await withPlayground("failed-keyboard-edits", async (browser) => {
    const { page } = browser;
    // Where the focus is after each step (all steps run, so one run shows every step that lost it).
    const after: Record<string, string> = {};
    await startWithKeyboard(page);
    await page.focus("#tab-state-world");
    await page.keyboard.press("Enter");
    const gold = '[data-path="player.gold"] button.value';
    await page.focus(gold);
    await page.keyboard.press("Enter");
    after["edit opens"] = await focusName(page);
    await page.keyboard.press("Escape");
    after["Escape closes the edit"] = await focusName(page);
    await page.focus(gold);
    await page.keyboard.press("Enter");
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("30");
    await page.keyboard.press("Enter");
    await page.locator(gold).filter({ hasText: "30" }).waitFor();
    after["Enter saves the edit"] = await focusName(page);
    await page.focus('button[aria-label="Remove inn.open"]');
    await page.keyboard.press("Enter");
    await page.locator('[data-path="inn.open"]').waitFor({ state: "detached" });
    after["a value removed"] = await focusName(page);

    await page.focus("#tab-state-memory");
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Edit memory" }).focus();
    await page.keyboard.press("Enter");
    after["memory edit opens"] = await focusName(page);
    await page.keyboard.press("Escape");
    after["Escape closes the memory edit"] = await focusName(page);
    if (await page.locator("form.memory-edit").count() > 0) {
      await page.locator("form.memory-edit").getByRole("button", { name: "Cancel" }).focus();
      await page.keyboard.press("Enter");
      after["Cancel closes the memory edit"] = await focusName(page);
    }
    await page.getByRole("button", { name: "Edit memory" }).focus();
    await page.keyboard.press("Enter");
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("12");
    await page.keyboard.press("Enter"); // submits the form
    await page.locator(".relationship-value").filter({ hasText: /^12/ }).waitFor();
    after["memory saved"] = await focusName(page);

    await page.focus("#tab-tools");
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Add a tool" }).focus();
    await page.keyboard.press("Enter");
    after["tool added"] = await focusName(page);
    await page.getByRole("button", { name: "Remove tool tool_2" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Remove tool tool_2" }).waitFor({ state: "detached" });
    after["last tool removed"] = await focusName(page);
    await page.getByRole("button", { name: "Remove tool check_stock" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Remove tool check_stock" }).waitFor({ state: "detached" });
    after["only tool removed"] = await focusName(page);

    assert.deepEqual(after, {
      "edit opens": "New value of player.gold",
      "Escape closes the edit": "player.gold is 20; change it",
      "Enter saves the edit": "player.gold is 30; change it",
      "a value removed": "Add a value in inn",
      "memory edit opens": "Relationship (-100…100)",
      "Escape closes the memory edit": "Edit memory",
      "memory saved": "Edit memory",
      "tool added": "Name",
      "last tool removed": "Name", // of the tool before it
      "only tool removed": "Add a tool",
    });
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("keyboard: after a restore, putting the restored persona into the editor and undoing it keep the focus on a control", async () => {
  await withPlayground("failed-keyboard-adopt", async (browser) => {
    const { page } = browser;
    await startWithKeyboard(page);
    await page.reload(); // the page offers the last state it saw
    await page.locator("#connection-status[data-state=open]").waitFor();
    // The editor no longer has what the state has (else the page offers nothing to put into it).
    await page.click("#tab-persona");
    await page.getByLabel("Role", { exact: true }).fill("the cook");
    await page.focus("#tab-state-save");
    await page.keyboard.press("Enter");
    await page.focus("#restore-last");
    await page.keyboard.press("Enter");
    await page.locator("#adopt-state").waitFor();
    // The restore goes on after it offers the button (it reads the restored NPC's state, Start disabled):
    // the test is about a finished restore.
    await npcReady(page);
    await page.focus("#adopt-state");
    await page.keyboard.press("Enter");
    await page.locator("#adopt-state").waitFor({ state: "detached" });
    // Before: the button went away with the focus on it.
    assert.equal(await focusName(page), "Undo load");
    await page.keyboard.press("Enter");
    await page.locator("#start-result").filter({ hasText: "The persona text from before the load is back." })
      .waitFor();
    assert.equal(await focusName(page), "Start NPC");
    // Undo load pressed while Start is disabled (a start or restore still finishing): the focus goes to the
    // editor's open tab, not to the page's body (before: to the disabled Start, which dropped it).
    await page.setInputFiles("#load-persona", [
      file("other.jsonc", { npc: "other", persona: { name: "Other" } }),
    ]);
    await page.locator("#undo-load").waitFor();
    await page.evaluate(() => (document.getElementById("start") as HTMLButtonElement).disabled = true);
    await page.focus("#undo-load");
    await page.keyboard.press("Enter");
    await page.locator("#undo-load").waitFor({ state: "hidden" });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("role")), "tab");
    assert.deepEqual(browser.errors, []);
  });
});

/** The text of every live region on the page that a screen reader would read (not hidden, not turned off). */
function liveRegions(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>("[aria-live], [role=alert], [role=status]")]
      .filter((el) => el.closest("[hidden]") === null && el.parentElement?.closest("[aria-live]") == null)
      .filter((el) => el.getAttribute("aria-live") !== "off")
      .map((el) => el.textContent ?? "")
  );
}

Deno.test("screen reader: a restore's warnings are each announced once (a reply it cancelled, a file with no world snapshot)", async () => {
  await withPlayground("failed-keyboard-restore-warnings", async (browser) => {
    const { page } = browser;
    const persona = {
      npc: "mira",
      persona: { name: "Mira" },
      options: { replyFormat: "text" },
      world: { player: { gold: 20 } },
    };
    const script = [{ text: "[happy] Hello.", delayMs: 60_000 }]; // still running when the restore comes
    await page.setInputFiles("#load-persona", [file("mira.jsonc", persona), file("mira.steps.json", script)]);
    await loaded(page, "mira.jsonc");
    await startWithKeyboard(page);
    // The state the page kept (a bare npc/state result: it names the NPC's world but holds no snapshot of it).
    const state = await page.waitForFunction(() => {
      const saved = JSON.parse(localStorage.getItem("oam-playground/v1") ?? "{}");
      return saved.lastState?.state ?? null;
    }).then((handle) => handle.jsonValue());
    assert.equal(typeof state.world, "string");
    await page.focus("#player-line");
    await page.keyboard.type("Again");
    await page.keyboard.press("Enter");
    await page.locator('.turn[data-turn="1"]').waitFor();
    await page.setInputFiles("#restore-state", file("mira.state.json", state));
    const noSnapshot = page.locator("ol.turns li.note.warning").filter({ hasText: "no world snapshot" });
    await noSnapshot.waitFor();
    const cancelledNote = page.locator("ol.turns li.note.warning").filter({ hasText: "still running" });
    const notes = [await cancelledNote.textContent() ?? "", await noSnapshot.textContent() ?? ""];
    assert.match(notes[0], /^The reply to “Again” was still running: it was cancelled to restore/);
    // Before: the conversation's live region said only the last note (the world's), which the result under
    // Start (an alert) said as well; that the reply was cancelled was not said at all.
    // The result under Start lists it as the page's, not under "The bridge's warnings:" (before, it was).
    const result = await page.locator("#start-result").evaluate((el) =>
      [...el.querySelectorAll("li")].map((li) => ({
        text: li.textContent,
        bridge: li.closest("div.warning")?.firstElementChild?.textContent === "The bridge's warnings:",
      }))
    );
    assert.deepEqual(result, [{ text: notes[1], bridge: false }]);
    await screenshot(page, "13-restore-warnings");
    const live = await liveRegions(page);
    for (const note of notes) {
      const saying = live.filter((text) => text.includes(note));
      assert.equal(saying.length, 1, `“${note}” announced once: ${JSON.stringify(live)}`);
    }
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("screen reader: a warning note that follows a reply (the NPC's state could not be read) is said after the reply, not in its place", async () => {
  await withPlayground("failed-keyboard-state-unread", async (browser) => {
    const { page } = browser;
    // The bridge answers every read of the NPC's state after a turn (npc/state, settle: false) with an error.
    await page.routeWebSocket(/\/rpc$/, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((message) => {
        const request = JSON.parse(String(message));
        if (request.method === "npc/state" && request.params?.settle === false) {
          const error = { code: -32603, message: "Internal error.", data: { code: "internal" } };
          ws.send(JSON.stringify({ jsonrpc: "2.0", id: request.id, error }));
        } else server.send(message);
      });
    });
    await page.reload();
    await page.locator("#connection-status[data-state=open]").waitFor();
    await startWithKeyboard(page);
    await page.focus("#player-line");
    await page.keyboard.type("Hello");
    await page.keyboard.press("Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    const notes = page.locator("ol.turns li.note.warning").filter({
      hasText: "Could not read the NPC's state",
    });
    await notes.nth(1).waitFor(); // the first came after Start
    const note = await notes.nth(1).textContent() ?? "";
    assert.match(note, /Internal error\. The Memory tab may be out of date: its Refresh tries again\.$/);
    // Before: the note took the reply's place in the live region (a screen reader heard the note alone); and
    // it did not say what was out of date or what to do.
    assert.equal(await announced(page), `Mira (neutral): (the bridge's model) ${note}`);
    assert.deepEqual(browser.errors, []);
  });
});

Deno.test("screen reader: a bridge that goes away while an NPC runs is announced once (the alert banner), also in the middle of a turn", async () => {
  await withPlayground("failed-keyboard-bridge-gone", async (browser, served) => {
    const { page } = browser;
    await useScript(page);
    await startWithKeyboard(page);
    // A turn waits for the designer's answer when the bridge goes.
    await page.focus("#player-line");
    await page.keyboard.type("An ale, please.");
    await page.keyboard.press("Enter");
    await page.locator(".tool-call.pending").waitFor();
    await served.stop();
    await page.locator("#banner").filter({ hasText: "The bridge went away." }).waitFor();
    await page.locator("ol.turns li.note.error").filter({ hasText: "The bridge went away" }).waitFor();
    assert.equal(await page.getAttribute("#banner", "role"), "alert");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    // Before: the banner (an alert) and the conversation's live region both said the bridge went away; then
    // the live region said "The bridge cancelled the reply." and the connection pill "Not connected" as well.
    // Once: the banner, which also says what became of the reply and the line.
    const live = await liveRegions(page);
    const told = live.filter((t) => /bridge|connect|cancel/i.test(t));
    assert.equal(told.length, 1, `announced once: ${JSON.stringify(live)}`);
    assert.match(
      told[0],
      /^The bridge went away\. .*The reply to “An ale, please\.” was cut off: your line is back in the box\. /,
    );
    // The pill still shows it.
    assert.equal(await page.locator("#connection-status").textContent(), "Not connected");
    // The turn the bridge cancelled as it stopped: not "cancelled" by the designer, and the line is back.
    // Before: "The reply was cancelled; the turn left no trace…", as after Cancel reply, and the line was gone.
    // (It closed with 1001, the server stopping: the turn says so.)
    assert.equal(
      await page.locator('.turn[data-turn="1"] .meta .error').textContent(),
      "cancelled: The server stopped, and cancelled the reply with it.",
    );
    assert.equal(await page.inputValue("#player-line"), "An ale, please.");
    assert.deepEqual(browser.errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(e)), []);
  });
});

Deno.test("keyboard: Enter in a call's answer box sends the answer, as it says the player's line; Shift+Enter starts a new line", async () => {
  await withPlayground("failed-keyboard-answer-enter", async (browser) => {
    const { page } = browser;
    await useScript(page);
    await startWithKeyboard(page);
    await page.focus("#player-line");
    await page.keyboard.type("An ale, please.");
    await page.keyboard.press("Enter");
    await page.locator(".tool-call.pending").waitFor();
    const box = await page.evaluate(() => document.activeElement?.id ?? "");
    assert.match(box, /^answer-/, "focus is in the answer box");
    // The box says how to send, as the player's line does.
    assert.match(
      await accessibleDescription(page, `#${box}`),
      /Enter sends it, Shift\+Enter starts a new line, Escape cancels the reply\./,
    );
    // An answer that must be JSON but is not stays in the box with the problem, as with Send answer.
    await page.selectOption(`#${box}-as`, "json");
    await page.focus(`#${box}`);
    await page.keyboard.type("three");
    await page.keyboard.press("Enter");
    assert.match((await page.textContent(`#${box}-message`)) ?? "", /JSON/);
    assert.equal(await page.inputValue(`#${box}`), "three");
    assert.equal(await page.locator(".tool-call.pending").count(), 1);

    await page.fill(`#${box}`, "");
    await page.keyboard.type('{"left": 3,');
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type('"price": 4}');
    assert.equal(await page.inputValue(`#${box}`), '{"left": 3,\n"price": 4}');
    // Before: Enter put a new line in the box and nothing was sent; the call waited for its timeout.
    await page.keyboard.press("Enter");
    await page.locator('.turn[data-turn="1"] .npc[aria-busy="false"]').waitFor();
    assert.equal(
      await page.locator('.tool-call[data-tool="check_stock"] .tool-result code').textContent(),
      '{"left":3,"price":4}',
    );
    assert.equal(await focused(page), "textarea#player-line");
    assert.deepEqual(browser.errors, []);
  });
});
