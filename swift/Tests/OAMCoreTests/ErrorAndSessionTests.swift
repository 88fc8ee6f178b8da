import Foundation
import XCTest
@testable import OAMCore

final class ErrorMappingTests: XCTestCase {
    enum FakeGenerationError: Error {
        case guardrailViolation(String)
        case exceededContextWindowSize(String)
        case somethingNew
    }

    func testCaseNamesMapToCodes() {
        let pairs: [(String, String)] = [
            ("exceededContextWindowSize", "context_size_exceeded"), ("contextSizeExceeded", "context_size_exceeded"),
            ("assetsUnavailable", "model_unavailable"), ("guardrailViolation", "guardrail_violation"),
            ("refusal", "refusal"), ("rateLimited", "rate_limited"), ("unsupportedLanguageOrLocale", "unsupported_language"),
            ("unsupportedGuide", "invalid_schema"), ("unsupportedGenerationGuide", "invalid_schema"),
            ("concurrentRequests", "busy"), ("unsupportedCapability", "invalid_request"),
            ("unsupportedTranscriptContent", "invalid_request"), ("timeout", "generation_failed"),
            ("decodingFailure", "generation_failed"),
        ]
        for (name, code) in pairs { XCTAssertEqual(ErrorNames.map(caseName: name, message: "m")?.code, code, name) }
        XCTAssertNil(ErrorNames.map(caseName: "nothingKnown", message: "m"))
        XCTAssertEqual(ErrorNames.map(caseName: "assetsUnavailable", message: "m")?.detail, [JSONMember("reason", .string("model_not_ready"))])
    }

    func testFallbackUsesTheCaseNameThenTheNSError() {
        XCTAssertEqual(ErrorMapping.caseName(of: FakeGenerationError.guardrailViolation("x")), "guardrailViolation")
        XCTAssertEqual(ErrorMapping.map(FakeGenerationError.exceededContextWindowSize("x")).code, "context_size_exceeded")
        let unknown = ErrorMapping.map(FakeGenerationError.somethingNew)
        XCTAssertEqual(unknown.code, "generation_failed")
        XCTAssertEqual(unknown.detail.first?.key, "native")
    }

    func testModelManagerError1012IsRetryable() {
        let busy = NSError(domain: "com.apple.ModelManagerServices.ModelManagerError", code: 1012)
        let mapped = ErrorMapping.map(busy)
        XCTAssertEqual(mapped.code, "rate_limited")
        XCTAssertEqual(mapped.detail, [JSONMember("retryAfterSeconds", .number(1))])
        XCTAssertEqual(ErrorMapping.map(NSError(domain: "com.apple.ModelManagerServices.ModelManagerError", code: 1013)).code, "generation_failed")
        XCTAssertEqual(ErrorMapping.map(NSError(domain: "Other", code: 1012)).code, "generation_failed")
    }

