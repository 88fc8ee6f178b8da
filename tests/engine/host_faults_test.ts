/**
 * Whose bug an internal error is. A plain Error thrown by a host's own code (a handler of an extension the host
 * added, its `modelFactory`, its model's `step()`) is answered `-32603 internal_error` with its message, as
 * before; the stderr line names that code ("a bug in the host's extension MineMethods …; fix it there")
 * instead of sending the extension author to this project's issue tracker. A bug in the project's own method
 * sets (core, session and game methods, however the host composed them) still says "please report it".
 * Before, every one of these lines said "(a bug; please report it)".
 */
import assert from "node:assert/strict";
import { BridgeEngine, standardExtensions } from "../../src/composition.ts";
import { EngineCore } from "../../src/engine/engine.ts";
import type { EngineParts } from "../../src/engine/configuration.ts";
import type { BridgeExtension, MethodRegistry } from "../../src/engine/extension.ts";
import { GameExtension } from "../../src/game/game_extension.ts";
import type { LanguageModel, StepResult } from "../../src/models/language_model.ts";
import { createModel, type ModelSpec, parseModelSpec } from "../../src/models/registry.ts";
import { UnavailableModel } from "../../src/models/unavailable.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import type { Logger } from "../../src/util/logger.ts";

class MineMethods implements BridgeExtension {
  register(registry: MethodRegistry): void {
    registry.register("mine/plain", () => {
      throw new Error("the mine map is corrupt");
    });
    registry.register("mine/later", () => Promise.reject(new Error("the cart derailed")));
  }
}

const available = () => Promise.resolve({ available: true, contextSize: 4096, supportedLanguages: ["en"] });

/** A host model whose `step()` fails as `fail` says. */
function hostModel(fail: () => Promise<StepResult>): LanguageModel {
  return { kind: "buggy", contextSize: 4096, trimsHistory: false, availability: available, step: fail };
}

function hostFactory(spec: ModelSpec): LanguageModel | undefined {
  if (spec.type === "boom") throw new Error("my factory has a typo");
  if (spec.type === "boomString") throw "a string from my factory";
  if (spec.type === "hollow") return {} as LanguageModel;
  if (spec.type === "rejects") {
    return hostModel(() => Promise.reject(new Error("my backend forgot a null check")));
  }
  if (spec.type === "throws") {
    return hostModel(() => {
      throw new TypeError("my backend threw before its promise");
    });
  }
  return undefined;
}

function logged(): { logger: Logger; errors: string[] } {
  const errors: string[] = [];
  const none = () => {};
  return { logger: { debug: none, info: none, warning: none, error: (m) => errors.push(m) }, errors };
}

/** The error `engine.call` rejects with, as it is on the wire. */
async function failure(engine: EngineCore, method: string, params: JsonObject = {}): Promise<JsonObject> {
  try {
    await engine.call(method, params);
  } catch (e) {
    assert.ok(e instanceof BridgeError, String(e));
    return e.toJson() as JsonObject;
  }
  assert.fail(`${method} succeeded`);
}

function internal(message: string): JsonObject {
  return { code: -32603, message, data: { code: "internal_error" } };
}

