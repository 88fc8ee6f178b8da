/// Plain structs for what a request carries (ffi/README.md), parsed once with field paths in the errors, so
/// the FoundationModels layer only maps them to framework types.

public struct ToolSpec: Sendable, Equatable {
    public let name: String
    public let description: String
    /// The generation schema JSON (decoded as `GenerationSchema` by the FoundationModels layer).
    public let parameters: JSONValue
}

public enum SegmentSpec: Sendable, Equatable {
    case text(id: String, text: String)
    case structure(id: String, source: String, content: JSONValue)
}

public struct ToolCallSpec: Sendable, Equatable {
    public let id: String
    public let name: String
    public let arguments: JSONValue
}

/// One entry of the bridge's own history format (src/protocol/transcript.ts).
public enum HistoryEntry: Sendable, Equatable {
    case prompt(id: String, segments: [SegmentSpec], responseFormat: JSONValue?)
    case response(id: String, segments: [SegmentSpec], assets: [String])
    case toolCalls(id: String, calls: [ToolCallSpec])
    /// `id` is the call's id: a tool output's id must equal its call's id.
    case toolOutput(id: String, toolName: String, segments: [SegmentSpec])
}

public enum ToolCallingMode: String, Sendable {
    case allowed, required, disallowed
}

public enum SamplingSpec: Sendable, Equatable {
    case greedy
    case topK(Int, seed: UInt64?)
    case topP(Double, seed: UInt64?)
}

public struct OptionsSpec: Sendable, Equatable {
    public var temperature: Double?
    public var maximumResponseTokens: Int?
    public var sampling: SamplingSpec?
}

public struct ModelSpec: Sendable, Equatable {
    public var useCase: String = "general"
    public var guardrails: String = "default"
    public var json: JSONValue {
        .object([JSONMember("useCase", .string(useCase)), JSONMember("guardrails", .string(guardrails))])
    }
}

/// What a session is built from: instructions, tools, history (step, countTokens, prewarm).
public struct SessionSpec: Sendable, Equatable {
    public var model = ModelSpec()
    public var instructions: String?
    public var tools: [ToolSpec] = []
    public var history: [HistoryEntry] = []

    /// Whether the transcript starts with an instructions entry (instructions text or tool definitions).
    public var hasInstructionsEntry: Bool { instructions != nil || !tools.isEmpty }

    public var signature: NativeSignature {
        let tools = JSONValue.array(self.tools.map {
            .object([JSONMember("name", .string($0.name)), JSONMember("description", .string($0.description)), JSONMember("parameters", $0.parameters)])
        })
        return NativeSignature(instructions: instructions, tools: tools, model: model.json)
    }
}

/// A `step` request.
public struct StepSpec: Sendable, Equatable {
    public var session = SessionSpec()
    public var mode = ToolCallingMode.allowed
    public var prompt = ""
    public var responseSchema: JSONValue?
    public var options = OptionsSpec()
    public var stream = true
    /// Quiescence window after the first captured call (0…250 ms, default 25).
    public var captureWindowMs = 25
    public var native: NativeRequest?
}

/// A `countTokens` request: everything a step's prompt would contain, the response schema included.
public struct CountSpec: Sendable, Equatable {
    public var session = SessionSpec()
    public var prompt = ""
    public var responseSchema: JSONValue?
}

public enum RequestParser {
    public static func step(_ r: JSONValue) throws -> StepSpec {
        var spec = StepSpec()
        spec.session = try session(r)
        if let mode = r["toolCallingMode"], !mode.isNull {
            guard let name = mode.stringValue, let parsed = ToolCallingMode(rawValue: name) else {
                throw PluginError.invalidRequest("toolCallingMode must be allowed, required or disallowed.", path: "toolCallingMode")
            }
            spec.mode = parsed
        }
        spec.prompt = try optionalString(r, "prompt") ?? ""
        spec.responseSchema = try schema(r, "responseSchema")
        spec.options = try options(r["options"])
        if let stream = r["stream"], !stream.isNull {
            guard let b = stream.boolValue else { throw PluginError.invalidRequest("stream must be a boolean.", path: "stream") }
            spec.stream = b
        }
        if let window = r["captureWindowMs"], !window.isNull {
            guard let ms = window.intValue else {
                throw PluginError.invalidRequest("captureWindowMs must be an integer.", path: "captureWindowMs")
            }
            spec.captureWindowMs = min(max(ms, 0), 250)
        }
        spec.native = NativeRequest(r)
        return spec
    }

