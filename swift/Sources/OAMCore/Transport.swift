import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The transport of the C ABI in ../../../ffi/oamfm.h (ABI 1.1): handle tokens, the request table, the event
// queue with snapshot coalescing and 64-event batches, poll/cancel/close. The model work is a `PluginBackend`.

public let OAMFM_OK: Int32 = 0
public let OAMFM_NOT_FOUND: Int32 = 1
public let OAMFM_E_ARG: Int32 = -1
public let OAMFM_E_CLOSED: Int32 = -2
public let OAMFM_E_REQUEST: Int32 = -3
public let OAMFM_E_DUPLICATE: Int32 = -4

public let pluginABIMajor: UInt32 = 1
public let pluginABIMinor: UInt32 = 1
public let pluginVersion = "0.2.0"

/// The most events one poll returns (the closed marker included).
public let maxBatchEvents = 64

/// Strict UTF-8 decoding of a NUL-terminated C string: nil when any byte sequence is ill-formed (overlong
/// forms, surrogates, truncated sequences, values above U+10FFFF), instead of repairing it.
public func decodeCString(_ pointer: UnsafePointer<CChar>) -> String? {
    let length = strlen(pointer)
    return pointer.withMemoryRebound(to: UInt8.self, capacity: length + 1) { bytes in
        decodeUTF8(UnsafeBufferPointer(start: bytes, count: length))
    }
}

/// Strict UTF-8 decoding of bytes; nil when they are not well-formed UTF-8.
public func decodeUTF8<C: Collection>(_ bytes: C) -> String? where C.Element == UInt8 {
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    var scalars = String.UnicodeScalarView()
    while true {
        switch decoder.decode(&iterator) {
        case .scalarValue(let scalar): scalars.append(scalar)
        case .emptyInput: return String(scalars)
        case .error: return nil
        }
    }
}

/// What `oamfm_open` was given (unknown fields ignored).
public struct OpenOptions: Sendable {
    public var raw: JSONValue
    /// Live native sessions to keep (`nativeSessions`, default 8, 0 to 32).
    public var nativeSessions: Int

    public init(raw: JSONValue) {
        self.raw = raw
        self.nativeSessions = min(max(raw["nativeSessions"]?.intValue ?? 8, 0), 32)
    }
}

/// One accepted request, as a backend sees it.
public struct PluginRequest: Sendable {
    public let id: String
    public let op: String
    /// The whole request object.
    public let body: JSONValue
}

/// The model side of the plugin: runs one request and returns its result object, or throws (mapped by
/// `ErrorMapping`). Cancellation arrives as task cancellation; the terminal `cancelled` event is already queued
/// by then, so whatever the backend returns afterwards is dropped.
public protocol PluginBackend: Sendable {
    func perform(_ request: PluginRequest, context: RequestContext) async throws -> JSONValue
    /// Maps an error the backend threw to the plugin's error (FoundationModels types live in the backend).
    func mapError(_ error: any Error) -> MappedError
}

extension PluginBackend {
    public func mapError(_ error: any Error) -> MappedError { ErrorMapping.map(error) }
}

/// Sends a running request's non-terminal events. Bound to one request: once it ended, its id may be used by
/// a new request, whose events this context never touches.
public struct RequestContext: Sendable {
    let handle: PluginHandle
    public let id: String
    let serial: UInt64

    /// False once the request ended (cancelled, closed, or its terminal event queued).
    public var isLive: Bool { handle.isLive(id, serial: serial) }

    /// A cumulative text snapshot (a queued older one of this request is replaced).
    public func text(_ snapshot: String, coalesce: Bool = true) {
        let json = "{\"id\":\(JSONValue.quote(id)),\"type\":\"text\",\"text\":\(JSONValue.quote(snapshot))}"
        handle.emit(id, serial: serial, kind: coalesce ? .text : .other, json: json)
    }

    /// A partial structured value (always a complete JSON value; keys in generation order).
    public func partial(_ value: JSONValue, coalesce: Bool = true) {
        let json = "{\"id\":\(JSONValue.quote(id)),\"type\":\"partial\",\"value\":\(value.jsonText)}"
        handle.emit(id, serial: serial, kind: coalesce ? .partial : .other, json: json)
    }

    /// Any other event: `members` follow the injected `id`.
    public func event(_ members: [JSONMember], coalesce: Bool = true) {
        var kind = PluginHandle.Kind.other
        if coalesce, let type = JSONValue.object(members)["type"]?.stringValue {
            kind = type == "text" ? .text : type == "partial" ? .partial : .other
        }
        let body = JSONValue.object([JSONMember("id", .string(id))] + members.filter { $0.key != "id" })
        handle.emit(id, serial: serial, kind: kind, json: body.jsonText)
    }
}

