package verifiable

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

// syncBuffer is a bytes.Buffer safe for the tool writing while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// line is any event line, with the fields the test looks at.
type line struct {
	Timestamp  int64  `json:"timestamp"`
	Name       string `json:"name"`
	Key        *string
	Value      string `json:"value"`
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	Offset     int64  `json:"offset"`
	Sent       int64  `json:"sent"`
	Acked      int64  `json:"acked"`
	Count      int64  `json:"count"`
	Success    bool   `json:"success"`
	Partitions []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Count     int64  `json:"count"`
		MinOffset int64  `json:"minOffset"`
		MaxOffset int64  `json:"maxOffset"`
	} `json:"partitions"`
	Offsets []commitData `json:"offsets"`
}

func parseLines(t *testing.T, out string) []line {
	t.Helper()
	var ls []line
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("stdout line %q is not JSON: %v", sc.Text(), err)
		}
		if l.Timestamp <= 0 || l.Name == "" {
			t.Fatalf("stdout line %q lacks timestamp or name", sc.Text())
		}
		ls = append(ls, l)
	}
	return ls
}

type tpo struct {
	partition int32
	offset    int64
}

// TestProducerToConsumer runs verifiable-producer and then
// verifiable-consumer, classic and KIP-848, against a broker: every record
// is acknowledged exactly once, and each consumer consumes and commits
// exactly the acknowledged offsets.
func TestProducerToConsumer(t *testing.T) {
	addr := brokertest.Start(t, "group.initial.rebalance.delay.ms=0", "auto.create.topics.enable=false")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if resp, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, "verifiable"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}

	const n = 500
	var pout, perr syncBuffer
	err = Producer(ctx, []string{"--bootstrap-server", addr, "--topic", "verifiable", "--max-messages", fmt.Sprint(n),
		"--repeating-keys", "7", "--value-prefix", "3"}, &pout, &perr)
	if err != nil {
		t.Fatalf("producer: %v (stderr %s)", err, perr.String())
	}
	acked := map[tpo]string{}
	values := map[string]bool{}
	plines := parseLines(t, pout.String())
	if plines[0].Name != "startup_complete" || plines[len(plines)-2].Name != "shutdown_complete" || plines[len(plines)-1].Name != "tool_data" {
		t.Fatalf("producer events do not open with startup_complete and end with shutdown_complete, tool_data:\n%s", pout.String())
	}
	for _, l := range plines {
		switch l.Name {
		case "producer_send_success":
			k := tpo{l.Partition, l.Offset}
			if _, dup := acked[k]; dup || values[l.Value] {
				t.Errorf("record %s acknowledged twice, or two records at %v", l.Value, k)
			}
			acked[k], values[l.Value] = l.Value, true
		case "producer_send_error":
			t.Errorf("send error: %+v", l)
		}
	}
	if td := plines[len(plines)-1]; len(acked) != n || td.Sent != n || td.Acked != n {
		t.Fatalf("%d records acknowledged, tool_data sent %d acked %d; want %d", len(acked), td.Sent, td.Acked, n)
	}
	for i := range n {
		if !values[fmt.Sprintf("3.%d", i)] {
			t.Fatalf("value 3.%d never acknowledged", i)
		}
	}

	for _, proto := range []string{"classic", "consumer"} {
		t.Run(proto, func(t *testing.T) {
			var cout, cerr syncBuffer
			err := Consumer(ctx, []string{"--bootstrap-server", addr, "--topic", "verifiable", "--group-id", "vc-" + proto,
				"--group-protocol", proto, "--max-messages", fmt.Sprint(n), "--verbose", "--session-timeout", "10000"}, &cout, &cerr)
			if err != nil {
				t.Fatalf("consumer: %v (stderr %s)", err, cerr.String())
			}
			lines := parseLines(t, cout.String())
			consumed := map[tpo]string{}
			var summarized int64
			committed := map[int32]int64{}
			assigned := map[int32]bool{}
			for _, l := range lines {
				switch l.Name {
				case "partitions_assigned":
					for _, p := range l.Partitions {
						assigned[p.Partition] = true
					}
				case "record_data":
					consumed[tpo{l.Partition, l.Offset}] = l.Value
				case "records_consumed":
					for _, p := range l.Partitions {
						summarized += p.Count
						if p.MaxOffset-p.MinOffset+1 != p.Count {
							t.Errorf("summary %+v: count does not span minOffset..maxOffset", p)
						}
					}
				case "offsets_committed":
					if !l.Success {
						t.Errorf("commit failed: %+v", l)
					}
					for _, o := range l.Offsets {
						committed[o.Partition] = max(committed[o.Partition], o.Offset)
					}
				}
			}
			if lines[0].Name != "startup_complete" || lines[len(lines)-1].Name != "shutdown_complete" {
				t.Errorf("consumer events do not open with startup_complete and end with shutdown_complete:\n%s", cout.String())
			}
			if len(assigned) != 3 {
				t.Errorf("partitions assigned: %v, want 0, 1, 2", assigned)
			}
			if summarized != n || len(consumed) != n {
				t.Errorf("consumed %d records (%d distinct), want %d", summarized, len(consumed), n)
			}
			ends := map[int32]int64{}
			for k, v := range acked {
				if consumed[k] != v {
					t.Errorf("acknowledged %s at %v, consumed %q there", v, k, consumed[k])
				}
				ends[k.partition] = max(ends[k.partition], k.offset+1)
			}
			for p, end := range ends {
				if committed[p] != end {
					t.Errorf("partition %d: committed %d, want %d", p, committed[p], end)
				}
			}
			// The group is of the protocol asked for.
			resp, err := kmsg.NewPtrListGroupsRequest().RequestWith(ctx, cl)
			if err != nil {
				t.Fatal(err)
			}
			var groupType string
			for _, g := range resp.Groups {
				if g.Group == "vc-"+proto {
					groupType = g.GroupType
				}
			}
			if groupType != proto {
				t.Errorf("group vc-%s is of type %q, want %q", proto, groupType, proto)
			}
		})
	}
	// With --reset-policy none and nothing committed, poll fails as the
	// Java consumer's does (no offset for the partitions) and the tool
	// stops, having consumed nothing.
	t.Run("reset-none", func(t *testing.T) {
		var cout, cerr syncBuffer
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err := Consumer(ctx, []string{"--bootstrap-server", addr, "--topic", "verifiable", "--group-id", "vc-none",
			"--reset-policy", "none"}, &cout, &cerr)
		if err != nil {
			t.Fatalf("consumer: %v", err)
		}
		for _, l := range parseLines(t, cout.String()) {
			if l.Name == "records_consumed" {
				t.Errorf("consumed without an offset to start from: %+v", l)
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the consumer ran until the test's deadline")
		}
		if !strings.Contains(cerr.String(), "Undefined offset with no reset policy for partitions: [verifiable-0, verifiable-1, verifiable-2]") || !strings.HasSuffix(cout.String(), "\"name\":\"shutdown_complete\"}\n") {
			t.Errorf("stdout:\n%s\nstderr:\n%s", cout.String(), cerr.String())
		}
	})
}
