/// <reference lib="dom" />
/**
 * The tool calls of a conversation turn (conversation.ts): a row per call with its name, arguments, where
 * it runs and its status, then its result. A client tool answered by hand gets an answer form in its row
 * (JSON or text, an error, or left to time out) with a countdown of the bridge's timeout; one answered
 * automatically gets its canned answer.
 * @module
 */
import type { ToolRecord } from "../../../client/types.ts";
import type { JsonObject, JsonValue } from "../../../protocol/json.ts";
import { brief, h, isSendKey, uid } from "./dom.ts";
import type { SendAs, ToolAnswer } from "./storage.ts";
import { answerValue, BRIDGE_CANCELLED, notAnswered, SERVER_STOPPED } from "./values.ts";

/** A call's row. */
export interface ToolRow {
  /** The row (`data-call`, `data-tool`; `data-how` once answered, `data-timer` while it counts down). */
  root: HTMLElement;
  /** Its arguments (shown as compact JSON; an answer box is described by them). */
  args: HTMLElement;
  /** Its status: running, waiting, how it was answered, and how long it took. */
  status: HTMLElement;
  /** The answer form while it waits for one. */
  controls: HTMLElement;
  /** Its output, once completed. */
  result: HTMLElement;
}

/** A call as the model made it. */
export interface CallShown {
  /** The call's id. */
  id: string;
  /** The tool's name. */
  name: string;
  /** Its arguments. */
  arguments: JsonObject;
}

/** The tool calls of one turn, a row per call. */
export class ToolCalls {
  /** The element the rows are in. */
  readonly root: HTMLElement = h("div", { class: "tool-calls" });
  readonly #rows = new Map<string, ToolRow>();

  /** The row of `call`, made on first use (`execution`: `client`, a game tool, or `local`, a built-in one). */
  row(call: CallShown, execution: string): ToolRow {
    const existing = this.#rows.get(call.id);
    if (existing) return existing;
    const { id, name } = call;
    const status = h("span", {
      class: "tool-status",
      text: execution === "client" ? "waiting for the game…" : "running…",
    });
    const args = h("code", { class: "args", id: uid("args"), text: brief(call.arguments, 200) });
    const controls = h("div", { class: "tool-answer" });
    const result = h("div", { class: "tool-result" });
    const root = h(
      "div",
      {
        class: `tool-call ${execution}`,
        "data-call": id,
        "data-tool": name,
        role: "group",
        "aria-label": `Tool call ${name}`,
      },
      h(
        "p",
        { class: "tool-head" },
        h("strong", { text: name }),
        " ",
        args,
        " ",
        h("span", { class: "execution", text: execution === "client" ? "game" : "built-in" }),
        " ",
        status,
      ),
      controls,
      result,
    );
    this.root.append(root);
    const row = { root, args, status, controls, result };
    this.#rows.set(id, row);
    return row;
  }

  /** A call completed: how it was answered, how long it took, and its output. */
  completed(record: ToolRecord): void {
    const row = this.row(record.call, "local");
    closeRow(row, null);
    row.root.classList.add(record.isError ? "failed" : "done");
    const how = row.root.dataset.how;
    row.status.textContent = `${how ? `${how} · ` : ""}${record.isError ? "error" : "done"} in ${
      Math.round(record.durationSeconds * 1000)
    } ms`;
    showOutput(row, record.output, record.isError);
  }

  /**
   * The server stopped: the rows of calls whose turn the bridge cancelled ({@link BRIDGE_CANCELLED}) say the
   * server stopped (it cancels every turn just before it closes the connection).
   */
  serverStopped(): void {
    for (const row of this.#rows.values()) {
      const how = row.root.dataset.how;
      if (how !== BRIDGE_CANCELLED) continue;
      row.root.dataset.how = SERVER_STOPPED;
      row.status.textContent = SERVER_STOPPED + (row.status.textContent ?? "").slice(how.length);
    }
  }

