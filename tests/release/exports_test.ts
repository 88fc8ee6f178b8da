/**
 * The public API of the package is pinned (issue #7, release readiness; issue 12, the curated surface): the
 * sorted names of the values and of the types that mod.ts (the typed client) and engine.ts (the engine-level
 * API, the "./engine" export) export. A change here must be deliberate (and noted in CHANGELOG.md). Also:
 * importing either runs nothing (no permission is needed, nothing is printed).
 */
import assert from "node:assert/strict";

/** Values (classes, functions, constants) exported by mod.ts, sorted. */
const MOD_VALUES = [
  "Bridge",
  "BridgeError",
  "ClientTool",
  "EMOTIONS",
  "ERROR_CODES",
  "InProcessTransport",
  "Npc",
  "PROTOCOL_VERSION",
  "Peer",
  "Session",
  "StdioTransport",
  "Subscription",
  "TurnStream",
  "WebSocketTransport",
  "World",
  "bridgeCommand",
  "firstCachedModel",
  "loadPersona",
  "modelFromArgs",
];

/** Types and interfaces exported by mod.ts (names that exist only at type level), sorted. */
const MOD_TYPES = [
  "BridgeMethods",
  "BridgeNotifications",
  "BridgeOptions",
  "CachedModel",
  "ConnectionEnd",
  "CreateNpcOptions",
  "CreateSessionOptions",
  "Decision",
  "DecisionDetails",
  "DecisionFailure",
  "DecisionOption",
  "DecisionParams",
  "DecisionRequest",
  "DecisionSettings",
  "Emotion",
  "EngineFactory",
  "ErrorName",
  "GenerateOptions",
  "InProcessEngine",
  "IncomingRequest",
  "InitializeResult",
  "JsonInput",
  "JsonMemberInput",
  "JsonObject",
  "JsonObjectInput",
  "JsonRpcError",
  "JsonRpcErrorObject",
  "JsonRpcMessage",
  "JsonRpcNotification",
  "JsonRpcRequest",
  "JsonRpcResult",
  "JsonSchema",
  "JsonValue",
  "LlamaModelSpec",
  "LoadPersonaOptions",
  "MethodName",
  "Model",
  "ModelAvailability",
  "ModelSpecRegistry",
  "NotificationHandler",
  "NpcEvent",
  "NpcInfo",
  "NpcMemory",
  "NpcOptions",
  "NpcReply",
  "NpcState",
  "OpenAIModelSpec",
  "OpenOptions",
  "ParamsOf",
  "PeerOptions",
  "Persona",
  "PersonaFile",
  "RequestHandler",
  "RequestId",
  "RequestOptions",
  "RespondOptions",
  "RespondParams",
  "RespondResult",
  "RestoreOptions",
  "ResultOf",
  "Sampling",
  "SchemaRequired",
  "SchemaTypeValue",
  "SchemaValue",
  "ScriptStep",
  "ScriptedModelSpec",
  "SessionEvent",
  "SessionInfo",
  "SessionOptions",
  "SpawnOptions",
  "StdioTransportOptions",
  "Step",
  "StepScript",
  "SystemModelSpec",
  "TalkOptions",
  "ToolArgs",
  "ToolCall",
  "ToolChoice",
  "ToolContext",
  "ToolDefinition",
  "ToolHandler",
  "ToolHandlerFor",
  "ToolRecord",
  "ToolRef",
  "ToolSpec",
  "Transcript",
  "Transport",
  "TransportClose",
  "TurnOptions",
  "Usage",
  "WaitOptions",
  "WebSocketTransportOptions",
  "WorldChange",
  "WorldInfo",
  "WorldListener",
  "WorldRemoval",
];

/** Values exported by engine.ts, sorted. */
const ENGINE_VALUES = [
  "AGENT_ERROR_CODES",
  "Agent",
  "BridgeEngine",
  "BridgeError",
  "BridgeSession",
  "CutOffAnswer",
  "DEFAULTS",
  "DEFAULT_POLICY",
  "DEFAULT_SETTINGS",
  "ERROR_CODES",
  "EXTENSION_ERROR_CODES",
  "EngineCore",
  "GameContext",
  "GameExtension",
  "LOG_LEVELS",
  "MethodRegistry",
  "Operation",
  "PROTOCOL_VERSION",
  "Params",
  "Pending",
  "SERVER_INFO",
  "SHUTDOWN_GRACE_MS",
  "SchemaError",
  "ScriptedModel",
  "SessionMethods",
  "UnavailableModel",
  "WorkQueue",
  "WorldError",
  "WorldState",
  "closeLlamaModels",
  "closeSystemModels",
  "convertSchema",
  "createLlamaModel",
  "createModel",
  "createOpenAIModel",
  "createStdioServer",
  "createSystemModel",
  "exportTranscript",
  "importTranscript",
  "parseGgufModelFlag",
  "parseLlamaModelSpec",
  "parseModelSpec",
  "parseOpenAIModelFlag",
  "parseOpenAIModelSpec",
  "parseScript",
  "parseToolChoice",
  "parseToolDefinitions",
  "silentLogger",
  "standardExtensions",
  "stderrLogger",
];

