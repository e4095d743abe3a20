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
package replication
