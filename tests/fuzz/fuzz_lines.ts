/**
 * The fuzz line generator: a seeded stream of malformed and adversarial input lines, each with what the
 * bridge must answer. Categories: valid requests, wrong-typed params for every param of every method,
 * `__proto__`/`constructor` keys, duplicate keys, truncated JSON, invalid UTF-8, lone surrogates, huge
 * numbers and strings, deep nesting, broken envelopes, notifications, responses to ids never sent, blank
 * lines, random bytes, mutated requests and over-long lines.
 */
import { jsonText, type Node, Pairs, Raw } from "./json_text.ts";
import { EXCLUDED_METHODS, METHOD_PARAMS, randomParams, wrongValue } from "./method_params.ts";
import { Rng } from "./rng.ts";

/** A JSON-RPC id as sent. */
export type Id = string | number;

/** What the bridge must do with a line. */
export type Expect =
  /** Exactly one response carrying `id` (now or later) and no error with id null. */
  | { kind: "request"; id: Id }
  /** Exactly one error response with id null, at once (`code` when known). */
  | { kind: "invalid"; code?: number }
  /** No response at all; `warning` = a log line that must appear (in-process only). */
  | { kind: "silent"; warning?: string }
  /** Unpredictable: at most one error with id null, at most one response for `id`. */
  | { kind: "unknown"; id?: Id };

/** One generated line. */
export interface FuzzCase {
  /** Category name, for statistics. */
  category: string;
  /** The bytes to send, newline included. */
  bytes: Uint8Array;
  /** What must happen. */
  expect: Expect;
}

/** Options of the generator. */
export interface FuzzLinesOptions {
  /** The bridge's --max-line-bytes. */
  maxLineBytes: number;
  /** Allow multi-megabyte lines (long runs). Default false: at most ~2× maxLineBytes. */
  bigLines?: boolean;
}

const encoder = new TextEncoder();
const BAD_UTF8 = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80], [0xf8, 0x88, 0x80, 0x80]];

/** Methods that create objects and run turns (picked more often). */
const FLOW_METHODS = [
  "session/create",
  "session/respond",
  "session/respond",
  "session/delete",
  "npc/create",
  "npc/talk",
  "npc/talk",
  "npc/delete",
  "world/create",
  "world/set",
  "world/subscribe",
  "decision/decide",
  "content/generate",
];

/** Category weights. */
const CATEGORIES: ReadonlyArray<readonly [number, string]> = [
  [20, "valid"],
  [3, "turn"],
  [20, "wrongType"],
  [5, "protoKeys"],
  [4, "duplicateKeys"],
  [7, "truncated"],
  [4, "invalidUtf8"],
  [4, "loneSurrogate"],
  [3, "hugeNumbers"],
  [1, "hugeString"],
  [2, "deepNesting"],
  [7, "envelope"],
  [5, "notification"],
  [4, "strayResponse"],
  [1, "blank"],
  [3, "randomBytes"],
  [5, "mutated"],
  [1, "overLong"],
];

/**
 * A seeded generator of fuzz lines.
 *
 * @example
 * ```ts
 * const gen = new FuzzLines(7, ["ping", "session/create"], { maxLineBytes: 1 << 20 });
 * const c = gen.next(); // {category, bytes, expect}
 * ```
 */
export class FuzzLines {
  readonly rng: Rng;
  readonly #methods: string[];
  readonly #options: FuzzLinesOptions;
  #n = 0;
  #line_ = 0;
  #later: Array<{ at: number; make: () => FuzzCase }> = [];

  /** A generator for `seed` over `methods` (from `initialize`'s capabilities; excluded ones dropped). */
  constructor(seed: number, methods: string[], options: FuzzLinesOptions) {
    this.rng = new Rng(seed);
    this.#methods = methods.filter((m) => !EXCLUDED_METHODS.has(m));
    this.#options = options;
  }

  /** Methods without a param table (they get random params). */
  get untabled(): string[] {
    return this.#methods.filter((m) => !Object.hasOwn(METHOD_PARAMS, m));
  }

  /** A fresh id: strings and numbers (integers, fractions, negatives), never reused. */
  freshId(): Id {
    const n = ++this.#n;
    const g = this.rng;
    switch (g.int(6)) {
      case 0:
        return 1_000_000 + n;
      case 1:
        return -(1_000_000 + n) - 0.5;
      case 2:
        return `é-${n}\u2028`;
      case 3:
        return String(n);
      default:
        return `f${n}`;
    }
  }

