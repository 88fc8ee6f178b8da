#if canImport(FoundationModels)
import Foundation
import FoundationModels
import OAMCore
import Synchronization

/// The FoundationModels backend: availability, step, countTokens, prewarm, validateSchema.
final class FoundationModelsBackend: PluginBackend {
    let sessions: NativeSessionCache<LiveSession>

    init(options: OpenOptions) {
        sessions = NativeSessionCache(capacity: options.nativeSessions)
    }

    func perform(_ request: PluginRequest, context: RequestContext) async throws -> JSONValue {
        let body = request.body
        switch request.op {
        case "availability":
            return Availability.result(model: ModelChoice.model(try RequestParser.model(body["model"])))
        case "step":
            return try await StepRunner(spec: try RequestParser.step(body), context: context, sessions: sessions).run()
        case "countTokens":
            return try await TokenCounting.count(try RequestParser.count(body))
        case "prewarm":
            return try prewarm(body)
        case "validateSchema":
            guard let schema = body["schema"] else { throw PluginError.invalidRequest("'schema' is required.", path: "schema") }
            let decoded = try Schemas.decode(schema, path: "schema")
            return .object([JSONMember("generationSchema", try Schemas.encode(decoded))])
        default:
            throw PluginError.unsupported("The plugin does not support the operation '\(request.op)'.")
        }
    }

    func mapError(_ error: any Error) -> MappedError { FoundationModelsErrors.map(error) }

    /// Warms a session. Prewarming applies to the session instance it is called on, so the session is kept
    /// under the request's native key for the next step that continues it; without a key nothing is kept and
    /// the result is `{}` (the framework may still have loaded the model's assets).
    func prewarm(_ body: JSONValue) throws -> JSONValue {
        let spec = try RequestParser.session(body)
        let model = ModelChoice.model(spec.model)
        if let reason = Availability.reasonName(model) { throw PluginError.modelUnavailable(reason: reason) }
        let live = try LiveSession.build(spec, model: model)
        live.session.prewarm()
        guard let native = NativeRequest(body) else { return .object([]) }
        var report = sessions.take(
            native, signature: spec.signature, history: spec.history.count,
            hasInstructionsEntry: spec.hasInstructionsEntry, isStep: false
        ).report
        report.kept = sessions.keep(native.key, session: live, signature: spec.signature, history: spec.history.count)
        return .object([JSONMember("native", report.json)])
    }
}

/// `model: {useCase: "general"|"contentTagging", guardrails: "default"|"permissiveContentTransformations"}`.
enum ModelChoice {
    static func model(_ spec: ModelSpec) -> SystemLanguageModel {
        if spec.useCase == "general" && spec.guardrails == "default" { return SystemLanguageModel.default }
        let useCase: SystemLanguageModel.UseCase = spec.useCase == "contentTagging" ? .contentTagging : .general
        let guardrails: SystemLanguageModel.Guardrails =
            spec.guardrails == "permissiveContentTransformations" ? .permissiveContentTransformations : .default
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
        @unknown default:
            return "unknown"
        }
    }

    /// What the OS reports where the SDK has the API (`contextSize` is back-deployed from the 26.4 SDK);
    /// built with an older SDK the plugin cannot ask and reports the 4096 fallback (`contextSizeSource`).
    static func contextSize(_ model: SystemLanguageModel) -> (size: Int, source: String) {
        #if compiler(>=6.3)
        return ContextSize.resolve(osValue: model.contextSize)
        #else
        return ContextSize.resolve(osValue: nil)
        #endif
    }

    static var supportsToolCallingMode: Bool {
        #if compiler(>=6.4)
        if #available(macOS 27.0, *) { return true }
        #endif
        return false
    }

    static var supportsUsage: Bool { supportsToolCallingMode }

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

    static func result(model: SystemLanguageModel) -> JSONValue {
        var members: [JSONMember] = []
        if let reason = reasonName(model) {
            members.append(JSONMember("available", .bool(false)))
            members.append(JSONMember("reason", .string(reason)))
        } else {
            members.append(JSONMember("available", .bool(true)))
        }
        let context = contextSize(model)
        members.append(JSONMember("contextSize", .number(Double(context.size))))
        members.append(JSONMember("contextSizeSource", .string(context.source)))
        let variant = variantName(model)
        if let variant { members.append(JSONMember("variant", .string(variant))) }
        let languages = model.supportedLanguages.map { $0.minimalIdentifier }.sorted()
        members.append(JSONMember("supportedLanguages", .array(languages.map { .string($0) })))
        members.append(JSONMember("plugin", .object([
            JSONMember("impl", .string("swift")),
            JSONMember("version", .string(pluginVersion)),
            JSONMember("abi", .string("\(pluginABIMajor).\(pluginABIMinor)")),
        ])))
        let os = ProcessInfo.processInfo.operatingSystemVersion
        members.append(JSONMember("os", .string("\(os.majorVersion).\(os.minorVersion)")))
        members.append(JSONMember("features", .object([
            JSONMember("toolCallingMode", .bool(supportsToolCallingMode)),
            JSONMember("usage", .bool(supportsUsage)),
            JSONMember("tokenCount", .bool(supportsTokenCount)),
            JSONMember("variant", .bool(variant != nil)),
            JSONMember("nativeSessions", .bool(true)),
        ])))
        members.append(JSONMember("historyFormat", .string("oam-entries-1")))
        return .object(members)
    }
}

enum TokenCounting {
    /// Tokens of the instructions (with tool definitions), the history, the prompt and the response schema.
    static func count(_ spec: CountSpec) async throws -> JSONValue {
        #if compiler(>=6.3)
        if #available(macOS 26.4, *) {
            let model = ModelChoice.model(spec.session.model)
            let tools = try LiveSession.captureTools(spec.session.tools, slot: RecorderSlot())
            var entries = try TranscriptMapping.entries(spec.session, tools: tools)
            if !spec.prompt.isEmpty {
                entries.append(.prompt(Transcript.Prompt(segments: [.text(Transcript.TextSegment(content: spec.prompt))])))
            }
            var tokens = try await model.tokenCount(for: entries)
            if let schema = spec.responseSchema {
                tokens += try await model.tokenCount(for: try Schemas.decode(schema, path: "responseSchema"))
            }
            return .object([JSONMember("tokens", .number(Double(tokens)))])
        }
        #endif
        throw PluginError.unsupported("Token counting needs macOS 26.4 or later (and the 26.4 SDK).")
    }
}
#endif
