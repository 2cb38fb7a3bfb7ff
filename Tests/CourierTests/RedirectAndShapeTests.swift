import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Redirect decisions")
struct RedirectStateTests {
    let start = URL(string: "http://a.example.com/start")!

    @Test func followsRelativeLocationsAndCountsHops() throws {
        var state = RedirectState(policy: RedirectPolicy(maxHops: 2), initial: .get, url: start)
        let first = try state.next(method: .get, url: start, status: .found, location: "/one", bodyIsReplayable: true)
        #expect(
            first
                == .follow(
                    method: .get,
                    url: URL(string: "http://a.example.com/one")!,
                    dropsBody: false,
                    stripsCredentials: false
                )
        )
        _ = try state.next(
            method: .get,
            url: URL(string: "http://a.example.com/one")!,
            status: .found,
            location: "/two",
            bodyIsReplayable: true
        )
        let error = #expect(throws: CourierError.self) {
            try state.next(
                method: .get,
                url: URL(string: "http://a.example.com/two")!,
                status: .found,
                location: "/three",
                bodyIsReplayable: true
            )
        }
        #expect(error?.code == .tooManyRedirects)
    }

    /// A `Location` with non-ASCII and escapes: only what needs encoding is encoded (the issue's `/é%41` was sent
    /// as `/%C3%A9%2541`).
    @Test func aLocationIsEncodedOnlyWhereItNeedsIt() throws {
        let cases = [
            ("/é%41", "http://a.example.com/%C3%A9%41"),
            ("/a b?q=ü&r=%2F", "http://a.example.com/a%20b?q=%C3%BC&r=%2F"),
            ("/100%", "http://a.example.com/100%25"), ("/%zz", "http://a.example.com/%25zz"),
            ("/plain?x=1#f", "http://a.example.com/plain?x=1#f"),
        ]
        for (location, expected) in cases {
            var state = RedirectState(policy: RedirectPolicy(), initial: .get, url: start)
            let action = try state.next(
                method: .get,
                url: start,
                status: .found,
                location: location,
                bodyIsReplayable: true
            )
            guard case .follow(_, let url, _, _) = action else {
                Issue.record("\(location) is followed")
                continue
            }
            #expect(url.absoluteString == expected, "\(location)")
        }
    }

    @Test func detectsCycles() throws {
        var state = RedirectState(policy: RedirectPolicy(), initial: .get, url: start)
        _ = try state.next(method: .get, url: start, status: .movedPermanently, location: "/b", bodyIsReplayable: true)
        let error = #expect(throws: CourierError.self) {
            try state.next(
                method: .get,
                url: URL(string: "http://a.example.com/b")!,
                status: .found,
                location: "/start",
                bodyIsReplayable: true
            )
        }
        #expect(error?.code == .redirectLoop)
    }

    @Test func methodRewritesFollowBrowsers() throws {
        var state = RedirectState(policy: RedirectPolicy(), initial: .post, url: start)
        #expect(
            try state.next(method: .post, url: start, status: .seeOther, location: "/a", bodyIsReplayable: true)
                == .follow(
                    method: .get,
                    url: URL(string: "http://a.example.com/a")!,
                    dropsBody: true,
                    stripsCredentials: false
                )
        )
        var keep = RedirectState(policy: RedirectPolicy(), initial: .put, url: start)
        #expect(
            try keep.next(method: .put, url: start, status: .temporaryRedirect, location: "/b", bodyIsReplayable: true)
                == .follow(
                    method: .put,
                    url: URL(string: "http://a.example.com/b")!,
                    dropsBody: false,
                    stripsCredentials: false
                )
        )
        var stream = RedirectState(policy: RedirectPolicy(), initial: .put, url: start)
        #expect(
            try stream.next(
                method: .put,
                url: start,
                status: .permanentRedirect,
                location: "/b",
                bodyIsReplayable: false
            ) == .deliver
        )
    }

    @Test func crossOriginHopsStripCredentials() throws {
        var state = RedirectState(policy: RedirectPolicy(), initial: .get, url: start)
        for location in ["http://b.example.com/x", "https://a.example.com/start2", "http://a.example.com:8080/x"] {
            guard
                case .follow(_, _, _, let strips) = try state.next(
                    method: .get,
                    url: start,
                    status: .found,
                    location: location,
                    bodyIsReplayable: true
                )
            else {
                Issue.record("not followed")
                continue
            }
            #expect(strips, "\(location)")
        }
    }

    @Test func disabledPolicyAndNonRedirectsDeliver() throws {
        var state = RedirectState(policy: .none, initial: .get, url: start)
        #expect(
            try state.next(method: .get, url: start, status: .found, location: "/x", bodyIsReplayable: true) == .deliver
        )
        var other = RedirectState(policy: RedirectPolicy(), initial: .get, url: start)
        #expect(
            try other.next(method: .get, url: start, status: .notModified, location: "/x", bodyIsReplayable: true)
                == .deliver
        )
        let bad = #expect(throws: CourierError.self) {
            try other.next(
                method: .get,
                url: start,
                status: .found,
                location: "javascript:alert(1)",
                bodyIsReplayable: true
            )
        }
        #expect(bad?.code == .invalidURL)
    }
}

