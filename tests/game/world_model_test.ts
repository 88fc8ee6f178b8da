/**
 * Model-based test of the world-state blackboard (PROTOCOL.md §6 "World state", §7 `world/changed`, §8): random,
 * seeded sequences of `world/*` requests — good and bad — go over the wire, pipelined in small batches, and
 * every reply and every notification, in order, is compared with a small reference model written from the
 * protocol text. Replay a failure with the seed it prints.
 */
import assert from "node:assert/strict";
import { WireClient, type WireConnection } from "../helpers/wire.ts";
import { stdioConnection } from "../helpers/stdio_connection.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import {
  assertSame,
  canonical,
  clone,
  forEachSeed,
  isObject,
  modelSeeds,
  modelSteps,
  own,
  put,
  type Rng,
  type Trace,
} from "../helpers/model_check.ts";

const FILE = "tests/game/world_model_test.ts";
const MAX_WORLDS = 64;
const MAX_SUBSCRIPTIONS = 256;
/** Not in PROTOCOL.md: the implementation bounds nesting (64 levels) and size (8 MiB, approximate). */
const MAX_DEPTH = 64;
const MAX_SIZE = 8 * 1024 * 1024;
const KEYS = ["a", "b", "c", "0", "1", "2", "__proto__", "constructor", "toString", "x y", "é"];
const NAMED_WORLDS = ["village", "w1", "w2", "w3", "w5", "castle"];
/** A world that holds huge values and never gets subscriptions (keeps notification volume small). */
const BIG = "big";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = Record<string, Json>;

/** One expected message. */
type Expected =
  | { kind: "note"; params: Obj }
  | { kind: "result"; result: Obj; warned?: boolean }
  | { kind: "error"; code: number; data: Obj }
  | { kind: "list"; worlds: Obj[] };

class WorldFailure {
  constructor(readonly path: string) {}
}

interface ModelWorld {
  state: Obj;
  version: number;
}
interface ModelSubscription {
  id: string;
  world: string;
  path: string[];
}
interface Change {
  path: string[];
  oldValue?: Json;
  newValue?: Json;
}

function arrayIndex(segment: string): number | undefined {
  return /^[0-9]+$/.test(segment) ? Number(segment) : undefined;
}

/** Reference path parsing: dot paths, `""` the root, no empty segments. */
function parsePath(text: string): string[] {
  if (text === "") return [];
  const segments = text.split(".");
  if (segments.some((s) => s === "")) throw new WorldFailure(text);
  return segments;
}

function depth(value: Json): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  let d = 0;
  for (const c of children) d = Math.max(d, depth(c));
  return d + 1;
}

/** Approximate JSON size as the implementation counts it (strings by length, scalars 8). */
function weight(value: Json): number {
  if (typeof value === "string") return value.length + 2;
  if (value === null || typeof value !== "object") return 8;
  let n = 2;
  if (Array.isArray(value)) {
    for (const item of value) n += weight(item) + 1;
    return n;
  }
  for (const key of Object.keys(value)) n += key.length + 4 + weight(value[key]);
  return n;
}

function equal(a: Json | undefined, b: Json | undefined): boolean {
  return canonical(a) === canonical(b);
}

function stripNulls(patch: Obj): Obj {
  const out: Obj = {};
  for (const key of Object.keys(patch)) {
    const v = patch[key];
    if (v === null) continue;
    put(out, key, isObject(v) ? stripNulls(v as Obj) : clone(v));
  }
  return out;
}

/** Reads a path; `undefined` when absent (also through a non-container). */
function read(root: Obj, path: string[]): Json | undefined {
  let node: Json | undefined = root;
  for (const segment of path) {
    if (isObject(node)) node = own(node, segment) as Json | undefined;
    else if (Array.isArray(node)) {
      const i = arrayIndex(segment);
      node = i === undefined ? undefined : node[i];
    } else return undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** Writes `value` at non-root `path` of `root` (mutating), creating objects on the way; index n appends. */
function write(root: Obj, path: string[], value: Json, display: string): void {
  let node: Json = root;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    const last = i === path.length - 1;
    if (isObject(node)) {
      if (last) {
        put(node, segment, value);
        return;
      }
      let child = own(node, segment) as Json | undefined;
      if (child === undefined) put(node, segment, child = {});
      node = child;
    } else if (Array.isArray(node)) {
      const index = arrayIndex(segment);
      if (index === undefined || index > node.length) throw new WorldFailure(display);
      if (last) {
        node[index] = value;
        return;
      }
      if (index === node.length) node.push({});
      node = node[index];
    } else {
      throw new WorldFailure(display);
    }
  }
}

/** RFC 7386 merge of `patch` into `target` (returns the new value). */
function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const out: Obj = isObject(target) ? clone(target as Obj) : {};
  for (const key of Object.keys(patch)) {
    const v = (patch as Obj)[key];
    if (v === null) delete out[key];
    else put(out, key, mergePatch(own(out, key) as Json | undefined, v));
  }
  return out;
}

