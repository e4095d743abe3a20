package broker

// ListOffsets: v0-11
//
// v0 (clients before 0.10.1) asks for up to max_num_offsets offsets
// "before" a timestamp and gets a descending list (old_style_offsets), as
// Kafka 2.8's fetchOffsetsBefore answered it: every segment's base offset
// dated by its file's modification time, plus the log end dated now when
// the active segment has data; latest (-1) starts from the newest entry,
// earliest (-2) is the oldest, a timestamp starts from the newest entry
// dated at or before it; up to max_num_offsets entries from there, newest
// first. For a consumer (replica id -1) the offsets above the high
// watermark give way to the high watermark, as in Kafka's
// legacyFetchOffsetsForTimestamp.
//
// Timestamps: -1 latest (the high watermark, or the last stable offset
// under read_committed), -2
// earliest (log start offset), -3 max timestamp (v7+: as Kafka 3.8+,
// KAFKA-16310, the offset of the first record holding the largest timestamp,
// with the leader epoch of its batch, or -1 when that record is not below the
// high watermark, or the last stable offset under read_committed), -4
// earliest local
// (v8+, the log start offset: no tiered storage), -5 latest tiered (v9+,
// KIP-1005) and -6 earliest pending upload (v11+, KIP-1023): with no remote
// storage Kafka answers offset, timestamp and leader epoch -1 without error.
// A timestamp >= 0 finds
// the first record whose timestamp is at or after it, using the time index
// and then the records of the one batch found. The v10 TimeoutMillis bounds
// remote-storage lookups, which never happen here.
//
// Replica ids, as Kafka's ReplicaManager.fetchOffset: -1 is a consumer,
// bounded by the high watermark (or last stable offset); any other id is
// served up to the log end with the isolation level ignored (kafka-python's
// consumer sends 0), by the leader, or with -2 (debugging) by any replica.
//
// As Kafka: a partition named twice in one request gets INVALID_REQUEST
// for each of its entries; a negative timestamp that is not a sentinel, or
// one newer than the request's version (Kafka's
// timestampMinSupportedVersion), gets UNSUPPORTED_VERSION; an error or an
// offset not found answers timestamp, offset and leader epoch -1.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/storage"
)

func init() { register(kmsg.ListOffsets, 0, 11, handleListOffsets) }

