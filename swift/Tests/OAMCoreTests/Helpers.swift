import Foundation
import Synchronization
import XCTest
@testable import OAMCore

/// A backend whose behaviour is a closure.
struct ClosureBackend: PluginBackend {
    let body: @Sendable (PluginRequest, RequestContext) async throws -> JSONValue

    func perform(_ request: PluginRequest, context: RequestContext) async throws -> JSONValue {
        try await body(request, context)
    }
}

func makeHandle(
    _ body: @escaping @Sendable (PluginRequest, RequestContext) async throws -> JSONValue
) -> PluginHandle {
    PluginHandle(backend: ClosureBackend(body: body), options: OpenOptions(raw: .object([])))
}

/// Waits (with short sleeps, bounded) until `condition` holds.
func waitUntil(_ what: String, timeoutMs: Int = 5000, _ condition: () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .milliseconds(timeoutMs))
    while !condition() {
        if clock.now >= deadline {
            XCTFail("timed out waiting for \(what)")
            return
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// Parses a poll batch.
func events(_ batch: String?) throws -> [JSONValue] {
    guard let batch else { return [] }
    return try XCTUnwrap(try JSONValue.parse(batch).arrayValue)
}

/// Polls until `done` matches an event (or the timeout passes); returns every event seen.
func pollUntil(_ handle: PluginHandle, timeoutMs: Int = 5000, _ done: (JSONValue) -> Bool) async throws -> [JSONValue] {
    var all: [JSONValue] = []
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .milliseconds(timeoutMs))
    while clock.now < deadline {
        let batch = try events(handle.poll(timeoutMs: 0))
        all += batch
        if batch.contains(where: done) { return all }
        try await Task.sleep(for: .milliseconds(1))
    }
    XCTFail("no matching event in \(all.map(\.jsonText))")
    return all
}

func request(_ id: String, _ op: String = "step", _ extra: [JSONMember] = []) -> String {
    JSONValue.object([JSONMember("id", .string(id)), JSONMember("op", .string(op))] + extra).jsonText
}

func isTerminal(_ e: JSONValue) -> Bool {
    let type = e["type"]?.stringValue
    return type == "result" || type == "error"
}

/// A value behind a lock that closures can share (a `Mutex` is noncopyable: escaping closures cannot capture
/// a local one).
final class Locked<T: Sendable>: Sendable {
    private let mutex: Mutex<T>

    init(_ value: T) {
        mutex = Mutex(value)
    }

    func withLock<R: Sendable>(_ body: (inout T) -> R) -> R {
        mutex.withLock { body(&$0) }
    }
}
