import Foundation
import MultipartKit

extension RequestBody {
    /// An `Encodable` value as `multipart/form-data`, written by multipart-kit's `FormDataEncoder` (nested
    /// values as `user[name]`, arrays as `tags[0]`, `tags[1]`, `Data` as a file-like part). For small structured forms;
    /// files of any size go through ``MultipartFormData``, which streams them. An encoding failure surfaces
    /// as ``CourierError/Code/encoding`` before anything is sent.
    public static func multipartForm<Value: Encodable & Sendable>(_ value: Value) -> RequestBody {
        let boundary = MultipartFormData().boundary
        return RequestBody(
            storage: .encoded {
                do {
                    return Data(try FormDataEncoder().encode(value, boundary: boundary).utf8)
                } catch {
                    throw CourierError(
                        code: .encoding,
                        message: "could not encode the form: \(error)",
                        underlying: error
                    )
                }
            },
            contentType: "multipart/form-data; boundary=\(boundary)"
        )
    }
}
