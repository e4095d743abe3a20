package check

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Verify reads back every topic named by acked (Read) and compares what it
// read with acked (Compare). opts configure the read-back client: at least
// kgo.SeedBrokers, plus TLS or SASL options if the cluster needs them. An
// error means the read-back failed (the context ended before every
// partition was read, a topic is unknown); damage is in the Report.
func Verify(ctx context.Context, acked []Record, opts ...kgo.Opt) (*Report, error) {
	var topics []string
	for _, a := range acked {
		if !slices.Contains(topics, a.Topic) {
			topics = append(topics, a.Topic)
		}
	}
	logs, err := Read(ctx, topics, opts...)
	if err != nil {
		return nil, err
	}
	return Compare(acked, logs), nil
}

// Read consumes every partition of topics, read_uncommitted, from its log
// start offset up to its high watermark as listed when Read starts, with
// a franz-go client made from opts (at least kgo.SeedBrokers). Fetch
// errors are retried until ctx ends; then Read returns an error that says
// how far each unfinished partition got. The logs are ordered by topic and
// partition.
func Read(ctx context.Context, topics []string, opts ...kgo.Opt) ([]Log, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	adm, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("check: new client: %w", err)
	}
	starts, ends, err := listOffsets(ctx, kadm.NewClient(adm), topics)
	adm.Close()
	if err != nil {
		return nil, err
	}

	logs := map[topicPartition]*Log{}
	consume := map[string]map[int32]kgo.Offset{}
	next := map[topicPartition]int64{} // offset after the last record read
	ends.Each(func(e kadm.ListedOffset) {
		tp := topicPartition{e.Topic, e.Partition}
		start, _ := starts.Lookup(e.Topic, e.Partition)
		logs[tp] = &Log{Topic: e.Topic, Partition: e.Partition, LogStartOffset: start.Offset, HighWatermark: e.Offset}
		next[tp] = start.Offset
		if start.Offset < e.Offset {
			if consume[e.Topic] == nil {
				consume[e.Topic] = map[int32]kgo.Offset{}
			}
			consume[e.Topic][e.Partition] = kgo.NewOffset().At(start.Offset)
		}
	})

	if len(consume) > 0 {
		if err := readLogs(ctx, logs, next, consume, opts); err != nil {
			return nil, err
		}
	}
	out := make([]Log, 0, len(logs))
	for _, l := range logs {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Log) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out, nil
}

// listOffsets lists the log start offsets and high watermarks of every
// partition of topics, retrying until ctx ends: right after a fault a
// partition may be without a leader for a moment.
func listOffsets(ctx context.Context, adm *kadm.Client, topics []string) (starts, ends kadm.ListedOffsets, err error) {
	for {
		starts, err = adm.ListStartOffsets(ctx, topics...)
		if err == nil {
			err = starts.Error()
		}
		if err == nil {
			ends, err = adm.ListEndOffsets(ctx, topics...)
			if err == nil {
				err = ends.Error()
			}
		}
		if err == nil {
			return starts, ends, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("check: list offsets of %s: %w (gave up: %w)", strings.Join(topics, ", "), err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readLogs consumes the partitions in consume until each has reached its
// high watermark, appending to logs and advancing next.
func readLogs(ctx context.Context, logs map[topicPartition]*Log, next map[topicPartition]int64, consume map[string]map[int32]kgo.Offset, opts []kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.FetchMaxWait(250 * time.Millisecond),
		kgo.MetadataMinAge(250 * time.Millisecond),
	}, append(slices.Clip(opts),
		kgo.ConsumePartitions(consume),
		// Control records take offsets too: keep them so that a
		// partition ending in a transaction marker is seen to its end.
		kgo.KeepControlRecords(),
	)...)...)
	if err != nil {
		return fmt.Errorf("check: new client: %w", err)
	}
	defer cl.Close()

	done := func() bool {
		for tp, l := range logs {
			if next[tp] < l.HighWatermark {
				return false
			}
		}
		return true
	}
	lastErr := map[topicPartition]error{}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return readErr(ctx, logs, next, lastErr)
		}
		fs.EachError(func(topic string, p int32, err error) {
			lastErr[topicPartition{topic, p}] = err
		})
		fs.EachRecord(func(r *kgo.Record) {
			tp := topicPartition{r.Topic, r.Partition}
			l := logs[tp]
			if l == nil || r.Offset >= l.HighWatermark || r.Offset < next[tp] {
				return
			}
			next[tp] = r.Offset + 1
			if r.Attrs.IsControl() {
				return
			}
			l.Records = append(l.Records, Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value})
		})
	}
	return nil
}

// readErr describes the partitions a read-back did not finish.
func readErr(ctx context.Context, logs map[topicPartition]*Log, next map[topicPartition]int64, lastErr map[topicPartition]error) error {
	var unfinished []string
	for tp, l := range logs {
		if next[tp] >= l.HighWatermark {
			continue
		}
		s := fmt.Sprintf("%s-%d at offset %d of %d", tp.topic, tp.partition, next[tp], l.HighWatermark)
		if err := lastErr[tp]; err != nil {
			s += fmt.Sprintf(" (last fetch error: %v)", err)
		}
		unfinished = append(unfinished, s)
	}
	slices.Sort(unfinished)
	return fmt.Errorf("check: read back: %w: unfinished %s", context.Cause(ctx), strings.Join(unfinished, "; "))
}