@Suite("Validators")
struct ValidatorTests {
    let request = PreparedRequest(method: .get, url: URL(string: "https://h.example.com/x")!)

    func body(_ json: String, status: HTTPResponse.Status = .ok, type: String = "application/json") -> ResponseBody {
        ResponseBody(status: status, headers: [.contentType: type], data: Data(json.utf8))
    }

    @Test func jsonShapeErrorsNameTheKeyPath() {
        let validator = JSONShapeValidator([
            "code": .number, "data": .object(["items": .array(of: .object(["id": .number]))]),
        ])
        guard case .accept = validator.validate(body(#"{"code":0,"data":{"items":[{"id":1}]}}"#), for: request) else {
            Issue.record("valid body rejected")
            return
        }
        guard
            case .reject(let error) = validator.validate(
                body(#"{"code":0,"data":{"items":[{"id":1},{"id":"x"}]}}"#),
                for: request
            )
        else {
            Issue.record("invalid body accepted")
            return
        }
        #expect((error as? CourierError)?.keyPath == "data.items[1].id")
        #expect((error as? CourierError)?.message == "expected number, found string at data.items[1].id")
        guard case .reject(let missing) = validator.validate(body(#"{"data":{"items":[]}}"#), for: request) else {
            Issue.record("missing key accepted")
            return
        }
        #expect((missing as? CourierError)?.keyPath == "code")
    }

    @Test func optionalShapesAllowNullAndAbsence() {
        let validator = JSONShapeValidator(["note": .optional(.string)])
        for text in [#"{}"#, #"{"note":null}"#, #"{"note":"x"}"#] {
            guard case .accept = validator.validate(body(text), for: request) else {
                Issue.record("\(text) rejected")
                continue
            }
        }
    }

    @Test func statusAndContentTypeValidators() {
        guard
            case .reject(let error) = StatusCodeValidator.successful.validate(
                body(#"{"password":"x"}"#, status: .notFound),
                for: request
            )
        else {
            Issue.record("404 accepted")
            return
        }
        let failure = error as? CourierError
        #expect(failure?.code == .httpStatus && failure?.status?.code == 404)
        #expect(failure?.bodyPreview == #"{"password":"<redacted>"}"#)
        guard
            case .reject = ContentTypeValidator(["application/json"]).validate(
                body("<html>", type: "text/html"),
                for: request
            )
        else {
            Issue.record("html accepted")
            return
        }
        guard
            case .accept = ContentTypeValidator(["text/*"]).validate(
                body("x", type: "text/plain; charset=utf-8"),
                for: request
            )
        else {
            Issue.record("text rejected")
            return
        }
    }

    @Test func businessCodeValidatorDecidesFromTheBody() {
        let validator = BusinessCodeValidator { json in
            switch json["code"]?.intValue {
            case 0: .accept
            case 304: .ignore
            default: .reject(CourierError.validation(json["msg"]?.stringValue ?? "failed", keyPath: "code"))
            }
        }
        guard case .accept = validator.validate(body(#"{"code":0}"#), for: request) else {
            Issue.record("0 rejected")
            return
        }
        guard case .ignore = validator.validate(body(#"{"code":304}"#), for: request) else {
            Issue.record("304 not ignored")
            return
        }
        guard case .reject = validator.validate(body(#"{"code":1001,"msg":"no"}"#), for: request) else {
            Issue.record("1001 accepted")
            return
        }
        guard case .reject = validator.validate(body("not json"), for: request) else {
            Issue.record("text accepted")
            return
        }
    }
}
