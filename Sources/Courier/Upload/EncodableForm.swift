#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RequestBody {
    /// An `Encodable` value as `multipart/form-data`, one text part per value (nested values as `user[name]`,
    /// arrays as `tags[0]`, `tags[1]`, `nil` left out, `Data` as a part of its bytes), as multipart-kit's
    /// `FormDataEncoder` writes it. For small structured forms; files of any size go through
    /// ``MultipartFormData``, which streams them. An encoding failure surfaces as ``CourierError/Code/encoding``
    /// (a name with a control character as ``CourierError/Code/invalidHeader``) before anything is sent.
    public static func multipartForm<Value: Encodable & Sendable>(_ value: Value) -> RequestBody {
        let boundary = MultipartFormData().boundary
        return RequestBody(
            storage: .encoded {
                do {
                    var form = MultipartFormData(boundary: boundary)
                    for field in try FormFieldsEncoder().fields(of: value) {
                        try form.append(data: field.content, name: field.name)
                    }
                    return form.bytesInMemory ?? Data()
                } catch let error as CourierError {
                    throw error
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
