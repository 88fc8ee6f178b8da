#if canImport(FoundationModels)
import Foundation
import FoundationModels
import OAMCore
import Synchronization

/// The inputs of one generation. `@unchecked Sendable`: FoundationModels' session, schema and options values
/// belong to this one step; the race only moves them to the generation task.
final class GenerationInput: @unchecked Sendable {
    let live: LiveSession
    let prompt: String
    let schema: GenerationSchema?
    let options: GenerationOptions
    let stream: Bool
    let context: RequestContext
    /// The text streamed so far (reported with a toolCalls result).
    let streamed = Mutex("")

    init(live: LiveSession, prompt: String, schema: GenerationSchema?, options: GenerationOptions, stream: Bool, context: RequestContext) {
        self.live = live
        self.prompt = prompt
        self.schema = schema
        self.options = options
        self.stream = stream
        self.context = context
    }
}

/// One inference step (op `step`): continue the live native session or build one from the request, run one
/// `respond` / `streamResponse`, and end with text, structured output, or the captured tool calls.
struct StepRunner {
    let spec: StepSpec
    let context: RequestContext
    let sessions: NativeSessionCache<LiveSession>

    func run() async throws -> JSONValue {
        let model = ModelChoice.model(spec.session.model)
        if let reason = Availability.reasonName(model) { throw PluginError.modelUnavailable(reason: reason) }
        let schema = try spec.responseSchema.map { try Schemas.decode($0, path: "responseSchema") }
        let (options, appliedMode) = StepOptions.make(spec.options, mode: spec.mode, hasTools: !spec.session.tools.isEmpty)

        var report: NativeReport?
        var live: LiveSession?
        if let native = spec.native {
            let taken = sessions.take(
                native, signature: spec.session.signature, history: spec.session.history.count,
                hasInstructionsEntry: spec.session.hasInstructionsEntry, isStep: true
            )
            report = taken.report
            live = taken.session
        }
        let session = try live ?? LiveSession.build(spec.session, model: model)
        let recorder = CaptureRecorder(windowMs: spec.captureWindowMs)
        session.slot.set(recorder)
        defer { session.slot.set(nil) }

        let input = GenerationInput(
            live: session, prompt: spec.prompt, schema: schema, options: options, stream: spec.stream, context: context
        )
        let outcome = try await StepRace.run(
            recorder: recorder,
            order: { calls in ToolCallOrder.order(calls, by: input.live.latestToolCalls()) },
            generate: { try await Generation.run(input) }
        )

        // Keep the session when its transcript is exactly what the bridge will have: history, prompt, answer.
        if var kept = report, let native = spec.native, !spec.prompt.isEmpty {
            switch outcome {
            case .text, .structured:
                kept.kept = sessions.keep(
                    native.key, session: session, signature: spec.session.signature, history: spec.session.history.count + 2
                )
                report = kept
            case .toolCalls:
                break
            }
        }
        return StepResultJSON.make(
            outcome, streamedText: input.streamed.withLock { $0 }, appliedMode: appliedMode, native: report
        )
    }
}

enum Generation {
    static func run(_ input: GenerationInput) async throws -> StepOutcome {
        let session = input.live.session
        let context = input.context
        if let schema = input.schema {
            if input.stream {
                var last: GeneratedContent?
                var usage: StepUsage?
                let stream = session.streamResponse(to: input.prompt, schema: schema, includeSchemaInPrompt: true, options: input.options)
                for try await snapshot in stream {
                    last = snapshot.rawContent
                    usage = StepUsages.of(snapshot)
                    context.partial(JSONValue(snapshot.rawContent))
                }
                try Task.checkCancellation() // a cancelled stream may end quietly
                guard let last else { throw PluginError.generationFailed("The model produced no structured content.") }
                return .structured(JSONValue(last), usage: usage)
            }
            let response = try await session.respond(to: input.prompt, schema: schema, includeSchemaInPrompt: true, options: input.options)
            return .structured(JSONValue(response.content), usage: StepUsages.of(response))
        }
        if input.stream {
            var last = ""
            var usage: StepUsage?
            for try await snapshot in session.streamResponse(to: input.prompt, options: input.options) {
                let text = snapshot.content
                usage = StepUsages.of(snapshot)
                if text != last {
                    last = text
                    input.streamed.withLock { $0 = text }
                    context.text(text)
                }
            }
            try Task.checkCancellation()
            return .text(last, usage: usage)
        }
        let response = try await session.respond(to: input.prompt, options: input.options)
        return .text(response.content, usage: StepUsages.of(response))
    }
}

/// macOS 27's usage (input tokens with the cached ones, output tokens); nil before 27 or with an older SDK.
enum StepUsages {
    static func of(_ response: LanguageModelSession.Response<String>) -> StepUsage? {
        #if compiler(>=6.4)
        if #available(macOS 27.0, *) { return make(response.usage) }
        #endif
        return nil
    }

    static func of(_ response: LanguageModelSession.Response<GeneratedContent>) -> StepUsage? {
        #if compiler(>=6.4)
        if #available(macOS 27.0, *) { return make(response.usage) }
        #endif
        return nil
    }

    static func of(_ snapshot: LanguageModelSession.ResponseStream<String>.Snapshot) -> StepUsage? {
        #if compiler(>=6.4)
        if #available(macOS 27.0, *) { return make(snapshot.usage) }
        #endif
        return nil
    }

    static func of(_ snapshot: LanguageModelSession.ResponseStream<GeneratedContent>.Snapshot) -> StepUsage? {
        #if compiler(>=6.4)
        if #available(macOS 27.0, *) { return make(snapshot.usage) }
        #endif
        return nil
    }

    #if compiler(>=6.4)
    @available(macOS 27.0, *)
    static func make(_ usage: LanguageModelSession.Usage) -> StepUsage {
        StepUsage(
            inputTokens: usage.input.totalTokenCount,
            cachedInputTokens: usage.input.cachedTokenCount,
            outputTokens: usage.output.totalTokenCount
        )
    }
    #endif
}

enum StepOptions {
    /// GenerationOptions from the request, and the tool-calling mode really applied (`toolCallingMode` exists
    /// from macOS 27; before, tools are simply allowed). The 27 SDK deprecates `init(sampling:…)` in favour of
    /// the back-deployed `init(samplingMode:…)`, which older SDKs lack.
    static func make(_ spec: OptionsSpec, mode: ToolCallingMode, hasTools: Bool) -> (GenerationOptions, String) {
        var sampling: GenerationOptions.SamplingMode?
        switch spec.sampling {
        case .greedy: sampling = .greedy
        case .topK(let k, let seed): sampling = .random(top: k, seed: seed)
        case .topP(let p, let seed): sampling = .random(probabilityThreshold: p, seed: seed)
        case nil: sampling = nil
        }
        #if compiler(>=6.4)
        var options = GenerationOptions(
            samplingMode: sampling, temperature: spec.temperature, maximumResponseTokens: spec.maximumResponseTokens
        )
        if #available(macOS 27.0, *) {
            let applied = hasTools ? mode : .disallowed
            switch applied {
            case .required: options.toolCallingMode = .required
            case .disallowed: options.toolCallingMode = .disallowed
            case .allowed: options.toolCallingMode = .allowed
            }
            return (options, applied.rawValue)
        }
        return (options, hasTools ? "allowed" : "disallowed")
        #else
        let options = GenerationOptions(
            sampling: sampling, temperature: spec.temperature, maximumResponseTokens: spec.maximumResponseTokens
        )
        return (options, hasTools ? "allowed" : "disallowed")
        #endif
    }
}
#endif
