import Foundation
import FoundationModels

/// Maps any error to the plugin's error event `{code, message, detail}` with the protocol's `data.code`
/// strings. FoundationModels errors are matched by type and case name through reflection, so the same code
/// handles macOS 26 (`LanguageModelSession.GenerationError`) and macOS 27 (`LanguageModelError`,
/// `LanguageModelSession.Error`, `SystemLanguageModel.Error`) without compiling against 27-only types.
enum ErrorMapping {
    struct Mapped {
        let code: String
        let message: String
        var detail: [String: Any] = [:]
    }

    static func event(id: String, error: Error) -> String {
        let mapped = map(error)
        var object: [String: Any] = ["code": mapped.code, "message": mapped.message]
        if !mapped.detail.isEmpty { object["detail"] = mapped.detail }
        return "{\"id\":\(JSON.quote(id)),\"type\":\"error\",\"error\":\(JSON.serialize(object))}"
    }

    static func map(_ error: Error) -> Mapped {
        switch error {
        case let e as PluginError:
            switch e {
            case .invalidRequest(let message, let path):
                return Mapped(code: "invalid_request", message: message, detail: path.map { ["path": $0] } ?? [:])
            case .invalidSchema(let message, let path):
                return Mapped(code: "invalid_schema", message: message, detail: ["path": path])
            case .unsupported(let message):
                return Mapped(code: "unsupported", message: message)
            case .modelUnavailable(let reason):
                return Mapped(code: "model_unavailable", message: "The system model is unavailable (\(reason)).", detail: ["reason": reason])
            case .generationFailed(let message):
                return Mapped(code: "generation_failed", message: message)
            }
        case is CancellationError:
            return Mapped(code: "cancelled", message: "The request was cancelled.")
        case let e as LanguageModelSession.ToolCallError:
            // Our capture tools only throw CancellationError (the step ended); anything else is unexpected.
            if e.underlyingError is CancellationError { return Mapped(code: "cancelled", message: "The request was cancelled.") }
            return Mapped(code: "generation_failed", message: "Tool '\(e.tool.name)' failed: \(describe(e.underlyingError))")
        case let e as DecodingError:
            return Mapped(code: "invalid_request", message: "Invalid request: \(e.localizedDescription)")
        default:
            break
        }
        let typeName = String(reflecting: type(of: error))
        if typeName.hasPrefix("FoundationModels.") {
            if typeName.hasSuffix("LanguageModelSession.Error") {
                return Mapped(code: "busy", message: describe(error))
            }
            if typeName.hasSuffix("SystemLanguageModel.Error") {
                return Mapped(code: "model_unavailable", message: describe(error), detail: ["reason": "unknown"])
            }
            if let mapped = byCaseName(error) { return mapped }
        }
        let ns = error as NSError
        return Mapped(
            code: "generation_failed",
            message: describe(error),
            detail: ["native": ["domain": ns.domain, "code": ns.code, "description": ns.localizedDescription]]
        )
    }

    /// The enum case name of an error value (`guardrailViolation`, `contextSizeExceeded`, …).
    static func caseName(_ error: Error) -> String {
        if let label = Mirror(reflecting: error).children.first?.label { return label }
        let text = String(describing: error)
        return String(text.prefix { $0 != "(" })
    }

    static func byCaseName(_ error: Error) -> Mapped? {
        let message = describe(error)
        switch caseName(error) {
        case "exceededContextWindowSize", "contextSizeExceeded":
            var detail: [String: Any] = [:]
            let size: Int? = find("contextSize", in: error)
            let count: Int? = find("tokenCount", in: error)
            if let size { detail["contextSize"] = size }
            if let count { detail["tokenCount"] = count }
            if let size, let count {
                return Mapped(
                    code: "context_size_exceeded",
                    message: "The conversation (\(count) tokens) exceeds the model's context size of \(size) tokens.",
                    detail: detail
                )
            }
            return Mapped(code: "context_size_exceeded", message: message, detail: detail)
        case "assetsUnavailable":
            return Mapped(code: "model_unavailable", message: message, detail: ["reason": "model_not_ready"])
        case "guardrailViolation":
            return Mapped(code: "guardrail_violation", message: message)
        case "refusal":
            return Mapped(code: "refusal", message: message)
        case "rateLimited":
            var detail: [String: Any] = [:]
            if let reset: Date = findFirst(in: error) {
                detail["retryAfter"] = ISO8601DateFormatter().string(from: reset)
                detail["retryAfterSeconds"] = max(0, Int(reset.timeIntervalSinceNow.rounded(.up)))
            }
            return Mapped(code: "rate_limited", message: message, detail: detail)
        case "unsupportedLanguageOrLocale":
            return Mapped(code: "unsupported_language", message: message)
        case "unsupportedGuide", "unsupportedGenerationGuide":
            return Mapped(code: "invalid_schema", message: message)
        case "concurrentRequests":
            return Mapped(code: "busy", message: message)
        case "unsupportedCapability", "unsupportedTranscriptContent":
            return Mapped(code: "invalid_request", message: message)
        case "timeout", "timedOut":
            return Mapped(code: "generation_failed", message: "Timed out: \(message)")
        case "decodingFailure":
            return Mapped(code: "generation_failed", message: message)
        default:
            return nil
        }
    }

    static func describe(_ error: Error) -> String {
        if let localized = (error as? LocalizedError)?.errorDescription, !localized.isEmpty { return localized }
        if let debug = find("debugDescription", in: error) as String?, !debug.isEmpty { return debug }
        return String(describing: error)
    }

    /// A child value with the given label anywhere in the reflected value (depth-limited).
    static func find<T>(_ label: String, in value: Any, depth: Int = 0) -> T? {
        guard depth < 6 else { return nil }
        for child in Mirror(reflecting: value).children {
            if child.label == label, let found = child.value as? T { return found }
            if let found: T = find(label, in: child.value, depth: depth + 1) { return found }
        }
        return nil
    }

    /// The first child value of type T anywhere in the reflected value (depth-limited).
    static func findFirst<T>(in value: Any, depth: Int = 0) -> T? {
        guard depth < 6 else { return nil }
        for child in Mirror(reflecting: value).children {
            if let found = child.value as? T { return found }
            if let found: T = findFirst(in: child.value, depth: depth + 1) { return found }
        }
        return nil
    }
}
