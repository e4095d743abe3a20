package check

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestVerifyReadsBack runs the read-back against franz-go's kfake: two
// producers and a transactional one write, Verify finds everything; then
// records deleted below the log start offset and a record produced again
// are reported through the same read path.
func TestVerifyReadsBack(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "orders"), kfake.SeedTopics(1, "txn"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seeds := kgo.SeedBrokers(c.ListenAddrs()...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var all []*Acks
	for _, name := range []string{"a", "b"} {
		cl, err := kgo.NewClient(seeds, kgo.DefaultProduceTopic("orders"))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		acks := &Acks{Producer: name}
		all = append(all, acks)
		for i := range 200 {
			cl.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "%s-%d", name, i%7), Value: fmt.Appendf(nil, "%s-%04d", name, i)}, acks.Promise)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// A committed transaction: the partition ends in a control record,
	// which the read-back must see past.
	txn, err := kgo.NewClient(seeds, kgo.DefaultProduceTopic("txn"), kgo.TransactionalID("check-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	txnAcks := &Acks{Producer: "txn"}
	all = append(all, txnAcks)
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		txn.Produce(ctx, &kgo.Record{Value: fmt.Appendf(nil, "txn-%d", i)}, txnAcks.Promise)
	}
	if err := txn.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}

	var acked []Record
	for _, a := range all {
		if f := a.Failed(); len(f) > 0 {
			t.Fatalf("producer %s: failures %v", a.Producer, f)
		}
		acked = append(acked, a.Records()...)
	}
	if len(acked) != 410 {
		t.Fatalf("%d records acknowledged, want 410", len(acked))
	}
	r, err := Verify(ctx, acked, seeds)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Err(); err != nil || r.Verified != 410 || r.Read != 410 {
		t.Fatalf("a clean cluster: %s; %v", r, err)
	}

	// Damage: delete the first two records of partition 0, and produce an
	// acknowledged record once more.
	cl, err := kgo.NewClient(seeds)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deleted, err := adm.DeleteRecords(ctx, kadm.Offsets{"orders": {0: {At: 2}}})
	if err == nil {
		err = deleted.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	again := acked[len(acked)/2]
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: again.Topic, Key: again.Key, Value: again.Value}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	r, err = Verify(ctx, acked, seeds)
	if err != nil {
		t.Fatal(err)
	}
	if r.Count(Lost) != 2 || r.Count(Duplicated) != 1 || len(r.Problems) != 3 {
		t.Fatalf("want 2 lost and 1 duplicated: %v", r.Err())
	}
	if msg := r.Err().Error(); !strings.Contains(msg, "below the log start offset 2") {
		t.Errorf("the lost records are not said to be below the log start offset:\n%s", msg)
	}
}

// TestReadGivesUp: a read-back that cannot finish returns an error naming
// what it could not read when its context ends.
func TestReadGivesUp(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = Read(ctx, []string{"missing"}, kgo.SeedBrokers(c.ListenAddrs()...))
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("read of a missing topic: %v, want an error naming it", err)
	}
}
