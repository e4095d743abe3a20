package sharegroups

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

func run(t *testing.T, addr string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), append([]string{"--bootstrap-server", addr}, args...), &out, &errOut); err != nil {
		t.Fatalf("share-groups %q: %v\n%s%s", args, err, out.String(), errOut.String())
	}
	return out.String()
}

// TestShareGroupsTool consumes with a share consumer, then describes the
// group's start offsets, resets them and deletes them with the tool.
func TestShareGroupsTool(t *testing.T) {
	addr := brokertest.Start(t, "offsets.topic.num.partitions=1", "share.coordinator.state.topic.num.partitions=1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("jobs"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := 0; i < 5; i++ {
		if err := cl.ProduceSync(ctx, kgo.StringRecord("job")).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "workers"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	if resp, err := req.RequestWith(ctx, cl); err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("set share.auto.offset.reset: %v %+v", err, resp)
	}
	sc, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ShareGroup("workers"), kgo.ConsumeTopics("jobs"), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for got < 5 && ctx.Err() == nil {
		fs := sc.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { r.Ack(kgo.AckAccept); got++ })
		sc.FlushAcks(ctx)
	}
	out := run(t, addr, "--describe", "--group", "workers", "--members")
	if !strings.Contains(out, "jobs:0") {
		t.Fatalf("--members:\n%s", out)
	}
	sc.Close() // leaves the group

	// The group is empty now; its start offsets are still described.
	out = run(t, addr, "--describe", "--group", "workers")
	if !strings.Contains(out, "START-OFFSET") || !strings.Contains(out, "jobs            0          5") {
		t.Fatalf("--describe of the empty group:\n%s", out)
	}
	out = run(t, addr, "--reset-offsets", "--group", "workers", "--topic", "jobs", "--to-earliest", "--execute")
	if !strings.Contains(out, "NEW-OFFSET") || !strings.Contains(out, "jobs") {
		t.Fatalf("--reset-offsets:\n%s", out)
	}
	dreq := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	g.GroupID = "workers"
	dt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
	dt.Topic, dt.Partitions = "jobs", []int32{0}
	g.Topics = append(g.Topics, dt)
	dreq.Groups = append(dreq.Groups, g)
	dresp, err := dreq.RequestWith(ctx, cl)
	if err != nil || dresp.Groups[0].Topics[0].Partitions[0].StartOffset != 0 {
		t.Fatalf("start offset after --to-earliest: %v %+v", err, dresp)
	}
	out = run(t, addr, "--delete-offsets", "--group", "workers", "--topic", "jobs")
	if !strings.Contains(out, "Successful") {
		t.Fatalf("--delete-offsets:\n%s", out)
	}

	// The console share consumer reads the five records again (the
	// group's state is gone and share.auto.offset.reset is earliest).
	var cout, cerr bytes.Buffer
	err = RunConsoleShareConsumer(ctx, []string{"--bootstrap-server", addr, "--topic", "jobs", "--group", "workers",
		"--max-messages", "5", "--timeout-ms", "20000", "--property", "print.offset=true"}, &cout, &cerr)
	if err != nil || strings.Count(cout.String(), "job") != 5 || !strings.Contains(cerr.String(), "Processed a total of 5 messages") {
		t.Fatalf("console-share-consumer: %v\nstdout:\n%s\nstderr:\n%s", err, cout.String(), cerr.String())
	}
}
