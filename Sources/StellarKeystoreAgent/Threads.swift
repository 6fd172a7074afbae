import Glibc

/// Detached threads, one per connection: a blocking read holds only its own thread, and Dispatch's pool would
/// cap how many clients can wait at once.
enum Threads {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// False when no thread could be made: the caller must not do the work itself, or one client could hold
    /// up the thread that accepts every other and expires keys.
    static func detach(_ body: @escaping () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let started = pthread_create(&thread, &attributes, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, box)
        guard started == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            return false
        }
        return true
    }
}
