package embed_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/embed"
)

// One broker, a topic, a record written and read back.
func ExampleNewCluster() {
	c, err := embed.NewCluster(embed.SeedTopics(3, "orders"))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...),
		kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Key: []byte("o-1"), Value: []byte("2 apples")}).FirstErr(); err != nil {
		panic(err)
	}
	for fs := cl.PollFetches(ctx); ; fs = cl.PollFetches(ctx) {
		if rs := fs.Records(); len(rs) > 0 {
			fmt.Printf("%s: %s\n", rs[0].Key, rs[0].Value)
			break
		}
	}
	// Output: o-1: 2 apples
}

// Three brokers; the node that leads the partition is killed (kill -9) in
// the middle of an acks=all stream, then restarted on its data.
func ExampleCluster_Kill() {
	c, err := embed.NewCluster(embed.Brokers(3),
		embed.BrokerConfig("min.insync.replicas", "2"), embed.SeedTopics(1, "orders"))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProduceRequestTimeout(time.Second))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(ctx, kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
				panic(err)
			}
		}
	}
	produce(0, 10)
	_ = c.Kill(1) // whichever node leads, the producer goes on
	produce(10, 20)
	if err := c.Restart(1); err != nil {
		panic(err)
	}
	if err := c.WaitISR(ctx, "orders"); err != nil {
		panic(err)
	}
	end, err := kgoEndOffset(ctx, cl, "orders")
	fmt.Println("records in orders:", end, err)
	// Output: records in orders: 20 <nil>
}

// A failing disk: the broker answers KAFKA_STORAGE_ERROR and stops; once
// the disk is healed it restarts with every acknowledged record.
func ExampleCluster_FailDisk() {
	c, err := embed.NewCluster(embed.SeedTopics(1, "orders"))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordRetries(0), kgo.DisableIdempotentWrite())
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, kgo.StringRecord("kept")).FirstErr(); err != nil {
		panic(err)
	}
	_ = c.FailDisk(1)
	err = cl.ProduceSync(ctx, kgo.StringRecord("refused")).FirstErr()
	fmt.Println("storage error:", errors.Is(err, kerr.KafkaStorageError))
	for c.Running(1) { // the broker stops once its log dir is offline
		time.Sleep(10 * time.Millisecond)
	}
	c.Heal()
	if err := c.Restart(1); err != nil {
		panic(err)
	}
	end, err := kgoEndOffset(ctx, cl, "orders")
	fmt.Println("records in orders:", end, err)
	// Output:
	// storage error: true
	// records in orders: 1 <nil>
}

// kgoEndOffset is the end offset of partition 0 of topic.
func kgoEndOffset(ctx context.Context, cl *kgo.Client, topic string) (int64, error) {
	offsets, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	o, _ := offsets.Lookup(topic, 0)
	return o.Offset, o.Err
}
