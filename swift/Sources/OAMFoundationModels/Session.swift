#if canImport(FoundationModels)
import Foundation
import FoundationModels
import OAMCore
import Synchronization

// Building FoundationModels sessions from the plain request structs of OAMCore, and the content mapping.

extension JSONValue {
    /// From generated content through its structure (`kind`): always a complete value, keys in generation
    /// order — also for partial snapshots, whose JSON text may be incomplete.
    init(_ content: GeneratedContent) {
        switch content.kind {
        case .null:
            self = .null
        case .bool(let b):
            self = .bool(b)
        case .number(let d):
            self = .number(d)
        case .string(let s):
            self = .string(s)
        case .array(let items):
            self = .array(items.map { JSONValue($0) })
        case .structure(let properties, let orderedKeys):
            var members: [JSONMember] = []
            for key in orderedKeys {
                if let value = properties[key] { members.append(JSONMember(key, JSONValue(value))) }
            }
            for key in properties.keys.sorted() where !orderedKeys.contains(key) {
                if let value = properties[key] { members.append(JSONMember(key, JSONValue(value))) }
            }
            self = .object(members)
        @unknown default:
            self = (try? JSONValue.parse(content.jsonString)) ?? .null
        }
    }

    /// Generated content with the members in this value's order.
    var generatedContent: GeneratedContent {
        switch self {
        case .null:
            return GeneratedContent(kind: .null)
        case .bool(let b):
            return GeneratedContent(kind: .bool(b))
        case .number(let d):
            return GeneratedContent(kind: .number(d))
        case .string(let s):
            return GeneratedContent(kind: .string(s))
        case .array(let items):
            return GeneratedContent(kind: .array(items.map(\.generatedContent)))
        case .object(let members):
            var properties: [String: GeneratedContent] = [:]
            for member in members { properties[member.key] = member.value.generatedContent }
            return GeneratedContent(kind: .structure(properties: properties, orderedKeys: members.map(\.key)))
        }
    }
}

enum Schemas {
    /// A GenerationSchema from its JSON (FoundationModels' own JSON Schema dialect, produced by the bridge).
    static func decode(_ value: JSONValue, path: String) throws -> GenerationSchema {
        guard value.objectMembers != nil else { throw PluginError.invalidSchema("\(path) must be an object.", path: path) }
        do {
            return try JSONDecoder().decode(GenerationSchema.self, from: Data(value.jsonText.utf8))
        } catch let error as DecodingError {
            throw PluginError.invalidSchema("\(path) is not a valid generation schema: \(describe(error))", path: path)
        }
    }

    /// Apple's own re-encoding of a schema (`validateSchema`).
    static func encode(_ schema: GenerationSchema) throws -> JSONValue {
        let data = try JSONEncoder().encode(schema)
        return try JSONValue.parse(String(decoding: data, as: UTF8.self))
    }

    static func describe(_ error: DecodingError) -> String {
        func location(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        }
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): return location(c)
        case .keyNotFound(let key, let c): return "\(location(c)) (missing '\(key.stringValue)')"
        @unknown default: return String(describing: error)
        }
    }
}

/// The recorder of the step currently using a session's capture tools (tools are fixed when a session is
/// built; a continued session's next step brings a new recorder).
final class RecorderSlot: Sendable {
    private let current = Mutex<CaptureRecorder?>(nil)

    var recorder: CaptureRecorder? { current.withLock { $0 } }

    func set(_ recorder: CaptureRecorder?) {
        current.withLock { $0 = recorder }
    }
}

/// A tool the model may call. It never runs anything: it records the call and suspends until the step ends
/// (the step cancels the generation once the calls have settled).
struct CaptureTool: Tool {
    typealias Arguments = GeneratedContent
    typealias Output = String

    let name: String
    let description: String
    let parameters: GenerationSchema
    let slot: RecorderSlot

    func call(arguments: GeneratedContent) async throws -> String {
        guard let recorder = slot.recorder else { throw CancellationError() }
        recorder.record(CapturedCall(name: name, arguments: JSONValue(arguments)))
        // Suspended until cancellation (Task.sleep throws) or the recorder stops, in case the framework runs
        // tool calls outside the cancelled task tree.
        while !recorder.isStopped {
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CancellationError()
    }
}

/// A `LanguageModelSession` with its capture tools. `@unchecked Sendable`: a live session is used by one
/// request at a time — it is taken out of the native session table while a step uses it.
final class LiveSession: @unchecked Sendable {
    let session: LanguageModelSession
    let slot: RecorderSlot

