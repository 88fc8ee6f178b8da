import Foundation
import FoundationModels

/// Builds FoundationModels transcript entries from the bridge's own documented entry JSON
/// (src/protocol/transcript.ts) with the framework's public initializers — never by decoding Apple's
/// undocumented `Codable` transcript format. See ffi/README.md ("History").
///
///   {role:"user", id, contents:[segment], options:{}, responseFormat?:{name, schema}}     → .prompt
///   {role:"response", id, contents:[segment], assets:[]}                               → .response
///   {role:"response", id, toolCalls:[{id, name, arguments:"<JSON>"}], contents, assets} → .toolCalls
///   {role:"tool", id, toolCallID, toolName, contents:[segment]}                         → .toolOutput (id = toolCallID)
///   segment: {type:"text", id, text} | {type:"structure", id, structure:{source, content}}
enum TranscriptBuilder {
    static func entries(_ history: [Any], path: String = "history") throws -> [Transcript.Entry] {
        var out: [Transcript.Entry] = []
        for (index, raw) in history.enumerated() {
            let here = "\(path)[\(index)]"
            guard let entry = raw as? [String: Any] else {
                throw PluginError.invalidRequest("\(here) must be an object.", path: here)
            }
            let id = entry["id"] as? String ?? UUID().uuidString
            switch entry["role"] as? String {
            case "instructions":
                continue // the plugin builds the instructions entry from `instructions` and `tools`
            case "user":
                let segments = try self.segments(entry["contents"], path: "\(here).contents")
                var format: Transcript.ResponseFormat?
                if let rf = entry["responseFormat"] as? [String: Any], let schema = rf["schema"] {
                    format = (try? Schemas.decode(schema, path: "\(here).responseFormat.schema"))
                        .map { Transcript.ResponseFormat(schema: $0) }
                }
                out.append(.prompt(Transcript.Prompt(id: id, segments: segments, responseFormat: format)))
            case "response":
                if let calls = entry["toolCalls"] as? [Any] {
                    let built = try calls.enumerated().map { try toolCall($1, path: "\(here).toolCalls[\($0)]") }
                    out.append(.toolCalls(Transcript.ToolCalls(id: id, built)))
                } else {
                    let segments = try self.segments(entry["contents"], path: "\(here).contents")
                    let assets = (entry["assets"] as? [Any])?.compactMap { $0 as? String } ?? []
                    out.append(.response(Transcript.Response(id: id, assetIDs: assets, segments: segments)))
                }
            case "tool":
                guard let toolName = entry["toolName"] as? String else {
                    throw PluginError.invalidRequest("\(here).toolName is required.", path: "\(here).toolName")
                }
                // The output's id must equal its call's id, or inference fails.
                let callID = entry["toolCallID"] as? String ?? id
                let segments = try self.segments(entry["contents"], path: "\(here).contents")
                out.append(.toolOutput(Transcript.ToolOutput(id: callID, toolName: toolName, segments: segments)))
            default:
                throw PluginError.invalidRequest("\(here).role must be user, response or tool.", path: "\(here).role")
            }
        }
        return out
    }

    static func toolCall(_ raw: Any, path: String) throws -> Transcript.ToolCall {
        guard let call = raw as? [String: Any], let name = call["name"] as? String else {
            throw PluginError.invalidRequest("\(path) needs a name.", path: path)
        }
        let id = call["id"] as? String ?? UUID().uuidString
        let argumentsJSON: String
        if let text = call["arguments"] as? String {
            argumentsJSON = text
        } else if let object = call["arguments"] {
            argumentsJSON = JSON.serialize(object)
        } else {
            argumentsJSON = "{}"
        }
        do {
            return Transcript.ToolCall(id: id, toolName: name, arguments: try GeneratedContent(json: argumentsJSON))
        } catch {
            throw PluginError.invalidRequest("\(path).arguments is not valid JSON.", path: "\(path).arguments")
        }
    }

    static func segments(_ raw: Any?, path: String) throws -> [Transcript.Segment] {
        guard let list = raw as? [Any] else { return [] }
        return try list.enumerated().map { (index: Int, item: Any) throws -> Transcript.Segment in
            let here = "\(path)[\(index)]"
            guard let segment = item as? [String: Any] else {
                throw PluginError.invalidRequest("\(here) must be an object.", path: here)
            }
            let id = segment["id"] as? String ?? UUID().uuidString
            switch segment["type"] as? String {
            case "text":
                return .text(Transcript.TextSegment(id: id, content: segment["text"] as? String ?? ""))
            case "structure":
                let structure = segment["structure"] as? [String: Any] ?? [:]
                let source = structure["source"] as? String ?? "Response"
                let contentJSON = JSON.serialize(structure["content"] ?? NSNull())
                do {
                    let content = try GeneratedContent(json: contentJSON)
                    return .structure(Transcript.StructuredSegment(id: id, source: source, content: content))
                } catch {
                    throw PluginError.invalidRequest("\(here).structure.content is not valid JSON.", path: here)
                }
            default:
                throw PluginError.invalidRequest("\(here).type must be text or structure.", path: "\(here).type")
            }
        }
    }

    /// The instructions entry: the instructions text plus one definition per visible tool.
    static func instructions(_ text: String?, tools: [CaptureTool]) -> Transcript.Entry? {
        if text == nil && tools.isEmpty { return nil }
        var segments: [Transcript.Segment] = []
        if let text { segments.append(.text(Transcript.TextSegment(content: text))) }
        let definitions = tools.map {
            Transcript.ToolDefinition(name: $0.name, description: $0.description, parameters: $0.parameters)
        }
        return .instructions(Transcript.Instructions(segments: segments, toolDefinitions: definitions))
    }
}

/// What a step, countTokens or prewarm needs to build a session: capture tools, schema, transcript.
struct SessionParts {
    let tools: [CaptureTool]
    let entries: [Transcript.Entry]
    let recorder: CaptureRecorder

    var transcript: Transcript { Transcript(entries: entries) }

    init(request: [String: Any], model: SystemLanguageModel) throws {
        let recorder = CaptureRecorder()
        var tools: [CaptureTool] = []
        var names = Set<String>()
        for (index, raw) in ((request["tools"] as? [Any]) ?? []).enumerated() {
            let path = "tools[\(index)]"
            guard let spec = raw as? [String: Any], let name = spec["name"] as? String, !name.isEmpty else {
                throw PluginError.invalidRequest("\(path).name is required.", path: "\(path).name")
            }
            guard names.insert(name).inserted else {
                throw PluginError.invalidRequest("Duplicate tool name '\(name)'.", path: "\(path).name")
            }
            let parameters = try Schemas.decode(spec["parameters"] ?? [String: Any](), path: "\(path).parameters")
            tools.append(CaptureTool(
                name: name,
                description: spec["description"] as? String ?? "",
                parameters: parameters,
                recorder: recorder
            ))
        }
        let history = try TranscriptBuilder.entries((request["history"] as? [Any]) ?? [])
        let instructions = TranscriptBuilder.instructions(request["instructions"] as? String, tools: tools)
        self.tools = tools
        self.recorder = recorder
        self.entries = (instructions.map { [$0] } ?? []) + history
    }
}
