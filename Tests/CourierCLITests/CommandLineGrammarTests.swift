import ArgumentParser
import Courier
import HTTPTypes
import Testing

@testable import courier

@Suite("The command line's first words, read as curl and xh users write them")
struct CommandLineGrammarTests {
    private let commands = ["get", "post", "put", "delete", "patch", "head", "batch", "download", "serve", "demo"]

    @Test func aURLAnOptionOrAMethodWordFirstMeansTheRequestCommand() {
        let cases: [([String], [String])] = [
            (["127.0.0.1:8080/echo"], ["get", "127.0.0.1:8080/echo"]),
            (["-s", "example.com"], ["get", "-s", "example.com"]),
            (["-X", "PUT", "example.com"], ["get", "-X", "PUT", "example.com"]),
            (["POST", "example.com", "a=1"], ["get", "POST", "example.com", "a=1"]),
            (["PROPFIND", "example.com"], ["get", "PROPFIND", "example.com"]),
            (["post", "example.com"], ["post", "example.com"]),
            // Options before a command's name: the name goes first (it had become the host).
            (["-s", "put", "u", "--data-binary", "@f"], ["put", "-s", "u", "--data-binary", "@f"]),
            (["-v", "put", "u", "-d", "a=1"], ["put", "-v", "u", "-d", "a=1"]),
            (["-i", "post", "u"], ["post", "-i", "u"]),
            (["-sS", "delete", "u"], ["delete", "-sS", "u"]),
            (["-f", "get", "u"], ["get", "-f", "u"]),
            (["-H", "X-A: put", "head", "u"], ["head", "-H", "X-A: put", "u"]),
            (["-X", "PUT", "put.example.com"], ["get", "-X", "PUT", "put.example.com"]),
            (["--no-such-option", "put", "u"], ["get", "--no-such-option", "put", "u"]),
            (["download", "example.com"], ["download", "example.com"]),
            (["--help"], ["--help"]),
            (["-h"], ["-h"]),
            (["--version"], ["--version"]),
            (["gett", "example.com"], ["gett", "example.com"]),
            (["POST"], ["POST"]),
            ([], []),
        ]
        for (typed, parsed) in cases {
            #expect(CommandLineGrammar.normalized(typed, commands: commands) == parsed, "\(typed)")
        }
    }

    @Test func aMethodWordIsCapitalLettersOnly() {
        #expect(CommandLineGrammar.methodWord("GET") == .get)
        #expect(CommandLineGrammar.methodWord("Get") == nil)
        #expect(CommandLineGrammar.methodWord("get") == nil)
        #expect(CommandLineGrammar.methodWord("GET1") == nil)
        #expect(CommandLineGrammar.methodWord("") == nil)
    }

    /// curl has no total timeout unless `-m` gives one; the connect and read timeouts keep their 30 s.
    @Test func aRequestHasNoTotalTimeoutUnlessMGivesOne() throws {
        let plain = try Get.parse(["example.com"]).options.settings.configuration()
        #expect(plain.timeouts.total == Timeouts.noLimit)
        #expect(plain.timeouts.connect == .seconds(30) && plain.timeouts.readIdle == .seconds(30))
        let bounded = try Get.parse(["example.com", "-m", "2.5"]).options.settings.configuration()
        #expect(bounded.timeouts.total == .milliseconds(2500))
        let long = try Get.parse(["--max-time", "3", "example.com"]).options.settings.configuration()
        #expect(long.timeouts.total == .seconds(3))
    }

    /// xh's items split at their first separator, the longest at its place; a backslash escapes one.
    @Test func requestItemsSplitAtTheirFirstSeparator() {
        let cases: [(String, String, String, String)] = [
            ("q==swift", "q", "==", "swift"),
            ("age:=42", "age", ":=", "42"),
            ("X-Trace:7", "X-Trace", ":", "7"),
            ("url=http://x.y/z", "url", "=", "http://x.y/z"),
            ("doc@/tmp/a.txt", "doc", "@", "/tmp/a.txt"),
            ("text=@note.txt", "text", "=@", "note.txt"),
            ("list:=@list.json", "list", ":=@", "list.json"),
            (#"a\:b=c"#, "a:b", "=", "c"),
            ("Empty;", "Empty", ";", ""),
        ]
        for (item, name, separator, value) in cases {
            let split = RequestItems.split(item)
            #expect(split?.name == name && split?.separator == separator && split?.value == value, "\(item)")
        }
        #expect(RequestItems.split("plain") == nil)
    }
}
