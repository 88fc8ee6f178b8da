#if canImport(FoundationModels)
import Foundation
import FoundationModels
import OAMCore

/// FoundationModels errors → plugin errors, with typed `switch`es: macOS 27's `LanguageModelError`,
/// `LanguageModelSession.Error` and `SystemLanguageModel.Error` (thrown when built with the 27 SDK and running
/// on 27), and `LanguageModelSession.GenerationError` (26, and apps built with the 26 SDK). Case names are
/// matched only for cases a newer SDK adds (`@unknown default`), then `ErrorMapping`'s fallback.
enum FoundationModelsErrors {
    static func map(_ error: any Error) -> MappedError {
        if let e = error as? LanguageModelSession.ToolCallError {
            // Capture tools throw CancellationError when the step ends; anything else is a tool failure.
            return ErrorNames.toolFailure(toolName: e.tool.name, underlying: e.underlyingError)
        }
        #if compiler(>=6.4)
        if #available(macOS 27.0, *) {
            if let e = error as? LanguageModelError { return map(e) }
            if let e = error as? LanguageModelSession.Error { return map(e) }
            if let e = error as? SystemLanguageModel.Error { return map(e) }
        }
        #endif
        if let e = error as? LanguageModelSession.GenerationError { return map(e) }
        return ErrorMapping.map(error)
    }

    static func map(_ e: LanguageModelSession.GenerationError) -> MappedError {
        let message = ErrorMapping.describe(e)
        switch e {
        case .exceededContextWindowSize:
            return MappedError("context_size_exceeded", message)
        case .assetsUnavailable:
            return MappedError("model_unavailable", message, detail: [JSONMember("reason", .string("model_not_ready"))])
        case .guardrailViolation:
            return MappedError("guardrail_violation", message)
        case .unsupportedGuide:
            return MappedError("invalid_schema", message)
        case .unsupportedLanguageOrLocale:
            return MappedError("unsupported_language", message)
        case .decodingFailure:
            return MappedError("generation_failed", message)
        case .rateLimited:
            return MappedError("rate_limited", message)
        case .concurrentRequests:
            return MappedError("busy", message)
        case .refusal:
            return MappedError("refusal", message)
        @unknown default:
            return ErrorNames.map(caseName: ErrorMapping.caseName(of: e), message: message) ?? ErrorMapping.fallback(e)
        }
    }

    #if compiler(>=6.4)
    @available(macOS 27.0, *)
    static func map(_ e: LanguageModelError) -> MappedError {
        switch e {
        case .contextSizeExceeded(let info):
            return ErrorNames.contextSizeExceeded(contextSize: info.contextSize, tokenCount: info.tokenCount)
        case .rateLimited(let info):
            return ErrorNames.rateLimited(message: info.debugDescription, resetDate: info.resetDate)
        case .guardrailViolation(let info):
            return MappedError("guardrail_violation", info.debugDescription)
        case .refusal(let info):
            return MappedError("refusal", info.debugDescription)
        case .unsupportedCapability(let info):
            return MappedError("invalid_request", info.debugDescription)
        case .unsupportedTranscriptContent(let info):
            return MappedError("invalid_request", info.debugDescription)
        case .unsupportedGenerationGuide(let info):
            return MappedError("invalid_schema", info.debugDescription)
        case .unsupportedLanguageOrLocale(let info):
            return MappedError("unsupported_language", info.debugDescription)
        case .timeout(let info):
            return MappedError("generation_failed", "Timed out: \(info.debugDescription)")
        @unknown default:
            let message = ErrorMapping.describe(e)
            return ErrorNames.map(caseName: ErrorMapping.caseName(of: e), message: message) ?? ErrorMapping.fallback(e)
        }
    }

    @available(macOS 27.0, *)
    static func map(_ e: LanguageModelSession.Error) -> MappedError {
        switch e {
        case .concurrentRequests:
            return MappedError("busy", "The session is already responding.")
        case .transcriptMutationWhileResponding:
            return MappedError("busy", "The transcript cannot change while the session is responding.")
        @unknown default:
            return MappedError("busy", ErrorMapping.describe(e))
        }
    }

    @available(macOS 27.0, *)
    static func map(_ e: SystemLanguageModel.Error) -> MappedError {
        let reason: String
        switch e {
        case .assetsUnavailable:
            reason = "model_not_ready"
        @unknown default:
            reason = "unknown"
        }
        return MappedError("model_unavailable", e.debugDescription, detail: [JSONMember("reason", .string(reason))])
    }
    #endif
}
#endif
