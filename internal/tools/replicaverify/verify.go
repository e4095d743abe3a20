package replicaverify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"
)

// dateLayout is Kafka's "yyyy-MM-dd HH:mm:ss,SSS" in local time.
const dateLayout = "2006-01-02 15:04:05,000"

// errOffsetMismatch ends the run: two replicas hold batches that end at
// different offsets, which Kafka's tool treats as fatal.
var errOffsetMismatch = errors.New("replicas disagree on batch offsets")

// topicPartition names a partition; String is Kafka's TopicPartition
// form, "topic-0".
type topicPartition struct {
	topic     string
	partition int32
}

func (tp topicPartition) String() string { return fmt.Sprintf("%s-%d", tp.topic, tp.partition) }

// fetched is what one replica returned for one partition in a round.
type fetched struct {
	highWatermark int64  // -1 when the replica answered with an error
	batches       []byte // the record batches, possibly ending in a partial one
}

// batchInfo is what the verifier compares of a record batch.
type batchInfo struct {
	lastOffset int64
	nextOffset int64
	checksum   uint32
}

// batches parses the record batches (v2, or legacy v0/v1 message sets,
// shallowly) in b, stopping at a partial batch at the end.
func batches(b []byte) []batchInfo {
	var out []batchInfo
	for len(b) >= 12 {
		base := int64(binary.BigEndian.Uint64(b))
		size := int(int32(binary.BigEndian.Uint32(b[8:])))
		if size < 0 || 12+size > len(b) || size < 10 {
			break
		}
		batch := b[:12+size]
		b = b[12+size:]
		magic := batch[16]
		if magic >= 2 {
			if len(batch) < 27 {
				break
			}
			last := base + int64(int32(binary.BigEndian.Uint32(batch[23:])))
			out = append(out, batchInfo{lastOffset: last, nextOffset: last + 1, checksum: binary.BigEndian.Uint32(batch[17:])})
			continue
		}
		// Legacy: offset, size, crc, magic ...; the shallow entry's
		// offset is its last.
		out = append(out, batchInfo{lastOffset: base, nextOffset: base + 1, checksum: binary.BigEndian.Uint32(batch[12:])})
	}
	return out
}

// verifier is Kafka's ReplicaBuffer: the fetch offset of each partition
// (verified up to there) and the replicas' answers of the current round.
// It is not safe for concurrent use.
type verifier struct {
	out            io.Writer
	now            func() time.Time
	reportInterval time.Duration
	lastReport     time.Time

	expected map[topicPartition]int // replicas per partition
	offsets  map[topicPartition]int64
	round    map[topicPartition]map[int32]fetched
}

func newVerifier(out io.Writer, now func() time.Time, reportInterval time.Duration,
	expected map[topicPartition]int, initial map[topicPartition]int64) *verifier {
	v := &verifier{out: out, now: now, reportInterval: reportInterval, lastReport: now(),
		expected: expected, offsets: map[topicPartition]int64{}, round: map[topicPartition]map[int32]fetched{}}
	for tp := range expected {
		v.offsets[tp] = initial[tp]
		v.round[tp] = map[int32]fetched{}
	}
	return v
}

// offset is where the next fetch of tp starts.
func (v *verifier) offset(tp topicPartition) int64 { return v.offsets[tp] }

// add records replica's answer for tp in this round.
func (v *verifier) add(tp topicPartition, replica int32, f fetched) { v.round[tp][replica] = f }

func (v *verifier) stamp(t time.Time) string { return t.Format(dateLayout) }

// verify compares the round's answers partition by partition, one batch
// of every replica at a time, up to the high watermarks; moves the fetch
// offsets past what all replicas agree on; prints a checksum mismatch as
// Kafka does; and prints the max lag when the report interval has passed.
// It returns errOffsetMismatch, after printing Kafka's line, when two
// replicas' batches end at different offsets.
func (v *verifier) verify() error {
	maxLag, offsetWithMaxLag := int64(-1), int64(-1)
	maxLagPartition := "null"
	tps := make([]topicPartition, 0, len(v.round))
	for tp := range v.round {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].topic != tps[j].topic {
			return tps[i].topic < tps[j].topic
		}
		return tps[i].partition < tps[j].partition
	})
	for _, tp := range tps {
		answers := v.round[tp]
		replicas := make([]int32, 0, len(answers))
		for r := range answers {
			replicas = append(replicas, r)
		}
		sort.Slice(replicas, func(i, j int) bool { return replicas[i] < replicas[j] })
		iters := make(map[int32][]batchInfo, len(replicas))
		maxHW := int64(-1)
		for _, r := range replicas {
			iters[r] = batches(answers[r].batches)
			maxHW = max(maxHW, answers[r].highWatermark)
		}
		inAll := len(replicas) > 0
		for inAll {
			var first *batchInfo
			firstReplica := int32(-1)
			for _, r := range replicas {
				if len(iters[r]) == 0 {
					inAll = false
					continue
				}
				b := iters[r][0]
				iters[r] = iters[r][1:]
				if b.lastOffset >= answers[r].highWatermark {
					inAll = false // only verify up to the high watermark
					continue
				}
				if first == nil {
					first, firstReplica = &b, r
					continue
				}
				if first.lastOffset != b.lastOffset {
					fmt.Fprintf(v.out, "%s: partition %s: replica %d's offset %d doesn't match replica %d's offset %d\n",
						v.stamp(v.now()), tp, firstReplica, first.lastOffset, r, b.lastOffset)
					return fmt.Errorf("partition %s: %w", tp, errOffsetMismatch)
				}
				if first.checksum != b.checksum {
					fmt.Fprintf(v.out, "%s: partition %s has unmatched checksum at offset %d; replica %d's checksum %d; replica %d's checksum %d\n",
						v.stamp(v.now()), tp, b.lastOffset, firstReplica, first.checksum, r, b.checksum)
				}
			}
			if inAll {
				next := int64(-1)
				if first != nil {
					next = first.nextOffset
				}
				v.offsets[tp] = next
			}
		}
		if lag := maxHW - v.offsets[tp]; lag > maxLag {
			maxLag, offsetWithMaxLag, maxLagPartition = lag, v.offsets[tp], tp.String()
		}
		clear(answers)
	}
	if now := v.now(); now.UnixMilli()-v.lastReport.UnixMilli() > v.reportInterval.Milliseconds() {
		fmt.Fprintf(v.out, "%s: max lag is %d for partition %s at offset %d among %d partitions\n",
			v.stamp(now), maxLag, maxLagPartition, offsetWithMaxLag, len(v.round))
		v.lastReport = now
	}
	return nil
}
