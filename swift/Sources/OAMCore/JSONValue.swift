/// A JSON value that keeps the order of object members, so structured answers, tool arguments and requests
/// round-trip with their keys in the order they were written or generated (`JSONSerialization` would parse
/// objects into dictionaries and re-serialize them in hash order).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])
}

/// One member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue

    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// Why a text is not JSON (with the byte offset where it stopped making sense).
public struct JSONParseError: Error, Sendable, Equatable {
    public let message: String
    public let offset: Int
}

extension JSONValue {
    // MARK: Accessors

    /// The value of member `key` of an object (the last one when a key repeats); nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.key == key })?.value
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var doubleValue: Double? {
        if case .number(let d) = self, d.isFinite { return d }
        return nil
    }

    /// An integer from a number without a fractional part (within ±2^53).
    public var intValue: Int? {
        guard case .number(let d) = self, d.isFinite, d == d.rounded(.towardZero), abs(d) <= 9_007_199_254_740_992
        else { return nil }
        return Int(d)
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectMembers: [JSONMember]? {
        if case .object(let m) = self { return m }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Equality that ignores the order of object members (arrays stay ordered).
    public func sameValue(as other: JSONValue) -> Bool {
        switch (self, other) {
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for member in a {
                guard let match = other[member.key], member.value.sameValue(as: match) else { return false }
            }
            return true
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.sameValue(as: $1) }
        default:
            return self == other
        }
    }

    // MARK: Serialization

    /// Compact JSON text; members in their stored order. Non-finite numbers become `null`.
    public var jsonText: String {
        var out = ""
        write(to: &out)
        return out
    }

    public func write(to out: inout String) {
        switch self {
        case .null:
            out += "null"
        case .bool(let b):
            out += b ? "true" : "false"
        case .number(let d):
            out += JSONValue.numberText(d)
        case .string(let s):
            JSONValue.quote(s, into: &out)
        case .array(let values):
            out += "["
            for (i, v) in values.enumerated() {
                if i > 0 { out += "," }
                v.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, m) in members.enumerated() {
                if i > 0 { out += "," }
                JSONValue.quote(m.key, into: &out)
                out += ":"
                m.value.write(to: &out)
            }
            out += "}"
        }
    }

    static func numberText(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        if d == d.rounded(.towardZero) && abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, everything else verbatim.
    public static func quote(_ s: String) -> String {
        var out = ""
        quote(s, into: &out)
        return out
    }

    public static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    // MARK: Parsing

    /// Parses one JSON value (surrounding whitespace allowed). Lone surrogate escapes (`"\ud800"`) become
    /// U+FFFD. Nesting is limited to `maxDepth`.
    public static func parse(_ text: String, maxDepth: Int = 512) throws -> JSONValue {
        var parser = JSONParser(bytes: Array(text.utf8), maxDepth: maxDepth)
        return try parser.parseDocument()
    }
}

struct JSONParser {
    let bytes: [UInt8]
    let maxDepth: Int
    var i = 0
    var depth = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func fail(_ message: String) -> JSONParseError {
        JSONParseError(message: message, offset: i)
    }

    mutating func skipWhitespace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 {
            i += 1
        }
    }

    mutating func parseDocument() throws -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        guard i == bytes.count else { throw fail("unexpected text after the JSON value") }
        return value
    }

    mutating func parseValue() throws -> JSONValue {
        skipWhitespace()
        guard i < bytes.count else { throw fail("unexpected end of JSON") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try parseNumber())
        }
    }

    mutating func literal(_ word: String) throws {
        for b in word.utf8 {
            guard i < bytes.count, bytes[i] == b else { throw fail("invalid literal") }
            i += 1
        }
    }

    mutating func enter() throws {
        depth += 1
        guard depth <= maxDepth else { throw fail("JSON nested too deeply") }
    }

    mutating func parseObject() throws -> JSONValue {
        try enter()
        i += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            let value = try parseValue()
            // A repeated key keeps its first position and its last value (like JSON.parse).
            if let at = members.firstIndex(where: { $0.key == key }) {
                members[at].value = value
            } else {
                members.append(JSONMember(key, value))
            }
            skipWhitespace()
            guard i < bytes.count else { throw fail("unexpected end of JSON") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            guard bytes[i] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
            i += 1
            depth -= 1
            return .object(members)
        }
    }

    mutating func parseArray() throws -> JSONValue {
        try enter()
        i += 1
        var values: [JSONValue] = []
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            depth -= 1
            return .array(values)
        }
        while true {
            values.append(try parseValue())
            skipWhitespace()
            guard i < bytes.count else { throw fail("unexpected end of JSON") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            guard bytes[i] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
            i += 1
            depth -= 1
            return .array(values)
        }
    }

    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            v = v * 16 + d
            i += 1
        }
        return v
    }

    mutating func parseString() throws -> String {
        i += 1 // opening quote
        var scalars = String.UnicodeScalarView()
        var run = i // start of a run of plain bytes, copied as UTF-8 at once (the input is valid UTF-8)
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                if i > run { scalars.append(contentsOf: String(decoding: bytes[run..<i], as: UTF8.self).unicodeScalars) }
                i += 1
                return String(scalars)
            }
            if c < 0x20 { throw fail("control character in a string") }
            if c != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            if i > run { scalars.append(contentsOf: String(decoding: bytes[run..<i], as: UTF8.self).unicodeScalars) }
            i += 1
            guard i < bytes.count else { throw fail("unexpected end of JSON") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                let first = try hex4()
                var value = first
                if first >= 0xD800 && first <= 0xDBFF {
                    // A high surrogate needs a following \u low surrogate; otherwise it is replaced.
                    if i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                        let save = i
                        i += 2
                        let second = try hex4()
                        if second >= 0xDC00 && second <= 0xDFFF {
                            value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                        } else {
                            i = save
                            value = 0xFFFD
                        }
                    } else {
                        value = 0xFFFD
                    }
                } else if first >= 0xDC00 && first <= 0xDFFF {
                    value = 0xFFFD
                }
                scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
            default:
                throw fail("invalid escape")
            }
            run = i
        }
        throw fail("unterminated string")
    }

    mutating func parseNumber() throws -> Double {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        let intStart = i
        while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
        guard i > intStart else { throw fail("invalid value") }
        if bytes[intStart] == UInt8(ascii: "0") && i - intStart > 1 { throw fail("leading zero in a number") }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let f = i
            while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
            guard i > f else { throw fail("invalid number") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let f = i
            while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
            guard i > f else { throw fail("invalid number") }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw fail("number out of range") }
        return value
    }
}
