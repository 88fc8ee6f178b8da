import Foundation

/// A plugin error as it goes on the wire: `{"code", "message", "detail"?}` with the protocol's `data.code`
/// strings (plus `unsupported`).
public struct MappedError: Error, Sendable, Equatable {
    public var code: String
    public var message: String
    public var detail: [JSONMember]

    public init(_ code: String, _ message: String, detail: [JSONMember] = []) {
        self.code = code
        self.message = message
        self.detail = detail
    }

    public var json: JSONValue {
        var members = [JSONMember("code", .string(code)), JSONMember("message", .string(message))]
        if !detail.isEmpty { members.append(JSONMember("detail", .object(detail))) }
        return .object(members)
    }
}

/// Errors the plugin raises itself.
public enum PluginError: Error, Sendable, Equatable {
    case invalidRequest(String, path: String?)
    case invalidSchema(String, path: String)
    case unsupported(String)
    case modelUnavailable(reason: String)
    case generationFailed(String)
}

/// Maps errors to `MappedError`. FoundationModels' own types are matched with typed `switch`es in the
/// FoundationModels layer first; what reaches here is the plugin's own errors, cancellation, and — as the
/// last fallback — errors classified by their case name (`ErrorNames`) or their `NSError` domain and code.
public enum ErrorMapping {
    public static func event(id: String, error: MappedError) -> String {
        "{\"id\":\(JSONValue.quote(id)),\"type\":\"error\",\"error\":\(error.json.jsonText)}"
    }

    public static let cancelled = MappedError("cancelled", "The request was cancelled.")

    public static func map(_ error: any Error) -> MappedError {
        switch error {
        case let mapped as MappedError:
            return mapped
        case let e as PluginError:
            return map(e)
        case is CancellationError:
            return cancelled
        case let e as JSONParseError:
            return MappedError("invalid_request", "Invalid JSON: \(e.message) at byte \(e.offset).")
        default:
            return fallback(error)
        }
    }

    public static func map(_ error: PluginError) -> MappedError {
        switch error {
        case .invalidRequest(let message, let path):
            return MappedError("invalid_request", message, detail: path.map { [JSONMember("path", .string($0))] } ?? [])
        case .invalidSchema(let message, let path):
            return MappedError("invalid_schema", message, detail: [JSONMember("path", .string(path))])
        case .unsupported(let message):
            return MappedError("unsupported", message)
        case .modelUnavailable(let reason):
            return MappedError(
                "model_unavailable", "The system model is unavailable (\(reason)).",
                detail: [JSONMember("reason", .string(reason))]
            )
        case .generationFailed(let message):
            return MappedError("generation_failed", message)
        }
    }

    /// The last resort: the case name of the value's description, then the `NSError` bridge.
    public static func fallback(_ error: any Error) -> MappedError {
        let message = describe(error)
        if let mapped = ErrorNames.map(caseName: caseName(of: error), message: message) { return mapped }
        let ns = error as NSError
        if let mapped = ErrorNames.mapNative(domain: ns.domain, code: ns.code, description: message) { return mapped }
        return MappedError(
            "generation_failed", message,
            detail: [JSONMember("native", .object([
                JSONMember("domain", .string(ns.domain)),
                JSONMember("code", .number(Double(ns.code))),
                JSONMember("description", .string(ns.localizedDescription)),
            ]))]
        )
    }

    /// `guardrailViolation(…)` → `guardrailViolation`.
    public static func caseName(of error: any Error) -> String {
        let text = String(describing: error)
        return String(text.prefix { $0 != "(" && $0 != " " && $0 != ":" })
    }

    public static func describe(_ error: any Error) -> String {
        if let localized = (error as? any LocalizedError)?.errorDescription, !localized.isEmpty { return localized }
        return String(describing: error)
    }
}

/// Name-based classification: FoundationModels error case names → codes. Used by the typed mapping in the
/// FoundationModels layer for cases it does not know (a newer SDK), and as the last fallback.
public enum ErrorNames {
    public static func map(caseName: String, message: String) -> MappedError? {
        switch caseName {
        case "exceededContextWindowSize", "contextSizeExceeded":
            return MappedError("context_size_exceeded", message)
        case "assetsUnavailable":
            return MappedError("model_unavailable", message, detail: [JSONMember("reason", .string("model_not_ready"))])
        case "guardrailViolation":
            return MappedError("guardrail_violation", message)
        case "refusal":
            return MappedError("refusal", message)
        case "rateLimited":
            return MappedError("rate_limited", message)
        case "unsupportedLanguageOrLocale":
            return MappedError("unsupported_language", message)
        case "unsupportedGuide", "unsupportedGenerationGuide":
            return MappedError("invalid_schema", message)
        case "concurrentRequests", "transcriptMutationWhileResponding":
            return MappedError("busy", message)
        case "unsupportedCapability", "unsupportedTranscriptContent":
            return MappedError("invalid_request", message)
        case "timeout", "timedOut":
            return MappedError("generation_failed", "Timed out: \(message)")
        case "decodingFailure":
            return MappedError("generation_failed", message)
        default:
            return nil
        }
    }

    /// Errors of the system's model manager that reach the plugin as plain `NSError`s. Code 1012 is the
    /// transient "busy under load" one: retryable, so it becomes `rate_limited` with a one-second wait.
    public static func mapNative(domain: String, code: Int, description: String) -> MappedError? {
        let fromModelManager = domain.range(of: "ModelManager", options: .caseInsensitive) != nil
            || description.contains("ModelManagerError")
        guard fromModelManager, code == 1012 || description.contains("1012") else { return nil }
        return MappedError(
            "rate_limited",
            "The on-device model is busy (ModelManagerError 1012); retry shortly.",
            detail: [JSONMember("retryAfterSeconds", .number(1))]
        )
    }

    /// A tool's error: cancellation (the step ended) is `cancelled`; anything else is `tool_failed`.
    public static func toolFailure(toolName: String, underlying: any Error) -> MappedError {
        if underlying is CancellationError { return ErrorMapping.cancelled }
        return MappedError("tool_failed", "Tool '\(toolName)' failed: \(ErrorMapping.describe(underlying))")
    }

    /// `context_size_exceeded` with the numbers, when the error carries them.
    public static func contextSizeExceeded(contextSize: Int, tokenCount: Int) -> MappedError {
        MappedError(
            "context_size_exceeded",
            "The conversation (\(tokenCount) tokens) exceeds the model's context size of \(contextSize) tokens.",
            detail: [JSONMember("contextSize", .number(Double(contextSize))), JSONMember("tokenCount", .number(Double(tokenCount)))]
        )
    }

    /// `rate_limited` with the reset date as `retryAfter` (ISO 8601) and `retryAfterSeconds` (rounded up).
    public static func rateLimited(message: String, resetDate: Date?, now: Date = Date()) -> MappedError {
        guard let resetDate else { return MappedError("rate_limited", message) }
        let formatter = ISO8601DateFormatter()
        let seconds = max(0, Int(resetDate.timeIntervalSince(now).rounded(.up)))
        return MappedError(
            "rate_limited", message,
            detail: [
                JSONMember("retryAfter", .string(formatter.string(from: resetDate))),
                JSONMember("retryAfterSeconds", .number(Double(seconds))),
            ]
        )
    }
}
