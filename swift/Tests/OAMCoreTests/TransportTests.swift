import Foundation
import Synchronization
import XCTest
@testable import OAMCore

final class TransportTests: XCTestCase {
    func testEveryRequestGetsExactlyOneTerminalEvent() async throws {
        let handle = makeHandle { request, _ in
            switch request.op {
            case "ok": return .object([JSONMember("kind", .string("text"))])
            case "fail": throw PluginError.generationFailed("nope")
            default:
                while true { try await Task.sleep(for: .seconds(60)) }
            }
        }
        XCTAssertEqual(handle.submit(request("a", "ok")), OAMFM_OK)
        XCTAssertEqual(handle.submit(request("b", "fail")), OAMFM_OK)
        XCTAssertEqual(handle.submit(request("c", "hang")), OAMFM_OK)
        XCTAssertEqual(handle.submit(request("d", "hang")), OAMFM_OK)
        XCTAssertEqual(handle.submit(request("c", "hang")), OAMFM_E_DUPLICATE)
        try await waitUntil("a and b ended") { !handle.isLive("a") && !handle.isLive("b") }
        var seen = try events(handle.poll(timeoutMs: 0))
        XCTAssertEqual(handle.cancel("c"), OAMFM_OK)
        XCTAssertEqual(handle.cancel("c"), OAMFM_NOT_FOUND)
        XCTAssertEqual(handle.cancel("a"), OAMFM_NOT_FOUND)
        handle.close()
        seen += try events(handle.poll(timeoutMs: 0))
        XCTAssertNil(handle.poll(timeoutMs: 0), "nothing after the closed marker")
        for id in ["a", "b", "c", "d"] {
            XCTAssertEqual(seen.filter { $0["id"]?.stringValue == id && isTerminal($0) }.count, 1, id)
        }
        XCTAssertEqual(seen.first { $0["id"]?.stringValue == "b" }?["error"]?["code"], .string("generation_failed"))
        XCTAssertEqual(seen.first { $0["id"]?.stringValue == "c" }?["error"]?["message"], .string("The request was cancelled."))
        XCTAssertEqual(seen.first { $0["id"]?.stringValue == "d" }?["error"]?["message"], .string("The plugin was closed."))
        XCTAssertEqual(seen.last, try JSONValue.parse(#"{"type":"closed"}"#))
        XCTAssertEqual(handle.submit(request("e", "ok")), OAMFM_E_CLOSED)
    }

    func testCancelQueuesTheTerminalEventBeforeReturning() async throws {
        let handle = makeHandle { _, _ in
            while true { try await Task.sleep(for: .seconds(60)) }
        }
        XCTAssertEqual(handle.submit(request("h")), OAMFM_OK)
        XCTAssertEqual(handle.cancel("h"), OAMFM_OK)
        let batch = try events(handle.poll(timeoutMs: 0))
        XCTAssertEqual(batch.map(\.jsonText), [#"{"id":"h","type":"error","error":{"code":"cancelled","message":"The request was cancelled."}}"#])
        XCTAssertEqual(handle.submit(request("h")), OAMFM_OK, "the id is free again")
        handle.close()
    }

    func testAnIdReusedAfterCancelBelongsToTheNewRequest() async throws {
        let handle = makeHandle { request, _ in
            if request.op == "hang" {
                do {
                    while true { try await Task.sleep(for: .seconds(60)) }
                } catch {
                    // Unwind slowly, so the cancelled request ends after its id was reused.
                    let until = ContinuousClock.now.advanced(by: .milliseconds(50))
                    while ContinuousClock.now < until { await Task.yield() }
                    throw error
                }
            }
            try await Task.sleep(for: .milliseconds(100))
            return .object([JSONMember("kind", .string("text")), JSONMember("text", .string("new"))])
        }
        XCTAssertEqual(handle.submit(request("h", "hang")), OAMFM_OK)
        try await Task.sleep(for: .milliseconds(10))
        XCTAssertEqual(handle.cancel("h"), OAMFM_OK)
        XCTAssertEqual(handle.submit(request("h", "slow")), OAMFM_OK)
        let seen = try await pollUntil(handle) { $0["type"]?.stringValue == "result" }
        XCTAssertEqual(seen.map { $0["type"]?.stringValue }, ["error", "result"])
        XCTAssertEqual(seen.last?["result"]?["text"], .string("new"))
        try await Task.sleep(for: .milliseconds(80))
        XCTAssertNil(handle.poll(timeoutMs: 0), "the first request's late end is dropped")
        handle.close()
    }

    func testResultRacingCancelStillEndsOnce() async throws {
        let handle = makeHandle { _, _ in .object([]) }
        for i in 0..<200 {
            let id = "r\(i)"
            XCTAssertEqual(handle.submit(request(id)), OAMFM_OK)
            _ = handle.cancel(id)
        }
        try await waitUntil("all ended") { (0..<200).allSatisfy { !handle.isLive("r\($0)") } }
        var all: [JSONValue] = []
        while let batch = handle.poll(timeoutMs: 0) { all += try events(batch) }
        for i in 0..<200 {
            XCTAssertEqual(all.filter { $0["id"]?.stringValue == "r\(i)" }.count, 1)
        }
        handle.close()
    }

    func testSnapshotsCoalesceWithTheNewestQueuedEventOfTheirKind() async throws {
        let handle = makeHandle { _, context in
            for n in 1...500 { context.text(String(repeating: "a", count: n)) }
            context.partial(.object([JSONMember("x", .number(1))]))
            context.text("b")
            context.text("bc")
            context.text("raw", coalesce: false)
            context.text("raw2", coalesce: false)
            return .object([])
        }
        XCTAssertEqual(handle.submit(request("s")), OAMFM_OK)
        try await waitUntil("s ended") { !handle.isLive("s") }
        let batch = try events(handle.poll(timeoutMs: 0))
        XCTAssertEqual(batch.map { $0["text"]?.stringValue ?? $0["type"]?.stringValue ?? "" },
                       [String(repeating: "a", count: 500), "partial", "bc", "raw", "raw2", "result"])
        handle.close()
    }

    func testABatchHoldsAtMost64EventsTheClosedMarkerIncluded() async throws {
        let handle = makeHandle { request, context in
            if request.op == "hang" {
                while true { try await Task.sleep(for: .seconds(60)) }
            }
            for n in 0..<100 { context.event([JSONMember("type", .string("log")), JSONMember("n", .number(Double(n)))]) }
            return .object([])
        }
        XCTAssertEqual(handle.submit(request("many")), OAMFM_OK)
        try await waitUntil("many ended") { !handle.isLive("many") }
        XCTAssertEqual(try events(handle.poll(timeoutMs: 0)).count, 64)
        XCTAssertEqual(try events(handle.poll(timeoutMs: 0)).count, 37)
        XCTAssertNil(handle.poll(timeoutMs: 0))

        for i in 0..<70 { XCTAssertEqual(handle.submit(request("h\(i)", "hang")), OAMFM_OK) }
        handle.close()
        let last = try events(handle.poll(timeoutMs: -1))
        XCTAssertEqual(last.count, 64)
        XCTAssertEqual(last.last, try JSONValue.parse(#"{"type":"closed"}"#))
        XCTAssertNil(handle.poll(timeoutMs: 0))
    }

    func testCloseWakesAWaitingPoll() async throws {
        let handle = makeHandle { _, _ in
            while true { try await Task.sleep(for: .seconds(60)) }
        }
        XCTAssertEqual(handle.submit(request("w")), OAMFM_OK)
        let polled = Task.detached { handle.poll(timeoutMs: -1) }
        try await Task.sleep(for: .milliseconds(20))
        handle.close()
        let batch = try events(await polled.value)
        XCTAssertEqual(batch.map { $0["type"]?.stringValue }, ["error", "closed"])
    }

    func testPollTimesOutWithNil() {
        let handle = makeHandle { _, _ in .object([]) }
        XCTAssertNil(handle.poll(timeoutMs: 20))
        handle.close()
    }

    func testMalformedRequestsAreRefused() {
        let handle = makeHandle { _, _ in .object([]) }
        for bad in ["", "{}", "[]", #"{"id":"a"}"#, #"{"op":"step"}"#, #"{"id":"","op":"step"}"#, #"{"id":"has space","op":"step"}"#,
                    "{\"id\":\"\(String(repeating: "x", count: 65))\",\"op\":\"step\"}", #"{"id":1,"op":"step"}"#, #"{"id":"a","op":"step"} x"#] {
            XCTAssertEqual(handle.submit(bad), OAMFM_E_REQUEST, bad)
        }
        handle.close()
    }

    func testTheCFunctionsOverTokens() async throws {
        let table = HandleTable()
        let make: (OpenOptions) -> any PluginBackend = { ScriptedBackend(options: $0, environment: nil) }
        XCTAssertEqual(PluginABI.version(), 0x10001)
        XCTAssertNil("not json".withCString { PluginABI.open($0, table: table, makeBackend: make) })
        XCTAssertNil(#"{"abi":{"major":2,"minor":0}}"#.withCString { PluginABI.open($0, table: table, makeBackend: make) })
        let badOptions: [CChar] = [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, CChar(bitPattern: 0xFF), 0x22, 0x7D, 0]
        XCTAssertNil(badOptions.withUnsafeBufferPointer { PluginABI.open($0.baseAddress, table: table, makeBackend: make) })
        let handle = try XCTUnwrap(#"{"abi":{"major":1,"minor":1}}"#.withCString { PluginABI.open($0, table: table, makeBackend: make) })

        // Invalid UTF-8 is refused, not repaired.
        let badRequest: [CChar] = Array(#"{"id":"u","op":"step","prompt":""#.utf8CString.dropLast()) + [CChar(bitPattern: 0xC0), CChar(bitPattern: 0xAF), 0x22, 0x7D, 0]
        XCTAssertEqual(badRequest.withUnsafeBufferPointer { PluginABI.submit(handle, $0.baseAddress, table: table) }, OAMFM_E_REQUEST)
        let badID: [CChar] = [0x61, CChar(bitPattern: 0xFF), 0]
        XCTAssertEqual(badID.withUnsafeBufferPointer { PluginABI.cancel(handle, $0.baseAddress, table: table) }, OAMFM_E_ARG)
        XCTAssertEqual(PluginABI.submit(handle, nil, table: table), OAMFM_E_ARG)

        XCTAssertEqual(request("x", "availability").withCString { PluginABI.submit(handle, $0, table: table) }, OAMFM_OK)
        var text = ""
        for _ in 0..<200 {
            if let batch = PluginABI.poll(handle, 20, table: table) {
                text += String(cString: batch)
                PluginABI.release(batch)
                if text.contains("\"result\"") { break }
            }
        }
        XCTAssertTrue(text.contains(#""available":true"#), text)

        PluginABI.close(handle, table: table)
        PluginABI.close(handle, table: table) // idempotent
        XCTAssertNil(PluginABI.poll(handle, 0, table: table))
        XCTAssertEqual(request("y").withCString { PluginABI.submit(handle, $0, table: table) }, OAMFM_E_CLOSED)
        let garbage = UnsafeMutableRawPointer(bitPattern: 0xDEAD0)
        XCTAssertEqual(request("z").withCString { PluginABI.submit(garbage, $0, table: table) }, OAMFM_E_CLOSED)
        PluginABI.release(nil)
    }
}
