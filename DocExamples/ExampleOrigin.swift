/// The origin the documents' examples call `https://api.example.com`. `Scripts/doc-examples` writes every such
/// URL as this value, so a test can run an example against the loopback server by binding it
/// (`ExampleOrigin.$current.withValue(server.baseURL.absoluteString) { try await runREADME_1() }`).
public enum ExampleOrigin {
    /// `https://api.example.com` unless a test binds another origin for the task.
    @TaskLocal public static var current = "https://api.example.com"
}
