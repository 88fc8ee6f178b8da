import Foundation
import Synchronization

/// The stand-in model where FoundationModels does not exist (Linux): it plays the C test double's scripts
/// (ffi/fm_double.c, "The C test double" in ffi/README.md) on top of the real transport, so the existing FFI
/// tests can load the Swift-built library through `OAM_FM_LIBRARY` and check the Swift transport.
///
/// Script sources, first match wins: the request's own `x-double`; for `availability`, the open options'
/// `x-double.availability` or `OAM_FM_DOUBLE`'s, else a default; for `step`, the next of the open options' or
/// `OAM_FM_DOUBLE`'s `steps`, else a default text; `prewarm` answers `{}`; other ops fail with `unsupported`.
/// Native sessions are modelled like the plugin keeps them (`NativeSessionCache`).
public final class ScriptedBackend: PluginBackend {
    static let defaultAvailability: JSONValue = .object([
        JSONMember("available", .bool(true)),
        JSONMember("contextSize", .number(4096)),
        JSONMember("variant", .string("fm_double")),
        JSONMember("supportedLanguages", .array([.string("en")])),
        JSONMember("plugin", .object([
            JSONMember("impl", .string("swift-stand-in")),
            JSONMember("version", .string(pluginVersion)),
            JSONMember("abi", .string("\(pluginABIMajor).\(pluginABIMinor)")),
        ])),
        JSONMember("features", .object([
            JSONMember("toolCallingMode", .bool(true)), JSONMember("usage", .bool(false)),
            JSONMember("tokenCount", .bool(false)), JSONMember("variant", .bool(true)),
            JSONMember("nativeSessions", .bool(true)),
        ])),
    ])

    let availability: JSONValue
    let steps: [JSONValue]
    let stepCursor = Mutex(0)
    /// The sessions are just markers here: what matters is the table's bookkeeping.
    public let sessions: NativeSessionCache<Bool>

    public init(options: OpenOptions, environment: String? = ProcessInfo.processInfo.environment["OAM_FM_DOUBLE"]) {
        var config = options.raw["x-double"]
        if config?.objectMembers == nil, let environment, let parsed = try? JSONValue.parse(environment),
           parsed.objectMembers != nil {
            config = parsed
        }
        if let scripted = config?["availability"], scripted.objectMembers != nil {
            availability = scripted
        } else {
            availability = ScriptedBackend.defaultAvailability
        }
        steps = config?["steps"]?.arrayValue ?? []
        sessions = NativeSessionCache(capacity: options.nativeSessions)
    }

    func nextStepScript() -> JSONValue? {
        let index: Int = stepCursor.withLock { i in
            let current = i
            i += 1
            return current
        }
        return index < steps.count ? steps[index] : nil
    }

    public func perform(_ request: PluginRequest, context: RequestContext) async throws -> JSONValue {
        let body = request.body
        let script: JSONValue
        if let own = body["x-double"], own.objectMembers != nil {
            script = own
        } else {
            switch request.op {
            case "availability":
                script = .object([JSONMember("result", availability)])
            case "step":
                script = nextStepScript()
                    ?? .object([JSONMember("result", .object([
                        JSONMember("kind", .string("text")),
                        JSONMember("text", .string("Hello from the test double.")),
                        JSONMember("usage", .null),
                    ]))])
            case "prewarm":
                script = .object([JSONMember("result", .object([]))])
            default:
                script = .object([JSONMember("error", MappedError("unsupported", "The test double does not support '\(request.op)'.").json)])
            }
        }

        // Native sessions: taken when the request starts, kept when it ends with a keepable result.
        var native: (report: NativeReport, signature: NativeSignature, history: Int, keepable: Bool)?
        if request.op == "step" || request.op == "prewarm", let nativeRequest = NativeRequest(body) {
            let isStep = request.op == "step"
            let session = try RequestParser.session(body)
            let taken = sessions.take(
                nativeRequest, signature: session.signature, history: session.history.count,
                hasInstructionsEntry: session.hasInstructionsEntry, isStep: isStep
            )
            let prompt = body["prompt"]?.stringValue ?? ""
            native = (taken.report, session.signature, session.history.count + (isStep ? 2 : 0), isStep ? !prompt.isEmpty : true)
        }

        let delay = script["delayMs"]?.intValue ?? 0
        let coalesce = script["coalesce"]?.boolValue ?? true
        if script["echo"]?.boolValue == true {
            try await pause(0)
            context.event([JSONMember("type", .string("echo")), JSONMember("request", body)], coalesce: false)
        }
        if let stream = script["stream"] {
            let count = stream["count"]?.intValue ?? 0
            let chunk = stream["chunk"]?.stringValue ?? "x"
            var text = ""
            for _ in 0..<max(count, 0) {
                try await pause(delay)
                text += chunk
                context.text(text, coalesce: coalesce)
            }
        }
        for event in script["events"]?.arrayValue ?? [] {
            guard let members = event.objectMembers else { continue }
            try await pause(delay)
            context.event(members, coalesce: coalesce)
        }
        if script["hang"]?.boolValue == true {
            while true { try await Task.sleep(for: .seconds(3600)) } // ends by cancellation only
        }
        try await pause(delay)

        if let error = script["error"] {
            throw MappedError(
                error["code"]?.stringValue ?? "generation_failed", error["message"]?.stringValue ?? "",
                detail: error["detail"]?.objectMembers ?? []
            )
        }
        let result: JSONValue
        if script["echoAsText"]?.boolValue == true {
            result = .object([
                JSONMember("kind", .string("text")), JSONMember("text", .string(body.jsonText)), JSONMember("usage", .null),
            ])
        } else {
            result = script["result"] ?? .object([])
        }
        guard var native, case .object(var members) = result else { return result }
        let kind = result["kind"]?.stringValue
        if native.keepable && (request.op == "prewarm" || kind == "text" || kind == "structured") {
            native.report.kept = sessions.keep(native.report.key, session: true, signature: native.signature, history: native.history)
        }
        members.append(JSONMember("native", native.report.json))
        return .object(members)
    }

    /// Waits `ms` (throws once the request is cancelled).
    func pause(_ ms: Int) async throws {
        if ms > 0 { try await Task.sleep(for: .milliseconds(ms)) }
        try Task.checkCancellation()
    }
}
