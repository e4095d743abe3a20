package interop

// KIP-932 share groups through the broker binary with franz-go's share
// consumer (the only client here that has one): every record is
// acknowledged, and a kill -9 of the broker in the middle loses no
// acknowledgement (the share-partition state is replayed from
// __share_group_state at start).

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestShareGroupSurvivesBrokerKill(t *testing.T) {
	b := startBroker(t, "offsets.topic.num.partitions=1", "share.coordinator.state.topic.num.partitions=1",
		"group.share.min.record.lock.duration.ms=1000")
	if !b.CanRestart() {
		t.Skip("the broker under test cannot be restarted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "share-jobs", 2, 1
	create.Topics = append(create.Topics, ct)
	if _, err := create.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	const per = 200
	for p := int32(0); p < 2; p++ {
		var rs []*kgo.Record
		for i := 0; i < per; i++ {
			rs = append(rs, &kgo.Record{Topic: "share-jobs", Partition: p, Value: []byte(fmt.Sprintf("job-%d-%d", p, i))})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "workers"
	for _, kv := range [][2]string{{"share.auto.offset.reset", "earliest"}, {"share.record.lock.duration.ms", "3000"}} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kv[0], kmsg.StringPtr(kv[1])
		res.Configs = append(res.Configs, c)
	}
	alter.Resources = append(alter.Resources, res)
	if resp, err := alter.RequestWith(ctx, cl); err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("set group configs: %v %+v", err, resp)
	}

	var (
		mu   sync.Mutex
		seen = map[string]int{}
	)
	consumeUntil := func(want int, finished func() error) {
		var wg sync.WaitGroup
		done := make(chan struct{})
		var once sync.Once
		for i := 0; i < 2; i++ {
			sc, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ShareGroup("workers"), kgo.ConsumeTopics("share-jobs"),
				kgo.FetchMaxWait(300*time.Millisecond), kgo.ShareMaxRecords(25))
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer sc.Close()
				for {
					select {
					case <-done:
						return
					case <-ctx.Done():
						return
					default:
					}
					pctx, pcancel := context.WithTimeout(ctx, time.Second)
					fs := sc.PollFetches(pctx)
					pcancel()
					fs.EachRecord(func(r *kgo.Record) {
						r.Ack(kgo.AckAccept)
						mu.Lock()
						seen[string(r.Value)]++
						mu.Unlock()
					})
					sc.FlushAcks(ctx)
				}
			}()
		}
		for ctx.Err() == nil {
			mu.Lock()
			n := len(seen)
			mu.Unlock()
			if n >= want && (finished == nil || finished() == nil) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		once.Do(func() { close(done) })
		wg.Wait()
	}
	atEnd := func() error {
		req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		g.GroupID = "workers"
		dt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		dt.Topic, dt.Partitions = "share-jobs", []int32{0, 1}
		g.Topics = append(g.Topics, dt)
		req.Groups = append(req.Groups, g)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if len(resp.Groups) != 1 || len(resp.Groups[0].Topics) != 1 {
			return fmt.Errorf("DescribeShareGroupOffsets: %+v", resp)
		}
		for _, p := range resp.Groups[0].Topics[0].Partitions {
			if p.StartOffset != per {
				return fmt.Errorf("partition %d start offset %d, want %d", p.Partition, p.StartOffset, per)
			}
		}
		return nil
	}
	// Half, then kill -9 and restart, then the rest.
	consumeUntil(per, nil)
	b.Restart(t)
	consumeUntil(2*per, atEnd)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2*per {
		t.Fatalf("consumed %d distinct records of %d", len(seen), 2*per)
	}
	dups := 0
	for _, n := range seen {
		dups += n - 1
	}
	t.Logf("%d records, %d redelivered across the kill -9", len(seen), dups)
	// Only what was in flight at the kill may come again (at most a
	// fetch per consumer and partition); a lost state would redeliver
	// the whole first half.
	if dups > per/2 {
		t.Fatalf("%d records redelivered after the restart: acknowledgements were lost", dups)
	}
	// Everything was acknowledged: both share-partitions start at the end.
	if err := atEnd(); err != nil {
		t.Fatal(err)
	}
}
