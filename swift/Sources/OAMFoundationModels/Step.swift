import Foundation
import FoundationModels

/// Records the tool calls the model makes during one step, and decides when they have settled:
/// after the first call, once no new call arrived for a quiescence window (parallel calls start within
/// about a millisecond of each other), capped at one second in total.
final class CaptureRecorder: @unchecked Sendable {
    struct Call {
        let name: String
        let argumentsJSON: String
    }

    private let lock = NSLock()
    private var calls: [Call] = []
    private var generation = 0
    private var watcher: Task<Void, Never>?
    private var onSettled: (@Sendable ([Call]) -> Void)?
    private var windowMs = 25
    private var stopped = false

    /// Starts watching: `settled` runs once with the captured calls (never if the model calls no tool).
    func watch(windowMs: Int, settled: @escaping @Sendable ([Call]) -> Void) {
        lock.lock()
        self.windowMs = windowMs
        onSettled = settled
        lock.unlock()
    }

    /// Called from a capture tool.
    func record(name: String, argumentsJSON: String) {
        lock.lock()
        calls.append(Call(name: name, argumentsJSON: argumentsJSON))
        generation += 1
        let startWatcher = watcher == nil
        if startWatcher {
            let window = UInt64(max(windowMs, 0))
            watcher = Task.detached { [weak self] in
                let deadline = Date(timeIntervalSinceNow: 1)
                var seen = -1
                while !Task.isCancelled {
                    try? await Task.sleep(nanoseconds: max(window, 1) * 1_000_000)
                    guard let self else { return }
                    let (now, snapshot, callback) = self.state()
                    if now == seen || Date() >= deadline {
                        callback?(snapshot)
                        return
                    }
                    seen = now
                }
            }
        }
        lock.unlock()
    }

    private func state() -> (Int, [Call], (@Sendable ([Call]) -> Void)?) {
        lock.lock()
        defer { lock.unlock() }
        return (generation, calls, onSettled)
    }

    /// Ends the step's capture: stops the watcher and releases suspended capture tools.
    func stop() {
        lock.lock()
        let task = watcher
        onSettled = nil
        stopped = true
        lock.unlock()
        task?.cancel()
    }

    var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }
}

/// A tool the model may call in this step. It never runs anything: it records the call and suspends until
/// the step is cancelled (which happens as soon as the calls have settled).
struct CaptureTool: Tool {
    typealias Arguments = GeneratedContent
    typealias Output = String

    let name: String
    let description: String
    let parameters: GenerationSchema
    let recorder: CaptureRecorder

    func call(arguments: GeneratedContent) async throws -> String {
        recorder.record(name: name, argumentsJSON: arguments.jsonString)
        // Suspend until the step ends: cancellation (Task.sleep throws) or the recorder being stopped, in
        // case the framework runs tool calls outside the cancelled task tree.
        while !recorder.isStopped {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        throw CancellationError()
    }
}

/// Resumes a continuation exactly once, whoever comes first (generation, capture, cancellation). A result
/// that arrives before the continuation is attached is kept and delivered on attach.
final class Once<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, Error>?
    private var early: Result<T, Error>?
    private var done = false

    func attach(_ continuation: CheckedContinuation<T, Error>) {
        lock.lock()
        if let early {
            self.early = nil
            lock.unlock()
            continuation.resume(with: early)
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    func resume(_ result: Result<T, Error>) {
        lock.lock()
        guard !done else {
            lock.unlock()
            return
        }
        done = true
        guard let continuation else {
            early = result
            lock.unlock()
            return
        }
        self.continuation = nil
        lock.unlock()
        continuation.resume(with: result)
    }
}

final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var task: Task<Void, Never>?

    func set(_ task: Task<Void, Never>) {
        lock.lock()
        self.task = task
        lock.unlock()
    }

    func cancel() {
        lock.lock()
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}

/// The text streamed so far (reported with a toolCalls result).
final class TextBox: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    var value: String {
        get { lock.lock(); defer { lock.unlock() }; return text }
        set { lock.lock(); text = newValue; lock.unlock() }
    }
}

/// One inference step (op "step"): build a throwaway session from the request, run one respond /
/// streamResponse, and end with text, structured output, or the captured tool calls.
struct StepRunner {
    let request: [String: Any]
    let emitter: Emitter

    enum Outcome {
        case text(String)
        case structured(String)
        case toolCalls([CaptureRecorder.Call])
    }

