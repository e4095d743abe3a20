package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCoordinatorWritesDoNotStarveReplication: with one io goroutine
// (num.io.threads=1), transactions and group offset commits on three
// nodes still complete. Their coordinators wait for a write to the RF 3
// __transaction_state or __consumer_offsets to reach the ISR; had that
// wait held the only io goroutine, the followers' fetches that end it
// would have queued behind it until the ISR shrank or the coordinator
// gave up (30 s), as franz-go's TestTxnEtl found with the default eight.
func TestCoordinatorWritesDoNotStarveReplication(t *testing.T) {
	// Kafka's replica.lag.time.max.ms: the test cluster's 2 s would shrink
	// the ISR of a starved follower and so end the wait.
	tc := newTestCluster(t, 3, "num.io.threads=1", "replica.lag.time.max.ms=30000")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(tc.client())
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, "waits"); err != nil {
		t.Fatalf("create topic: %v", err)
	}

	prod := tc.client(kgo.TransactionalID("waits-txn"), kgo.DefaultProduceTopic("waits"),
		kgo.TransactionTimeout(10*time.Second))
	for round := range 3 {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatalf("round %d: begin: %v", round, err)
		}
		for i := range 10 {
			if err := prod.ProduceSync(ctx, kgo.StringRecord("v")).FirstErr(); err != nil {
				t.Fatalf("round %d: produce %d: %v", round, i, err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("round %d: commit: %v", round, err)
		}
	}

	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "waits", Partition: 0, At: 7, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(ctx, "waits-group", offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit offsets: %v", err)
	}
	fetched, err := adm.FetchOffsets(ctx, "waits-group")
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	if o, ok := fetched.Lookup("waits", 0); !ok || o.At != 7 {
		t.Fatalf("committed offset of waits-0: %+v (found %v), want 7", o, ok)
	}
}
