package check_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/embed"
	"github.com/silkworm/silkworm/embed/check"
)

// Produce through a franz-go client, collecting acknowledgements with
// Acks, then verify that the cluster kept every acknowledged record. A
// chaos test breaks and heals the cluster (embed's faults) between the
// two and waits for the ISR (Cluster.WaitISR) before verifying.
func ExampleVerify() {
	c, err := embed.NewCluster(embed.SeedTopics(3, "orders"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	acks := &check.Acks{Producer: "orders-writer"}
	for i := range 100 {
		cl.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "customer-%d", i%7), Value: fmt.Appendf(nil, "order-%d", i)}, acks.Promise)
	}
	if err := cl.Flush(ctx); err != nil {
		panic(err)
	}

	report, err := check.Verify(ctx, acks.Records(), kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		panic(err) // the read-back failed
	}
	fmt.Println(report)
	fmt.Println("damage:", report.Err())
	// Output:
	// 100 acknowledged records, 100 read back, 100 verified (once, at their offset); lost 0, misplaced 0, duplicated 0, reordered 0
	// damage: <nil>
}