  /** The turn ended: no row waits any longer. */
  closeAll(): void {
    for (const row of this.#rows.values()) closeRow(row, null);
  }
}

/** Shows the output the model got (`isError`: an error output) as the row's result. */
function showOutput(row: ToolRow, output: JsonValue, isError: boolean): void {
  row.result.replaceChildren(
    h("span", { class: "arrow", "aria-hidden": "true", text: "→ " }),
    h("code", { class: isError ? "error" : "", text: brief(output, 300) }),
  );
}

/** Stops a row's countdown and removes its answer form; `status` (unless null) replaces its status. */
function closeRow(row: ToolRow, status: string | null): void {
  const timer = Number(row.root.dataset.timer ?? 0);
  if (timer) clearInterval(timer);
  delete row.root.dataset.timer;
  row.controls.replaceChildren();
  if (status !== null) row.status.textContent = status;
}

/** The canned answer of a tool answered automatically (JSON if it parses, else text; or an error). */
export function cannedAnswer(answer: ToolAnswer): Promise<unknown> {
  if (answer.asError) return Promise.reject(new Error(answer.text || "error"));
  const parsed = answerValue(answer.text, "auto");
  return Promise.resolve("value" in parsed ? parsed.value : answer.text);
}

/** A call to answer by hand. */
export interface HandAnswer {
  /** The tool's name. */
  name: string;
  /** How the tool is answered (its canned text starts the answer box). */
  answer: ToolAnswer;
  /** The tool's description (what it gives back), shown whole above the answer box; "" when it has none. */
  description?: string;
  /** Seconds the bridge waits for the answer (null = forever). */
  timeout: number | null;
  /** Aborted when the bridge no longer needs the answer (a timeout, a cancelled turn). */
  signal: AbortSignal;
  /** Moves the focus on when the answer form goes away with the focus in it (answered, timed out, left). */
  focusNext: () => void;
  /** Called once the answer form is in the page, before its box takes the focus (to bring it into view). */
  shown?: () => void;
  /** Cancels the turn (Escape in the box, as in the player's line). */
  cancelTurn?: () => void;
  /** Whether the designer cancelled the turn (else a cancelled turn was cancelled by the bridge). */
  cancelledByDesigner?: () => boolean;
  /** The call ended with an answer typed but not sent (kept in its row): `text`, to offer on the next call. */
  unsent?: (text: string) => void;
  /**
   * What the box holds, as it is typed (to keep it across a reload), and "" once it no longer needs keeping:
   * the answer was sent, or the designer let the call time out.
   */
  typed?: (text: string) => void;
  /** The designer picked how the answer is sent ("Send as"), to start the tool's next call with. */
  sendAs?: (as: SendAs) => void;
}

/**
 * Answers a call by hand: an answer form in its row with a countdown; settles when the designer sends an
 * answer or an error, or when the bridge no longer needs it (`signal`). The answer box takes the focus.
 */
export function answerByHand(
  row: ToolRow,
  {
    name,
    answer,
    description,
    timeout,
    signal,
    focusNext,
    shown,
    cancelTurn,
    unsent,
    typed,
    cancelledByDesigner,
    sendAs,
  }: HandAnswer,
): Promise<unknown> {
  const box = answerBox(name, answer, row.args.id, description?.trim() ?? "");
  if (typed) box.text.addEventListener("input", () => typed(box.text.value));
  if (sendAs) box.as.addEventListener("change", () => sendAs(box.as.value as SendAs));
  startCountdown(row, timeout);
  return new Promise((resolve, reject) => {
    const done = (status: string) => {
      const hadFocus = row.controls.contains(document.activeElement);
      row.root.classList.remove("pending");
      row.root.dataset.how = status;
      closeRow(row, status);
      signal.removeEventListener("abort", onAbort);
      if (hadFocus) focusNext();
    };
    const onAbort = () => {
      const reason = signal.reason;
      const { status, output } = notAnswered(reason, cancelledByDesigner?.() ?? true);
      // (Not after "Let it time out": the designer chose not to answer, and the box went then.)
      const boxShown = row.controls.contains(box.text);
      done(status);
      if (output !== null) showOutput(row, output, true);
      row.root.classList.add("cancelled");
      if (boxShown && keepUnsent(row, name, box.text, answer.text)) unsent?.(box.text.value);
      reject(reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) {
      onAbort();
      return;
    }
    row.controls.replaceChildren(
      ...answerForm(row, {
        box,
        focusNext,
        cancelTurn,
        onAnswer: (value) => {
          typed?.("");
          done("answered by hand");
          resolve(value);
        },
        onError: (text) => {
          typed?.("");
          done("answered with an error");
          reject(new Error(text || "error"));
        },
        onWait: () => typed?.(""),
      }),
    );
    shown?.();
    box.text.focus();
  });
}

/**
 * A call that ended before the designer sent the answer they typed (`typed`: the box, which started with
 * `start`): the answer stays in its row, read-only, with a note that it was not sent. False (nothing kept) when
 * the box holds only what it started with.
 */
function keepUnsent(row: ToolRow, name: string, typed: HTMLTextAreaElement, start: string): boolean {
  if (typed.value.trim() === "" || typed.value === start) return false;
  typed.readOnly = true;
  typed.removeAttribute("aria-describedby");
  typed.removeAttribute("aria-invalid");
  typed.setAttribute("aria-label", `Your answer to ${name}, not sent`);
  row.controls.after(
    h(
      "div",
      { class: "tool-unsent" },
      h("p", {
        class: "hint",
        text: "Your answer was not sent: the call ended. It is kept here (read-only), and the next call of " +
          `${name} starts with it.`,
      }),
      typed,
    ),
  );
  return true;
}

/** The answer box of a call answered by hand. */
interface AnswerBox {
  /** The textarea's id (the other parts' ids start with it). */
  id: string;
  /** Names the box with what it accepts, as `as` says: "Answer check_stock (JSON or text)". */
  label: HTMLLabelElement;
  /** The tool's description (what it gives back), whole, or null when it has none. */
  about: HTMLElement | null;
  text: HTMLTextAreaElement;
  as: HTMLSelectElement;
  hint: HTMLElement;
  message: HTMLElement;
}

/**
 * What an answer sent `as` accepts (the label says it), and what its empty box says (under what the tool gives
 * back: a tool definition declares its arguments, not its result, so the page has no example of one).
 */
const ACCEPTS: Record<string, { accepts: string; example: string }> = {
  auto: { accepts: "JSON or text", example: "JSON or plain text" },
  json: { accepts: "JSON", example: "JSON only" },
  text: { accepts: "text", example: "plain text" },
};

/**
 * The answer's text and how it is sent (as last picked for the tool), with a label and a hint saying what it
 * accepts and what it would be sent as; the tool's `description` (what it gives back) is shown whole above the
 * box (a long one wraps; it stays while the designer types), and the empty box says what it accepts. The text
 * box is described by the call's arguments (`argsId`) and the description, so a screen reader reads them when
 * the box gets the focus.
 */
function answerBox(name: string, answer: ToolAnswer, argsId: string, description: string): AnswerBox {
  const id = uid("answer");
  const about = description === ""
    ? null
    : h("p", { class: "hint tool-about", id: `${id}-about`, dir: "auto", text: description });
  const text = h("textarea", {
    id,
    class: "code",
    rows: 2,
    spellcheck: "false",
    value: answer.text,
    "aria-describedby": `${argsId}${about ? ` ${about.id}` : ""} ${id}-hint ${id}-keys ${id}-message`,
  });
  const label = h("label", { for: id });
  const as = h(
    "select",
    { id: `${id}-as`, "aria-label": "Send the answer as" },
    h("option", { value: "auto", text: "JSON if it parses, else text" }),
    h("option", { value: "json", text: "JSON" }),
    h("option", { value: "text", text: "text" }),
  );
  as.value = answer.sendAs !== undefined && Object.hasOwn(ACCEPTS, answer.sendAs) ? answer.sendAs : "auto";
  const hint = h("p", { class: "hint", id: `${id}-hint` });
  const message = h("p", { class: "message", id: `${id}-message`, "aria-live": "assertive" });
  const showHint = () => {
    const { accepts, example } = ACCEPTS[as.value] ?? ACCEPTS.auto;
    label.textContent = `Answer ${name} (${accepts})`;
    text.placeholder = example;
    const v = answerValue(text.value, as.value as "auto");
    hint.textContent = "problem" in v
      ? ""
      : `Sent as ${
        typeof v.value === "string"
          ? "text"
          : `JSON (${Array.isArray(v.value) ? "a list" : v.value === null ? "null" : typeof v.value})`
      }.`;
  };
  text.addEventListener("input", showHint);
  as.addEventListener("change", showHint);
  showHint();
  return { id, label, about, text, as, hint, message };
}

/** Marks the row as waiting and counts down the `timeout` seconds the bridge waits (until the row closes). */
function startCountdown(row: ToolRow, timeout: number | null): void {
  const startedAt = Date.now();
  const tick = () => {
    if (timeout === null) {
      row.status.textContent = "waiting for your answer (no time limit)";
      return;
    }
    const left = Math.max(0, Math.ceil(timeout - (Date.now() - startedAt) / 1000));
    row.status.textContent = `waiting for your answer: ${left} s left`;
  };
  tick();
  row.root.dataset.timer = String(setInterval(tick, 1000));
  row.root.classList.add("pending");
}

/** The answer form of a call, and what its buttons do. */
interface AnswerForm {
  /** The answer box. */
  box: AnswerBox;
  /** Send answer, with the answer's value. */
  onAnswer(value: JsonValue): void;
  /** Send as error, with the answer's text. */
  onError(text: string): void;
  /** Moves the focus on when "Let it time out" removes the form. */
  focusNext: () => void;
  /** Cancels the turn (Escape in the box), if the page can. */
  cancelTurn?: () => void;
  /** Let it time out was pressed (the form goes). */
  onWait?: () => void;
}

/**
 * The answer form: Send answer (a text that must be JSON but is not stays, with the problem; Enter in the box
 * sends too), Send as error, and Let it time out (the form goes, the call waits for the bridge's timeout);
 * Escape in the box cancels the turn.
 */
function answerForm(
  row: ToolRow,
  { box, onAnswer, onError, focusNext, cancelTurn, onWait }: AnswerForm,
): HTMLElement[] {
  const { id, label, about, text, as, hint, message } = box;
  const send = h("button", { type: "button", class: "primary small", text: "Send answer" });
  const asError = h("button", { type: "button", class: "small", text: "Send as error" });
  const wait = h("button", { type: "button", class: "small", text: "Let it time out" });
  send.addEventListener("click", () => {
    const v = answerValue(text.value, as.value as "auto");
    if ("problem" in v) {
      message.textContent = v.problem;
      text.setAttribute("aria-invalid", "true");
      text.focus();
      return;
    }
    onAnswer(v.value);
  });
  // As in the player's line: Enter sends, Shift+Enter starts a new line (not while an IME composes).
  text.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && cancelTurn) {
      event.preventDefault();
      cancelTurn();
      return;
    }
    if (!isSendKey(event)) return;
    event.preventDefault();
    send.click();
  });
  asError.addEventListener("click", () => onError(text.value));
  wait.addEventListener("click", () => {
    onWait?.();
    row.controls.replaceChildren(
      h("p", {
        class: "hint",
        text: "Not answering: the bridge times the call out and tells the model.",
      }),
    );
    focusNext();
  });
  return [
    label,
    ...(about ? [about] : []),
    text,
    hint,
    h("p", {
      class: "hint",
      id: `${id}-keys`,
      text: `Enter sends it, Shift+Enter starts a new line${cancelTurn ? ", Escape cancels the reply" : ""}.`,
    }),
    message,
    h("div", { class: "row" }, as, send, asError, wait),
  ];
}