/// One opened plugin (`oamfm_open`). Every accepted request gets exactly one terminal event: from its task,
/// `cancel` or `close`, whichever comes first; later ones are dropped.
///
/// State lives behind one `NSCondition` (a lock plus the condition polls wait on); `@unchecked Sendable`
/// because every mutable field below is only touched with that lock held.
public final class PluginHandle: @unchecked Sendable {
    enum Kind { case other, text, partial }

    struct Queued {
        let requestID: String?
        let kind: Kind
        var json: String
    }

    /// One accepted request. `serial` tells it apart from a later request that reuses its id.
    final class Slot {
        let serial: UInt64
        var task: Task<Void, Never>?

        init(serial: UInt64) {
            self.serial = serial
        }
    }

    public let backend: any PluginBackend
    public let options: OpenOptions
    private let cond = NSCondition()
    private var queue: [Queued] = []
    private var inflight: [String: Slot] = [:]
    private var nextSerial: UInt64 = 1
    private var closed = false
    private var closedDelivered = false

    public init(backend: any PluginBackend, options: OpenOptions) {
        self.backend = backend
        self.options = options
    }

    // MARK: ABI operations

    /// `oamfm_submit` on a decoded request text.
    public func submit(_ text: String) -> Int32 {
        guard let body = try? JSONValue.parse(text), body.objectMembers != nil,
              let id = body["id"]?.stringValue, PluginHandle.isValidID(id),
              let op = body["op"]?.stringValue, !op.isEmpty
        else { return OAMFM_E_REQUEST }
        cond.lock()
        defer { cond.unlock() }
        if closed { return OAMFM_E_CLOSED }
        if inflight[id] != nil { return OAMFM_E_DUPLICATE }
        let serial = nextSerial
        nextSerial += 1
        let slot = Slot(serial: serial)
        inflight[id] = slot
        let request = PluginRequest(id: id, op: op, body: body)
        // The task's `finish` waits for this lock, so `slot.task` is set before the request can end.
        slot.task = Task.detached(priority: .userInitiated) { [self] in
            let context = RequestContext(handle: self, id: id, serial: serial)
            do {
                let result = try await backend.perform(request, context: context)
                finish(id, serial: serial, "{\"id\":\(JSONValue.quote(id)),\"type\":\"result\",\"result\":\(result.jsonText)}")
            } catch {
                finish(id, serial: serial, ErrorMapping.event(id: id, error: backend.mapError(error)))
            }
        }
        return OAMFM_OK
    }

    /// `oamfm_cancel`: queues the terminal `cancelled` event before returning.
    public func cancel(_ id: String) -> Int32 {
        cond.lock()
        guard let slot = inflight.removeValue(forKey: id) else {
            cond.unlock()
            return OAMFM_NOT_FOUND
        }
        enqueueLocked(Queued(requestID: id, kind: .other, json: PluginHandle.cancelled(id, "The request was cancelled.")))
        let task = slot.task
        cond.unlock()
        task?.cancel()
        return OAMFM_OK
    }

    /// `oamfm_poll`: waits up to `timeoutMs` (<0: until an event or close) and returns a batch, or nil.
    public func poll(timeoutMs: Int32) -> String? {
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
        // A closed handle's last batch ends with the closed marker, which counts against the 64.
        let room = closed ? maxBatchEvents - 1 : maxBatchEvents
        let count = min(room, queue.count)
        var parts = queue.prefix(count).map(\.json)
        queue.removeFirst(count)
        if closed {
            parts.append("{\"type\":\"closed\"}")
            closedDelivered = true
            queue.removeAll() // what did not fit goes with the handle
        }
        return "[" + parts.joined(separator: ",") + "]"
    }

    /// `oamfm_close`: cancels everything in flight (each gets `cancelled`), wakes every waiting poll.
    public func close() {
        cond.lock()
        if closed {
            cond.unlock()
            return
        }
        closed = true
        let slots = inflight
        inflight.removeAll()
        for id in slots.keys.sorted() {
            enqueueLocked(Queued(requestID: id, kind: .other, json: PluginHandle.cancelled(id, "The plugin was closed.")))
        }
        let tasks = slots.values.compactMap(\.task)
        cond.broadcast()
        cond.unlock()
        for task in tasks { task.cancel() }
    }

    // MARK: Used by running requests

    func emit(_ id: String, serial: UInt64, kind: Kind, json: String) {
        cond.lock()
        defer { cond.unlock() }
        guard inflight[id]?.serial == serial else { return }
        enqueueLocked(Queued(requestID: id, kind: kind, json: json))
    }

    /// Queues the terminal event unless the request already ended (cancel, close, or an earlier request with
    /// the same id that a new one replaced).
    func finish(_ id: String, serial: UInt64, _ json: String) {
        cond.lock()
        defer { cond.unlock() }
        guard inflight[id]?.serial == serial else { return }
        inflight.removeValue(forKey: id)
        enqueueLocked(Queued(requestID: id, kind: .other, json: json))
    }