    func testPluginErrorsCancellationAndTools() {
        XCTAssertEqual(ErrorMapping.map(PluginError.invalidRequest("bad", path: "history[2].role")).json.jsonText,
                       #"{"code":"invalid_request","message":"bad","detail":{"path":"history[2].role"}}"#)
        XCTAssertEqual(ErrorMapping.map(PluginError.modelUnavailable(reason: "model_not_ready")).detail,
                       [JSONMember("reason", .string("model_not_ready"))])
        XCTAssertEqual(ErrorMapping.map(PluginError.unsupported("no")).code, "unsupported")
        XCTAssertEqual(ErrorMapping.map(CancellationError()).code, "cancelled")
        XCTAssertEqual(ErrorNames.toolFailure(toolName: "t", underlying: CancellationError()).code, "cancelled")
        struct Broken: Error {}
        XCTAssertEqual(ErrorNames.toolFailure(toolName: "t", underlying: Broken()).code, "tool_failed")
        let mapped = MappedError("refusal", "No.")
        XCTAssertEqual(ErrorMapping.map(mapped), mapped)
        XCTAssertEqual(ErrorMapping.event(id: "r1", error: mapped), #"{"id":"r1","type":"error","error":{"code":"refusal","message":"No."}}"#)
    }

    func testContextSizeAndRateLimitDetails() {
        let exceeded = ErrorNames.contextSizeExceeded(contextSize: 8192, tokenCount: 9000)
        XCTAssertEqual(exceeded.detail, [JSONMember("contextSize", .number(8192)), JSONMember("tokenCount", .number(9000))])
        let now = Date(timeIntervalSince1970: 1_000_000)
        let limited = ErrorNames.rateLimited(message: "slow down", resetDate: now.addingTimeInterval(2.2), now: now)
        XCTAssertEqual(limited.detail.map(\.key), ["retryAfter", "retryAfterSeconds"])
        XCTAssertEqual(limited.detail.last?.value, .number(3))
        XCTAssertEqual(ErrorNames.rateLimited(message: "m", resetDate: nil).detail, [])
    }
}

final class NativeSessionCacheTests: XCTestCase {
    let signature = NativeSignature(instructions: "I.", tools: .array([]), model: .null)

    func testContinueOnlyWithTheSameSignatureAndHistoryLength() {
        let cache = NativeSessionCache<Int>(capacity: 8)
        let first = cache.take(NativeRequest(key: "k", continueSession: true), signature: signature, history: 0, hasInstructionsEntry: true, isStep: true)
        XCTAssertNil(first.session)
        XCTAssertEqual(first.report, NativeReport(key: "k", rebuilt: true, reason: "missing", evaluatedEntries: 2, kept: false))
        XCTAssertTrue(cache.keep("k", session: 1, signature: signature, history: 2))

        let next = cache.take(NativeRequest(key: "k", continueSession: true), signature: signature, history: 2, hasInstructionsEntry: true, isStep: true)
        XCTAssertEqual(next.session, 1)
        XCTAssertEqual(next.report, NativeReport(key: "k", rebuilt: false, reason: "continued", evaluatedEntries: 1, kept: false))
        XCTAssertFalse(cache.contains("k"), "taken while in use")

        cache.keep("k", session: 2, signature: signature, history: 4)
        let other = NativeSignature(instructions: "J.", tools: .array([]), model: .null)
        XCTAssertEqual(cache.take(NativeRequest(key: "k", continueSession: true), signature: other, history: 4, hasInstructionsEntry: true, isStep: true).report.reason, "changed")
        cache.keep("k", session: 3, signature: signature, history: 4)
        XCTAssertEqual(cache.take(NativeRequest(key: "k", continueSession: true), signature: signature, history: 6, hasInstructionsEntry: true, isStep: true).report.reason, "changed")
        cache.keep("k", session: 4, signature: signature, history: 4)
        let fresh = cache.take(NativeRequest(key: "k", continueSession: false), signature: signature, history: 4, hasInstructionsEntry: false, isStep: true)
        XCTAssertNil(fresh.session)
        XCTAssertEqual(fresh.report.reason, "new")
        XCTAssertEqual(fresh.report.evaluatedEntries, 5, "no instructions entry: history + prompt")
        XCTAssertEqual(cache.take(NativeRequest(key: "p", continueSession: true), signature: signature, history: 3, hasInstructionsEntry: true, isStep: false).report.evaluatedEntries, 4, "a prewarm has no prompt entry")
    }

    func testCapacityEvictsTheLeastRecentlyKept() {
        let cache = NativeSessionCache<Int>(capacity: 2)
        cache.keep("a", session: 1, signature: signature, history: 2)
        cache.keep("b", session: 2, signature: signature, history: 2)
        cache.keep("c", session: 3, signature: signature, history: 2)
        XCTAssertEqual(cache.count, 2)
        XCTAssertFalse(cache.contains("a"))
        XCTAssertTrue(cache.contains("b") && cache.contains("c"))
        let off = NativeSessionCache<Int>(capacity: 0)
        XCTAssertFalse(off.keep("a", session: 1, signature: signature, history: 2))
        XCTAssertEqual(off.count, 0)
    }

    func testNativeRequestParsing() throws {
        XCTAssertEqual(NativeRequest(try JSONValue.parse(#"{"native":{"key":"n1","continue":true}}"#)), NativeRequest(key: "n1", continueSession: true))
        XCTAssertEqual(NativeRequest(try JSONValue.parse(#"{"native":{"key":"n1"}}"#))?.continueSession, false)
        XCTAssertNil(NativeRequest(try JSONValue.parse(#"{"native":{"key":"bad key"}}"#)))
        XCTAssertNil(NativeRequest(try JSONValue.parse(#"{}"#)))
    }
}

final class RequestParsingTests: XCTestCase {
    func testAStepRequestParsesIntoPlainStructsKeepingKeyOrder() throws {
        let text = #"""
        {"id":"r1","op":"step","instructions":"Guard.","tools":[{"name":"open_gate","description":"Opens.","parameters":{"type":"object"}}],
         "toolCallingMode":"required","prompt":"Open.","responseSchema":null,"stream":false,"captureWindowMs":900,
         "options":{"temperature":0.5,"maximumResponseTokens":64,"sampling":{"mode":"topK","k":40,"seed":7}},
         "history":[{"id":"p1","role":"user","contents":[{"type":"text","id":"s1","text":"Hi"}],"options":{}},
                    {"id":"tc","role":"response","toolCalls":[{"id":"call_1","name":"open_gate","arguments":"{\"zeta\":1,\"alpha\":2}"}],"contents":[],"assets":[]},
                    {"id":"call_1","role":"tool","toolCallID":"call_1","toolName":"open_gate","contents":[{"type":"structure","id":"s3","structure":{"source":"open_gate","content":{"b":1,"a":2}}}]}],
         "native":{"key":"n3","continue":true}}
        """#
        let spec = try RequestParser.step(try JSONValue.parse(text))
        XCTAssertEqual(spec.session.instructions, "Guard.")
        XCTAssertEqual(spec.session.tools.map(\.name), ["open_gate"])
        XCTAssertEqual(spec.mode, .required)
        XCTAssertEqual(spec.prompt, "Open.")
        XCTAssertNil(spec.responseSchema)
        XCTAssertFalse(spec.stream)
        XCTAssertEqual(spec.captureWindowMs, 250, "clamped")
        XCTAssertEqual(spec.options, OptionsSpec(temperature: 0.5, maximumResponseTokens: 64, sampling: .topK(40, seed: 7)))
        XCTAssertEqual(spec.native, NativeRequest(key: "n3", continueSession: true))
        XCTAssertEqual(spec.session.history.count, 3)
        guard case .toolCalls(_, let calls) = spec.session.history[1] else { return XCTFail("tool calls") }
        XCTAssertEqual(calls.first?.arguments.jsonText, #"{"zeta":1,"alpha":2}"#)
        guard case .toolOutput(let id, _, let segments) = spec.session.history[2] else { return XCTFail("tool output") }
        XCTAssertEqual(id, "call_1")
        XCTAssertEqual(segments, [.structure(id: "s3", source: "open_gate", content: try JSONValue.parse(#"{"b":1,"a":2}"#))])
    }

    func testInvalidFieldsNameTheirPath() throws {
        func path(_ text: String) -> String? {
            do {
                _ = try RequestParser.step(try JSONValue.parse(text))
                return nil
            } catch let error as PluginError {
                return ErrorMapping.map(error).detail.first { $0.key == "path" }?.value.stringValue
            } catch {
                return "other"
            }
        }
        XCTAssertEqual(path(#"{"toolCallingMode":"sometimes"}"#), "toolCallingMode")
        XCTAssertEqual(path(#"{"history":[{"role":"wizard"}]}"#), "history[0].role")
        XCTAssertEqual(path(#"{"history":[{"role":"response","toolCalls":[{"name":"t","arguments":"{nope"}]}]}"#), "history[0].toolCalls[0].arguments")
        XCTAssertEqual(path(#"{"tools":[{"name":"a"},{"name":"a"}]}"#), "tools[1].name")
        XCTAssertEqual(path(#"{"options":{"sampling":{"mode":"topK","k":0}}}"#), "options.sampling.k")
        XCTAssertEqual(path(#"{"model":{"useCase":"poetry"}}"#), "model.useCase")
        XCTAssertEqual(path(#"{"responseSchema":[]}"#), "responseSchema")
        XCTAssertNil(path(#"{}"#))
    }

    func testCountTokensCarriesTheResponseSchema() throws {
        let spec = try RequestParser.count(try JSONValue.parse(#"{"instructions":"I.","prompt":"p","responseSchema":{"type":"object","title":"R"}}"#))
        XCTAssertEqual(spec.responseSchema, try JSONValue.parse(#"{"type":"object","title":"R"}"#))
        XCTAssertEqual(spec.prompt, "p")
        XCTAssertTrue(spec.session.hasInstructionsEntry)
    }

    func testContextSizeFallback() {
        XCTAssertEqual(ContextSize.resolve(osValue: 8192).size, 8192)
        XCTAssertEqual(ContextSize.resolve(osValue: 8192).source, "os")
        XCTAssertEqual(ContextSize.resolve(osValue: 0).size, 4096, "broken assets report 0")
        XCTAssertEqual(ContextSize.resolve(osValue: nil).source, "fallback")
    }
}

final class ScriptedBackendTests: XCTestCase {
    func testScriptsAndNativeSessionsLikeTheCDouble() async throws {
        let options = OpenOptions(raw: try JSONValue.parse(#"{"x-double":{"steps":[{"result":{"kind":"text","text":"one"}}]}}"#))
        let handle = PluginHandle(backend: ScriptedBackend(options: options, environment: nil), options: options)
        XCTAssertEqual(handle.submit(#"{"id":"a","op":"step","instructions":"I.","history":[],"prompt":"p","native":{"key":"n1"}}"#), OAMFM_OK)
        var seen = try await pollUntil(handle) { isTerminal($0) }
        XCTAssertEqual(seen.last?["result"]?.jsonText,
                       #"{"kind":"text","text":"one","native":{"key":"n1","rebuilt":true,"reason":"new","evaluatedEntries":2,"kept":true}}"#)
        let next = #"{"id":"b","op":"step","instructions":"I.","history":[{"role":"user"},{"role":"response"}],"prompt":"q","native":{"key":"n1","continue":true}}"#
        XCTAssertEqual(handle.submit(next), OAMFM_OK)
        seen = try await pollUntil(handle) { isTerminal($0) }
        XCTAssertEqual(seen.last?["result"]?["text"], .string("Hello from the test double."))
        XCTAssertEqual(seen.last?["result"]?["native"]?["reason"], .string("continued"))
        handle.close()
    }
}
