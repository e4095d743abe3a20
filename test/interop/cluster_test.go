package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	recordbatch "github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/testcluster"
)

// startProcessCluster starts n silkworm server child processes on
// 127.0.0.1, each both a broker and a Raft controller, and returns once
// every one of them answers Metadata. Every node starts from the
// documented config/cluster/node<N>.properties with its ports, voters and
// data dir overridden, so the test also checks that those files describe a
// working cluster. overrides are extra server properties for every node;
// they come after the cluster's own and so win over them. Its clients ask
// for metadata at most every 100 ms.
func startProcessCluster(t *testing.T, n int, overrides ...string) *testcluster.Cluster {
	t.Helper()
	return testcluster.Start(t, testcluster.Config{
		Bin:          silkwormBinary(t),
		Nodes:        n,
		Overrides:    overrides,
		StartTimeout: brokerStartTimeout,
		ClientOpts:   []kgo.Opt{kgo.MetadataMinAge(100 * time.Millisecond)},
	})
}

// partitionDetail returns what the cluster's metadata says about one
// partition.
func partitionDetail(ctx context.Context, adm *kadm.Client, topic string, p int32) (kadm.PartitionDetail, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return kadm.PartitionDetail{}, fmt.Errorf("metadata: %w", err)
	}
	td, ok := md.Topics[topic]
	if !ok {
		return kadm.PartitionDetail{}, fmt.Errorf("metadata has no topic %s", topic)
	}
	if td.Err != nil {
		return kadm.PartitionDetail{}, fmt.Errorf("topic %s: %w", topic, td.Err)
	}
	pd, ok := td.Partitions[p]
	if !ok {
		return kadm.PartitionDetail{}, fmt.Errorf("metadata has no partition %s-%d", topic, p)
	}
	if pd.Err != nil {
		return pd, fmt.Errorf("partition %s-%d: %w", topic, p, pd.Err)
	}
	return pd, nil
}

// waitFullISR polls until every partition of topic has a leader and all
// of its replicas in the ISR.
func waitFullISR(ctx context.Context, adm *kadm.Client, topic string, partitions int32, timeout time.Duration) error {
	return testcluster.Poll(timeout, func() error {
		for p := range partitions {
			pd, err := partitionDetail(ctx, adm, topic, p)
			if err != nil {
				return err
			}
			if pd.Leader < 0 || len(pd.ISR) != len(pd.Replicas) {
				return fmt.Errorf("%s-%d: leader %d, replicas %v, isr %v", topic, p, pd.Leader, pd.Replicas, pd.ISR)
			}
		}
		return nil
	})
}

// batchInfo is what identifies a stored record batch: its header fields
// and the CRC over its attributes and records.
type batchInfo struct {
	BaseOffset           int64
	LastOffsetDelta      int32
	RecordCount          int32
	PartitionLeaderEpoch int32
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	CRC                  uint32
}

func (b batchInfo) lastOffset() int64 { return b.BaseOffset + int64(b.LastOffsetDelta) }

// replicaLogDiff compares the batches of several replicas of one partition
// that end below highWatermark, and describes the first difference, or
// returns "" when they are identical. It also reports a replica whose
// batches do not cover [0, highWatermark) without gaps.
func replicaLogDiff(replicas map[int32][]batchInfo, highWatermark int64) string {
	ids := make([]int32, 0, len(replicas))
	for id := range replicas {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	below := func(bs []batchInfo) []batchInfo {
		var out []batchInfo
		for _, b := range bs {
			if b.lastOffset() < highWatermark {
				out = append(out, b)
			}
		}
		return out
	}
	for _, id := range ids {
		next := int64(0)
		for _, b := range below(replicas[id]) {
			if b.BaseOffset != next {
				return fmt.Sprintf("replica %d: batch at offset %d, want %d", id, b.BaseOffset, next)
			}
			next = b.lastOffset() + 1
		}
		if next != highWatermark {
			return fmt.Sprintf("replica %d: batches end at offset %d, high watermark is %d", id, next, highWatermark)
		}
	}
	if len(ids) < 2 {
		return ""
	}
	ref := below(replicas[ids[0]])
	for _, id := range ids[1:] {
		got := below(replicas[id])
		for i := range min(len(ref), len(got)) {
			if ref[i] != got[i] {
				return fmt.Sprintf("batch %d differs: replica %d has %+v, replica %d has %+v", i, ids[0], ref[i], id, got[i])
			}
		}
		if len(ref) != len(got) {
			return fmt.Sprintf("replica %d has %d batches below the high watermark, replica %d has %d", ids[0], len(ref), id, len(got))
		}
	}
	return ""
}

// readReplicaBatches reads the headers of every batch in the segment files
// of one partition replica (<log.dirs>/<topic>-<partition>/*.log), in
// offset order. A torn batch at the end of a segment ends that segment's
// list: the files may be read while the broker appends.
func readReplicaBatches(logDir, topic string, p int32) ([]batchInfo, error) {
	dir := filepath.Join(logDir, fmt.Sprintf("%s-%d", topic, p))
	segments, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, fmt.Errorf("list segments of %s: %w", dir, err)
	}
	slices.Sort(segments) // names are zero-padded base offsets
	var out []batchInfo
	for _, seg := range segments {
		data, err := os.ReadFile(seg)
		if err != nil {
			return nil, fmt.Errorf("read segment: %w", err)
		}
		for pos := int64(0); pos < int64(len(data)); {
			h, err := recordbatch.ParseHeader(data[pos:])
			if err != nil || h.Magic != 2 || h.BatchLength <= 0 || pos+h.Size() > int64(len(data)) {
				break
			}
			out = append(out, batchInfo{
				BaseOffset:           h.BaseOffset,
				LastOffsetDelta:      h.LastOffsetDelta,
				RecordCount:          h.RecordCount,
				PartitionLeaderEpoch: h.PartitionLeaderEpoch,
				ProducerID:           h.ProducerID,
				ProducerEpoch:        h.ProducerEpoch,
				BaseSequence:         h.BaseSequence,
				CRC:                  h.CRC,
			})
			pos += h.Size()
		}
	}
	return out, nil
}
