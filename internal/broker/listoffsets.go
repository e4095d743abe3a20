package broker

// ListOffsets: v0-11
//
// v0 (clients before 0.10.1) asks for up to max_num_offsets offsets
// "before" a timestamp and gets a descending list (old_style_offsets), as
// Kafka 2.8's legacyFetchOffsetsBefore answered it: latest (-1) is the
// high watermark followed by the log start offset, earliest (-2) the log
// start offset. Kafka listed one offset per segment (its base offset,
// dated by the segment file's modification time) plus the log end; this
// log exposes no segment list, so the log is taken as one segment: a
// timestamp in the past answers the log start offset when every record is
// at or before it (Kafka: the segment was last modified before it) and
// nothing otherwise, one at or after now answers as latest. For one
// segment, the common case, that is Kafka's answer.
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
			if !p.IsLeader() {
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			epoch := p.LeaderEpoch()
			if r.hdr.APIVersion == 0 {
				if req.ReplicaID >= 0 {
					sp.ErrorCode = kerr.NotLeaderForPartition.Code
				} else if sp.OldStyleOffsets, err = listOffsetsV0(p, rp.Timestamp, rp.MaxNumOffsets); err != nil {
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
			case req.ReplicaID >= 0:
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
			default:
				switch rp.Timestamp {
				case -1:
					sp.Offset = p.HighWatermark()
					if req.IsolationLevel == 1 {
						sp.Offset = p.LastStableOffset()
					}
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
					limit := p.HighWatermark()
					if req.IsolationLevel == 1 {
						limit = p.LastStableOffset()
					}
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
					off, ts, err := b.offsetForTimestamp(p.Log, rp.Timestamp, p.HighWatermark())
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
func listOffsetsV0(p *partition.Partition, ts int64, maxNum int32) ([]int64, error) {
	hw, start := p.HighWatermark(), p.Log.LogStartOffset()
	var offsets []int64
	switch {
	case ts == -1 || ts >= time.Now().UnixMilli():
		offsets = append(offsets, hw)
		if start < hw {
			offsets = append(offsets, start)
		}
	case ts == -2:
		offsets = append(offsets, start)
	default:
		off, maxTS, _, err := p.Log.MaxTimestamp()
		if err != nil {
			return nil, err
		}
		if off < 0 || maxTS <= ts {
			offsets = append(offsets, start) // the only "segment" is older than ts
		}
	}
	if len(offsets) > int(max(maxNum, 0)) {
		offsets = offsets[:max(maxNum, 0)]
	}
	return offsets, nil
}