func handleListOffsets(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	type topicPartition struct {
		topic string
		part  int32
	}
	seen := map[topicPartition]int{}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			seen[topicPartition{rt.Topic, rp.Partition}]++
		}
	}
	var err error
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		ts := b.topic(rt.Topic)
		authorized := b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Timestamp, sp.Offset = -1, -1
			if !authorized {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			if seen[topicPartition{rt.Topic, rp.Partition}] > 1 {
				sp.ErrorCode = kerr.InvalidRequest.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			if listOffsetsTimestampUnsupported(rp.Timestamp, r.hdr.APIVersion) {
				sp.ErrorCode = kerr.UnsupportedVersion.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			if ts == nil || rp.Partition < 0 || int(rp.Partition) >= len(ts.partitions) {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			p := ts.partitions[rp.Partition]
			if p == nil || !p.IsLeader() && req.ReplicaID != -2 {
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			epoch := p.LeaderEpoch()
			if r.hdr.APIVersion == 0 {
				if sp.OldStyleOffsets, err = listOffsetsV0(p, rp.Timestamp, rp.MaxNumOffsets, req.ReplicaID == -1); err != nil {
					sp.ErrorCode = errorCode(err)
				}
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			switch {
			case rp.CurrentLeaderEpoch >= 0 && rp.CurrentLeaderEpoch < epoch:
				sp.ErrorCode = kerr.FencedLeaderEpoch.Code
			case rp.CurrentLeaderEpoch > epoch:
				sp.ErrorCode = kerr.UnknownLeaderEpoch.Code
			default:
				limit := lastFetchableOffset(p, req.ReplicaID, req.IsolationLevel)
				switch rp.Timestamp {
				case -1:
					sp.Offset = limit
				case -2, -4:
					sp.Offset = p.Log.LogStartOffset()
				case -5, -6:
					// No tiered storage: nothing uploaded, nothing pending.
					st.Partitions = append(st.Partitions, sp)
					continue
				case -3:
					// KAFKA-16310: the first record holding the largest
					// timestamp, with its batch's leader epoch, if a
					// consumer may read it.
					off, ts, batchEpoch, err := p.Log.MaxTimestamp()
					switch {
					case err != nil:
						sp.ErrorCode = errorCode(err)
					case off >= 0 && off < limit:
						sp.Offset, sp.Timestamp, sp.LeaderEpoch = off, ts, batchEpoch
					}
					st.Partitions = append(st.Partitions, sp)
					continue
				default:
					off, ts, err := b.offsetForTimestamp(p.Log, rp.Timestamp, limit)
					if err != nil {
						sp.ErrorCode = errorCode(err)
						break
					}
					sp.Offset, sp.Timestamp = off, ts
				}
				if sp.ErrorCode == 0 && sp.Offset >= 0 {
					sp.LeaderEpoch = epoch
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	r.respond(resp)
}

// lastFetchableOffset bounds what ListOffsets answers, as Kafka's
// Partition.fetchOffsetForTimestamp: a consumer (replica id -1) gets no
// further than the high watermark, or the last stable offset with
// read_committed; any other replica id (a follower's or a client's that
// sends its own, as kafka-python's consumer sends 0; -2 debugging) gets the
// log end, the isolation level ignored.
func lastFetchableOffset(p *partition.Partition, replicaID int32, isolation int8) int64 {
	switch {
	case replicaID != -1:
		return p.Log.LogEndOffset()
	case isolation == 1:
		return p.LastStableOffset()
	}
	return p.HighWatermark()
}

// listOffsetsMinVersion is the first ListOffsets version that knows each
// negative timestamp (Kafka's timestampMinSupportedVersion).
var listOffsetsMinVersion = map[int64]int16{-1: 1, -2: 1, -3: 7, -4: 8, -5: 9, -6: 11}

// listOffsetsTimestampUnsupported reports whether a negative timestamp is
// no sentinel, or one the request's version does not have.
func listOffsetsTimestampUnsupported(ts int64, version int16) bool {
	if ts >= 0 || version == 0 { // v0 takes any timestamp (listOffsetsV0)
		return false
	}
	first, ok := listOffsetsMinVersion[ts]
	return !ok || version < first
}

// offsetForTimestamp finds the first record at or after ts below hw:
// the time index gives the batch, its records give the exact offset.
func (b *Broker) offsetForTimestamp(l *storage.Log, ts, hw int64) (int64, int64, error) {
	base, maxTS, found, err := l.OffsetForTimestamp(ts)
	if err != nil || !found || base >= hw {
		return -1, -1, err
	}
	res, err := l.Read(base, 1, l.EndPosition(), true)
	if err != nil {
		return -1, -1, err
	}
	batch := make([]byte, res.Size)
	if _, err := res.File.ReadAt(batch, res.Pos); err != nil {
		return -1, -1, err
	}
	h, err := record.ParseHeader(batch)
	if err != nil {
		return -1, -1, err
	}
	if h.Attributes&record.AttrTimestampLogAppend != 0 {
		return h.BaseOffset, h.MaxTimestamp, nil
	}
	recs, err := record.Records(batch, maxUncompressed(int32(b.cfg.MessageMaxBytes)))
	if err != nil {
		return base, maxTS, nil
	}
	for _, rec := range recs {
		t := h.FirstTimestamp + rec.TimestampDelta
		if t >= ts {
			return h.BaseOffset + int64(rec.OffsetDelta), t, nil
		}
	}
	return base, maxTS, nil
}

// listOffsetsV0 answers a ListOffsets v0 partition: up to maxNum offsets
// before timestamp ts, newest first (see the header).
func listOffsetsV0(p *partition.Partition, ts int64, maxNum int32, consumer bool) ([]int64, error) {
	segs, activeHasData := p.Log.SegmentTimes()
	type entry struct{ offset, time int64 }
	entries := make([]entry, 0, len(segs)+1)
	for _, s := range segs {
		entries = append(entries, entry{s.BaseOffset, s.LastModified})
	}
	if activeHasData {
		entries = append(entries, entry{p.Log.LogEndOffset(), time.Now().UnixMilli()})
	}
	from := len(entries) - 1
	switch ts {
	case -1:
	case -2:
		from = min(0, from)
	default:
		for from >= 0 && entries[from].time > ts {
			from--
		}
	}
	n := min(int(max(maxNum, 0)), from+1)
	offsets := make([]int64, 0, n)
	for i := from; i > from-n; i-- {
		offsets = append(offsets, entries[i].offset)
	}
	if consumer {
		// A consumer reads no further than the high watermark.
		hw := p.HighWatermark()
		i := 0
		for i < len(offsets) && offsets[i] > hw {
			i++
		}
		if i > 0 {
			offsets = append([]int64{hw}, offsets[i:]...)
		}
	}
	return offsets, nil
}
