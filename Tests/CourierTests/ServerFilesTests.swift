import CourierTesting
import Testing

@Suite("The test server's deterministic bytes")
struct ServerFilesTests {
    /// The fast copy from the table gives byte for byte what the formula says, across runs, blocks of 256 and
    /// the table's wrap at 251.
    @Test(arguments: [0, 1, 250, 251, 255, 256, 1000, 65_530, 1 << 20, 50_000_001])
    func bytesAreTheFormulasBytes(offset: Int) {
        let bytes = ServerFiles.bytes(offset: offset, count: 3000)
        #expect(bytes == (offset..<offset + 3000).map(ServerFiles.byte(at:)))
        #expect(ServerFiles.bytes(offset: offset, count: 0).isEmpty)
    }
}