    func isLive(_ id: String, serial: UInt64) -> Bool {
        cond.lock()
        defer { cond.unlock() }
        return inflight[id]?.serial == serial
    }

    /// True while a request with this id is in flight.
    func isLive(_ id: String) -> Bool {
        cond.lock()
        defer { cond.unlock() }
        return inflight[id] != nil
    }

    /// Appends an event; a snapshot replaces the request's newest queued event when that is a snapshot of the
    /// same kind (snapshots are cumulative, nothing is lost). Lock held.
    private func enqueueLocked(_ event: Queued) {
        if event.kind != .other, let id = event.requestID,
           let last = queue.lastIndex(where: { $0.requestID == id }), queue[last].kind == event.kind {
            queue[last].json = event.json
        } else {
            queue.append(event)
        }
        cond.broadcast()
    }

    static func cancelled(_ id: String, _ message: String) -> String {
        "{\"id\":\(JSONValue.quote(id)),\"type\":\"error\",\"error\":{\"code\":\"cancelled\",\"message\":\(JSONValue.quote(message))}}"
    }

    public static func isValidID(_ id: String) -> Bool {
        guard (1...64).contains(id.utf8.count) else { return false }
        return id.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x2E || c == 0x5F || c == 0x3A || c == 0x2D
        }
    }
}

/// Maps the opaque handle tokens of the C ABI to handles. Tokens are never reused; closed or unknown tokens
/// resolve to nil. A lookup returns a strong reference, so a poll in progress keeps its handle alive after
/// `oamfm_close` (that is the handle's reference count).
public final class HandleTable: Sendable {
    public static let shared = HandleTable()

    struct State {
        var next: UInt = 1
        var handles: [UInt: PluginHandle] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func insert(_ handle: PluginHandle) -> UInt {
        state.withLock { s in
            let token = s.next << 4
            s.next += 1
            s.handles[token] = handle
            return token
        }
    }

    public func get(_ token: UInt) -> PluginHandle? {
        state.withLock { s in s.handles[token] }
    }

    public func remove(_ token: UInt) -> PluginHandle? {
        state.withLock { s in s.handles.removeValue(forKey: token) }
    }
}

/// The seven ABI functions over C types; the library's `@_cdecl` exports call these.
public enum PluginABI {
    public static func version() -> UInt32 { (pluginABIMajor << 16) | pluginABIMinor }

    public static func open(
        _ options: UnsafePointer<CChar>?,
        table: HandleTable = .shared,
        makeBackend: (OpenOptions) -> any PluginBackend
    ) -> UnsafeMutableRawPointer? {
        guard let options, let text = decodeCString(options),
              let raw = try? JSONValue.parse(text), raw.objectMembers != nil
        else { return nil }
        if let major = raw["abi"]?["major"]?.intValue, major != Int(pluginABIMajor) { return nil }
        let parsed = OpenOptions(raw: raw)
        let token = table.insert(PluginHandle(backend: makeBackend(parsed), options: parsed))
        return UnsafeMutableRawPointer(bitPattern: token)
    }

    public static func submit(_ handle: UnsafeMutableRawPointer?, _ request: UnsafePointer<CChar>?, table: HandleTable = .shared) -> Int32 {
        guard let handle, let request else { return OAMFM_E_ARG }
        guard let plugin = table.get(UInt(bitPattern: handle)) else { return OAMFM_E_CLOSED }
        guard let text = decodeCString(request) else { return OAMFM_E_REQUEST }
        return plugin.submit(text)
    }

    public static func cancel(_ handle: UnsafeMutableRawPointer?, _ requestID: UnsafePointer<CChar>?, table: HandleTable = .shared) -> Int32 {
        guard let handle, let requestID else { return OAMFM_E_ARG }
        guard let plugin = table.get(UInt(bitPattern: handle)) else { return OAMFM_E_CLOSED }
        guard let id = decodeCString(requestID) else { return OAMFM_E_ARG }
        return plugin.cancel(id)
    }

    /// Returns a `strdup`ed batch (free with `free`) or nil.
    public static func poll(_ handle: UnsafeMutableRawPointer?, _ timeoutMs: Int32, table: HandleTable = .shared) -> UnsafeMutablePointer<CChar>? {
        guard let handle, let plugin = table.get(UInt(bitPattern: handle)),
              let batch = plugin.poll(timeoutMs: timeoutMs)
        else { return nil }
        return strdup(batch)
    }

    public static func release(_ string: UnsafeMutablePointer<CChar>?) {
        free(string)
    }

    public static func close(_ handle: UnsafeMutableRawPointer?, table: HandleTable = .shared) {
        guard let handle else { return }
        table.remove(UInt(bitPattern: handle))?.close()
    }
}
