import CompressNIO
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The Public Suffix List (https://publicsuffix.org): the domains under which anyone may register a name, such as
/// `co.uk` or `github.io`. A cookie may not be set for one of them, or every site under it would receive it
/// (RFC 6265 §5.3, step 5), which is what curl with libpsl and every browser refuse.
///
/// The system's copy (Debian's `publicsuffix` package, updated with the system) is read when present; otherwise
/// the copy embedded in Courier (see `Scripts/public-suffix-list`), as OkHttp does. Rules are matched as the list
/// spells them; an internationalised rule matches the host in the same (Unicode) form.
struct PublicSuffixList: Sendable {
    private var rules: Set<String> = []
    /// `*.ck` is kept as `ck`: every label under it is a public suffix.
    private var wildcards: Set<String> = []
    /// `!www.ck` is kept as `www.ck`: not a public suffix, whatever a wildcard says.
    private var exceptions: Set<String> = []

    /// Where a system keeps the list.
    static let systemPaths = ["/usr/share/publicsuffix/public_suffix_list.dat"]

    /// The list in use: the system's when it can be read, the embedded one otherwise.
    static let shared: PublicSuffixList = {
        for path in systemPaths {
            if let data = RegularFile.contents(of: path, maximumSize: 16 << 20),
                let list = PublicSuffixList(String(decoding: data, as: UTF8.self))
            {
                return list
            }
        }
        return embedded
    }()

    /// The copy compiled into Courier.
    static let embedded: PublicSuffixList = {
        guard let compressed = Data(base64Encoded: embeddedRules) else { return PublicSuffixList() }
        var buffer = ByteBuffer(bytes: compressed)
        guard let text = try? buffer.decompress(with: .gzip()) else { return PublicSuffixList() }
        return PublicSuffixList(String(buffer: text)) ?? PublicSuffixList()
    }()

    private init() {}

    /// The list in the file format of publicsuffix.org: one rule per line, `//` comments, the rule ending at the first
    /// white space. `nil` when it holds no rule.
    init?(_ text: String) {
        for line in text.split(whereSeparator: \.isNewline) {
            guard let rule = line.split(whereSeparator: \.isWhitespace).first, !rule.hasPrefix("//") else { continue }
            let lowered = rule.lowercased()
            if lowered.hasPrefix("!") {
                exceptions.insert(String(lowered.dropFirst()))
            } else if lowered.hasPrefix("*.") {
                wildcards.insert(String(lowered.dropFirst(2)))
            } else {
                rules.insert(lowered)
            }
        }
        if rules.isEmpty && wildcards.isEmpty { return nil }
    }

    /// Whether `domain` (lowercase, no leading dot) is a public suffix: a rule names it, or a wildcard names its
    /// parent, and no exception names it; a single label (a top-level domain) is one by the list's default rule.
    func isPublicSuffix(_ domain: String) -> Bool {
        guard !domain.isEmpty, !exceptions.contains(domain) else { return false }
        if rules.contains(domain) { return true }
        guard let dot = domain.firstIndex(of: ".") else { return true }
        return wildcards.contains(String(domain[domain.index(after: dot)...]))
    }
}
