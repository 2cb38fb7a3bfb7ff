import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Redaction")
struct RedactorTests {
    let redactor = Redactor()

    @Test func credentialHeadersAreHidden() {
        let fields: HTTPFields = [
            .authorization: "Bearer s3cret", .cookie: "sid=abc", .setCookie: "sid=abc",
            .proxyAuthorization: "Basic x", .accept: "text/plain",
        ]
        let text = redactor.redact(fields)
        #expect(!text.contains("s3cret") && !text.contains("sid=abc") && !text.contains("Basic x"))
        #expect(text.contains("Accept: text/plain"))
    }

    @Test func headersThatCarryAURLHideItsSecrets() {
        let fields: HTTPFields = [
            .location: "/next?token=s3cret&page=2", .contentLocation: "https://u:pw@h/x", .referer: "/from?api_key=K",
        ]
        let text = redactor.redact(fields)
        #expect(!text.contains("s3cret") && !text.contains(":pw@") && !text.contains("=K"))
        #expect(text.contains("Location: /next?token=<redacted>&page=2"))
    }

    @Test func sensitiveQueryValuesAndPasswordsAreHidden() {
        let url = URL(string: "https://user:pw@h.example.com/p?token=abc&page=2&user%5Bpassword%5D=x")!
        let text = redactor.redact(url: url)
        #expect(!text.contains("abc") && !text.contains(":pw@") && !text.contains("=x"))
        #expect(text.contains("page=2"))
    }

    @Test func apiKeyHeadersAndUserOnlyCredentialsAreHiddenByDefault() {
        for name in ["X-Api-Key", "X-Auth-Token"] {
            #expect(redactor.redact(HTTPField(name: HTTPField.Name(name)!, value: "k3y")) == "<redacted>", "\(name)")
        }
        #expect(redactor.redact(urlText: "http://TOKEN123@h.example.com/x") == "http://<redacted>@h.example.com/x")
        #expect(
            redactor.redact(urlText: "http://ada:pw@h/x?api_key=K&a=1")
                == "http://ada:<redacted>@h/x?api_key=<redacted>&a=1"
        )
        #expect(redactor.redact(urlText: "http://h/a@b") == "http://h/a@b")  // an @ in the path is not a user part
        // Text that is not even a URL keeps its bytes but loses its secrets.
        #expect(
            redactor.redact(urlText: "http://u:secret@exa mple.com:99999/") == "http://u:<redacted>@exa mple.com:99999/"
        )
    }

    @Test func sensitiveBodyKeysAreHiddenInJSONAndForms() {
        #expect(
            redactor.redact(body: #"{"user":"ada","password":"hunter2","n":{"token": "t"}}"#)
                == #"{"user":"ada","password":"<redacted>","n":{"token": "<redacted>"}}"#
        )
        #expect(redactor.redact(body: "user=ada&password=hunter2&x=1") == "user=ada&password=<redacted>&x=1")
        // One key the start of another (sign, signature; token, access_token), any case, inside escaped JSON.
        #expect(
            redactor.redact(body: #"{"Signature":"abc","sign":"x","access_token":"a","mytoken":"m"}"#)
                == #"{"Signature":"<redacted>","sign":"<redacted>","access_token":"<redacted>","mytoken":"m"}"#
        )
        #expect(
            redactor.redact(body: #"{"log":"{\"TOKEN\":\"t\"}"}"#) == #"{"log":"{\"TOKEN\":"<redacted>"}"}"#
        )
        #expect(redactor.redact(body: "a=1&signature=s&sign=t") == "a=1&signature=<redacted>&sign=<redacted>")
        // Arrays, a key whose value never comes, a string that never closes, form pairs only where a pair starts.
        #expect(redactor.redact(body: #"{"token": [ "a", "b"]}"#) == #"{"token": [ "<redacted>", "b"]}"#)
        #expect(redactor.redact(body: #"{"token":   }"#) == #"{"token":   }"#)
        #expect(redactor.redact(body: #"{"token":"abc"#) == #"{"token":"<redacted>""#)
        #expect(redactor.redact(body: "?token=x y&notoken=z") == "?token=<redacted> y&notoken=z")
        #expect(redactor.redact(body: "token=é&x") == "token=<redacted>&x")
    }

    @Test(.timeLimit(.minutes(1)))
    func hostileBodiesTakeTimeLinearInTheirLength() {
        // Each took minutes with a backtracking expression at a few tens of KB.
        let spaces = String(repeating: " ", count: 1 << 20)
        for body in [#"{"token":"# + spaces, #"{"token"# + spaces, #"{"token":"\"# + spaces, "&token" + spaces] {
            #expect(redactor.redact(body: body).hasSuffix(spaces))
        }
    }

    @Test func customHeadersAndKeysCanBeAdded() {
        let custom = Redactor(sensitiveHeaders: [HTTPField.Name("X-Api-Key")!], sensitiveKeys: ["pin"])
        #expect(custom.redact(HTTPField(name: HTTPField.Name("X-Api-Key")!, value: "k")) == "<redacted>")
        #expect(custom.redact(HTTPField(name: .authorization, value: "k")) == "<redacted>")
        #expect(custom.redact(body: #"{"pin":1234}"#) == #"{"pin":"<redacted>"}"#)
    }

    @Test func curlExportRedactsByDefault() {
        let request = PreparedRequest(
            method: .post,
            url: URL(string: "https://h.example.com/login?token=t1")!,
            headers: [.authorization: "Bearer s3cret", .contentType: "application/json"],
            body: .bytes(Data(#"{"password":"p","it's":1}"#.utf8))
        )
        let curl = request.curlCommand
        #expect(curl.hasPrefix("curl -X POST"))
        #expect(!curl.contains("s3cret") && !curl.contains("t1") && !curl.contains("\"p\""))
        #expect(curl.contains(#""it'\''s""#))
        #expect(request.curlCommand(redactor: .none).contains("Bearer s3cret"))
        #expect(request.description == "POST https://h.example.com/login?token=<redacted>")
    }

    @Test func aCurlExportSendsABodyThatStartsWithAnAtAsItsBytes() {
        let request = PreparedRequest(
            method: .post,
            url: URL(string: "https://h.example.com/x")!,
            headers: [:],
            body: .bytes(Data("@/etc/passwd".utf8))
        )
        #expect(
            request.curlCommand.contains("--data-raw '@/etc/passwd'")
                && !request.curlCommand.contains("--data-binary '@")
        )
    }

    @Test func whatAServerSendsIsEscapedBeforeATerminalSeesIt() {
        let hostile = "ok\u{1B}]0;owned\u{07}\ndebug courier: ← 200 fake\u{9B}2J\ttab"
        let preview = BodyPreview.text(Data(hostile.utf8), limit: 1024) ?? ""
        #expect(
            !preview.contains("\u{1B}") && !preview.contains("\n") && !preview.contains("\u{9B}")
                && !preview.contains("\u{07}")
        )
        #expect(preview == "ok\\x1B]0;owned\\x07\\x0Adebug courier: ← 200 fake\\x9B2J\ttab")
        #expect(BodyPreview.text(Data("plain {\"json\": 1}".utf8), limit: 1024) == "plain {\"json\": 1}")
    }
}
