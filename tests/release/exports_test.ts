/**
 * The public API of the package is pinned (issue #7, release readiness): the sorted names of the values and
 * of the types that mod.ts exports. A change here must be deliberate (and noted in CHANGELOG.md). Also:
 * importing mod.ts runs nothing (no permission is needed, nothing is printed).
 */
import assert from "node:assert/strict";

/** Values (classes, functions, constants) exported by mod.ts, sorted. */
const VALUES = [
  "AGENT_ERROR_CODES",
  "Agent",
  "BridgeEngine",
  "BridgeError",
  "BridgeRequest",
  "BridgeSession",
  "CoreMethods",
  "DEFAULTS",
  "DEFAULT_POLICY",
  "DEFAULT_SETTINGS",
  "ERROR_CODES",
  "EngineCore",
  "GameContext",
  "GameExtension",
  "LOG_LEVELS",
  "LineSplitter",
  "LineWriter",
  "MAX_NOTIFICATION_BYTES",
  "MAX_WORLD_DEPTH",
  "MAX_WORLD_SIZE",
  "MethodRegistry",
  "Operation",
  "PROTOCOL_VERSION",
  "Params",
  "Pending",
  "READ_OUTPUT_LIMIT",
  "READ_WORLD_STATE_TOOL",
  "ROOT_NOT_OBJECT_MESSAGE",
  "SERVER_INFO",
  "SHORTENED_NOTE",
  "SHUTDOWN_GRACE_MS",
  "SchemaError",
  "ScriptedModel",
  "SessionMethods",
  "TRANSCRIPT_TYPE",
  "TRANSCRIPT_VERSION",
  "TURN_ENDED_REASON",
  "UPDATE_WORLD_STATE_TOOL",
  "UnavailableModel",
  "WorkQueue",
  "WorldError",
  "WorldState",
  "arrayIndex",
  "assignMissingIds",
  "canonicalWorldPath",
  "cloneJson",
  "closeSystemModels",
  "coerceWorldValue",
  "compactJson",
  "convertForParam",
  "convertSchema",
  "createModel",
  "createOpenAIModel",
  "createStdioServer",
  "createSystemModel",
  "decodeLine",
  "encodeMessage",
  "exportTranscript",
  "formatWorldPath",
  "importTranscript",
  "invalidPathMessage",
  "isAgentErrorCode",
  "isInside",
  "isJsonObject",
  "isPrefix",
  "isResponseEntry",
  "isSamePath",
  "isToolCallsEntry",
  "jsonEqual",
  "orderBySchema",
  "ownValue",
  "parseModelSpec",
  "parseOpenAIModelFlag",
  "parseOpenAIModelSpec",
  "parseScript",
  "parseToolChoice",
  "parseToolDefinitions",
  "parseWorldPath",
  "pathRelation",
  "pathsOverlap",
  "readWorldStateTool",
  "recordJson",
  "replyToOutcome",
  "segmentsText",
  "setOwn",
  "shortenForModel",
  "showValue",
  "silentLogger",
  "standardExtensions",
  "stderrLogger",
  "stepJson",
  "summarizeWorld",
  "toBridgeError",
  "toSegments",
  "toolChoiceJson",
  "turnResultJson",
  "updateWorldStateTool",
  "usageJson",
  "worldTools",
];

/** Types and interfaces exported by mod.ts (names that exist only at type level), sorted. */
const TYPES = [
  "AgentErrorCode",
  "AgentEvent",
  "AgentInit",
  "AgentSettings",
  "AgentTool",
  "Bounds",
  "BridgeConfiguration",
  "BridgeExtension",
  "ClientRequest",
  "ConversationEntry",
  "DriveOptions",
  "EngineParts",
  "EnginePhase",
  "ErrorName",
  "GameMethodSet",
  "GenerationOptions",
  "HandlerResult",
  "ImportedTranscript",
  "Incoming",
  "InstructionsEntry",
  "JsonObject",
  "JsonValue",
  "LanguageModel",
  "LocalToolContext",
  "LogLevel",
  "Logger",
  "MaybePromise",
  "MethodHandler",
  "ModelAvailability",
  "ModelFactories",
  "ModelSpec",
  "NativeReport",
  "NativeStepInfo",
  "OpenAIModelConfig",
  "ParsedTools",
  "PathRelation",
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
  "ToolOutcome",
  "ToolOutputEntry",
  "ToolPolicy",
  "ToolRecord",
  "TranscriptEntry",
  "TranscriptEnvelope",
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
  "WorldTool",
  "WorldToolResult",
];

const MOD = new URL("../../mod.ts", import.meta.url);

Deno.test("mod.ts exports exactly the pinned values", async () => {
  const mod = await import(MOD.href);
  assert.deepEqual(Object.keys(mod).sort(), VALUES);
});

Deno.test("mod.ts exports exactly the pinned types (deno doc)", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", MOD.pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  const doc = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    nodes: Record<string, { symbols: Array<{ name: string }> }>;
  };
  const names = new Set(doc.nodes[MOD.href].symbols.map((s) => s.name));
  const values = new Set(VALUES);
  assert.deepEqual([...names].filter((n) => !values.has(n)).sort(), TYPES);
  for (const v of VALUES) assert.ok(names.has(v), `${v} is missing from deno doc`);
});

Deno.test("importing mod.ts needs no permission and prints nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const script = `${dir}/import.ts`;
    await Deno.writeTextFile(
      script,
      `const m = await import(${JSON.stringify(MOD.href)}); if (!m.BridgeEngine) Deno.exit(3);\n`,
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        `--config=${new URL("../../deno.json", import.meta.url).pathname}`,
        script,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    assert.equal(new TextDecoder().decode(output.stdout), "");
    assert.equal(new TextDecoder().decode(output.stderr), "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
