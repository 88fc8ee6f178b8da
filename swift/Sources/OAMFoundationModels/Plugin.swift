import Foundation

/// One opened plugin (`oamfm_open`): the request table, the event queue and the poll condition.
/// Requests run as detached tasks; they report through `emit` (snapshots) and `finish` (terminal events).
/// Every accepted request gets exactly one terminal event: from `finish`, `cancel` or `close`, whichever
/// comes first — later ones are dropped.
final class Plugin: @unchecked Sendable {
    enum Kind { case other, text, partial }

    private struct Queued {
        let requestID: String?
        let kind: Kind
        var json: String
    }

    private final class Request {
        var task: Task<Void, Never>?
    }

    private static let maxBatch = 64
    private let cond = NSCondition()
    private var queue: [Queued] = []
    private var inflight: [String: Request] = [:]
    private var closed = false
    private var closedDelivered = false

    // MARK: ABI operations

    func submit(_ text: String) -> Int32 {
        guard let request = JSON.parseObject(text),
              let id = request["id"] as? String, Plugin.isValidID(id),
              let op = request["op"] as? String, !op.isEmpty
        else { return OAMFM_E_REQUEST }
        cond.lock()
        defer { cond.unlock() }
        if closed { return OAMFM_E_CLOSED }
        if inflight[id] != nil { return OAMFM_E_DUPLICATE }
        let state = Request()
        inflight[id] = state
        // The task blocks on `cond` in `finish` until this method returned, so `state.task` is always set first.
        state.task = Task.detached(priority: .userInitiated) { [self] in
            let emitter = Emitter(plugin: self, id: id)
            do {
                let result = try await Operations.perform(op: op, request: request, emitter: emitter)
                self.finish(id, "{\"id\":\(JSON.quote(id)),\"type\":\"result\",\"result\":\(result)}")
            } catch {
                self.finish(id, ErrorMapping.event(id: id, error: error))
            }
        }
        return OAMFM_OK
    }

    func cancel(_ id: String) -> Int32 {
        cond.lock()
        guard let state = inflight.removeValue(forKey: id) else {
            cond.unlock()
            return OAMFM_NOT_FOUND
        }
        enqueueLocked(Queued(requestID: id, kind: .other, json: Plugin.cancelled(id, "The request was cancelled.")))
        cond.unlock()
        state.task?.cancel()
        return OAMFM_OK
    }

    func poll(timeoutMs: Int32) -> String? {
        cond.lock()
        defer { cond.unlock() }
        if closedDelivered { return nil }
        if timeoutMs < 0 {
            while queue.isEmpty && !closed { cond.wait() }
        } else if timeoutMs > 0 {
            let deadline = Date(timeIntervalSinceNow: Double(timeoutMs) / 1000)
            while queue.isEmpty && !closed {
                if !cond.wait(until: deadline) { break }
            }
        }
        if queue.isEmpty && !closed { return nil }
        let count = min(Plugin.maxBatch, queue.count)
        var parts = queue.prefix(count).map(\.json)
        queue.removeFirst(count)
        if closed && queue.isEmpty {
            parts.append("{\"type\":\"closed\"}")
            closedDelivered = true
        }
        return "[" + parts.joined(separator: ",") + "]"
    }

    func close() {
        cond.lock()
        if closed {
            cond.unlock()
            return
        }
        closed = true
        let states = inflight
        inflight.removeAll()
        for id in states.keys.sorted() {
            enqueueLocked(Queued(requestID: id, kind: .other, json: Plugin.cancelled(id, "The plugin was closed.")))
        }
        cond.broadcast()
        cond.unlock()
        for state in states.values { state.task?.cancel() }
    }

    // MARK: Used by running requests

    /// Queues a snapshot or other non-terminal event; dropped once the request has ended.
    func emit(_ id: String, kind: Kind, json: String) {
        cond.lock()
        defer { cond.unlock() }
        guard inflight[id] != nil else { return }
        enqueueLocked(Queued(requestID: id, kind: kind, json: json))
    }

    /// Queues the terminal event unless cancel/close already did.
    func finish(_ id: String, _ json: String) {
        cond.lock()
        defer { cond.unlock() }
        guard inflight.removeValue(forKey: id) != nil else { return }
        enqueueLocked(Queued(requestID: id, kind: .other, json: json))
    }

    /// True while the request has not ended (used to stop work early).
    func isLive(_ id: String) -> Bool {
        cond.lock()
        defer { cond.unlock() }
        return inflight[id] != nil
    }

    // MARK: Helpers

    /// Appends (or coalesces) an event; lock held.
    private func enqueueLocked(_ event: Queued) {
        if event.kind != .other, let id = event.requestID,
           let last = queue.lastIndex(where: { $0.requestID == id }), queue[last].kind == event.kind {
            queue[last].json = event.json // snapshots are cumulative: the newer one replaces the older
        } else {
            queue.append(event)
        }
        cond.broadcast()
    }

    static func cancelled(_ id: String, _ message: String) -> String {
        "{\"id\":\(JSON.quote(id)),\"type\":\"error\",\"error\":{\"code\":\"cancelled\",\"message\":\(JSON.quote(message))}}"
    }

    static func isValidID(_ id: String) -> Bool {
        guard (1...64).contains(id.utf8.count) else { return false }
        return id.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x2E || c == 0x5F || c == 0x3A || c == 0x2D
        }
    }
}

/// Sends a request's non-terminal events.
struct Emitter: Sendable {
    let plugin: Plugin
    let id: String

    var isLive: Bool { plugin.isLive(id) }

    func text(_ snapshot: String) {
        plugin.emit(id, kind: .text, json: "{\"id\":\(JSON.quote(id)),\"type\":\"text\",\"text\":\(JSON.quote(snapshot))}")
    }

    /// `valueJSON` must be one JSON value (the raw `GeneratedContent.jsonString`, keys in generation order).
    func partial(_ valueJSON: String) {
        guard JSON.isValid(valueJSON) else { return }
        plugin.emit(id, kind: .partial, json: "{\"id\":\(JSON.quote(id)),\"type\":\"partial\",\"value\":\(valueJSON)}")
    }
}

/// Maps the opaque handle tokens of the C ABI to plugins. A token is never reused; lookups of closed or
/// unknown tokens fail safely. A lookup returns a strong reference, so a poll in progress keeps its plugin
/// alive after `oamfm_close` (that is the handle's reference count).
final class HandleTable: @unchecked Sendable {
    static let shared = HandleTable()
    private let lock = NSLock()
    private var next: UInt = 1
    private var plugins: [UInt: Plugin] = [:]

    func insert(_ plugin: Plugin) -> UnsafeMutableRawPointer? {
        lock.lock()
        defer { lock.unlock() }
        let token = next << 4
        next += 1
        plugins[token] = plugin
        return UnsafeMutableRawPointer(bitPattern: token)
    }

    func get(_ handle: UnsafeMutableRawPointer?) -> Plugin? {
        guard let handle else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return plugins[UInt(bitPattern: handle)]
    }

    func remove(_ handle: UnsafeMutableRawPointer?) -> Plugin? {
        guard let handle else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return plugins.removeValue(forKey: UInt(bitPattern: handle))
    }
}
