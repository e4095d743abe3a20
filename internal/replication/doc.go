// Package replication is the follower side of Kafka's data replication:
// replica fetchers that pull record batches from partition leaders with
// the Fetch API and this broker's replica id, append them with their
// offsets and leader epochs, and follow the leader's high watermark.
//
// Before fetching for a new leader epoch, a follower truncates its log by
// OffsetForLeaderEpoch (KIP-101, KIP-279), never by its own high
// watermark: it asks the leader where its latest epoch ends and truncates
// to that point, repeating with earlier epochs until the logs agree.
//
// A Manager runs num.replica.fetchers fetchers per source broker; each
// partition is assigned to one fetcher by hash. A fetcher talks to its
// leader over the Kafka protocol on one connection of its own (conn.go:
// PLAINTEXT, TLS, SASL as the inter-broker listener says), writing each
// request and reading its response on the fetcher's goroutine, with no
// client goroutines in between. Its Fetch requests (v18, encoded here
// without allocating per partition) carry each partition's log end offset
// and the high watermark the replica knows (KIP-1166), so the leader
// answers a parked fetch as soon as data arrives, and soon after the high
// watermark moves when no data comes to carry it. They are sent in an
// incremental fetch session with the leader (KIP-227, session.go), as
// Kafka's replica fetchers do: after the first, full fetch a request lists
// only the partitions whose log end, log start, leader epoch or known high
// watermark changed, and the answer only those with news. The response is read
// into a buffer reused from fetch to fetch and only the partition headers
// are parsed: record batches are checked (CRC) and appended straight from
// it. Nothing here knows how the leader stores data.
//
// The follower side of Kafka's replication throttle is a [Quota] the broker
// installs with [Manager.SetQuota] (quota.go): while the bytes fetched for
// throttled replicas (follower.replication.throttled.replicas) exceed
// follower.replication.throttled.rate, a fetcher leaves those partitions
// out of its fetches (Kafka's shouldFollowerThrottle) and fetches the
// others as usual; with nothing left to fetch it waits
// replica.fetch.backoff.ms.
package replication
