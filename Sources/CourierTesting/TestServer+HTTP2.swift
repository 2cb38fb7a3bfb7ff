import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

extension TestServer {
    /// What one accepted connection became once ALPN chose: HTTP/1.1 (raw-byte answers, as without HTTP/2) or
    /// HTTP/2 (a multiplexer of streams, each answered with response parts).
    private typealias Negotiated = NIONegotiatedHTTPVersion<
        NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>,
        (
            any Channel,
            NIOHTTP2Handler.AsyncStreamMultiplexer<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>>
        )
    >

    /// A TLS server that offers `h2` and `http/1.1`. The counter `h2-connections` counts HTTP/2 connections and
    /// `h2-streams` their streams, so a test can see requests multiplexed on one connection; `h2-goaways` counts
    /// the `GOAWAY`s sent after ``TLSOptions/http2StreamsPerConnection`` streams.
    static func startNegotiatingHTTP2(host: String, port: Int, tls: TLSOptions) async throws -> TestServer {
        let state = ServerState()
        let sslContext = try NIOSSLContext(configuration: tls.serverConfiguration())
        let server = try await bootstrap.bind(host: host, port: port) {
            channel -> EventLoopFuture<EventLoopFuture<Negotiated>> in
            do {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            return channel.configureHTTP2AsyncSecureUpgrade(
                http1ConnectionInitializer: { channel in
                    channel.eventLoop.makeCompletedFuture { try http1Connection(on: channel) }
                },
                http2ConnectionInitializer: { channel in
                    channel.configureAsyncHTTP2Pipeline(mode: .server) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                            return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                                wrappingChannelSynchronously: stream
                            )
                        }
                    }.map { multiplexer in (channel, multiplexer) }
                }
            )
        }
        let limit = tls.http2StreamsPerConnection
        return running(server, state: state, isTLS: true) { negotiation in
            await serve(negotiation, state: state, streamsPerConnection: limit)
        }
    }

    private static func serve(
        _ negotiation: EventLoopFuture<Negotiated>,
        state: ServerState,
        streamsPerConnection: Int?
    ) async {
        guard let negotiated = try? await negotiation.get() else { return }  // a failed handshake
        switch negotiated {
        case .http1_1(let connection):
            state.accept(connection)
            await ConnectionHandler(state: state).run(connection)
        case .http2(let (channel, multiplexer)):
            state.add("h2-connections", 1)
            var streams = 0
            await withDiscardingTaskGroup { group in
                do {
                    for try await stream in multiplexer.inbound {
                        state.add("h2-streams", 1)
                        group.addTask { await ConnectionHandler(state: state).run(stream: stream) }
                        streams += 1
                        if let streamsPerConnection, streams >= streamsPerConnection {
                            await goAway(after: stream.channel, on: channel, state: state)
                            break
                        }
                    }
                } catch {}
            }
            try? await channel.close()
        }
    }

    /// Sends `GOAWAY` on `connection`, naming `stream` as the last one the server processes.
    private static func goAway(after stream: any Channel, on connection: any Channel, state: ServerState) async {
        guard let last = try? await stream.getOption(HTTP2StreamChannelOptions.streamID).get() else { return }
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: last, errorCode: .noError, opaqueData: nil)
        )
        try? await connection.writeAndFlush(frame).get()
        state.add("h2-goaways", 1)
    }
}