  /** The next case. */
  next(): FuzzCase {
    this.#line_++;
    const due = this.#later.findIndex((l) => l.at <= this.#line_);
    let c: FuzzCase;
    if (due !== -1) c = this.#later.splice(due, 1)[0].make();
    else {
      const category = this.rng.weighted(CATEGORIES);
      c = category === "turn" ? this.#turn() : this.#make(category);
    }
    if (this.rng.chance(0.05) && c.bytes[c.bytes.length - 1] === 10) {
      const crlf = new Uint8Array(c.bytes.length + 1);
      crlf.set(c.bytes.subarray(0, c.bytes.length - 1));
      crlf[c.bytes.length - 1] = 13;
      crlf[c.bytes.length] = 10;
      return { ...c, bytes: crlf };
    }
    return c;
  }

  /**
   * A turn scenario spread over later lines: create a session or NPC with client tools and a script that
   * calls them, run a streamed turn on it (the next line), and delete it some lines later. Other fuzz lines
   * (and the harness's tool replies) interleave with the running turn.
   */
  #turn(): FuzzCase {
    const g = this.rng;
    const k = ++this.#n;
    const npc = g.chance(0.4);
    const id = npc ? `fz-nt${k}` : `fz-t${k}`;
    const tools = [
      {
        name: "door",
        description: "Opens a door.",
        parameters: { type: "object", properties: { gate: { type: "string" } } },
      },
      { name: "look", description: "Looks around." },
    ];
    const calls = [{ name: "door", arguments: { gate: "north" } }];
    if (g.chance(0.4)) calls.push({ name: "look", arguments: {} as { gate: string } });
    const steps = [
      { toolCalls: calls },
      npc ? { template: "[happy] Door: {toolOutput}" } : { template: "Door: {toolOutput}" },
    ];
    const createId = this.freshId();
    const create = npc
      ? this.#request("npc/create", {
        npc: id,
        persona: { name: "Turny" },
        tools,
        options: { replyFormat: "text", toolChoice: "auto", compactAfterTurns: 0 },
        model: { type: "scripted", steps },
      }, createId)
      : this.#request("session/create", { session: id, tools, model: { type: "scripted", steps } }, createId);
    const at = this.#line_;
    this.#later.push({
      at: at + 1,
      make: () => {
        const rid = this.freshId();
        const text = npc
          ? this.#request("npc/talk", { npc: id, line: "Open it.", stream: g.chance(0.7) }, rid)
          : this.#request("session/respond", { session: id, prompt: "Open it.", stream: g.chance(0.7) }, rid);
        return { category: "turn", bytes: this.#line(text), expect: { kind: "request", id: rid } };
      },
    });
    this.#later.push({
      at: at + 2 + g.int(40),
      make: () => {
        const did = this.freshId();
        const text = this.#request(
          npc ? "npc/delete" : "session/delete",
          npc ? { npc: id } : { session: id },
          did,
        );
        return { category: "turn", bytes: this.#line(text), expect: { kind: "request", id: did } };
      },
    });
    return { category: "turn", bytes: this.#line(create), expect: { kind: "request", id: createId } };
  }

  #line(text: string): Uint8Array {
    return encoder.encode(text + "\n");
  }

  #method(): string {
    // Half the time a method of the main flows, so that sessions, NPCs and worlds exist and turns run.
    if (this.rng.chance(0.5)) {
      const m = this.rng.pick(FLOW_METHODS);
      if (this.#methods.includes(m)) return m;
    }
    return this.rng.pick(this.#methods);
  }

  /** Valid-looking params for `method` (required ones always, optional ones half the time). */
  validParams(method: string): { [k: string]: Node } {
    const g = this.rng;
    const table = Object.hasOwn(METHOD_PARAMS, method) ? METHOD_PARAMS[method] : undefined;
    if (!table) return randomParams(g) as { [k: string]: Node };
    const out: { [k: string]: Node } = {};
    // The id of a create is usually given (generated ids pile up towards the object limits).
    const idParam = { "session/create": "session", "npc/create": "npc", "world/create": "world" }[method];
    for (const [name, gen] of Object.entries(table.params)) {
      if (table.required.includes(name) || g.chance(name === idParam ? 0.9 : 0.5)) out[name] = gen(g);
    }
    return out;
  }

  #request(method: string, params: Node | undefined, id: Id | undefined): string {
    const pairs: Array<[string, Node]> = [["jsonrpc", "2.0"]];
    if (id !== undefined) pairs.push(["id", id]);
    pairs.push(["method", method]);
    if (params !== undefined) pairs.push(["params", params]);
    return jsonText(new Pairs(pairs));
  }

  #validText(id: Id): string {
    const method = this.#method();
    return this.#request(method, this.validParams(method), id);
  }

  #make(category: string): FuzzCase {
    const g = this.rng;
    const max = this.#options.maxLineBytes;
    switch (category) {
      case "valid": {
        const id = this.freshId();
        return { category, bytes: this.#line(this.#validText(id)), expect: { kind: "request", id } };
      }
      case "wrongType": {
        const id = this.freshId();
        const method = this.#method();
        const params = this.validParams(method);
        const names = Object.keys(
          Object.hasOwn(METHOD_PARAMS, method) ? METHOD_PARAMS[method].params : params,
        );
        let sent: Node = params;
        const r = g.next();
        if (r < 0.1) sent = wrongValue(g);
        else if (r < 0.25 && Object.hasOwn(METHOD_PARAMS, method) && METHOD_PARAMS[method].required.length) {
          delete params[g.pick(METHOD_PARAMS[method].required)];
        } else if (names.length > 0) {
          params[g.pick(names)] = wrongValue(g);
          if (g.chance(0.3)) params[g.pick(names)] = wrongValue(g);
        } else params[g.word()] = wrongValue(g);
        return {
          category,
          bytes: this.#line(this.#request(method, sent, id)),
          expect: { kind: "request", id },
        };
      }
      case "protoKeys": {
        const id = this.freshId();
        const method = this.#method();
        const params = injectProtoKeys(g, this.validParams(method), 0);
        const pairs: Array<[string, Node]> = [["jsonrpc", "2.0"], ["id", id], ["method", method], [
          "params",
          params,
        ]];
        if (g.chance(0.4)) pairs.splice(g.int(pairs.length + 1), 0, ...protoPairs(g));
        return { category, bytes: this.#line(jsonText(new Pairs(pairs))), expect: { kind: "request", id } };
      }
      case "duplicateKeys": {
        const first = this.freshId();
        const last = this.freshId();
        const method = this.#method();
        const params = this.validParams(method);
        const variant = g.int(4);
        const pairs: Array<[string, Node]> = [["jsonrpc", "2.0"], ["id", first], ["method", "ping"]];
        if (variant === 0) pairs.push(["params", {}], ["method", method], ["params", params], ["id", last]);
        else if (variant === 1) pairs.push(["jsonrpc", "1.0"], ["id", last]);
        else if (variant === 2) pairs.push(["id", last], ["params", params], ["params", { a: 1 }]);
        else pairs.push(["id", last], ["method", method], ["params", params], ["jsonrpc", "2.0"]);
        return {
          category,
          bytes: this.#line(jsonText(new Pairs(pairs))),
          expect: { kind: "request", id: last },
        };
      }
      case "truncated": {
        const text = this.#validText(this.freshId());
        const cut = g.range(1, text.length - 1);
        return { category, bytes: this.#line(text.slice(0, cut)), expect: { kind: "invalid", code: -32700 } };
      }
      case "invalidUtf8": {
        const bytes = encoder.encode(this.#validText(this.freshId()));
        const at = g.int(bytes.length + 1);
        const bad = g.pick(BAD_UTF8);
        const out = new Uint8Array(bytes.length + bad.length + 1);
        out.set(bytes.subarray(0, at));
        out.set(bad, at);
        out.set(bytes.subarray(at), at + bad.length);
        out[out.length - 1] = 10;
        return { category, bytes: out, expect: { kind: "invalid", code: -32700 } };
      }
      case "loneSurrogate": {
        const id = this.freshId();
        const method = this.#method();
        const params = this.validParams(method);
        const bad = g.pick([
          '"a\\ud800b"',
          '"\\udc00"',
          '"\\ud83d"',
          '"x\\uDBFF\\u0041"',
          '"\\ude00\\ud83d"',
        ]);
        if (g.chance(0.2)) {
          // A lone surrogate in a key.
          const text = `{"jsonrpc":"2.0","id":${
            JSON.stringify(id)
          },"method":"${method}","params":{${bad}:1}}`;
          return { category, bytes: this.#line(text), expect: { kind: "invalid", code: -32700 } };
        }
        params[g.pick([...Object.keys(params), g.word()])] = new Raw(bad);
        return {
          category,
          bytes: this.#line(this.#request(method, params, id)),
          expect: { kind: "invalid", code: -32700 },
        };
      }
      case "hugeNumbers": {
        if (g.chance(0.4)) {
          const idText = g.pick(["1e400", "-1e400", "9007199254740992", "1e300", "-9007199254740993"]);
          return {
            category,
            bytes: this.#line(`{"jsonrpc":"2.0","id":${idText},"method":"ping"}`),
            expect: { kind: "invalid", code: -32600 },
          };
        }
        const id = this.freshId();
        const method = this.#method();
        const params = this.validParams(method);
        const keys = Object.keys(params);
        const huge = () =>
          new Raw(g.pick(["1e400", "-1e400", "1e308", "123456789012345678901234567890", "1e-400"]));
        if (keys.length === 0) params.n = huge();
        for (const k of keys) if (g.chance(0.5)) params[k] = huge();
        return {
          category,
          bytes: this.#line(this.#request(method, params, id)),
          expect: { kind: "request", id },
        };
      }
      case "hugeString": {
        const id = this.freshId();
        const size = g.pick([100_000, 500_000, Math.floor(max * 0.9), max + 10]);
        const big = "y".repeat(size);
        const method = g.pick([
          "session/respond",
          "world/set",
          "npc/talk",
          "schema/validate",
          this.#method(),
        ]);
        const params = this.validParams(method);
        const key = g.pick([...Object.keys(params), "prompt", "value", "line"]);
        params[key] = big;
        const text = this.#request(method, params, id);
        const tooLong = encoder.encode(text).length > max;
        return {
          category,
          bytes: this.#line(text),
          expect: tooLong ? { kind: "invalid", code: -32600 } : { kind: "request", id },
        };
      }
      case "deepNesting": {
        const depth = g.pick([101, 1000, 10_000, 100_000]);
        const open = g.chance(0.5) ? "[" : '{"a":';
        const close = open === "[" ? "]" : "}";
        const balanced = g.chance(0.8);
        const deep = open.repeat(depth) + (balanced ? (open === "[" ? "" : "1") + close.repeat(depth) : "");
        const id = this.freshId();
        const where = g.int(3);
        const text = where === 0
          ? deep
          : where === 1
          ? `{"jsonrpc":"2.0","id":${
            JSON.stringify(id)
          },"method":"world/set","params":{"world":"fz-w1","path":"a","value":${deep}}}`
          : `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"ping","params":${deep}}`;
        const bytes = this.#line(text);
        return {
          category,
          bytes,
          expect: { kind: "invalid", code: bytes.length - 1 > max ? -32600 : -32700 },
        };
      }
      case "envelope":
        return this.#envelope();
      case "notification": {
        const method = g.chance(0.9)
          ? this.#method()
          : g.pick(["nope/nope", "tool/call", "tool/cancel", "rpc.x"]);
        const params = g.chance(0.5) ? this.validParams(method) : wrongValue(g);
        return {
          category,
          bytes: this.#line(this.#request(method, params, undefined)),
          expect: { kind: "silent" },
        };
      }
      case "strayResponse": {
        const n = ++this.#n;
        const id: Id = g.pick<Id>([`t-${900_000_000 + n}`, 900_000_000 + n, `stray-${n}`]);
        const body = g.pick([
          '"result":{"output":"late"}',
          '"result":null',
          '"error":{"code":-32000,"message":"offline"}',
          '"error":"x"',
          '"result":{"output":{"__proto__":{"polluted":"yes"}}}',
        ]);
        return {
          category,
          bytes: this.#line(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},${body}}`),
          expect: { kind: "silent", warning: `Ignoring a response to unknown or finished request '${id}'.` },
        };
      }
      case "blank":
        return {
          category,
          bytes: this.#line(g.pick(["", " ", "\t", "  \t ", "\uFEFF"])),
          expect: { kind: "silent" },
        };
      case "randomBytes": {
        const bytes = g.bytes(g.range(1, 200));
        for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) bytes[i] = 32;
        const out = new Uint8Array(bytes.length + 1);
        out.set(bytes);
        out[bytes.length] = 10;
        return { category, bytes: out, expect: { kind: "unknown" } };
      }
      case "mutated": {
        const id = `m${++this.#n}`;
        const text = this.#validText(id);
        const from = text.indexOf(`"id":"${id}"`) + `"id":"${id}"`.length;
        let chars = [...text];
        for (let k = g.range(1, 4); k > 0; k--) {
          const at = g.range(from, chars.length - 1);
          const op = g.int(3);
          const ch = g.pick([
            '"',
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\\",
            "0",
            "-",
            "e",
            "n",
            " ",
            "\u0001",
            "é",
          ]);
          if (op === 0) chars.splice(at, 1);
          else if (op === 1) chars.splice(at, 0, ch);
          else chars[at] = ch;
        }
        chars = chars.filter((c) => c !== "\n");
        return { category, bytes: this.#line(chars.join("")), expect: { kind: "unknown", id } };
      }
      case "overLong": {
        const size = this.#options.bigLines ? g.pick([max + 1, max * 2, max * 4]) : max + g.int(1000) + 1;
        const text = `{"jsonrpc":"2.0","id":"long","method":"ping","params":{"x":"${"z".repeat(size)}"}}`;
        return { category, bytes: this.#line(text), expect: { kind: "invalid", code: -32600 } };
      }
      default:
        throw new Error(`unknown category ${category}`);
    }
  }

  #envelope(): FuzzCase {
    const g = this.rng;
    const category = "envelope";
    const id = this.freshId();
    const idText = JSON.stringify(id);
    const method = this.#method();
    const echo = (text: string): FuzzCase => ({
      category,
      bytes: this.#line(text),
      expect: { kind: "request", id },
    });
    const invalid = (text: string, code: number): FuzzCase => ({
      category,
      bytes: this.#line(text),
      expect: { kind: "invalid", code },
    });
    switch (g.int(12)) {
      case 0:
        return echo(`{"id":${idText},"method":"${method}"}`);
      case 1:
        return echo(`{"jsonrpc":"${g.pick(["1.0", "2", "2.0 ", ""])}","id":${idText},"method":"ping"}`);
      case 2:
        return echo(`{"jsonrpc":2.0,"id":${idText},"method":"ping"}`);
      case 3:
        return invalid(
          `{"jsonrpc":"2.0","id":${g.pick(["null", "true", "{}", "[]", '{"a":1}'])},"method":"ping"}`,
          -32600,
        );
      case 4:
        return echo(
          `{"jsonrpc":"2.0","id":${idText},"method":${g.pick(["42", '""', "null", "[]", "{}", "true"])}}`,
        );
      case 5:
        return echo(`{"jsonrpc":"2.0","id":${idText}}`);
      case 6:
        return invalid(`[${this.#validText(id)}]`, -32600);
      case 7:
        return invalid(g.pick(["[]", "42", '"ping"', "null", "true", "-0", "1e400"]), -32600);
      case 8:
        return echo(`{"jsonrpc":"2.0","id":${idText},"method":"${method}","result":{},"error":{}}`);
      case 9:
        return echo(
          `{"jsonrpc":"2.0","id":${idText},"method":"${
            g.pick(["nope", "Ping", "session/", "/", "\\u0000", "x".repeat(300)])
          }"}`,
        );
      case 10:
        return echo(
          `{"jsonrpc":"2.0","id":${idText},"method":"${method}","params":${
            g.pick(["[]", "[1]", '"x"', "5", "true"])
          }}`,
        );
      default:
        return echo(`  {"jsonrpc" : "2.0" ,\t"id" : ${idText} , "method" : "ping" , "params" : null }  `);
    }
  }
}

function protoPairs(g: Rng): Array<[string, Node]> {
  const pool: Array<[string, Node]> = [
    ["__proto__", { polluted: "yes" }],
    ["constructor", { prototype: { polluted: "yes" } }],
    ["prototype", { polluted: "yes" }],
    ["__proto__", null],
    ["__proto__", []],
    ["toString", "x"],
    ["hasOwnProperty", 1],
  ];
  const out: Array<[string, Node]> = [];
  for (let i = g.range(1, 3); i > 0; i--) out.push(g.pick(pool));
  return out;
}

/** Rewrites plain objects as pairs with `__proto__`/`constructor`/`prototype` keys inserted. */
function injectProtoKeys(g: Rng, node: Node, depth: number): Node {
  if (node === null || typeof node !== "object" || node instanceof Raw || node instanceof Pairs) return node;
  if (Array.isArray(node)) return (node as readonly Node[]).map((c) => injectProtoKeys(g, c, depth + 1));
  const object = node as { [key: string]: Node | undefined };
  const pairs: Array<[string, Node]> = Object.keys(object).filter((k) => object[k] !== undefined).map((k) => [
    k,
    injectProtoKeys(g, object[k]!, depth + 1),
  ]);
  if (depth === 0 || g.chance(0.5)) pairs.splice(g.int(pairs.length + 1), 0, ...protoPairs(g));
  return new Pairs(pairs);
}