/** The changed leaves of merging `patch` at `path` whose value was `old` (one per leaf, patch order). */
function mergeChanges(path: string[], old: Json | undefined, patch: Json, out: Change[]): void {
  if (isObject(patch) && isObject(old)) {
    for (const key of Object.keys(patch)) {
      const v = (patch as Obj)[key];
      const current = own(old as Obj, key) as Json | undefined;
      if (v === null) {
        if (current !== undefined) out.push({ path: [...path, key], oldValue: current });
      } else mergeChanges([...path, key], current, v, out);
    }
    return;
  }
  const next = isObject(patch) ? stripNulls(patch as Obj) : patch;
  if (old === undefined) out.push({ path, newValue: next });
  else if (!equal(old, next)) out.push({ path, oldValue: old, newValue: next });
}

function overlaps(a: string[], b: string[]): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The reference model of the world store. */
class WorldModel {
  readonly worlds = new Map<string, ModelWorld>();
  readonly subscriptions: ModelSubscription[] = [];
  #nextWorld = 1;
  #nextSubscription = 1;

  get subscriptionCount(): number {
    return this.subscriptions.length;
  }

  /** Applies one request; returns the messages it should cause, in order. */
  apply(method: string, params: unknown): Expected[] {
    // Params are by name (§1): an object; absent or null means {}.
    if (params === null) params = {};
    if (!isObject(params)) return [{ kind: "error", code: -32602, data: { code: "invalid_params" } }];
    try {
      return this.#apply(method, params);
    } catch (error) {
      if (error instanceof Expectation) return [...error.before, error.expected];
      throw error;
    }
  }

