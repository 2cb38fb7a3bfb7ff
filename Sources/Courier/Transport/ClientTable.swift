/// A transport's clients by key, the few used last kept in front: comparing a key with a few of them costs less
/// than hashing it (two durations, a proxy, a version and a lane), and a session nearly always uses one key per
/// lane. The front is bounded, so a lookup scans at most ``frontLimit`` keys before the dictionary.
struct ClientTable<Key: Hashable, Client> {
    private var byKey: [Key: Client] = [:]
    private var front: [(key: Key, client: Client)] = []
    let frontLimit: Int

    init(frontLimit: Int) {
        self.frontLimit = max(1, frontLimit)
    }

    /// Every client.
    var all: [Client] { Array(byKey.values) }

    /// The client for `key`, made with `make` (and kept) the first time.
    mutating func client(for key: Key, make: () throws -> Client) rethrows -> Client {
        if let hit = front.first(where: { $0.key == key }) { return hit.client }
        let client: Client
        if let known = byKey[key] {
            client = known
        } else {
            client = try make()
            byKey[key] = client
        }
        if front.count == frontLimit { front.removeFirst() }
        front.append((key, client))
        return client
    }

    mutating func removeAll() {
        byKey.removeAll()
        front.removeAll()
    }
}