    func run() async throws -> String {
        let model = try ModelChoice.model(request)
        if let reason = Availability.reasonName(model) { throw PluginError.modelUnavailable(reason: reason) }
        let parts = try SessionParts(request: request, model: model)
        var schema: GenerationSchema?
        if let raw = request["responseSchema"], !(raw is NSNull) {
            schema = try Schemas.decode(raw, path: "responseSchema")
        }
        let mode = request["toolCallingMode"] as? String ?? "allowed"
        guard ["allowed", "required", "disallowed"].contains(mode) else {
            throw PluginError.invalidRequest("toolCallingMode must be allowed, required or disallowed.", path: "toolCallingMode")
        }
        let (options, appliedMode) = try StepRunner.options(request["options"], mode: mode, hasTools: !parts.tools.isEmpty)
        let prompt = request["prompt"] as? String ?? ""
        let stream = JSON.bool(request["stream"]) ?? true
        let window = min(max(JSON.int(request["captureWindowMs"]) ?? 25, 0), 250)

        let session = LanguageModelSession(model: model, tools: parts.tools, transcript: parts.transcript)
        let once = Once<Outcome>()
        let generation = TaskBox()
        let streamed = TextBox()
        let emitter = self.emitter
        let recorder = parts.recorder
        // Whoever wins (text, captured calls, an error or cancellation), end the other side: cancel the
        // generation and release the capture tools, which are still suspended after a tool call.
        defer {
            recorder.stop()
            generation.cancel()
        }

        let outcome: Outcome = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Outcome, Error>) in
                once.attach(continuation)
                recorder.watch(windowMs: window) { calls in once.resume(.success(.toolCalls(calls))) }
                generation.set(Task {
                    do {
                        let result = try await StepRunner.generate(
                            session: session, prompt: prompt, schema: schema, options: options,
                            stream: stream, emitter: emitter, streamed: streamed
                        )
                        once.resume(.success(result))
                    } catch {
                        once.resume(.failure(error))
                    }
                })
            }
        } onCancel: {
            once.resume(.failure(CancellationError()))
        }

        let modeJSON = JSON.quote(appliedMode)
        switch outcome {
        case .text(let text):
            return "{\"kind\":\"text\",\"text\":\(JSON.quote(text)),\"usage\":null,\"appliedToolCallingMode\":\(modeJSON)}"
        case .structured(let json):
            guard JSON.isValid(json) else { throw PluginError.generationFailed("The model produced invalid structured content.") }
            return "{\"kind\":\"structured\",\"value\":\(json),\"usage\":null,\"appliedToolCallingMode\":\(modeJSON)}"
        case .toolCalls(let calls):
            let list = calls.map { call -> String in
                let args = JSON.isValid(call.argumentsJSON) ? call.argumentsJSON : "{}"
                return "{\"name\":\(JSON.quote(call.name)),\"arguments\":\(args),\"nativeId\":null}"
            }
            return "{\"kind\":\"toolCalls\",\"calls\":[\(list.joined(separator: ","))],\"text\":\(JSON.quote(streamed.value)),"
                + "\"usage\":null,\"appliedToolCallingMode\":\(modeJSON)}"
        }
    }

    static func generate(
        session: LanguageModelSession, prompt: String, schema: GenerationSchema?, options: GenerationOptions,
        stream: Bool, emitter: Emitter, streamed: TextBox
    ) async throws -> Outcome {
        if let schema {
            if stream {
                var last: GeneratedContent?
                let responses = session.streamResponse(to: prompt, schema: schema, includeSchemaInPrompt: true, options: options)
                for try await snapshot in responses {
                    last = snapshot.rawContent
                    emitter.partial(snapshot.rawContent.jsonString)
                }
                try Task.checkCancellation() // a cancelled stream may end quietly
                guard let last else { throw PluginError.generationFailed("The model produced no structured content.") }
                return .structured(last.jsonString)
            }
            let response = try await session.respond(to: prompt, schema: schema, includeSchemaInPrompt: true, options: options)
            return .structured(response.content.jsonString)
        }
        if stream {
            var last = ""
            for try await snapshot in session.streamResponse(to: prompt, options: options) {
                let text = snapshot.content
                if text != last {
                    last = text
                    streamed.value = text
                    emitter.text(text)
                }
            }
            try Task.checkCancellation()
            return .text(last)
        }
        let response = try await session.respond(to: prompt, options: options)
        return .text(response.content)
    }

    /// GenerationOptions from `{temperature, maximumResponseTokens, sampling}`, and the tool-calling mode that
    /// was really applied (`toolCallingMode` exists from macOS 27; before, tools are simply allowed).
    static func options(_ raw: Any?, mode: String, hasTools: Bool) throws -> (GenerationOptions, String) {
        let spec = raw as? [String: Any] ?? [:]
        var sampling: GenerationOptions.SamplingMode?
        if let s = spec["sampling"] as? [String: Any] {
            let seed = JSON.int(s["seed"]).map { UInt64(truncatingIfNeeded: $0) }
            switch s["mode"] as? String {
            case "greedy":
                sampling = .greedy
            case "topK":
                guard let k = JSON.int(s["k"]), k > 0 else {
                    throw PluginError.invalidRequest("options.sampling.k must be a positive integer.", path: "options.sampling.k")
                }
                sampling = .random(top: k, seed: seed)
            case "topP":
                guard let p = JSON.double(s["p"]), p >= 0, p <= 1 else {
                    throw PluginError.invalidRequest("options.sampling.p must be between 0 and 1.", path: "options.sampling.p")
                }
                sampling = .random(probabilityThreshold: p, seed: seed)
            default:
                throw PluginError.invalidRequest("options.sampling.mode must be greedy, topK or topP.", path: "options.sampling.mode")
            }
        }
        var maxTokens: Int?
        if let m = JSON.int(spec["maximumResponseTokens"]) {
            guard m > 0 else {
                throw PluginError.invalidRequest("options.maximumResponseTokens must be positive.", path: "options.maximumResponseTokens")
            }
            maxTokens = m
        }
        var options = GenerationOptions(sampling: sampling, temperature: JSON.double(spec["temperature"]), maximumResponseTokens: maxTokens)
        var applied = hasTools ? "allowed" : "disallowed"
        #if compiler(>=6.4)
        if #available(macOS 27.0, *) {
            switch hasTools ? mode : "disallowed" {
            case "required": options.toolCallingMode = .required
            case "disallowed": options.toolCallingMode = .disallowed
            default: options.toolCallingMode = .allowed
            }
            applied = hasTools ? mode : "disallowed"
        }
        #endif
        _ = mode
        return (options, applied)
    }
}