  #apply(method: string, p: Record<string, unknown>): Expected[] {
    // Absent params mean {} and null members are treated as absent (§1).
    const has = (key: string) => Object.hasOwn(p, key) && p[key] !== null;
    const str = (key: string, required: boolean): string | undefined => {
      if (!has(key)) {
        if (required) throw fail(-32602, { code: "invalid_params" });
        return undefined;
      }
      if (typeof p[key] !== "string") throw fail(-32602, { code: "invalid_params" });
      return p[key] as string;
    };
    const lookup = (): [string, ModelWorld] => {
      const id = str("world", true)!;
      const world = this.worlds.get(id);
      if (!world) throw fail(-32052, { code: "world_not_found", world: id });
      return [id, world];
    };
    const pathOf = (id: string, required = false): string[] => {
      const text = str("path", required) ?? "";
      return worldCall(id, () => parsePath(text));
    };
    switch (method) {
      case "world/create": {
        const requested = str("world", false);
        if (requested !== undefined && !validId(requested)) throw fail(-32602, { code: "invalid_params" });
        const state = has("state") ? p.state as Json : undefined;
        if (state !== undefined && !isObject(state)) throw fail(-32602, { code: "invalid_params" });
        if (requested !== undefined && this.worlds.has(requested)) {
          throw fail(-32053, { code: "world_exists", world: requested });
        }
        if (this.worlds.size >= MAX_WORLDS) throw fail(-32055, { code: "limit_reached", limit: MAX_WORLDS });
        let id = requested;
        while (id === undefined) {
          const candidate = `w${this.#nextWorld++}`;
          if (!this.worlds.has(candidate)) id = candidate;
        }
        const initial = clone((state ?? {}) as Obj);
        if (depth(initial) > MAX_DEPTH || weight(initial) > MAX_SIZE) {
          throw fail(-32054, { code: "world_error", world: id, path: "" });
        }
        this.worlds.set(id, { state: initial, version: 0 });
        return [ok({ world: id, version: 0 })];
      }
      case "world/get": {
        const [id, world] = lookup();
        const path = pathOf(id);
        const value = read(world.state, path);
        return [ok({
          world: id,
          path: path.join("."),
          value: value === undefined ? null : value,
          exists: value !== undefined,
          version: world.version,
        })];
      }
      case "world/set": {
        const [id, world] = lookup();
        const path = pathOf(id);
        if (!Object.hasOwn(p, "value")) throw fail(-32602, { code: "invalid_params" });
        const value = p.value as Json; // a JSON null is a value here
        const display = path.join(".");
        let next: Obj;
        if (path.length === 0) {
          if (!isObject(value)) throw fail(-32054, { code: "world_error", world: id, path: "" });
          next = clone(value as Obj);
        } else {
          next = clone(world.state);
          worldCall(id, () => write(next, path, clone(value), display));
        }
        if (depth(value) + path.length > MAX_DEPTH) {
          throw fail(-32054, { code: "world_error", world: id, path: display });
        }
        const old = read(world.state, path);
        const changes: Change[] = old === undefined
          ? [{ path, newValue: value }]
          : equal(old, value)
          ? []
          : [{ path, oldValue: old, newValue: value }];
        return [
          ...this.#commit(id, world, next, changes, display),
          ok({ world: id, path: display, version: world.version }),
        ];
      }
      case "world/merge": {
        const [id, world] = lookup();
        const path = pathOf(id);
        // PROTOCOL.md §1 treats null members as absent, but the implementation takes `patch: null` as an
        // RFC 7386 patch (it stores null at a path; the root rejects it): followed here.
        if (!Object.hasOwn(p, "patch")) throw fail(-32602, { code: "invalid_params" });
        const patch = p.patch as Json;
        const display = path.join(".");
        if (path.length === 0 && !isObject(patch)) {
          throw fail(-32054, { code: "world_error", world: id, path: "" });
        }
        if (depth(patch) + path.length > MAX_DEPTH) {
          throw fail(-32054, { code: "world_error", world: id, path: display });
        }
        const old = read(world.state, path);
        const merged = mergePatch(old, patch);
        let next: Obj;
        if (path.length === 0) next = merged as Obj;
        else {
          next = clone(world.state);
          worldCall(id, () => write(next, path, merged, display));
        }
        const changes: Change[] = [];
        mergeChanges(path, old, patch, changes);
        return [
          ...this.#commit(id, world, next, changes, display),
          ok({ world: id, path: display, version: world.version }),
        ];
      }
      case "world/remove": {
        const [id, world] = lookup();
        const path = pathOf(id, true);
        const display = path.join(".");
        const old = read(world.state, path);
        // Not in PROTOCOL.md (the implementation's choice): removing an empty root removes nothing.
        if (old === undefined || (path.length === 0 && Object.keys(old as Obj).length === 0)) {
          return [ok({ world: id, path: display, removed: false, oldValue: null, version: world.version })];
        }
        let next: Obj;
        if (path.length === 0) next = {};
        else {
          next = clone(world.state);
          const parent = read(next, path.slice(0, -1))!;
          const key = path[path.length - 1];
          if (Array.isArray(parent)) parent.splice(arrayIndex(key)!, 1);
          else delete (parent as Obj)[key];
        }
        const changes: Change[] = path.length === 0
          ? [{ path, oldValue: old, newValue: {} }]
          : [{ path, oldValue: old }];
        const notes = this.#commit(id, world, next, changes, display);
        return [
          ...notes,
          ok({ world: id, path: display, removed: true, oldValue: old, version: world.version }),
        ];
      }
      case "world/snapshot": {
        const [id, world] = lookup();
        return [ok({ world: id, state: clone(world.state), version: world.version })];
      }
      case "world/delete": {
        const [id] = lookup();
        this.worlds.delete(id);
        const ended = this.subscriptions.filter((s) => s.world === id).length;
        this.subscriptions.splice(
          0,
          this.subscriptions.length,
          ...this.subscriptions.filter((s) => s.world !== id),
        );
        return [ok({ world: id, deleted: true, endedSubscriptions: ended })];
      }
      case "world/list": {
        const worlds: Obj[] = [];
        for (const [id, world] of this.worlds) {
          worlds.push({
            world: id,
            version: world.version,
            npcs: 0,
            subscriptions: this.subscriptions.filter((s) => s.world === id).map(subscriptionJson),
          });
        }
        return [{ kind: "list", worlds }];
      }
      case "world/subscribe": {
        const [id, world] = lookup();
        const path = pathOf(id);
        if (this.subscriptions.length >= MAX_SUBSCRIPTIONS) {
          throw fail(-32055, { code: "limit_reached", limit: MAX_SUBSCRIPTIONS });
        }
        const s = { id: `sub${this.#nextSubscription++}`, world: id, path };
        this.subscriptions.push(s);
        return [{
          kind: "result",
          result: subscriptionJson(s),
          warned: read(world.state, path) === undefined,
        }];
      }
      case "world/unsubscribe": {
        const id = str("subscription", true)!;
        const at = this.subscriptions.findIndex((s) => s.id === id);
        if (at < 0) throw fail(-32056, { code: "subscription_not_found", subscription: id });
        const [s] = this.subscriptions.splice(at, 1);
        return [ok({ ...subscriptionJson(s), unsubscribed: true })];
      }
      default:
        throw fail(-32601, { code: "method_not_found", method });
    }
  }

  /** Commits a write (size-checked) and returns its notifications: change-major, subscriptions in order. */
  #commit(id: string, world: ModelWorld, next: Obj, changes: Change[], display: string): Expected[] {
    if (changes.length === 0) return [];
    if (weight(next) > MAX_SIZE) throw fail(-32054, { code: "world_error", world: id, path: display });
    world.state = next;
    world.version++;
    const notes: Expected[] = [];
    for (const change of changes) {
      for (const s of this.subscriptions) {
        if (s.world !== id || !overlaps(s.path, change.path)) continue;
        const params: Obj = { world: id, subscription: s.id, path: change.path.join(".") };
        if (change.oldValue !== undefined) params.oldValue = change.oldValue;
        if (change.newValue !== undefined) params.newValue = change.newValue;
        notes.push({ kind: "note", params });
      }
    }
    return notes;
  }
}