Deno.test("a host extension's handler that throws: the log names the extension, the wire is unchanged", async () => {
  const { logger, errors } = logged();
  const engine = new BridgeEngine({ extensions: [...standardExtensions(), new MineMethods()], logger });
  assert.deepEqual(await failure(engine, "mine/plain"), internal("the mine map is corrupt"));
  assert.deepEqual(await failure(engine, "mine/later"), internal("the cart derailed"));
  assert.equal(errors.length, 2, errors.join("\n"));
  assert.match(
    errors[0],
    /^Internal error in 'mine\/plain' \(a bug in the host's extension MineMethods, which registered this method; fix it there\): Error: the mine map is corrupt\n +at .*host_faults_test\.ts/,
  );
  assert.match(errors[1], /^Internal error in 'mine\/later' \(a bug in the host's extension MineMethods, /);
  await engine.shutdown();
});

Deno.test("a host extension without a class, and a handler added with engine.register, are the host's too", async () => {
  const { logger, errors } = logged();
  const literal: BridgeExtension = {
    register(registry) {
      registry.register("x/literal", () => {
        throw new RangeError("out of quests");
      });
    },
  };
  const engine = new BridgeEngine({ extensions: [literal], logger });
  engine.register("x/runtime", () => {
    throw new Error("late handler");
  });
  // A host's override of a built-in method is the host's.
  engine.register("ping", () => {
    throw new Error("my ping");
  });
  await failure(engine, "x/literal");
  await failure(engine, "x/runtime");
  await failure(engine, "ping");
  assert.deepEqual(errors.map((e) => e.split(":")[0]), [
    "Internal error in 'x/literal' (a bug in the host's extension that registered this method; fix it there)",
    "Internal error in 'x/runtime' (a bug in the handler the host registered for this method; fix it there)",
    "Internal error in 'ping' (a bug in the handler the host registered for this method; fix it there)",
  ]);
  await engine.shutdown();
});

Deno.test("a bug in the project's own method sets still asks for a report, however the host composed them", async () => {
  for (const extensions of [undefined, [new GameExtension(), new MineMethods()]]) {
    const { logger, errors } = logged();
    const engine = new BridgeEngine({ ...(extensions ? { extensions } : {}), logger });
    const game = engine.configuration.extensions.find((e) => e instanceof GameExtension)!;
    // A broken store inside the game methods: their bug, not the host's.
    game.game.worlds.values = () => {
      throw new TypeError("the world store is broken");
    };
    assert.deepEqual(await failure(engine, "world/list"), internal("the world store is broken"));
    assert.equal(errors.length, 1);
    assert.match(errors[0], /^Internal error in 'world\/list' \(a bug; please report it\): TypeError: /);
    await engine.shutdown();
  }
});

Deno.test("a host's subclass of a project method set is the host's", async () => {
  class MyGame extends GameExtension {
    override register(registry: MethodRegistry): void {
      super.register(registry);
      registry.register("world/mine", () => {
        throw new Error("my world method");
      });
    }
  }
  const { logger, errors } = logged();
  const engine = new BridgeEngine({ extensions: [new MyGame()], logger });
  await failure(engine, "world/mine");
  assert.match(errors[0], /^Internal error in 'world\/mine' \(a bug in the host's extension MyGame, /);
  await engine.shutdown();
});

Deno.test("a host's modelFactory that throws or makes no model: the log names the factory, the wire is unchanged", async () => {
  const { logger, errors } = logged();
  const engine = new BridgeEngine({ modelFactory: hostFactory, logger });
  assert.deepEqual(
    await failure(engine, "session/create", { model: { type: "boom" } }),
    internal("my factory has a typo"),
  );
  assert.deepEqual(
    await failure(engine, "npc/create", {
      npc: "gorm",
      persona: { name: "Gorm" },
      model: { type: "boomString" },
    }),
    internal("a string from my factory"),
  );
  assert.deepEqual(
    await failure(engine, "session/create", { model: { type: "hollow" } }),
    internal(
      "The modelFactory made no LanguageModel for type 'hollow' (it needs step() and availability()).",
    ),
  );
  assert.deepEqual(errors.map((e) => e.split("): ")[0]), [
    "Internal error in 'session/create' (a bug in the host's modelFactory, for the model type 'boom'; fix it there",
    "Internal error in 'npc/create' (a bug in the host's modelFactory, for the model type 'boomString'; fix it there",
    "Internal error in 'session/create' (a bug in the host's modelFactory, for the model type 'hollow'; fix it there",
  ]);
  assert.match(errors[0], /\): Error: my factory has a typo\n +at .*host_faults_test\.ts/);
  await engine.shutdown();
});

Deno.test("a host model whose step() fails: the log names the model type, the wire is unchanged", async () => {
  const { logger, errors } = logged();
  const engine = new BridgeEngine({ modelFactory: hostFactory, logger });
  await engine.call("session/create", { session: "r", model: { type: "rejects" } });
  await engine.call("session/create", { session: "t", model: { type: "throws" } });
  assert.deepEqual(
    await failure(engine, "session/respond", { session: "r", prompt: "hi" }),
    internal("my backend forgot a null check"),
  );
  assert.deepEqual(
    await failure(engine, "session/respond", { session: "t", prompt: "hi" }),
    internal("my backend threw before its promise"),
  );
  assert.deepEqual(
    (await engine.call("decision/decideMany", {
      model: { type: "rejects" },
      requests: [{ situation: "A wolf.", options: ["flee", "fight"] }],
    }) as { results: JsonObject[] }).results[0].error,
    internal("my backend forgot a null check"),
  );
  assert.deepEqual(errors.map((e) => e.split("): ")[0]), [
    "Internal error in 'session/respond' (a bug in the step() of the host's model type 'rejects'; fix it there",
    "Internal error in 'session/respond' (a bug in the step() of the host's model type 'throws'; fix it there",
    "Internal error in 'decision/decideMany requests[0]' (a bug in the step() of the host's model type 'rejects'; fix it there",
  ]);
  await engine.shutdown();
});

Deno.test("EngineCore: method sets are the host's unless the parts say they are the project's", async () => {
  const boom: BridgeExtension = {
    register: (registry) =>
      registry.register("x/boom", () => {
        throw new Error("boom");
      }),
  };
  const parts = (owns?: EngineParts["ownsMethodSet"]): EngineParts => ({
    builtins: [boom],
    defaults: { systemModel: () => new UnavailableModel("device_not_eligible"), extensions: () => [] },
    models: { parse: parseModelSpec, create: createModel },
    ...(owns ? { ownsMethodSet: owns } : {}),
  });
  for (
    const [owns, whose] of [[undefined, "a bug in the host's extension"], [
      () => true,
      "a bug; please report it",
    ]] as const
  ) {
    const { logger, errors } = logged();
    const engine = new EngineCore(parts(owns), { logger });
    await failure(engine, "x/boom");
    assert.ok(errors[0].startsWith(`Internal error in 'x/boom' (${whose}`), errors[0]);
    await engine.shutdown();
  }
});

Deno.test("a host's systemModel that throws or makes no model: the log names it, the wire is unchanged", async () => {
  const { logger, errors } = logged();
  const throwing = new BridgeEngine({
    systemModel: () => {
      throw new Error("the device plugin is missing");
    },
    logger,
  });
  assert.deepEqual(await failure(throwing, "session/create", {}), internal("the device plugin is missing"));
  await throwing.shutdown();
  const hollow = new BridgeEngine({ systemModel: () => undefined as unknown as LanguageModel, logger });
  assert.deepEqual(
    await failure(hollow, "session/create", {}),
    internal("The systemModel made no LanguageModel (it needs step() and availability())."),
  );
  await hollow.shutdown();
  assert.deepEqual(errors.map((e) => e.split("): ")[0]), [
    "Internal error in 'session/create' (a bug in the host's systemModel (its bridge configuration); fix it there",
    "Internal error in 'session/create' (a bug in the host's systemModel (its bridge configuration); fix it there",
  ]);
  assert.match(errors[0], /\): Error: the device plugin is missing\n +at .*host_faults_test\.ts/);
  // A model it makes is used as it is (often one of this project's backends): not marked as the host's.
  const working = new BridgeEngine({
    systemModel: () => new UnavailableModel("device_not_eligible"),
    logger,
  });
  const created = await working.call("session/create", {}) as JsonObject;
  assert.equal(typeof created.session, "string");
  await working.shutdown();
});
