package broker

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConsumerGroupSettlePerf measures, for the closing note and not as an
// assertion, how long a 10-member group takes to settle after an 11th
// member joins and after one leaves, KIP-848 against the classic protocol
// (franz-go's cooperative-sticky), and the records/s consumed meanwhile.
// Run with SILKWORM_PERF=1 go test -run TestConsumerGroupSettlePerf -v ./internal/broker
func TestConsumerGroupSettlePerf(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("set SILKWORM_PERF=1 to measure group settle times")
	}
	const partitions = 30
	for _, hb := range []struct {
		name      string
		overrides []string
		opts      []kgo.Opt
	}{
		{"kafka-defaults", nil, nil},
		{"fast-heartbeats", []string{"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=100"},
			[]kgo.Opt{kgo.HeartbeatInterval(100 * time.Millisecond)}},
	} {
		for _, proto := range []string{"consumer", "classic"} {
			t.Run(hb.name+"/"+proto, func(t *testing.T) {
				tb := newTestBroker(t, append([]string{"group.initial.rebalance.delay.ms=0", "offsets.topic.num.partitions=5"}, hb.overrides...)...)
				ctx := testCtx(t)
				topic, group := "perf", "g-perf-"+proto
				tb.createTopic(ctx, topic, partitions, nil)
				var consumed atomic.Int64
				start := func() func() {
					opts := append([]kgo.Opt{kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
						kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.FetchMaxWait(50 * time.Millisecond)}, hb.opts...)
					if proto == "consumer" {
						opts = append(opts, kgo.ServerSideBalancer())
					}
					cl, err := kgo.NewClient(opts...)
					if err != nil {
						t.Fatal(err)
					}
					done := make(chan struct{})
					go func() {
						defer close(done)
						for {
							fs := cl.PollFetches(context.Background())
							if fs.IsClientClosed() {
								return
							}
							consumed.Add(int64(fs.NumRecords()))
						}
					}()
					stop := func() { cl.Close(); <-done }
					t.Cleanup(func() {
						select {
						case <-done:
						default:
							stop()
						}
					})
					return stop
				}
				prod, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				defer prod.Close()
				stopProd := make(chan struct{})
				go func() {
					for {
						select {
						case <-stopProd:
							return
						default:
						}
						prod.Produce(context.Background(), &kgo.Record{Value: []byte("0123456789")}, nil)
						time.Sleep(100 * time.Microsecond)
					}
				}()
				defer close(stopProd)

				settled := func(n int) bool { return groupSettled(t, tb, group, proto, n, partitions) }
				var stops []func()
				for range 10 {
					stops = append(stops, start())
				}
				waitFor(t, "10 members settled", func() bool { return settled(10) })
				measure := func(what string, n int) {
					c0, t0 := consumed.Load(), time.Now()
					for !settled(n) {
						time.Sleep(5 * time.Millisecond)
					}
					d := time.Since(t0)
					rate := float64(consumed.Load()-c0) / d.Seconds()
					t.Logf("PERF %s %s %s: settled in %v, %.0f records/s consumed meanwhile", hb.name, proto, what, d.Round(time.Millisecond), rate)
				}
				stops = append(stops, start())
				measure("join (10->11)", 11)
				stops[0]()
				measure("leave (11->10)", 10)
			})
		}
	}
}

// groupSettled reports whether group has n members owning every
// partition, all reconciled (848: Stable; classic: Stable).
func groupSettled(t *testing.T, tb *testBroker, group, proto string, n, partitions int) bool {
	t.Helper()
	owned := 0
	if proto == "consumer" {
		g := describe848(t, tb, group)
		if g.ErrorCode != 0 || g.State != "Stable" || len(g.Members) != n {
			return false
		}
		for _, m := range g.Members {
			for _, tp := range m.Assignment.TopicPartitions {
				owned += len(tp.Partitions)
			}
		}
		return owned == partitions
	}
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	resp := tb.request(testCtx(t), req).(*kmsg.DescribeGroupsResponse)
	g := resp.Groups[0]
	if g.State != "Stable" || len(g.Members) != n {
		return false
	}
	for _, m := range g.Members {
		var a kmsg.ConsumerMemberAssignment
		if err := a.ReadFrom(m.MemberAssignment); err != nil {
			return false
		}
		for _, tp := range a.Topics {
			owned += len(tp.Partitions)
		}
	}
	return owned == partitions && fmt.Sprint(g.Protocol) != ""
}