/** Types exported by engine.ts, sorted. */
const ENGINE_TYPES = [
  "AgentErrorCode",
  "AgentEvent",
  "AgentInit",
  "AgentSettings",
  "AgentTool",
  "Bounds",
  "BridgeConfiguration",
  "BridgeExtension",
  "BridgeSettings",
  "ClientRequest",
  "ConversationEntry",
  "CutOffWritten",
  "CutToolCall",
  "DriveOptions",
  "EngineParts",
  "EnginePhase",
  "ErrorName",
  "ExtensionHost",
  "GameMethodSet",
  "GenerationOptions",
  "HandlerContext",
  "HandlerResult",
  "ImportedTranscript",
  "InstructionsEntry",
  "JsonObject",
  "JsonValue",
  "LanguageModel",
  "LlamaGpu",
  "LlamaModelConfig",
  "LocalToolContext",
  "LogLevel",
  "Logger",
  "MethodHandler",
  "ModelAvailability",
  "ModelFactories",
  "ModelParam",
  "ModelSpec",
  "NativeReport",
  "NativeStepInfo",
  "OpenAIModelConfig",
  "ParsedTools",
  "PendingConsumer",
  "PromptEntry",
  "ReadonlyJsonObject",
  "ReadonlyJsonValue",
  "RequestId",
  "ResponseEntry",
  "ResponseSchema",
  "Sampling",
  "SchemaConversion",
  "Script",
  "ScriptStep",
  "Segment",
  "StdioOptions",
  "StdioServer",
  "StepInfo",
  "StepRequest",
  "StepResult",
  "StepTool",
  "StepToolCall",
  "StepUsage",
  "StructureSegment",
  "SystemModelOptions",
  "TextSegment",
  "ToolCallInfo",
  "ToolCallingMode",
  "ToolCallsEntry",
  "ToolChoice",
  "ToolDefinitionsParam",
  "ToolOutcome",
  "ToolOutputEntry",
  "ToolPolicy",
  "ToolRecord",
  "TranscriptEntry",
  "TranscriptEnvelope",
  "TranscriptSource",
  "TranscriptToolCall",
  "TranscriptToolDefinition",
  "TurnInput",
  "TurnResult",
  "TurnSink",
  "Usage",
  "WorldChange",
  "WorldEntry",
  "WorldListener",
  "WorldPathInput",
  "WorldReadResult",
  "WorldRemoveResult",
  "WorldStateOptions",
];

const ENTRIES = [
  { file: "mod.ts", url: new URL("../../mod.ts", import.meta.url), values: MOD_VALUES, types: MOD_TYPES },
  {
    file: "engine.ts",
    url: new URL("../../engine.ts", import.meta.url),
    values: ENGINE_VALUES,
    types: ENGINE_TYPES,
  },
];

for (const entry of ENTRIES) {
  Deno.test(`${entry.file} exports exactly the pinned values`, async () => {
    const mod = await import(entry.url.href);
    assert.deepEqual(Object.keys(mod).sort(), entry.values);
  });

  Deno.test(`${entry.file} exports exactly the pinned types (deno doc)`, async () => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["doc", "--json", entry.url.pathname],
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(60_000), // a hang fails the test instead of stalling the run
    }).output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    const doc = JSON.parse(new TextDecoder().decode(output.stdout)) as {
      nodes: Record<string, { symbols: Array<{ name: string }> }>;
    };
    const names = new Set(doc.nodes[entry.url.href].symbols.map((s) => s.name));
    const values = new Set(entry.values);
    assert.deepEqual([...names].filter((n) => !values.has(n)).sort(), entry.types);
    for (const v of entry.values) assert.ok(names.has(v), `${v} is missing from deno doc`);
  });

  Deno.test(`importing ${entry.file} needs no permission and prints nothing`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      const script = `${dir}/import.ts`;
      const probe = entry.values[0];
      await Deno.writeTextFile(
        script,
        `const m = await import(${JSON.stringify(entry.url.href)}); if (!m[${
          JSON.stringify(probe)
        }]) Deno.exit(3);\n`,
      );
      const output = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--no-prompt", "--no-config", script],
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(60_000), // a hang fails the test instead of stalling the run
      }).output();
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
      assert.equal(new TextDecoder().decode(output.stdout), "");
      assert.equal(new TextDecoder().decode(output.stderr), "");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("every symbol mod.ts exports has a JSDoc example", async () => {
  const mod = ENTRIES[0].url;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", mod.pathname],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000), // a hang fails the test instead of stalling the run
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  const doc = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    nodes: Record<
      string,
      {
        symbols: Array<{ name: string; declarations: Array<{ jsDoc?: { tags?: Array<{ kind: string }> } }> }>;
      }
    >;
  };
  const missing = doc.nodes[mod.href].symbols
    .filter((s) => !s.declarations.some((d) => d.jsDoc?.tags?.some((t) => t.kind === "example")))
    .map((s) => s.name);
  assert.deepEqual(missing, []);
});