class Expectation {
  constructor(readonly expected: Expected, readonly before: Expected[] = []) {}
}

function fail(code: number, data: Obj): Expectation {
  return new Expectation({ kind: "error", code, data });
}

function ok(result: Obj): Expected {
  return { kind: "result", result };
}

function worldCall<T>(world: string, body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof WorldFailure) throw fail(-32054, { code: "world_error", world, path: error.path });
    throw error;
  }
}

function validId(id: string): boolean {
  return id.length >= 1 && id.length <= 128 && [...id].every((ch) => ch >= " " && ch !== "\x7f");
}

function subscriptionJson(s: ModelSubscription): Obj {
  return { subscription: s.id, world: s.world, path: s.path.join(".") };
}

// ---------------------------------------------------------------------------------------------------------
// Generators

function genKey(rng: Rng): string {
  return rng.pick(KEYS);
}

function genValue(rng: Rng, levels = 3): Json {
  const kind = rng.int(levels > 0 ? 9 : 6);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.range(-3, 3);
    case 3:
      return rng.pick([0.5, -1e300, 1e21, 2 ** 53 - 1, 123456.789]);
    case 4:
    case 5:
      return rng.pick(["", "x", "gold", '\n"\\', "ü🙂", rng.word()]);
    case 6: {
      const n = rng.int(3);
      return Array.from({ length: n }, () => genValue(rng, levels - 1));
    }
    default: {
      const out: Obj = {};
      const n = rng.int(4);
      for (let i = 0; i < n; i++) put(out, genKey(rng), genValue(rng, levels - 1));
      return out;
    }
  }
}

function genObject(rng: Rng, levels = 3): Obj {
  const out: Obj = {};
  const n = rng.int(4);
  for (let i = 0; i < n; i++) put(out, genKey(rng), genValue(rng, levels - 1));
  return out;
}

function deep(levels: number): Obj {
  let v: Json = 1;
  for (let i = 0; i < levels; i++) v = { d: v };
  return v as Obj;
}

