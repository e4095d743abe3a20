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
// partition is assigned to one fetcher by hash. Fetchers talk to leaders
// with franz-go over the Kafka protocol; nothing here knows how the
// leader stores data.
//
// The follower side of Kafka's replication throttle is a [Quota] the broker
// installs with [Manager.SetQuota] (quota.go): while the bytes fetched for
// throttled replicas (follower.replication.throttled.replicas) exceed
// follower.replication.throttled.rate, a fetcher leaves those partitions
// out of its fetches (Kafka's shouldFollowerThrottle) and fetches the
// others as usual; with nothing left to fetch it waits
// replica.fetch.backoff.ms.
package replication
