package interop

// KIP-848 consumer groups through the broker binary. franz-go is the only
// client here with the consumer protocol: librdkafka 2.0.2 (Debian's
// kcat) predates group.protocol=consumer (it answers "No such
// configuration property"), and kafka-python and kafkajs have no KIP-848
// support.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/testcluster"
)

// consumer848Overrides make KIP-848 groups heartbeat fast.
var consumer848Overrides = []string{
	"group.initial.rebalance.delay.ms=0",
	"group.consumer.min.heartbeat.interval.ms=50",
	"group.consumer.heartbeat.interval.ms=200",
	"group.consumer.min.session.timeout.ms=2000",
	"group.consumer.session.timeout.ms=10000",
}

// deliveries counts what the members of a group consumed, per member.
type deliveries struct {
	mu       sync.Mutex
	seen     map[[2]int64]int // (partition, offset) -> times delivered
	byMember map[string]int
}

func (d *deliveries) add(member string, r *kgo.Record) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen[[2]int64{int64(r.Partition), r.Offset}]++
	d.byMember[member]++
}

func (d *deliveries) distinct() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.seen)
}

func (d *deliveries) duplicates() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, c := range d.seen {
		n += c - 1
	}
	return n
}

func (d *deliveries) count(member string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byMember[member]
}

// member848 is one franz-go consumer using the consumer group protocol.
type member848 struct {
	name string
	cl   *kgo.Client
	done chan struct{}
}

func startMember848(t *testing.T, addr, group, topic, name string, d *deliveries, bal kgo.GroupBalancer) *member848 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ServerSideBalancer(), kgo.Balancers(bal), kgo.ClientID(name),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.AutoCommitInterval(200*time.Millisecond), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	m := &member848{name: name, cl: cl, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
			fs.EachRecord(func(r *kgo.Record) { d.add(name, r) })
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *member848) stop() {
	select {
	case <-m.done:
		return
	default:
	}
	m.cl.Close() // commits what was polled and leaves the group
	<-m.done
}

// stable848 reports whether the group is Stable with n members that
// together own partitions partitions.
func stable848(cl *kgo.Client, group string, n, partitions int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		return false
	}
	g := resp.Groups[0]
	owned := 0
	for _, m := range g.Members {
		for _, tp := range m.Assignment.TopicPartitions {
			owned += len(tp.Partitions)
		}
	}
	return g.State == "Stable" && len(g.Members) == n && owned == partitions
}

// TestConsumerGroup848RollingRestart restarts each of three franz-go
// members in turn while a producer writes: every record is consumed, the
// members that are not restarting keep consuming during each handover (no
// stop-the-world), and duplicates stay within at-least-once (only records
// read but not committed by a member that left).
func TestConsumerGroup848RollingRestart(t *testing.T) {
	t.Parallel()
	for _, bal := range []struct {
		name string
		b    kgo.GroupBalancer
	}{{"uniform", kgo.CooperativeStickyBalancer()}, {"range", kgo.RangeBalancer()}} {
		t.Run(bal.name, func(t *testing.T) {
			b := startBroker(t, consumer848Overrides...)
			addr := b.Addr()
			topic, group := "roll848-"+bal.name, "g-roll848-"+bal.name
			createTopicWith(t, addr, topic, groupPartitions, nil)

			prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
			if err != nil {
				t.Fatal(err)
			}
			defer prod.Close()
			var produced atomic.Int64
			stopProd := make(chan struct{})
			prodDone := make(chan struct{})
			go func() {
				defer close(prodDone)
				for i := 0; ; i++ {
					select {
					case <-stopProd:
						return
					default:
					}
					r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")}
					if err := prod.ProduceSync(context.Background(), r).FirstErr(); err == nil {
						produced.Add(1)
					}
					time.Sleep(2 * time.Millisecond)
				}
			}()

			d := &deliveries{seen: map[[2]int64]int{}, byMember: map[string]int{}}
			members := make([]*member848, 3)
			for i := range members {
				members[i] = startMember848(t, addr, group, topic, fmt.Sprintf("m%d-gen0", i), d, bal.b)
			}
			if err := testcluster.Poll(60*time.Second, func() error {
				if !stable848(prod, group, 3, groupPartitions) {
					return fmt.Errorf("group not stable with 3 members")
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for i := range members {
				others := map[string]int{}
				for j, m := range members {
					if j != i {
						others[m.name] = d.count(m.name)
					}
				}
				members[i].stop()
				members[i] = startMember848(t, addr, group, topic, fmt.Sprintf("m%d-gen1", i), d, bal.b)
				if err := testcluster.Poll(60*time.Second, func() error {
					if !stable848(prod, group, 3, groupPartitions) {
						return fmt.Errorf("group not stable after restarting member %d", i)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				// The others consumed during the handover.
				for name, before := range others {
					if err := testcluster.Poll(30*time.Second, func() error {
						if d.count(name) <= before {
							return fmt.Errorf("member %s consumed nothing while member %d restarted", name, i)
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
			}
			close(stopProd)
			<-prodDone
			want := int(produced.Load())
			if err := testcluster.Poll(60*time.Second, func() error {
				if got := d.distinct(); got < want {
					return fmt.Errorf("%d of %d records consumed", got, want)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d records, %d delivered twice across 3 restarts", bal.name, want, d.duplicates())
		})
	}
}