    public static func count(_ r: JSONValue) throws -> CountSpec {
        var spec = CountSpec()
        spec.session = try session(r)
        spec.prompt = try optionalString(r, "prompt") ?? ""
        spec.responseSchema = try schema(r, "responseSchema")
        return spec
    }

    public static func session(_ r: JSONValue) throws -> SessionSpec {
        var spec = SessionSpec()
        spec.model = try model(r["model"])
        spec.instructions = try optionalString(r, "instructions")
        spec.tools = try tools(r["tools"])
        spec.history = try history(r["history"])
        return spec
    }

    static func optionalString(_ r: JSONValue, _ key: String) throws -> String? {
        guard let value = r[key], !value.isNull else { return nil }
        guard let s = value.stringValue else { throw PluginError.invalidRequest("\(key) must be a string.", path: key) }
        return s
    }

    static func schema(_ r: JSONValue, _ key: String) throws -> JSONValue? {
        guard let value = r[key], !value.isNull else { return nil }
        guard value.objectMembers != nil else { throw PluginError.invalidSchema("\(key) must be an object.", path: key) }
        return value
    }

    public static func model(_ raw: JSONValue?) throws -> ModelSpec {
        var spec = ModelSpec()
        guard let raw, !raw.isNull else { return spec }
        guard raw.objectMembers != nil else { throw PluginError.invalidRequest("model must be an object.", path: "model") }
        if let useCase = raw["useCase"]?.stringValue {
            guard ["general", "contentTagging"].contains(useCase) else {
                throw PluginError.invalidRequest("Unknown model.useCase '\(useCase)'.", path: "model.useCase")
            }
            spec.useCase = useCase
        }
        if let guardrails = raw["guardrails"]?.stringValue {
            guard ["default", "permissiveContentTransformations"].contains(guardrails) else {
                throw PluginError.invalidRequest("Unknown model.guardrails '\(guardrails)'.", path: "model.guardrails")
            }
            spec.guardrails = guardrails
        }
        return spec
    }

    public static func tools(_ raw: JSONValue?) throws -> [ToolSpec] {
        guard let raw, !raw.isNull else { return [] }
        guard let list = raw.arrayValue else { throw PluginError.invalidRequest("tools must be an array.", path: "tools") }
        var names = Set<String>()
        return try list.enumerated().map { index, item in
            let path = "tools[\(index)]"
            guard let name = item["name"]?.stringValue, !name.isEmpty else {
                throw PluginError.invalidRequest("\(path).name is required.", path: "\(path).name")
            }
            guard names.insert(name).inserted else {
                throw PluginError.invalidRequest("Duplicate tool name '\(name)'.", path: "\(path).name")
            }
            let parameters = item["parameters"] ?? .object([])
            guard parameters.objectMembers != nil else {
                throw PluginError.invalidSchema("\(path).parameters must be an object.", path: "\(path).parameters")
            }
            return ToolSpec(name: name, description: item["description"]?.stringValue ?? "", parameters: parameters)
        }
    }

    public static func history(_ raw: JSONValue?) throws -> [HistoryEntry] {
        guard let raw, !raw.isNull else { return [] }
        guard let list = raw.arrayValue else { throw PluginError.invalidRequest("history must be an array.", path: "history") }
        var out: [HistoryEntry] = []
        for (index, entry) in list.enumerated() {
            let here = "history[\(index)]"
            guard entry.objectMembers != nil else { throw PluginError.invalidRequest("\(here) must be an object.", path: here) }
            let id = entry["id"]?.stringValue ?? ""
            switch entry["role"]?.stringValue {
            case "instructions":
                continue // the plugin builds the instructions entry from `instructions` and `tools`
            case "user":
                let format = entry["responseFormat"]?["schema"]
                out.append(.prompt(id: id, segments: try segments(entry["contents"], path: "\(here).contents"), responseFormat: format))
            case "response":
                if let calls = entry["toolCalls"]?.arrayValue {
                    let parsed = try calls.enumerated().map { try toolCall($1, path: "\(here).toolCalls[\($0)]") }
                    out.append(.toolCalls(id: id, calls: parsed))
                } else {
                    let assets = entry["assets"]?.arrayValue?.compactMap(\.stringValue) ?? []
                    out.append(.response(id: id, segments: try segments(entry["contents"], path: "\(here).contents"), assets: assets))
                }
            case "tool":
                guard let toolName = entry["toolName"]?.stringValue else {
                    throw PluginError.invalidRequest("\(here).toolName is required.", path: "\(here).toolName")
                }
                let callID = entry["toolCallID"]?.stringValue ?? id
                out.append(.toolOutput(id: callID, toolName: toolName, segments: try segments(entry["contents"], path: "\(here).contents")))
            default:
                throw PluginError.invalidRequest("\(here).role must be user, response or tool.", path: "\(here).role")
            }
        }
        return out
    }

