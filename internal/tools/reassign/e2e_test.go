package reassign

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/embed"
)

// TestReassignEndToEnd drives the tool against three brokers while a
// producer writes: orders-0 from 1,2,3 to 2,3,1 with a throttle that
// --verify removes; moves-0 from 1,2 to 1,3 held in progress by a 1 KB/s
// throttle that the brokers honour, for --list and --cancel; then moves-0
// to the broker set --generate proposes for 2,3. Every acknowledged record
// is read back.
func TestReassignEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	c, err := embed.NewCluster(embed.Dir(t.TempDir()), embed.Brokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := strings.Join(c.Addrs(), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.MetadataMinAge(50*time.Millisecond), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	createTopic(ctx, t, cl, "orders", []int32{1, 2, 3})
	createTopic(ctx, t, cl, "moves", []int32{1, 2})
	// Many small batches in moves-0.
	for i := range 300 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "moves", Value: fmt.Appendf(nil, "seed-%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// The producer writing during every reassignment.
	var (
		mu    sync.Mutex
		acked = map[string][]string{}
		stop  = make(chan struct{})
		done  = make(chan struct{})
	)
	for i := range 300 {
		acked["moves"] = append(acked["moves"], fmt.Sprintf("seed-%d", i))
	}
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			for _, topic := range []string{"orders", "moves"} {
				v := fmt.Sprintf("%s-%d", topic, i)
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err == nil {
					mu.Lock()
					acked[topic] = append(acked[topic], v)
					mu.Unlock()
				}
			}
		}
	}()
	stopProducer := sync.OnceFunc(func() { close(stop); <-done })
	defer stopProducer()

	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := Run(ctx, append([]string{"--bootstrap-server", addr}, args...), &out, &out)
		return out.String(), err
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if ctx.Err() != nil {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// 1. orders-0: 1,2,3 -> 2,3,1 with a throttle.
	plan := write("orders.json", `{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[2,3,1]}]}`)
	out, err := run("--execute", "--reassignment-json-file", plan, "--throttle", "50000000")
	if err != nil {
		t.Fatalf("execute: %v\n%s", err, out)
	}
	want := "Current partition replica assignment\n\n" +
		`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2,3],"log_dirs":["any","any","any"]}]}` + "\n\n" +
		"Save this to use as the --reassignment-json-file option during rollback\n" + msgRunVerify + "\n" +
		"The inter-broker throttle limit was set to 50000000 B/s\n" +
		"Successfully started partition reassignment for orders-0\n"
	if out != want {
		t.Errorf("execute printed:\n%s\nwant:\n%s", out, want)
	}
	checkTopicConfig(ctx, t, adm, "orders", LeaderThrottledReplicas, "0:1,0:2,0:3")
	checkTopicConfig(ctx, t, adm, "orders", FollowerThrottledReplicas, "")
	for _, b := range []int32{1, 2, 3} {
		checkBrokerConfig(ctx, t, adm, b, LeaderThrottledRate, "50000000")
		checkBrokerConfig(ctx, t, adm, b, FollowerThrottledRate, "50000000")
	}
	poll("orders-0 to complete", func() bool {
		out, err := run("--verify", "--reassignment-json-file", plan, "--preserve-throttles")
		return err == nil && strings.Contains(out, "Reassignment of partition orders-0 is completed.")
	})
	checkTopicConfig(ctx, t, adm, "orders", LeaderThrottledReplicas, "0:1,0:2,0:3") // preserved
	out, err = run("--verify", "--reassignment-json-file", plan)
	want = "Status of partition reassignment:\nReassignment of partition orders-0 is completed.\n\n" +
		"Clearing broker-level throttles on brokers 1,2,3\nClearing topic-level throttles on topic orders\n"
	if err != nil || out != want {
		t.Errorf("verify: %v, printed:\n%s\nwant:\n%s", err, out, want)
	}
	checkTopicConfig(ctx, t, adm, "orders", LeaderThrottledReplicas, "<none>")
	checkBrokerConfig(ctx, t, adm, 2, LeaderThrottledRate, "<none>")

	// 2. moves-0 (over 2 MB) from 1,2 to 1,3 at 1 KB/s: the leader (1)
	// serves the new replica 3 about one fetch and then holds it, so the
	// reassignment stays in progress for --list, a second --execute and
	// --cancel, while consumers and the unthrottled orders-0 go on.
	big := make([]byte, 100<<10) // random: the producer compresses
	chacha := rand.NewChaCha8([32]byte{})
	_, _ = chacha.Read(big)
	for i := range 24 {
		v := fmt.Sprintf("big-%d:%s", i, big)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "moves", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		acked["moves"] = append(acked["moves"], v)
		mu.Unlock()
	}
	slow := write("slow.json", `{"version":1,"partitions":[{"topic":"moves","partition":0,"replicas":[1,3]}]}`)
	if out, err := run("--execute", "--reassignment-json-file", slow, "--throttle", "1000"); err != nil {
		t.Fatalf("execute: %v\n%s", err, out)
	}
	checkTopicConfig(ctx, t, adm, "moves", LeaderThrottledReplicas, "0:1,0:2")
	checkTopicConfig(ctx, t, adm, "moves", FollowerThrottledReplicas, "0:3")
	checkBrokerConfig(ctx, t, adm, 3, FollowerThrottledRate, "1000")
	inProgress := regexp.MustCompile(`^Current partition reassignments:\nmoves-0: replicas: 1,3,2\. adding: 3\. removing: 2\.\n$`)
	poll("--list to show moves-0", func() bool { // the answering broker's image may trail
		out, err := run("--list")
		return err == nil && inProgress.MatchString(out)
	})
	if _, err := run("--execute", "--reassignment-json-file", slow); err == nil || err.Error() != msgExistingReassignment {
		t.Errorf("execute over an existing reassignment: %v", err)
	}
	mu.Lock()
	ordersBefore := len(acked["orders"])
	mu.Unlock()
	poll("orders to take 20 more acks=all records", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked["orders"]) >= ordersBefore+20
	})
	mu.Lock()
	movesSoFar := slices.Clone(acked["moves"])
	mu.Unlock()
	checkAllThere(ctx, t, c.Addrs(), "moves", movesSoFar) // consumers are not throttled
	if out, err := run("--verify", "--reassignment-json-file", slow); err != nil ||
		out != "Status of partition reassignment:\nReassignment of partition moves-0 is still in progress.\n\n" {
		t.Errorf("verify in progress: %v %q", err, out)
	}
	out, err = run("--cancel", "--reassignment-json-file", slow)
	want = "Successfully cancelled partition reassignment for: moves-0\nNone of the specified partition moves are active." +
		"Clearing broker-level throttles on brokers 1,2,3\nClearing topic-level throttles on topic moves\n"
	if err != nil || out != want {
		t.Errorf("cancel: %v, printed:\n%s\nwant:\n%s", err, out, want)
	}
	poll("--list to show nothing", func() bool {
		out, err := run("--list")
		return err == nil && out == "No partition reassignments found.\n"
	})
	checkTopicConfig(ctx, t, adm, "moves", FollowerThrottledReplicas, "<none>")
	checkBrokerConfig(ctx, t, adm, 1, LeaderThrottledRate, "<none>")
	if out, err := run("--cancel", "--reassignment-json-file", slow, "--preserve-throttles"); err != nil ||
		out != "None of the specified partition reassignments are active.\nNone of the specified partition moves are active." {
		t.Errorf("second cancel: %v %q", err, out)
	}

	// 3. moves-0 to the broker set --generate proposes for brokers 2,3.
	topics := write("topics.json", `{"topics":[{"topic":"moves"}],"version":1}`)
	out, err = run("--generate", "--topics-to-move-json-file", topics, "--broker-list", "2,3")
	if err != nil {
		t.Fatalf("generate: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`^Current partition replica assignment\n(\{.*\})\n\nProposed partition reassignment configuration\n(\{.*\})\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("generate printed:\n%s", out)
	}
	if m[1] != `{"version":1,"partitions":[{"topic":"moves","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}` {
		t.Errorf("generate: current %s", m[1])
	}
	proposal, err := ParseReassignmentJSON(m[2])
	if err != nil || len(proposal.Targets) != 1 || !slices.Equal(sortedSet(proposal.Targets[0].Replicas), []int32{2, 3}) {
		t.Fatalf("proposal %s: %+v %v", m[2], proposal, err)
	}
	moved := write("moved.json", m[2])
	if out, err := run("--execute", "--reassignment-json-file", moved); err != nil || !strings.HasSuffix(out, "Successfully started partition reassignment for moves-0\n") {
		t.Fatalf("execute proposal: %v\n%s", err, out)
	}
	poll("moves-0 to complete", func() bool {
		out, err := run("--verify", "--reassignment-json-file", moved)
		return err == nil && strings.Contains(out, "Reassignment of partition moves-0 is completed.")
	})

	// Nothing acknowledged was lost.
	stopProducer()
	for _, topic := range []string{"orders", "moves"} {
		checkAllThere(ctx, t, c.Addrs(), topic, acked[topic])
	}
}

