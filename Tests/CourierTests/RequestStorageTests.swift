import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// A request's fields live in one copy-on-write object: copies share it until one changes a field, and a change
/// never reaches another copy.
@Suite("Request storage")
struct RequestStorageTests {
    @Test func copiesShareTheStorageUntilOneChangesAField() {
        let original = Request<Data>.get("/users/1").tag("first")
        var copy = original
        #expect(copy.storageIdentity == original.storageIdentity)
        copy.tag = "second"
        copy.headers[.accept] = "text/plain"
        #expect(copy.storageIdentity != original.storageIdentity)
        #expect(original.tag == "first" && original.headers[.accept] == nil)
        #expect(copy.tag == "second" && copy.headers[.accept] == "text/plain")
        #expect(copy.path == "/users/1", "the fields not changed are copied")
    }

    @Test func aRequestThatHoldsItsStorageAloneChangesItInPlace() {
        var request = Request<Data>.get("/a")
        let before = request.storageIdentity
        request.path = "/b"
        request.priority = .high
        request.accessories = []
        #expect(request.storageIdentity == before)
        #expect(request.path == "/b" && request.priority == .high)
    }

    @Test func erasingAndChangingTheDecodingShareTheStorage() {
        let request = Request<Data>.post("/items", body: .bytes(Data("x".utf8))).timeout(.seconds(3))
        let erased = request.erased
        let text = request.decoding(String.self)
        #expect(erased.storageIdentity == request.storageIdentity)
        #expect(text.storageIdentity == request.storageIdentity)
        #expect(erased.method == .post && erased.timeouts.total == .seconds(3))
    }
}
