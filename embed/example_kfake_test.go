package embed_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/embed"
)

// orderRoundTrip is the code under test: it produces three records to
// "orders" and reads them back. It knows nothing of the cluster behind
// seeds, so moving from kfake to embed changes only how the cluster is
// started. (MIGRATING.md lists what then behaves differently.)
func orderRoundTrip(seeds []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...),
		kgo.DefaultProduceTopic("orders"), kgo.ConsumeTopics("orders"))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	for _, v := range []string{"apple", "pear", "plum"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			return nil, err
		}
	}
	var got []string
	for len(got) < 3 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return got, err
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got, nil
}

// The same test against franz-go's kfake and against embed: only the
// lines that start the cluster and name its addresses change.
func Example_migratingFromKfake() {
	// Before: kfake, an in-memory fake of Kafka's protocol.
	fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		panic(err)
	}
	defer fake.Close()
	got, err := orderRoundTrip(fake.ListenAddrs())
	fmt.Println("kfake:", got, err)

	// After: embed, a real Silkworm broker with its log on disk.
	c, err := embed.NewCluster(embed.Brokers(1), embed.SeedTopics(1, "orders"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	got, err = orderRoundTrip(c.Addrs())
	fmt.Println("embed:", got, err)
	// Output:
	// kfake: [apple pear plum] <nil>
	// embed: [apple pear plum] <nil>
}
