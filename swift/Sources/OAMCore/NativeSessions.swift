import Synchronization

/// A step's or prewarm's `{"native": {"key", "continue"}}`.
public struct NativeRequest: Sendable, Equatable {
    public let key: String
    public let continueSession: Bool

    public init(key: String, continueSession: Bool) {
        self.key = key
        self.continueSession = continueSession
    }

    /// Nil when the request has no valid `native` member (then nothing is kept or reported).
    public init?(_ request: JSONValue) {
        guard let native = request["native"], let key = native["key"]?.stringValue, PluginHandle.isValidID(key)
        else { return nil }
        self.key = key
        self.continueSession = native["continue"]?.boolValue ?? false
    }
}

/// What a native session was built with: a live session can only continue with the same.
public struct NativeSignature: Sendable, Equatable {
    public let instructions: String?
    public let tools: JSONValue
    public let model: JSONValue

    public init(instructions: String?, tools: JSONValue, model: JSONValue) {
        self.instructions = instructions
        self.tools = tools
        self.model = model
    }
}

/// The `native` member of a step or prewarm result.
public struct NativeReport: Sendable, Equatable {
    public var key: String
    public var rebuilt: Bool
    /// `continued`, `new` (not asked to continue), `missing` (evicted or never kept), `changed`.
    public var reason: String
    /// Transcript entries the model takes in that the live session did not already hold.
    public var evaluatedEntries: Int
    public var kept: Bool

    public var json: JSONValue {
        .object([
            JSONMember("key", .string(key)),
            JSONMember("rebuilt", .bool(rebuilt)),
            JSONMember("reason", .string(reason)),
            JSONMember("evaluatedEntries", .number(Double(evaluatedEntries))),
            JSONMember("kept", .bool(kept)),
        ])
    }
}

/// The live native sessions of one plugin handle (generic over the session object, so the table is tested
/// without FoundationModels). A session is taken out while a step uses it and put back when the step keeps it;
/// past the capacity the least recently kept one is dropped.
public final class NativeSessionCache<Session: Sendable>: Sendable {
    struct Entry: Sendable {
        let session: Session
        let signature: NativeSignature
        let history: Int
        let stamp: UInt64
    }

    struct State: Sendable {
        var entries: [String: Entry] = [:]
        var clock: UInt64 = 0
    }

    public let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    public var count: Int { state.withLock { $0.entries.count } }

    /// Takes the live session under `request.key` out of the table and decides: continue it (same signature,
    /// and it holds exactly `history` entries after the instructions) or rebuild. `evaluatedEntries` counts the
    /// instructions entry (when there is one), the history and the step's prompt entry for a rebuild, and just
    /// the prompt entry for a continuation.
    public func take(
        _ request: NativeRequest, signature: NativeSignature, history: Int, hasInstructionsEntry: Bool, isStep: Bool
    ) -> (session: Session?, report: NativeReport) {
        let live: Entry? = state.withLock { s in s.entries.removeValue(forKey: request.key) }
        let reason: String
        var session: Session?
        if !request.continueSession || !isStep {
            reason = "new"
        } else if let live {
            if live.signature == signature && live.history == history {
                reason = "continued"
                session = live.session
            } else {
                reason = "changed"
            }
        } else {
            reason = "missing"
        }
        let rebuilt = session == nil
        let promptEntry = isStep ? 1 : 0
        let evaluated = rebuilt ? (hasInstructionsEntry ? 1 : 0) + history + promptEntry : 1
        return (session, NativeReport(key: request.key, rebuilt: rebuilt, reason: reason, evaluatedEntries: evaluated, kept: false))
    }

    /// Keeps a session that holds `history` entries after the instructions; false when keeping is off.
    @discardableResult
    public func keep(_ key: String, session: Session, signature: NativeSignature, history: Int) -> Bool {
        let capacity = self.capacity
        return state.withLock { s in
            s.entries.removeValue(forKey: key)
            guard capacity > 0 else { return false }
            while s.entries.count >= capacity, let oldest = s.entries.min(by: { $0.value.stamp < $1.value.stamp })?.key {
                s.entries.removeValue(forKey: oldest)
            }
            s.clock += 1
            s.entries[key] = Entry(session: session, signature: signature, history: history, stamp: s.clock)
            return true
        }
    }

    public func contains(_ key: String) -> Bool { state.withLock { $0.entries[key] != nil } }
}
