// What the examples in the documents use without declaring: Scripts/doc-examples copies into each generated file
// the declarations whose names its block mentions (and every import below). Nothing here runs; it only has to
// compile, so values are computed properties that would trap.
import CoreMetrics

var session: Session { fatalError() }
var socket: WebSocket { fatalError() }
var config: Configuration {
    get { fatalError() }
    set {}
}
var cache: ResponseCache { fatalError() }
var manager: DownloadManager { fatalError() }
var jar: CookieJar { fatalError() }
var token: String { "" }
var pw: String { "" }
var secret: Data { Data() }
var proxyPassword: String { "" }
var hex: String { "" }
var json: Data { Data() }
var cdnRootPEM: String { "" }
var ids: [Int] { [] }
var credentials: Credentials { Credentials() }
var url: URL { fatalError() }
var feedURL: URL { fatalError() }
var localURL: URL { fatalError() }
var log: URL { fatalError() }
var big: URL { fatalError() }
var api: URL { fatalError() }
var photo: URL { fatalError() }
var photos: [URL] { [] }
var target: URL { fatalError() }
var downloads: URL { fatalError() }
var state: URL { fatalError() }
var stateDirectory: URL { fatalError() }
var cacheDirectory: URL { fatalError() }
var file: FileHandle { fatalError() }
var databasePort: Int { 0 }
var metricsFactory: any MetricsFactory { NOOPMetricsHandler.instance }
var setSpinner: @Sendable (Bool) -> Void { { _ in } }
var show: @Sendable (Bool) -> Void { { _ in } }
func render(_ feed: Feed, stale: Bool) {}
struct User: Codable, Sendable {
    var id: Int
    var name: String
}
struct NewUser: Codable, Sendable { var name: String }
struct Item: Codable, Sendable { var id: Int }
struct NewItem: Codable, Sendable { var name: String }
struct Feed: Codable, Sendable { var items: [Item] }
struct Receipt: Codable, Sendable { var total: Int }
struct Credentials: Codable, Sendable {
    var user = "ada"
    var password = ""
}
struct Token: Codable, Sendable {
    var jwt: String
    var isGuest: Bool
}
struct Profile: Codable, Sendable {
    var name: String
    static var guest: Profile { Profile(name: "guest") }
}
struct MyAPIError: Error { init(_ json: ParameterValue) {} }
final class PrometheusCollectorRegistry {}
func PrometheusMetricsFactory(registry: PrometheusCollectorRegistry) -> any MetricsFactory {
    NOOPMetricsHandler.instance
}
var registry: PrometheusCollectorRegistry { PrometheusCollectorRegistry() }
struct Client {
    init(serverURL: URL, transport: CourierClientTransport) {}
    func listPets() async throws -> [String] { [] }
}
var eventsBody: HTTPBody { fatalError() }
var linesBody: HTTPBody { fatalError() }
enum Servers { enum Server1 { static func url() throws -> URL { fatalError() } } }
