import Foundation
import FoundationModels

/// Errors the plugin raises itself (everything else comes from FoundationModels and is mapped in ErrorMapping).
enum PluginError: Error {
    case invalidRequest(String, path: String?)
    case invalidSchema(String, path: String)
    case unsupported(String)
    case modelUnavailable(reason: String)
    case generationFailed(String)
}

/// The ops of the plugin: availability, step, countTokens, prewarm, validateSchema.
enum Operations {
    static func perform(op: String, request: [String: Any], emitter: Emitter) async throws -> String {
        switch op {
        case "availability":
            return Availability.resultJSON(model: try ModelChoice.model(request))
        case "step":
            return try await StepRunner(request: request, emitter: emitter).run()
        case "countTokens":
            return try await TokenCounting.count(request)
        case "prewarm":
            let model = try ModelChoice.model(request)
            let parts = try SessionParts(request: request, model: model)
            let session = LanguageModelSession(model: model, tools: parts.tools, transcript: parts.transcript)
            session.prewarm()
            return "{}"
        case "validateSchema":
            guard let schema = request["schema"] else {
                throw PluginError.invalidRequest("'schema' is required.", path: "schema")
            }
            let decoded = try Schemas.decode(schema, path: "schema")
            let encoded = try JSONEncoder().encode(decoded)
            return "{\"generationSchema\":\(String(decoding: encoded, as: UTF8.self))}"
        default:
            throw PluginError.unsupported("The plugin does not support the operation '\(op)'.")
        }
    }
}

/// `model: {useCase: "general"|"contentTagging", guardrails: "default"|"permissiveContentTransformations"}`.
enum ModelChoice {
    static func model(_ request: [String: Any]) throws -> SystemLanguageModel {
        guard let spec = request["model"] as? [String: Any] else { return SystemLanguageModel.default }
        let useCase: SystemLanguageModel.UseCase
        switch spec["useCase"] as? String ?? "general" {
        case "general": useCase = .general
        case "contentTagging": useCase = .contentTagging
        case let other: throw PluginError.invalidRequest("Unknown model.useCase '\(other)'.", path: "model.useCase")
        }
        let guardrails: SystemLanguageModel.Guardrails
        switch spec["guardrails"] as? String ?? "default" {
        case "default": guardrails = .default
        case "permissiveContentTransformations": guardrails = .permissiveContentTransformations
        case let other: throw PluginError.invalidRequest("Unknown model.guardrails '\(other)'.", path: "model.guardrails")
        }
        return SystemLanguageModel(useCase: useCase, guardrails: guardrails)
    }
}

enum Availability {
    static func reasonName(_ model: SystemLanguageModel) -> String? {
        switch model.availability {
        case .available:
            return nil
        case .unavailable(let reason):
            switch reason {
            case .deviceNotEligible: return "device_not_eligible"
            case .appleIntelligenceNotEnabled: return "apple_intelligence_not_enabled"
            case .modelNotReady: return "model_not_ready"
            @unknown default: return "unknown"
            }
        }
    }

    static func contextSize(_ model: SystemLanguageModel) -> Int {
        #if compiler(>=6.3)
        // Back-deployed to 26.0 (a literal 4096 before 26.4); broken assets can report 0.
        let size = model.contextSize
        return size > 0 ? size : 4096
        #else
        return 4096
        #endif
    }

    static var supportsToolCallingMode: Bool {
        #if compiler(>=6.4)
        if #available(macOS 27.0, *) { return true }
        #endif
        return false
    }

    static var supportsTokenCount: Bool {
        #if compiler(>=6.3)
        if #available(macOS 26.4, *) { return true }
        #endif
        return false
    }

    static func variantName(_ model: SystemLanguageModel) -> String? {
        #if compiler(>=6.4)
        if #available(macOS 27.0, *) { return model.variant.displayName }
        #endif
        return nil
    }

    static func resultJSON(model: SystemLanguageModel) -> String {
        var object: [String: Any] = [:]
        if let reason = reasonName(model) {
            object["available"] = false
            object["reason"] = reason
        } else {
            object["available"] = true
        }
        object["contextSize"] = contextSize(model)
        if let variant = variantName(model) { object["variant"] = variant }
        object["supportedLanguages"] = model.supportedLanguages.map { $0.minimalIdentifier }.sorted()
        object["plugin"] = ["impl": "swift", "version": pluginVersion, "abi": "\(pluginABIMajor).\(pluginABIMinor)"]
        let os = ProcessInfo.processInfo.operatingSystemVersion
        object["os"] = "\(os.majorVersion).\(os.minorVersion)"
        object["features"] = [
            "toolCallingMode": supportsToolCallingMode,
            "usage": false,
            "tokenCount": supportsTokenCount,
            "variant": variantName(model) != nil,
        ]
        object["historyFormat"] = "oam-entries-1"
        return JSON.serialize(object)
    }
}

enum TokenCounting {
    static func count(_ request: [String: Any]) async throws -> String {
        #if compiler(>=6.3)
        if #available(macOS 26.4, *) {
            let model = try ModelChoice.model(request)
            let parts = try SessionParts(request: request, model: model)
            var entries = parts.entries
            let prompt = request["prompt"] as? String ?? ""
            if !prompt.isEmpty {
                entries.append(.prompt(Transcript.Prompt(segments: [.text(Transcript.TextSegment(content: prompt))])))
            }
            let tokens = try await model.tokenCount(for: entries)
            return "{\"tokens\":\(tokens)}"
        }
        #endif
        throw PluginError.unsupported("Token counting needs macOS 26.4 or later.")
    }
}

enum Schemas {
    /// Decodes a GenerationSchema from its JSON (FoundationModels' own JSON Schema dialect, produced by TS).
    static func decode(_ value: Any, path: String) throws -> GenerationSchema {
        guard value is [String: Any] else {
            throw PluginError.invalidSchema("\(path) must be an object.", path: path)
        }
        do {
            return try JSONDecoder().decode(GenerationSchema.self, from: try JSON.data(value))
        } catch let error as DecodingError {
            throw PluginError.invalidSchema("\(path) is not a valid generation schema: \(describe(error))", path: path)
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func where_(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        }
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): return where_(c)
        case .keyNotFound(let key, let c): return "\(where_(c)) (missing '\(key.stringValue)')"
        @unknown default: return String(describing: error)
        }
    }
}