    init(session: LanguageModelSession, slot: RecorderSlot) {
        self.session = session
        self.slot = slot
    }

    /// A new session whose transcript is the instructions entry (instructions and tool definitions) followed
    /// by the history.
    static func build(_ spec: SessionSpec, model: SystemLanguageModel) throws -> LiveSession {
        let slot = RecorderSlot()
        let tools = try captureTools(spec.tools, slot: slot)
        let entries = try TranscriptMapping.entries(spec, tools: tools)
        let session = LanguageModelSession(model: model, tools: tools, transcript: Transcript(entries: entries))
        return LiveSession(session: session, slot: slot)
    }

    static func captureTools(_ specs: [ToolSpec], slot: RecorderSlot) throws -> [CaptureTool] {
        try specs.enumerated().map { index, tool in
            CaptureTool(
                name: tool.name, description: tool.description,
                parameters: try Schemas.decode(tool.parameters, path: "tools[\(index)].parameters"), slot: slot
            )
        }
    }

    /// The calls of the transcript's tool-calls entry of the current turn (nil when there is none).
    func latestToolCalls() -> [TranscriptCall]? {
        for entry in session.transcript.reversed() {
            switch entry {
            case .toolCalls(let calls):
                return calls.map { TranscriptCall(id: $0.id, name: $0.toolName, arguments: JSONValue($0.arguments)) }
            case .prompt:
                return nil
            default:
                continue
            }
        }
        return nil
    }
}

/// The bridge's entries (parsed into `HistoryEntry`) → `Transcript.Entry`, with the framework's public
/// initializers — never through Apple's undocumented `Codable` transcript format.
enum TranscriptMapping {
    static func entries(_ spec: SessionSpec, tools: [CaptureTool]) throws -> [Transcript.Entry] {
        var out: [Transcript.Entry] = []
        if let instructions = instructions(spec.instructions, tools: tools) { out.append(instructions) }
        for entry in spec.history { out.append(try self.entry(entry)) }
        return out
    }

    static func instructions(_ text: String?, tools: [CaptureTool]) -> Transcript.Entry? {
        if text == nil && tools.isEmpty { return nil }
        var segments: [Transcript.Segment] = []
        if let text { segments.append(.text(Transcript.TextSegment(content: text))) }
        let definitions = tools.map {
            Transcript.ToolDefinition(name: $0.name, description: $0.description, parameters: $0.parameters)
        }
        return .instructions(Transcript.Instructions(segments: segments, toolDefinitions: definitions))
    }

    static func entry(_ entry: HistoryEntry) throws -> Transcript.Entry {
        switch entry {
        case .prompt(let id, let segments, let responseFormat):
            let format = responseFormat.flatMap { try? Schemas.decode($0, path: "responseFormat.schema") }
                .map { Transcript.ResponseFormat(schema: $0) }
            return .prompt(Transcript.Prompt(id: entryID(id), segments: segments.map(segment), responseFormat: format))
        case .response(let id, let segments, let assets):
            return .response(Transcript.Response(id: entryID(id), assetIDs: assets, segments: segments.map(segment)))
        case .toolCalls(let id, let calls):
            let built = calls.map {
                Transcript.ToolCall(id: entryID($0.id), toolName: $0.name, arguments: $0.arguments.generatedContent)
            }
            return .toolCalls(Transcript.ToolCalls(id: entryID(id), built))
        case .toolOutput(let id, let toolName, let segments):
            // The output's id must equal its call's id, or inference fails.
            return .toolOutput(Transcript.ToolOutput(id: entryID(id), toolName: toolName, segments: segments.map(segment)))
        }
    }

    static func segment(_ segment: SegmentSpec) -> Transcript.Segment {
        switch segment {
        case .text(let id, let text):
            return .text(Transcript.TextSegment(id: entryID(id), content: text))
        case .structure(let id, let source, let content):
            return .structure(structured(id: entryID(id), source: source, content: content.generatedContent))
        }
    }

    /// `init(id:source:content:)` is deprecated in the macOS 27 SDK in favour of `init(id:schemaName:content:)`
    /// (27 only); an older SDK has only the first.
    static func structured(id: String, source: String, content: GeneratedContent) -> Transcript.StructuredSegment {
        #if compiler(>=6.4)
        if #available(macOS 27.0, *) {
            return Transcript.StructuredSegment(id: id, schemaName: source, content: content)
        }
        #endif
        return Transcript.StructuredSegment(id: id, source: source, content: content)
    }

    static func entryID(_ id: String) -> String {
        id.isEmpty ? UUID().uuidString : id
    }
}
#endif
