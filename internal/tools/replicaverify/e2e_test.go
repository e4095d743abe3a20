package replicaverify

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/embed"
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

var (
	startedRE = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}: verification process is started$`)
	lagRE     = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}: max lag is (-?\d+) for partition (\S+) at offset (-?\d+) among (\d+) partitions$`)
)

// createTopic creates topic with one partition per replica list.
func createTopic(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, assignment ...[]int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for i, replicas := range assignment {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(i), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil && resp.Topics[0].ErrorCode != 0 {
		err = fmt.Errorf("error code %d", resp.Topics[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// waitLag runs the tool on the topics that include matches, from the
// earliest offsets, and returns once it reports a max lag of 0 among
// partitions partitions, at offset (every partition's high watermark). It fails the test if the tool ends or stops
// making progress.
func waitLag(ctx context.Context, t *testing.T, addrs []string, include string, partitions int, offset int64) {
	t.Helper()
	o, err := parseOptions([]string{"--broker-list", strings.Join(addrs, ","), "--topics-include", include,
		"--time", "-2", "--report-interval-ms", "0", "--max-wait-ms", "50", "--fetch-size", "4096"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(rctx, o, &out, &errOut, time.Now) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("replica-verification: %v\nstdout:\n%s", err, out.String())
		}
	}()
	for {
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) > 0 && lines[0] != "" && !startedRE.MatchString(lines[0]) {
			t.Fatalf("first line %q is not Kafka's start line", lines[0])
		}
		for _, l := range lines[1:] {
			m := lagRE.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("line %q is not Kafka's lag line", l)
			}
			if m[1] == "0" && m[4] == fmt.Sprint(partitions) {
				if m[3] != fmt.Sprint(offset) {
					t.Fatalf("lag 0 at offset %s, want the high watermark %d: %q", m[3], offset, l)
				}
				return
			}
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("replica-verification ended: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
		case <-ctx.Done():
			t.Fatalf("no report of lag 0 among %d partitions:\n%s\nstderr:\n%s", partitions, out.String(), errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestReplicaVerificationCluster runs the tool on a three-node cluster
// after records were written: it fetches from every broker and reports a
// max lag of 0 once it has verified everything up to the high watermarks.
func TestReplicaVerificationCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := embed.NewCluster(embed.Dir(t.TempDir()), embed.Brokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// One partition led by each broker, and one partition on all three.
	createTopic(ctx, t, cl, "spread", []int32{1}, []int32{2}, []int32{3})
	createTopic(ctx, t, cl, "replicated", []int32{1, 2, 3})
	for i := range 60 {
		recs := []*kgo.Record{
			{Topic: "spread", Partition: int32(i % 3), Value: fmt.Appendf(nil, "s-%d", i)},
			{Topic: "replicated", Value: fmt.Appendf(nil, "r-%d", i)},
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("leaders", func(t *testing.T) { waitLag(ctx, t, c.Addrs(), "spread", 3, 20) })
	t.Run("followers", func(t *testing.T) { waitLag(ctx, t, c.Addrs(), "replicated", 1, 60) })
}
