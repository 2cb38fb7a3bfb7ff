#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a request's body parameters are written: the request serializer choice of WYNetwork.
public enum ParameterEncoding: String, Sendable, Hashable {
    /// `application/x-www-form-urlencoded`, nested values as `a[b]=c` and arrays as `a[]=1`.
    case form
    /// `application/json`.
    case json
}

/// Percent-encodes parameters the way servers built on Rails, PHP and Express read them.
package enum FormEncoding {
    /// `a=1&b=x%20y`, keys sorted so the output is stable.
    static func encode(_ parameters: Parameters) -> String {
        pairs(parameters).joined(separator: "&")
    }

    /// The escaped `key=value` pairs of `parameters`, keys sorted.
    static func pairs(_ parameters: Parameters) -> [String] {
        var pairs: [(String, String)] = []
        for key in parameters.keys.sorted() {
            flatten(key: key, value: parameters[key] ?? .null, into: &pairs)
        }
        return pairs.map { "\(escape($0.0))=\(escape($0.1))" }
    }

    package static func escape(_ string: String) -> String {
        PercentEncoding.encode(string, keeping: PercentEncoding.isUnreserved)
    }

    private static func flatten(key: String, value: ParameterValue, into pairs: inout [(String, String)]) {
        switch value {
        case .array(let values):
            for element in values { flatten(key: key + "[]", value: element, into: &pairs) }
        case .object(let object):
            for nested in object.keys.sorted() {
                flatten(key: "\(key)[\(nested)]", value: object[nested] ?? .null, into: &pairs)
            }
        default:
            pairs.append((key, value.description))
        }
    }
}