/** A path param: usually a dot path of pool keys, sometimes malformed, mistyped or absent. */
function genPath(rng: Rng, world: Obj | undefined): unknown {
  const roll = rng.int(20);
  if (roll === 0) return rng.pick(["a..b", ".a", "a.", "..", "b..0"]);
  if (roll === 1) return rng.pick([3, true, { a: 1 }, ["a"]]);
  if (roll === 2) return undefined;
  if (roll === 3) return null;
  if (roll <= 8 && world) {
    // An existing path (or one level below it).
    const segments: string[] = [];
    let node: Json = world;
    for (let i = 0; i < 4; i++) {
      const keys = isObject(node)
        ? Object.keys(node)
        : Array.isArray(node)
        ? node.map((_, i) => String(i)).concat([String(node.length)])
        : [];
      if (keys.length === 0 || rng.chance(0.3)) break;
      const key = rng.pick(keys);
      segments.push(key);
      node = read(world, segments) ?? null;
    }
    return segments.join(".");
  }
  return Array.from({ length: rng.int(4) }, () => genKey(rng)).join(".");
}

interface Op {
  method: string;
  params: Record<string, unknown>;
  /** Raw params line text when it must carry what JSON.stringify cannot express as given (none so far). */
}

function pickWorld(rng: Rng, model: WorldModel): string {
  const ids = [...model.worlds.keys()].filter((w) => w !== BIG);
  if (ids.length === 0 || rng.chance(0.08)) return rng.pick(["nope", "W1", "village", "w9"]);
  return rng.pick(ids);
}

function withPath(params: Record<string, unknown>, path: unknown): Record<string, unknown> {
  if (path !== undefined) params.path = path;
  return params;
}

