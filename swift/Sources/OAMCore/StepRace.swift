import Synchronization

/// A tool call a capture tool recorded (it never runs anything).
public struct CapturedCall: Sendable, Equatable {
    public let name: String
    public let arguments: JSONValue

    public init(name: String, arguments: JSONValue) {
        self.name = name
        self.arguments = arguments
    }
}

/// Token usage of one step (macOS 27's `Response.usage`).
public struct StepUsage: Sendable, Equatable {
    public var inputTokens: Int
    public var cachedInputTokens: Int
    public var outputTokens: Int

    public init(inputTokens: Int, cachedInputTokens: Int, outputTokens: Int) {
        self.inputTokens = inputTokens
        self.cachedInputTokens = cachedInputTokens
        self.outputTokens = outputTokens
    }

    public var json: JSONValue {
        .object([
            JSONMember("inputTokens", .number(Double(inputTokens))),
            JSONMember("cachedInputTokens", .number(Double(cachedInputTokens))),
            JSONMember("outputTokens", .number(Double(outputTokens))),
        ])
    }
}

/// How a step ended.
public enum StepOutcome: Sendable, Equatable {
    case text(String, usage: StepUsage?)
    case structured(JSONValue, usage: StepUsage?)
    /// The captured calls, ordered (and given native ids) when they settled.
    case toolCalls([OrderedCall])
}

/// Records the tool calls of one step and decides when they have settled: after the first call, once no new
/// call arrived for a quiescence window (parallel calls start within about a millisecond of each other), and
/// at the latest `capMs` after the first call.
public final class CaptureRecorder: Sendable {
    struct State {
        var calls: [CapturedCall] = []
        var generation = 0
        var watching = false
        var stopped = false
        var settled: (@Sendable ([CapturedCall]) -> Void)?
    }

    public let windowMs: Int
    public let capMs: Int
    private let state = Mutex(State())

    public init(windowMs: Int = 25, capMs: Int = 1000) {
        self.windowMs = max(windowMs, 1)
        self.capMs = max(capMs, self.windowMs)
    }

    /// Sets what runs (once) when the calls have settled. Call before anything can record.
    public func onSettled(_ body: @escaping @Sendable ([CapturedCall]) -> Void) {
        state.withLock { $0.settled = body }
    }

    /// Called by a capture tool.
    public func record(_ call: CapturedCall) {
        let startWatcher: Bool = state.withLock { s in
            guard !s.stopped else { return false }
            s.calls.append(call)
            s.generation += 1
            if s.watching { return false }
            s.watching = true
            return true
        }
        if startWatcher { watch() }
    }

    private func watch() {
        let window = windowMs
        let cap = capMs
        Task.detached { [self] in
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .milliseconds(cap))
            var seen = -1
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(window))
                let (generation, stopped): (Int, Bool) = state.withLock { ($0.generation, $0.stopped) }
                if stopped { return }
                if generation == seen || clock.now >= deadline {
                    settle()
                    return
                }
                seen = generation
            }
        }
    }

    private func settle() {
        let (calls, body): ([CapturedCall], (@Sendable ([CapturedCall]) -> Void)?) = state.withLock { s in
            let body = s.settled
            s.settled = nil
            return (s.calls, body)
        }
        body?(calls)
    }

    /// Ends the capture: no more settling; suspended capture tools see `isStopped` and return.
    public func stop() {
        state.withLock { s in
            s.stopped = true
            s.settled = nil
        }
    }

    public var isStopped: Bool { state.withLock { $0.stopped } }

    public var calls: [CapturedCall] { state.withLock { $0.calls } }
}

/// Resumes a continuation exactly once, whoever comes first. A result that arrives before the continuation
/// is attached is kept and delivered on attach.
public final class Once<T: Sendable>: Sendable {
    struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var done = false
    }

    private let state = Mutex(State())

    public init() {}

    public func resume(_ result: Result<T, any Error>) {
        let continuation: CheckedContinuation<T, any Error>? = state.withLock { s in
            if s.done { return nil }
            s.done = true
            if let c = s.continuation {
                s.continuation = nil
                return c
            }
            s.early = result
            return nil
        }
        continuation?.resume(with: result)
    }

    public func value() async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let early: Result<T, any Error>? = state.withLock { s in
                if let e = s.early {
                    s.early = nil
                    return e
                }
                s.continuation = continuation
                return nil
            }
            if let early { continuation.resume(with: early) }
        }
    }
}

