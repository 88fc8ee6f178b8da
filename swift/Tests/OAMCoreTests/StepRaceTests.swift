import Foundation
import Synchronization
import XCTest
@testable import OAMCore

func call(_ name: String, _ n: Double = 1) -> CapturedCall {
    CapturedCall(name: name, arguments: .object([JSONMember("n", .number(n))]))
}

final class StepRaceTests: XCTestCase {
    func testDefaultsAreA25msWindowAndA1sCap() {
        let recorder = CaptureRecorder()
        XCTAssertEqual(recorder.windowMs, 25)
        XCTAssertEqual(recorder.capMs, 1000)
    }

    func testCallsWithinTheQuiescenceWindowSettleTogetherOnce() async throws {
        let recorder = CaptureRecorder(windowMs: 40)
        let settled = Locked<[[CapturedCall]]>([])
        recorder.onSettled { calls in settled.withLock { $0.append(calls) } }
        let start = ContinuousClock.now
        recorder.record(call("a"))
        try await Task.sleep(for: .milliseconds(5))
        recorder.record(call("b"))
        try await waitUntil("settled") { settled.withLock { !$0.isEmpty } }
        let elapsed = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(40), "never before one quiet window")
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(settled.withLock { $0 }, [[call("a"), call("b")]], "once, with both calls")
    }

    func testTheCapEndsAStreamOfCalls() async throws {
        let recorder = CaptureRecorder(windowMs: 20, capMs: 150)
        let settled = Locked<Int?>(nil)
        recorder.onSettled { calls in settled.withLock { $0 = calls.count } }
        let start = ContinuousClock.now
        var n = 0.0
        while settled.withLock({ $0 == nil }) && ContinuousClock.now - start < .seconds(3) {
            recorder.record(call("c", n))
            n += 1
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = ContinuousClock.now - start
        XCTAssertNotNil(settled.withLock { $0 }, "the cap settled the calls although they kept coming")
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(150))
        XCTAssertLessThan(elapsed, .seconds(3))
    }

    func testStopAfterwardsRecordsNothingAndNeverSettles() async throws {
        let recorder = CaptureRecorder(windowMs: 10)
        let settled = Locked(false)
        recorder.onSettled { _ in settled.withLock { $0 = true } }
        recorder.stop()
        recorder.record(call("late"))
        try await Task.sleep(for: .milliseconds(50))
        XCTAssertFalse(settled.withLock { $0 })
        XCTAssertTrue(recorder.calls.isEmpty)
        XCTAssertTrue(recorder.isStopped)
    }

    func testTheGenerationsOwnResultWins() async throws {
        let recorder = CaptureRecorder()
        let outcome = try await StepRace.run(recorder: recorder) { .text("hi", usage: nil) }
        XCTAssertEqual(outcome, .text("hi", usage: nil))
        XCTAssertTrue(recorder.isStopped, "the capture tools are released")
    }

    func testSettledCallsWinAndCancelTheGeneration() async throws {
        let recorder = CaptureRecorder(windowMs: 10)
        let generationCancelled = Locked(false)
        let outcome = try await StepRace.run(
            recorder: recorder,
            order: { calls in ToolCallOrder.order(calls, by: [TranscriptCall(id: "call-b", name: "b", arguments: .object([JSONMember("n", .number(1))]))]) }
        ) {
            recorder.record(call("a"))
            recorder.record(call("b"))
            do {
                try await Task.sleep(for: .seconds(30))
            } catch {
                generationCancelled.withLock { $0 = true }
                throw error
            }
            return .text("too late", usage: nil)
        }
        XCTAssertEqual(outcome, .toolCalls([
            OrderedCall(name: "b", arguments: call("b").arguments, nativeId: "call-b"),
            OrderedCall(name: "a", arguments: call("a").arguments, nativeId: nil),
        ]))
        try await waitUntil("generation cancelled") { generationCancelled.withLock { $0 } }
    }

    func testAnErrorWins() async {
        struct Boom: Error {}
        do {
            _ = try await StepRace.run(recorder: CaptureRecorder()) { throw Boom() }
            XCTFail("expected an error")
        } catch {
            XCTAssertTrue(error is Boom)
        }
    }

    func testCancellingTheStepEndsTheRaceWithCancellation() async throws {
        let step = Task {
            try await StepRace.run(recorder: CaptureRecorder()) {
                while true { try await Task.sleep(for: .seconds(30)) }
            }
        }
        try await Task.sleep(for: .milliseconds(10))
        step.cancel()
        do {
            _ = try await step.value
            XCTFail("expected cancellation")
        } catch {
            XCTAssertTrue(error is CancellationError)
        }
    }

    func testOnlyOneOutcomeWhenBothSidesFinishTogether() async throws {
        for _ in 0..<100 {
            let recorder = CaptureRecorder(windowMs: 1)
            let outcome = try await StepRace.run(recorder: recorder) {
                recorder.record(call("t"))
                try await Task.sleep(for: .milliseconds(1))
                return .text("t", usage: nil)
            }
            switch outcome {
            case .text, .toolCalls: break
            case .structured: XCTFail("unexpected")
            }
        }
    }

    func testToolCallOrderFollowsTheTranscriptEntry() {
        let a = CapturedCall(name: "look", arguments: try! JSONValue.parse(#"{"x":1,"y":2}"#))
        let b = CapturedCall(name: "look", arguments: try! JSONValue.parse(#"{"x":3}"#))
        let c = CapturedCall(name: "move", arguments: .object([]))
        let entry = [
            TranscriptCall(id: "1", name: "move", arguments: .object([])),
            TranscriptCall(id: "2", name: "look", arguments: try! JSONValue.parse(#"{"x":3}"#)),
            TranscriptCall(id: "3", name: "look", arguments: try! JSONValue.parse(#"{"y":2,"x":1}"#)),
        ]
        XCTAssertEqual(ToolCallOrder.order([a, b, c], by: entry).map(\.nativeId), ["1", "2", "3"])
        XCTAssertEqual(ToolCallOrder.order([a, b, c], by: entry).map(\.name), ["move", "look", "look"])
        XCTAssertEqual(ToolCallOrder.order([a, b, c], by: nil).map(\.nativeId), [nil, nil, nil])
        XCTAssertEqual(ToolCallOrder.order([a, c], by: [entry[0]]).map(\.name), ["move", "look"], "unlisted calls follow")
    }

    func testResultObjects() throws {
        let usage = StepUsage(inputTokens: 10, cachedInputTokens: 4, outputTokens: 3)
        XCTAssertEqual(
            StepResultJSON.make(.text("hi", usage: usage), appliedMode: "allowed", native: nil).jsonText,
            #"{"kind":"text","text":"hi","usage":{"inputTokens":10,"cachedInputTokens":4,"outputTokens":3},"appliedToolCallingMode":"allowed"}"#
        )
        let value = try JSONValue.parse(#"{"z":1,"a":2}"#)
        let report = NativeReport(key: "n1", rebuilt: false, reason: "continued", evaluatedEntries: 1, kept: true)
        XCTAssertEqual(
            StepResultJSON.make(.structured(value, usage: nil), appliedMode: "disallowed", native: report).jsonText,
            #"{"kind":"structured","value":{"z":1,"a":2},"usage":null,"appliedToolCallingMode":"disallowed","native":{"key":"n1","rebuilt":false,"reason":"continued","evaluatedEntries":1,"kept":true}}"#
        )
        let calls = [OrderedCall(name: "t", arguments: .object([]), nativeId: nil)]
        XCTAssertEqual(
            StepResultJSON.make(.toolCalls(calls), streamedText: "Let me", appliedMode: "required", native: nil).jsonText,
            #"{"kind":"toolCalls","calls":[{"name":"t","arguments":{},"nativeId":null}],"text":"Let me","usage":null,"appliedToolCallingMode":"required"}"#
        )
    }
}
