package check

import (
	"maps"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Record is one record: acknowledged to a producer (the input of Compare
// and Verify) or read back from a partition (in a Log).
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	// Producer names the client that produced an acknowledged record.
	// Records of one named producer to one partition must be read back in
	// the order they appear in the acknowledged list; leave it empty when
	// the list is not in acknowledgement order (records without a name are
	// ordered by their acknowledged offsets instead). Not set on records
	// read back.
	Producer string
}

// Acks collects the outcome of produced records from franz-go promises:
// pass its Promise method to kgo.Client.Produce (or call it with the
// results of ProduceSync). Use one Acks per producer client so that the
// acknowledgement order it keeps is that client's. The zero value is ready
// to use; set Producer before the first record. Safe for concurrent use.
type Acks struct {
	// Producer is copied into every acknowledged record (Record.Producer).
	Producer string

	mu     sync.Mutex
	acked  []Record       // in acknowledgement order
	failed map[string]int // error text -> records failed with it
}

// Promise records the outcome of one produce: an acknowledged record with
// the partition and offset the broker gave it, or a failure by its error
// text. Its signature is franz-go's produce promise. The record's key and
// value are kept, not copied: do not change them after producing.
func (a *Acks) Promise(r *kgo.Record, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		if a.failed == nil {
			a.failed = map[string]int{}
		}
		a.failed[err.Error()]++
		return
	}
	a.acked = append(a.acked, Record{
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Key:       r.Key,
		Value:     r.Value,
		Producer:  a.Producer,
	})
}

// Records returns a copy of the acknowledged records, in the order they
// were acknowledged.
func (a *Acks) Records() []Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Record(nil), a.acked...)
}

// Len is the number of acknowledged records.
func (a *Acks) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.acked)
}

// Failed returns how many records failed to the producer, by error text.
// Such a record may or may not have been stored; the check allows it once.
func (a *Acks) Failed() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.failed)
}