func createTopic(ctx context.Context, t *testing.T, cl *kgo.Client, name string, replicas []int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, replicas
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if e := resp.Topics[0].ErrorCode; e != 0 {
		t.Fatalf("create %s: error %d", name, e)
	}
}

// checkTopicConfig waits until topic's dynamic value of key is want
// ("<none>": not set); a broker's image may trail the controller's.
func checkTopicConfig(ctx context.Context, t *testing.T, adm *kadm.Client, topic, key, want string) {
	t.Helper()
	checkConfig(ctx, t, "topic "+topic, key, want, kmsg.ConfigSourceDynamicTopicConfig, func() (kadm.ResourceConfigs, error) {
		return adm.DescribeTopicConfigs(ctx, topic)
	})
}

// checkBrokerConfig is checkTopicConfig for a broker's own config.
func checkBrokerConfig(ctx context.Context, t *testing.T, adm *kadm.Client, broker int32, key, want string) {
	t.Helper()
	checkConfig(ctx, t, fmt.Sprintf("broker %d", broker), key, want, kmsg.ConfigSourceDynamicBrokerConfig, func() (kadm.ResourceConfigs, error) {
		return adm.DescribeBrokerConfigs(ctx, broker)
	})
}

func checkConfig(ctx context.Context, t *testing.T, what, key, want string, source kmsg.ConfigSource, describe func() (kadm.ResourceConfigs, error)) {
	t.Helper()
	got := ""
	for ctx.Err() == nil {
		rcs, err := describe()
		if err != nil {
			t.Fatal(err)
		}
		got = "<none>"
		for _, rc := range rcs {
			for _, c := range rc.Configs {
				if c.Key == key && c.Source == source && c.Value != nil {
					got = *c.Value
				}
			}
		}
		if got == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("%s: %s = %q, want %q", what, key, got, want)
}

// checkAllThere reads topic's partition 0 from the start and checks that
// every value of acked is in it.
func checkAllThere(ctx context.Context, t *testing.T, addrs []string, topic string, acked []string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	missing := map[string]bool{}
	for _, v := range acked {
		missing[v] = true
	}
	for len(missing) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: %d acknowledged records not read back", topic, len(missing))
		}
		fs.EachRecord(func(r *kgo.Record) { delete(missing, string(r.Value)) })
	}
}
