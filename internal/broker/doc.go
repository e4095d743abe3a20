// Package broker is the Kafka broker: the listener and its connections,
// the bounded request queue served by num.io.threads handlers, and one
// file per Kafka API handler.
//
// Connections. Each connection has a reader goroutine and a writer
// goroutine. The reader reads one frame, decodes it (holding one of
// num.network.threads decode slots), runs a produce request itself when a
// num.io.threads handler slot is free, and otherwise queues the request on
// the broker-wide request queue (capacity queued.max.requests; a full
// queue blocks the reader, which stops reading the socket: backpressure).
// It reads the next frame once the request is released: answered, or for
// an acks=all produce appended and waiting only for the ISR (Kafka's
// muting, relaxed so one client's produces overlap with replication). A
// per-connection sequencer keeps answers in request order. The writer
// sends encoded responses, record data from segment files with sendfile.
//
// Handlers run on the io goroutines. A handler answers exactly once with
// request.respond, possibly later from another goroutine (a long-poll
// fetch parks on partition waiters and answers when the high watermark
// moves or max.wait.ms passes), or not at all for acks=0 produce.
//
// Cluster operations (electleaders.go, alterpartitionreassignments.go,
// listpartitionreassignments.go, autorebalance.go) reach the metadata
// quorum through the clusterOps interface; on a single node localOps
// answers in its place and changes nothing.
//
// Lock order: Broker.mu (topics) before partition locks; the metadata
// store's lock is held while its subscribers run (applyImage), so code
// holding Broker.mu never calls into the store.
package broker
