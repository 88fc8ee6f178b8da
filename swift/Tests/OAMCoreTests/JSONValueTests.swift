import XCTest
@testable import OAMCore

final class JSONValueTests: XCTestCase {
    func testKeyOrderSurvivesParsingAndSerializing() throws {
        let text = #"{"zeta":1,"alpha":{"y":[1,2.5,"x"],"b":null,"a":true},"mid":"m"}"#
        let value = try JSONValue.parse(text)
        XCTAssertEqual(value.jsonText, text)
        XCTAssertEqual(value.objectMembers?.map(\.key), ["zeta", "alpha", "mid"])
        XCTAssertEqual(value["alpha"]?.objectMembers?.map(\.key), ["y", "b", "a"])
    }

    func testRepeatedKeyKeepsFirstPositionAndLastValue() throws {
        let value = try JSONValue.parse(#"{"a":1,"b":2,"a":3}"#)
        XCTAssertEqual(value.jsonText, #"{"a":3,"b":2}"#)
    }

    func testQuotingEscapesQuotesBackslashesAndControlCharacters() {
        XCTAssertEqual(JSONValue.quote("a\"b\\c\nd\re\tf\u{01}g\u{1F}"), #""a\"b\\c\nd\re\tf\u0001g\u001f""#)
        XCTAssertEqual(JSONValue.quote("gâteau €5 🐉 /"), "\"gâteau €5 🐉 /\"")
    }

    func testEscapesAndSurrogatesDecode() throws {
        XCTAssertEqual(try JSONValue.parse(#""\u00e9\ud83d\udc09\/\b\f""#), .string("é🐉/\u{08}\u{0C}"))
        // Lone surrogates are not strings Swift can hold: they become U+FFFD.
        XCTAssertEqual(try JSONValue.parse(#""a\ud800b""#), .string("a\u{FFFD}b"))
        XCTAssertEqual(try JSONValue.parse(#""\udc00""#), .string("\u{FFFD}"))
        XCTAssertEqual(try JSONValue.parse(#""\ud800\u0041""#), .string("\u{FFFD}A"))
    }

    func testNumbers() throws {
        XCTAssertEqual(try JSONValue.parse("[0,-1,40,2.5,1e3,-0.125]").jsonText, "[0,-1,40,2.5,1000,-0.125]")
        XCTAssertEqual(JSONValue.number(1e20).jsonText, "1e+20")
        XCTAssertEqual(JSONValue.number(.nan).jsonText, "null")
        XCTAssertNil(try JSONValue.parse("1e17").intValue, "beyond 2^53")
        XCTAssertEqual(try JSONValue.parse("7").intValue, 7)
        XCTAssertNil(try JSONValue.parse("7.5").intValue)
    }

    func testInvalidJSONIsRejected() {
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "tru", "\"a", "\"\u{01}\"", "{} x", "[1 2]", "\"\\q\""] {
            XCTAssertThrowsError(try JSONValue.parse(bad), bad)
        }
        XCTAssertThrowsError(try JSONValue.parse(String(repeating: "[", count: 600) + String(repeating: "]", count: 600)))
        XCTAssertNoThrow(try JSONValue.parse(String(repeating: "[", count: 100) + String(repeating: "]", count: 100)))
    }

    func testSameValueIgnoresMemberOrderOnly() throws {
        let a = try JSONValue.parse(#"{"a":1,"b":[1,{"x":1,"y":2}]}"#)
        let b = try JSONValue.parse(#"{"b":[1,{"y":2,"x":1}],"a":1}"#)
        XCTAssertTrue(a.sameValue(as: b))
        XCTAssertNotEqual(a, b)
        XCTAssertFalse(a.sameValue(as: try JSONValue.parse(#"{"a":1,"b":[{"x":1,"y":2},1]}"#)))
    }

    func testStrictUTF8Decoding() {
        XCTAssertEqual(decodeUTF8(Array("gâteau 🐉".utf8)), "gâteau 🐉")
        for bad: [UInt8] in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80]] {
            XCTAssertNil(decodeUTF8([0x61] + bad + [0x62]), "\(bad)")
        }
    }
}