/// The one-shot race of a step: the generation's own end (text, structured output, an error), the captured
/// tool calls settling, or cancellation — the first wins, the rest is stopped (generation cancelled, capture
/// tools released).
public enum StepRace {
    /// `order` runs when the captured calls settle, before the generation is cancelled (the transcript's
    /// tool-calls entry is only there while the tools are suspended).
    public static func run(
        recorder: CaptureRecorder,
        order: @escaping @Sendable ([CapturedCall]) -> [OrderedCall] = { ToolCallOrder.order($0, by: nil) },
        generate: @escaping @Sendable () async throws -> StepOutcome
    ) async throws -> StepOutcome {
        let once = Once<StepOutcome>()
        recorder.onSettled { calls in once.resume(.success(.toolCalls(order(calls)))) }
        let generation = Task {
            do {
                once.resume(.success(try await generate()))
            } catch {
                once.resume(.failure(error))
            }
        }
        defer {
            recorder.stop()
            generation.cancel()
        }
        return try await withTaskCancellationHandler {
            try await once.value()
        } onCancel: {
            once.resume(.failure(CancellationError()))
        }
    }
}

/// A tool call as reported in a `toolCalls` result.
public struct OrderedCall: Sendable, Equatable {
    public let name: String
    public let arguments: JSONValue
    public let nativeId: String?

    public init(name: String, arguments: JSONValue, nativeId: String?) {
        self.name = name
        self.arguments = arguments
        self.nativeId = nativeId
    }
}

/// One call of the transcript's latest tool-calls entry.
public struct TranscriptCall: Sendable, Equatable {
    public let id: String
    public let name: String
    public let arguments: JSONValue

    public init(id: String, name: String, arguments: JSONValue) {
        self.id = id
        self.name = name
        self.arguments = arguments
    }
}

public enum ToolCallOrder {
    /// Orders captured calls like the transcript's tool-calls entry (matched by name and arguments, member
    /// order ignored), each with the entry's call id as `nativeId`. Calls the entry does not list follow in
    /// capture order without a native id.
    public static func order(_ captured: [CapturedCall], by entry: [TranscriptCall]?) -> [OrderedCall] {
        guard let entry, !entry.isEmpty else {
            return captured.map { OrderedCall(name: $0.name, arguments: $0.arguments, nativeId: nil) }
        }
        var used = Array(repeating: false, count: captured.count)
        var out: [OrderedCall] = []
        for call in entry {
            if let at = captured.indices.first(where: {
                !used[$0] && captured[$0].name == call.name && captured[$0].arguments.sameValue(as: call.arguments)
            }) {
                used[at] = true
                out.append(OrderedCall(name: captured[at].name, arguments: captured[at].arguments, nativeId: call.id))
            }
        }
        for (i, call) in captured.enumerated() where !used[i] {
            out.append(OrderedCall(name: call.name, arguments: call.arguments, nativeId: nil))
        }
        return out
    }
}

/// The result objects of a step.
public enum StepResultJSON {
    public static func make(
        _ outcome: StepOutcome, streamedText: String = "", appliedMode: String, native: NativeReport?
    ) -> JSONValue {
        var members: [JSONMember]
        switch outcome {
        case .text(let text, let usage):
            members = [JSONMember("kind", .string("text")), JSONMember("text", .string(text)), JSONMember("usage", usage?.json ?? .null)]
        case .structured(let value, let usage):
            members = [JSONMember("kind", .string("structured")), JSONMember("value", value), JSONMember("usage", usage?.json ?? .null)]
        case .toolCalls(let calls):
            let list: [JSONValue] = calls.map { call in
                .object([
                    JSONMember("name", .string(call.name)),
                    JSONMember("arguments", call.arguments),
                    JSONMember("nativeId", call.nativeId.map { .string($0) } ?? .null),
                ])
            }
            members = [
                JSONMember("kind", .string("toolCalls")), JSONMember("calls", .array(list)),
                JSONMember("text", .string(streamedText)), JSONMember("usage", .null),
            ]
        }
        members.append(JSONMember("appliedToolCallingMode", .string(appliedMode)))
        if let native { members.append(JSONMember("native", native.json)) }
        return .object(members)
    }
}