    static func toolCall(_ raw: JSONValue, path: String) throws -> ToolCallSpec {
        guard let name = raw["name"]?.stringValue else {
            throw PluginError.invalidRequest("\(path) needs a name.", path: "\(path).name")
        }
        var arguments = JSONValue.object([])
        if let text = raw["arguments"]?.stringValue {
            // The bridge sends arguments as JSON text; parsed here with their member order kept.
            guard let parsed = try? JSONValue.parse(text) else {
                throw PluginError.invalidRequest("\(path).arguments is not valid JSON.", path: "\(path).arguments")
            }
            arguments = parsed
        } else if let value = raw["arguments"], !value.isNull {
            arguments = value
        }
        return ToolCallSpec(id: raw["id"]?.stringValue ?? "", name: name, arguments: arguments)
    }

    static func segments(_ raw: JSONValue?, path: String) throws -> [SegmentSpec] {
        guard let list = raw?.arrayValue else { return [] }
        return try list.enumerated().map { index, segment in
            let here = "\(path)[\(index)]"
            let id = segment["id"]?.stringValue ?? ""
            switch segment["type"]?.stringValue {
            case "text":
                return .text(id: id, text: segment["text"]?.stringValue ?? "")
            case "structure":
                let structure = segment["structure"]
                return .structure(id: id, source: structure?["source"]?.stringValue ?? "Response", content: structure?["content"] ?? .null)
            default:
                throw PluginError.invalidRequest("\(here).type must be text or structure.", path: "\(here).type")
            }
        }
    }

    public static func options(_ raw: JSONValue?) throws -> OptionsSpec {
        var spec = OptionsSpec()
        guard let raw, !raw.isNull else { return spec }
        if let t = raw["temperature"], !t.isNull {
            guard let d = t.doubleValue, d >= 0 else {
                throw PluginError.invalidRequest("options.temperature must be a number ≥ 0.", path: "options.temperature")
            }
            spec.temperature = d
        }
        if let m = raw["maximumResponseTokens"], !m.isNull {
            guard let n = m.intValue, n > 0 else {
                throw PluginError.invalidRequest("options.maximumResponseTokens must be positive.", path: "options.maximumResponseTokens")
            }
            spec.maximumResponseTokens = n
        }
        if let s = raw["sampling"], !s.isNull {
            let seed = s["seed"]?.intValue.map { UInt64(truncatingIfNeeded: $0) }
            switch s["mode"]?.stringValue {
            case "greedy":
                spec.sampling = .greedy
            case "topK":
                guard let k = s["k"]?.intValue, k > 0 else {
                    throw PluginError.invalidRequest("options.sampling.k must be a positive integer.", path: "options.sampling.k")
                }
                spec.sampling = .topK(k, seed: seed)
            case "topP":
                guard let p = s["p"]?.doubleValue, p >= 0, p <= 1 else {
                    throw PluginError.invalidRequest("options.sampling.p must be between 0 and 1.", path: "options.sampling.p")
                }
                spec.sampling = .topP(p, seed: seed)
            default:
                throw PluginError.invalidRequest("options.sampling.mode must be greedy, topK or topP.", path: "options.sampling.mode")
            }
        }
        return spec
    }
}

/// `contextSize` as reported: what the OS says where the API exists, else 4096 (`source` tells which).
public enum ContextSize {
    public static let fallback = 4096

    public static func resolve(osValue: Int?) -> (size: Int, source: String) {
        if let osValue, osValue > 0 { return (osValue, "os") }
        return (fallback, "fallback")
    }
}