function genOp(rng: Rng, model: WorldModel): Op[] {
  const world = pickWorld(rng, model);
  const state = model.worlds.get(world)?.state;
  const op = rng.weighted<string>([
    [6, "create"],
    [10, "get"],
    [20, "set"],
    [14, "merge"],
    [8, "remove"],
    [4, "snapshot"],
    [2, "delete"],
    [3, "list"],
    [7, "subscribe"],
    [4, "unsubscribe"],
    [4, "bad"],
    [2, "big"],
    [0.3, "worldLimit"],
    [0.3, "subscriptionLimit"],
  ]);
  switch (op) {
    case "create": {
      const params: Record<string, unknown> = {};
      const idRoll = rng.int(10);
      if (idRoll < 4) params.world = rng.pick(NAMED_WORLDS);
      else if (idRoll === 4) params.world = rng.pick(["", "x".repeat(129), "a\nb", 7]);
      else if (idRoll === 5) params.world = null;
      const stateRoll = rng.int(10);
      if (stateRoll < 5) params.state = genObject(rng);
      else if (stateRoll === 5) params.state = rng.pick([[1], 3, "x", true]);
      else if (stateRoll === 6) params.state = deep(MAX_DEPTH + 10);
      else if (stateRoll === 7) params.state = JSON.parse('{"__proto__":{"polluted":1},"a":1}');
      else if (stateRoll === 8) params.state = null;
      return [{ method: "world/create", params }];
    }
    case "get":
      return [{ method: "world/get", params: withPath({ world }, genPath(rng, state)) }];
    case "set": {
      const params = withPath({ world }, genPath(rng, state));
      const roll = rng.int(20);
      if (roll === 0) { /* value missing */ }
      else if (roll === 1) params.value = deep(MAX_DEPTH + 5);
      else if (roll === 2) params.value = genObject(rng);
      else params.value = genValue(rng);
      return [{ method: "world/set", params }];
    }
    case "merge": {
      const params = withPath({ world }, rng.chance(0.5) ? undefined : genPath(rng, state));
      const roll = rng.int(20);
      if (roll === 0) { /* patch missing */ }
      else if (roll === 1) params.patch = null;
      else if (roll === 2) params.patch = deep(MAX_DEPTH + 5);
      else if (roll < 6) params.patch = genValue(rng);
      else {
        // A patch that touches existing keys, with nulls (deletes) mixed in.
        const patch = genObject(rng);
        if (state) {
          for (const key of Object.keys(state)) {
            if (rng.chance(0.4)) put(patch, key, rng.chance(0.4) ? null : genValue(rng, 2));
          }
        }
        params.patch = patch;
      }
      return [{ method: "world/merge", params }];
    }
    case "remove": {
      const path = genPath(rng, state);
      return [{
        method: "world/remove",
        params: rng.chance(0.05) ? { world } : { world, path: path ?? "a" },
      }];
    }
    case "snapshot":
      return [{ method: "world/snapshot", params: { world } }];
    case "delete":
      return [{ method: "world/delete", params: { world } }];
    case "list":
      return [{ method: "world/list", params: {} }];
    case "subscribe":
      if (model.subscriptionCount > 12) return [{ method: "world/list", params: {} }];
      return [{ method: "world/subscribe", params: withPath({ world }, genPath(rng, state)) }];
    case "unsubscribe": {
      const ids = model.subscriptions.map((s) => s.id);
      const id = ids.length > 0 && rng.chance(0.8) ? rng.pick(ids) : rng.pick(["sub0", "sub999", "", 5]);
      return [{ method: "world/unsubscribe", params: rng.chance(0.05) ? {} : { subscription: id } }];
    }
    case "bad":
      return [rng.pick<Op>([
        { method: "world/nope", params: { world } },
        {
          method: "world/get",
          params: rng.pick<unknown>([[world], "w1", 5, true]) as Record<string, unknown>,
        },
        { method: "world/list", params: null as unknown as Record<string, unknown> },
        { method: "world/get", params: { world: rng.pick([1, true, ["w1"], { w: 1 }]) } },
        { method: "world/set", params: { path: "a", value: 1 } },
        { method: "world/merge", params: { world, patch: "not an object", path: "" } },
        { method: "world/set", params: { world, value: rng.pick([[1], 3, null]) } },
        { method: "world/subscribe", params: { world, path: "a..b" } },
        { method: "world/remove", params: { world: "nope", path: "a" } },
      ])];
    case "big": {
      // Huge values in their own world (no subscriptions): the size bound must reject a write and change nothing.
      if (!model.worlds.has(BIG)) return [{ method: "world/create", params: { world: BIG } }];
      const roll = rng.int(4);
      if (roll === 0) {
        return [{ method: "world/remove", params: { world: BIG, path: rng.pick(["a", "b", "c"]) } }];
      }
      if (roll === 1) {
        return [{ method: "world/get", params: { world: BIG, path: rng.pick(["a", "b", "zz"]) } }];
      }
      return [{
        method: "world/set",
        params: {
          world: BIG,
          path: rng.pick(["a", "b", "c"]),
          value: "x".repeat(3 * 1024 * 1024 + rng.int(10)),
        },
      }];
    }
    case "worldLimit": {
      const ops: Op[] = [];
      for (let i = model.worlds.size; i <= MAX_WORLDS; i++) ops.push({ method: "world/create", params: {} });
      ops.push({ method: "world/create", params: { world: rng.pick(NAMED_WORLDS) } });
      // Delete most generated worlds again (the ones the burst created come after the existing ones).
      for (let i = 0; i < MAX_WORLDS - 6; i++) {
        ops.push({ method: "world/delete", params: { world: `#${i}` } });
      }
      return ops;
    }
    default: {
      // subscriptionLimit: fill to the limit, one more, then unsubscribe what the burst added.
      const target = [...model.worlds.keys()].find((w) => w !== BIG);
      if (!target) return [{ method: "world/create", params: {} }];
      const ops: Op[] = [];
      for (let i = model.subscriptionCount; i <= MAX_SUBSCRIPTIONS; i++) {
        ops.push({ method: "world/subscribe", params: { world: target, path: "limit" } });
      }
      ops.push({ method: "world/set", params: { world: target, path: "limit", value: rng.int(1000) } });
      ops.push({ method: "world/unsubscribe", params: { subscription: "#all-limit" } });
      return ops;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The run

function describe(message: JsonObject): string {
  return JSON.stringify(message).slice(0, 300);
}

function check(actual: JsonObject, expected: Expected, id: unknown, what: string): void {
  if (expected.kind === "note") {
    assert.equal(actual.method, "world/changed", `${what}: expected world/changed, got ${describe(actual)}`);
    assert.ok(!("id" in actual), `${what}: a notification has no id`);
    assertSame(actual.params, expected.params, `${what}: world/changed params`);
    return;
  }
  assert.ok(!("method" in actual), `${what}: expected the response, got ${describe(actual)}`);
  assertSame(actual.id, id, `${what}: response id`);
  if (expected.kind === "error") {
    assert.ok(
      "error" in actual,
      `${what}: expected error ${expected.code} ${canonical(expected.data)}, got ${describe(actual)}`,
    );
    const error = actual.error as JsonObject;
    assert.equal(error.code, expected.code, `${what}: error code in ${describe(actual)}`);
    assertSame(error.data, expected.data, `${what}: error data`);
    assert.equal(typeof error.message, "string");
    return;
  }
  assert.ok("result" in actual, `${what}: expected a result, got ${describe(actual)}`);
  const result = actual.result as JsonObject;
  if (expected.kind === "list") {
    const worlds = (result.worlds as JsonObject[]).map((w) => {
      assert.equal(typeof w.createdAt, "string");
      const { createdAt: _, ...rest } = w;
      return rest;
    });
    assertSame(worlds, expected.worlds, `${what}: world/list`);
    return;
  }
  const { warnings, ...rest } = result;
  if (expected.warned !== undefined) {
    assert.equal(
      warnings !== undefined,
      expected.warned,
      `${what}: warnings present iff the path is missing`,
    );
  } else assert.equal(warnings, undefined, `${what}: no warnings`);
  assertSame(rest, expected.result, `${what}: result`);
}

async function run(
  rng: Rng,
  trace: Trace,
  steps: number,
  open: () => WireConnection = () => new WireClient(),
): Promise<void> {
  const c = open();
  const model = new WorldModel();
  let ids = 0;
  let step = 0;
  while (step < steps) {
    // A small pipelined batch: sent back to back, then compared as a whole.
    const batch: Op[] = [];
    const size = rng.range(1, 4);
    for (let i = 0; i < size; i++) batch.push(...genOp(rng, model));
    const start = c.messages.length;
    const expected: Array<[Expected, unknown, string]> = [];
    for (const op of batch) {
      // Placeholders of the limit bursts resolve against the model as it is now.
      if (op.method === "world/delete" && String(op.params.world).startsWith("#")) {
        const generated = [...model.worlds.keys()].filter((w) => /^w\d+$/.test(w));
        const victim = generated[generated.length - 1];
        if (victim === undefined || model.worlds.size <= 6) continue;
        op.params.world = victim;
      }
      if (op.params?.subscription === "#all-limit") {
        for (const s of model.subscriptions.filter((s) => s.path.join(".") === "limit")) {
          const id = rng.chance(0.5) ? ids++ : `r${ids++ % 3}`;
          c.request(op.method, { subscription: s.id }, id);
          trace.add(`${id} ${op.method} ${s.id}`);
          for (const e of model.apply(op.method, { subscription: s.id })) {
            expected.push([e, id, `${op.method} ${s.id}`]);
          }
        }
        continue;
      }
      // Ids: fresh numbers, or reused strings and numbers (world requests answer at once, so reuse is fine).
      const id = rng.chance(0.7) ? ids++ : rng.pick<string | number>(["r", "r", 0, "é", 2 ** 53 - 1]);
      const line = JSON.stringify({ jsonrpc: "2.0", id, method: op.method, params: op.params });
      trace.add(`→ ${line}`);
      c.sendLine(line);
      const what = `step ${step} ${op.method}`;
      for (const e of model.apply(op.method, clone(op.params))) expected.push([e, id, what]);
      step++;
    }
    await c.waitFor(() => c.messages.length >= start + expected.length);
    const got = c.messages.slice(start);
    for (let i = 0; i < expected.length; i++) {
      const [e, id, what] = expected[i];
      assert.ok(got[i] !== undefined, `${what}: missing message ${i}`);
      check(got[i], e, id, what);
    }
    // Nothing more than expected (checked after the next batch too, by position).
    assert.equal(
      c.messages.length,
      start + expected.length,
      `unexpected extra messages: ${c.messages.slice(start + expected.length).map(describe).join("\n")}`,
    );
  }
  // The final state of every world equals the model's.
  for (const [id, world] of model.worlds) {
    const final = c.request("world/snapshot", { world: id }, `final-${id}`);
    const snap = (await c.response(final)).result as JsonObject;
    assertSame(snap.state, world.state, `final state of ${id}`);
    assert.equal(snap.version, world.version);
  }
  await c.close();
  // Prototype pollution never happened.
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
}

Deno.test("world/* model: random good and bad requests match the reference model, notifications and all", async () => {
  await forEachSeed(FILE, modelSeeds([1, 2, 3, 4]), (rng, trace) => run(rng, trace, modelSteps(250)));
});

Deno.test("world/* model over the stdio transport's line framing", async () => {
  await forEachSeed(
    FILE,
    modelSeeds([7, 8]),
    (rng, trace) => run(rng, trace, modelSteps(150), stdioConnection),
  );
});
