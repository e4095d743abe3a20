package interop

// Old clients (Kafka 0.8.2 - 2.0 protocol versions) against the broker
// binary: sarama at each old Version, kafka-python with an old api_version,
// kcat with ApiVersions turned off. Each reads what a modern franz-go
// producer wrote (headers, idempotence, a committed and an aborted
// transaction) and what the others wrote; offsets committed by old clients
// are read by new ones and the reverse.
//
// Old producers (sarama before V0_11_0_0, which send Produce v0-v2) need
// the broker to serve Produce v0; while it does not, those subtests skip
// with the reason.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// oldSaramaVersions are the sarama protocol versions the issue names.
var oldSaramaVersions = []sarama.KafkaVersion{
	sarama.V0_8_2_0, sarama.V0_9_0_0, sarama.V0_10_0_0, sarama.V0_10_2_0,
	sarama.V0_11_0_0, sarama.V1_0_0_0, sarama.V2_0_0_0,
}

// oldCodecs are the codecs a sarama version may produce with.
func oldCodecs(v sarama.KafkaVersion) []sarama.CompressionCodec {
	cs := []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP, sarama.CompressionSnappy}
	if v.IsAtLeast(sarama.V0_10_0_0) {
		cs = append(cs, sarama.CompressionLZ4)
	}
	return cs
}

func oldSaramaConfig(v sarama.KafkaVersion) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = v
	cfg.ClientID = "silkworm-oldclients"
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.MaxWaitTime = 50 * time.Millisecond
	cfg.Metadata.Retry.Max = 10
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	if v.IsAtLeast(sarama.V0_11_0_0) {
		// Fetch v4+ hands aborted records to read_uncommitted clients;
		// older versions never see them (the broker drops them).
		cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	return cfg
}

// oldCtx bounds one old-client test; a hang guard, not a timing assertion.
func oldCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// modernOldTopic writes the records every old client must read: a
// committed transaction, an aborted one, then plain idempotent records, all
// with headers (gzip). It returns the values old clients see, in order.
//
// The plain records come last on purpose: old clients cannot see control
// batches, so a log that ends with a marker (or with aborted records, which
// they are not served) leaves their position short of the high watermark
// until newer records arrive, as on Kafka.
func modernOldTopic(ctx context.Context, t *testing.T, addr, topic string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.GzipCompression()), kgo.TransactionalID("oldclients-"+topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var want []string
	produce := func(prefix string, n int) []string {
		var vs []string
		for i := range n {
			v := fmt.Sprintf("%s-%d", prefix, i)
			vs = append(vs, v)
			r := &kgo.Record{Key: []byte("k"), Value: []byte(v), Headers: []kgo.RecordHeader{{Key: "from", Value: []byte("franz-go")}}}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("franz-go produce %s: %v", v, err)
			}
		}
		return vs
	}
	for _, commit := range []bool{true, false} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		vs := produce(map[bool]string{true: "committed", false: "aborted"}[commit], 5)
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		if commit {
			want = append(want, vs...)
		}
	}
	plain, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.GzipCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for i := range 5 {
		v := fmt.Sprintf("plain-%d", i)
		r := &kgo.Record{Key: []byte("k"), Value: []byte(v), Headers: []kgo.RecordHeader{{Key: "from", Value: []byte("franz-go")}}}
		if err := plain.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("franz-go produce %s: %v", v, err)
		}
		want = append(want, v)
	}
	return want
}

// saramaConsume reads n messages of partition 0 of topic from the start
// with sarama at version v.
func saramaConsume(ctx context.Context, t *testing.T, addr, topic string, v sarama.KafkaVersion, n int) []string {
	t.Helper()
	c, err := sarama.NewConsumer([]string{addr}, oldSaramaConfig(v))
	if err != nil {
		t.Fatalf("sarama %s consumer: %v", v, err)
	}
	defer c.Close()
	pc, err := c.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("sarama %s consume %s: %v", v, topic, err)
	}
	defer pc.Close()
	var got []string
	for len(got) < n {
		select {
		case m := <-pc.Messages():
			got = append(got, string(m.Value))
		case err := <-pc.Errors():
			t.Fatalf("sarama %s consume %s: %v", v, topic, err)
		case <-ctx.Done():
			t.Fatalf("sarama %s consume %s: got %d of %d messages: %v", v, topic, len(got), n, got)
		}
	}
	return got
}

// produceV0Served reports whether the broker serves Produce v0 (old
// producers), asking with ApiVersions.
func produceV0Served(ctx context.Context, t *testing.T, addr string) bool {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == kmsg.Produce.Int16() {
			return k.MinVersion == 0
		}
	}
	return false
}

func TestOldSaramaClients(t *testing.T) {
	b := startBroker(t)
	ctx := oldCtx(t)
	addr := b.Addr()
	adm := newAdmin(t, addr)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "old-modern", "old-written", "old-written-lz4"); err != nil {
		t.Fatal(err)
	}
	want := modernOldTopic(ctx, t, addr, "old-modern")
	oldProduce := produceV0Served(ctx, t, addr)

	// Every version reads what franz-go wrote: headers dropped, aborted
	// transaction and markers unseen.
	for _, v := range oldSaramaVersions {
		t.Run("consume-modern/"+v.String(), func(t *testing.T) {
			got := saramaConsume(ctx, t, addr, "old-modern", v, len(want))
			if !slices.Equal(got, want) {
				t.Fatalf("sarama %s read %v, want %v", v, got, want)
			}
		})
	}

	// Every version produces with each codec it allows; everyone reads it.
	// lz4 goes to a topic of its own: magic 0 readers (sarama before
	// V0_10_0_0) get Kafka's magic 0 lz4 frames, whose header checksum
	// sarama's lz4 decoder refuses (as it does from Kafka).
	var written, writtenLZ4 []string
	for _, v := range oldSaramaVersions {
		t.Run("produce/"+v.String(), func(t *testing.T) {
			if !v.IsAtLeast(sarama.V0_11_0_0) && !oldProduce {
				t.Skip("the broker does not serve Produce v0-v2 yet (old producers get UNSUPPORTED_VERSION)")
			}
			for _, codec := range oldCodecs(v) {
				cfg := oldSaramaConfig(v)
				cfg.Producer.Compression = codec
				p, err := sarama.NewSyncProducer([]string{addr}, cfg)
				if err != nil {
					t.Fatalf("sarama %s producer: %v", v, err)
				}
				topic, list := "old-written", &written
				if codec == sarama.CompressionLZ4 {
					topic, list = "old-written-lz4", &writtenLZ4
				}
				var msgs []*sarama.ProducerMessage
				for i := range 3 {
					val := fmt.Sprintf("sarama-%s-%s-%d", v, codec, i)
					msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: 0,
						Key: sarama.StringEncoder("k"), Value: sarama.StringEncoder(val)})
					*list = append(*list, val)
				}
				if err := p.SendMessages(msgs); err != nil {
					p.Close()
					t.Fatalf("sarama %s produce %s: %v", v, codec, err)
				}
				p.Close()
			}
		})
	}
	if len(written) > 0 {
		for _, v := range oldSaramaVersions {
			t.Run("consume-sarama/"+v.String(), func(t *testing.T) {
				if got := saramaConsume(ctx, t, addr, "old-written", v, len(written)); !slices.Equal(got, written) {
					t.Fatalf("sarama %s read %v, want %v", v, got, written)
				}
			})
		}
		t.Run("consume-sarama/franz-go", func(t *testing.T) {
			if got := kgoValues(ctx, t, addr, "old-written", len(written)); !slices.Equal(got, written) {
				t.Fatalf("franz-go read %v, want %v", got, written)
			}
		})
	}
	if len(writtenLZ4) > 0 {
		for _, v := range oldSaramaVersions {
			if !v.IsAtLeast(sarama.V0_10_0_0) {
				continue
			}
			t.Run("consume-sarama-lz4/"+v.String(), func(t *testing.T) {
				if got := saramaConsume(ctx, t, addr, "old-written-lz4", v, len(writtenLZ4)); !slices.Equal(got, writtenLZ4) {
					t.Fatalf("sarama %s read %v, want %v", v, got, writtenLZ4)
				}
			})
		}
		t.Run("consume-sarama-lz4/franz-go", func(t *testing.T) {
			if got := kgoValues(ctx, t, addr, "old-written-lz4", len(writtenLZ4)); !slices.Equal(got, writtenLZ4) {
				t.Fatalf("franz-go read %v, want %v", got, writtenLZ4)
			}
		})
	}

	// Offsets: every version commits for its own group; franz-go reads
	// them. franz-go commits; every version reads that.
	for _, v := range oldSaramaVersions {
		t.Run("offsets/"+v.String(), func(t *testing.T) {
			group := "old-group-" + v.String()
			saramaCommit(ctx, t, addr, group, "old-modern", v, 3)
			got := fetchCommitted(ctx, t, adm, group, "old-modern")
			if got != 3 {
				t.Fatalf("franz-go read offset %d committed by sarama %s, want 3", got, v)
			}
			newGroup := "new-group-" + v.String()
			commitWithKadm(ctx, t, adm, newGroup, "old-modern", 4)
			if got := saramaCommitted(ctx, t, addr, newGroup, "old-modern", v); got != 4 {
				t.Fatalf("sarama %s read offset %d committed by franz-go, want 4", v, got)
			}
		})
	}

	// A consumer group of an old member (sarama V0_10_2_0, JoinGroup v1)
	// and a new one (franz-go) shares a two-partition topic.
	t.Run("mixed-group", func(t *testing.T) { mixedGroup(ctx, t, addr, adm) })
}

func newAdmin(t *testing.T, addr string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// kgoValues reads n values of partition 0 of topic with franz-go.
func kgoValues(ctx context.Context, t *testing.T, addr, topic string, n int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("franz-go read %d of %d: %v", len(got), n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("franz-go fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// saramaCommit commits offset for partition 0 of topic in group with
// sarama's offset manager at version v (OffsetCommit v0-v2 for old ones).
func saramaCommit(ctx context.Context, t *testing.T, addr, group, topic string, v sarama.KafkaVersion, offset int64) {
	t.Helper()
	cfg := oldSaramaConfig(v)
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	client, err := sarama.NewClient([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama %s client: %v", v, err)
	}
	defer client.Close()
	om, err := sarama.NewOffsetManagerFromClient(group, client)
	if err != nil {
		t.Fatalf("sarama %s offset manager: %v", v, err)
	}
	defer om.Close()
	pom, err := om.ManagePartition(topic, 0)
	if err != nil {
		t.Fatalf("sarama %s manage partition: %v", v, err)
	}
	defer pom.AsyncClose() // Close waits for an auto-commit that is off; om.Close releases it
	pom.MarkOffset(offset, "")
	om.Commit()
	select {
	case err := <-pom.Errors():
		t.Fatalf("sarama %s commit: %v", v, err)
	default:
	}
	_ = ctx
}

// saramaCommitted is the offset of partition 0 of topic committed in group,
// as sarama at version v reads it (OffsetFetch v0-v1 for old ones).
func saramaCommitted(ctx context.Context, t *testing.T, addr, group, topic string, v sarama.KafkaVersion) int64 {
	t.Helper()
	cfg := oldSaramaConfig(v)
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	client, err := sarama.NewClient([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama %s client: %v", v, err)
	}
	defer client.Close()
	om, err := sarama.NewOffsetManagerFromClient(group, client)
	if err != nil {
		t.Fatalf("sarama %s offset manager: %v", v, err)
	}
	defer om.Close()
	pom, err := om.ManagePartition(topic, 0)
	if err != nil {
		t.Fatalf("sarama %s manage partition: %v", v, err)
	}
	defer pom.AsyncClose() // Close waits for an auto-commit that is off; om.Close releases it
	off, _ := pom.NextOffset()
	_ = ctx
	return off
}

func fetchCommitted(ctx context.Context, t *testing.T, adm *kadm.Client, group, topic string) int64 {
	t.Helper()
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	o, ok := offs.Lookup(topic, 0)
	if !ok {
		return -1
	}
	if o.Err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, o.Err)
	}
	return o.At
}

func commitWithKadm(ctx context.Context, t *testing.T, adm *kadm.Client, group, topic string, offset int64) {
	t.Helper()
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: offset, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(ctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("franz-go commit for %s: %v", group, err)
	}
}

// mixedGroup runs a group of a sarama V0_10_2_0 member and a franz-go
// member (both with the range assignor) over a two-partition topic: once
// each holds one partition, records are produced to both, and each member
// reads its own partition's.
func mixedGroup(ctx context.Context, t *testing.T, addr string, adm *kadm.Client) {
	const topic, group, perPartition = "old-mixed", "old-mixed-group", 10
	if _, err := adm.CreateTopics(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}

	// The old member.
	cfg := oldSaramaConfig(sarama.V0_10_2_0)
	cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}
	sg, err := sarama.NewConsumerGroup([]string{addr}, group, cfg)
	if err != nil {
		t.Fatalf("sarama consumer group: %v", err)
	}
	defer sg.Close()
	oldRecs := make(chan *sarama.ConsumerMessage, 100)
	oldClaims := make(chan []int32, 10)
	sctx, scancel := context.WithCancel(ctx)
	consumed := make(chan struct{})
	defer func() { scancel(); <-consumed }()
	go func() {
		defer close(consumed)
		for sctx.Err() == nil {
			if err := sg.Consume(sctx, []string{topic}, &oldGroupHandler{recs: oldRecs, claims: oldClaims}); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				t.Logf("sarama group: %v", err)
				return
			}
		}
	}()
	var oldHas []int32
	select {
	case oldHas = <-oldClaims:
	case <-ctx.Done():
		t.Fatal("the sarama member was never assigned")
	}

	// The new member joins; wait until the two split the partitions.
	newAssigned := make(chan []int32, 10)
	ncl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.Balancers(kgo.RangeBalancer()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { newAssigned <- m[topic] }))
	if err != nil {
		t.Fatal(err)
	}
	defer ncl.Close()
	var newHas []int32
	seen := map[string]bool{}
	poll := func() {
		fctx, fcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		fs := ncl.PollFetches(fctx)
		fcancel()
		fs.EachRecord(func(r *kgo.Record) {
			if !slices.Contains(newHas, r.Partition) {
				t.Errorf("franz-go member read partition %d, assigned %v", r.Partition, newHas)
			}
			seen[string(r.Value)] = true
		})
		for {
			select {
			case ps := <-newAssigned:
				newHas = append(newHas, ps...)
				continue
			case ps := <-oldClaims:
				oldHas = ps
				continue
			case m := <-oldRecs:
				if !slices.Contains(oldHas, m.Partition) {
					t.Errorf("sarama member read partition %d, claims %v", m.Partition, oldHas)
				}
				seen[string(m.Value)] = true
				continue
			default:
			}
			return
		}
	}
	for len(newHas) != 1 || len(oldHas) != 1 {
		poll()
		if ctx.Err() != nil {
			t.Fatalf("members never split the partitions: sarama has %v, franz-go %v", oldHas, newHas)
		}
	}

	pcl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer pcl.Close()
	for p := range int32(2) {
		for i := range perPartition {
			r := &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "p%d-%d", p, i)}
			if err := pcl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for len(seen) < 2*perPartition {
		poll()
		if ctx.Err() != nil {
			t.Fatalf("mixed group read %d of %d records (sarama has %v, franz-go %v)", len(seen), 2*perPartition, oldHas, newHas)
		}
	}
}

// oldGroupHandler is the sarama group member's handler: it forwards each
// claim set and each value, and commits what it read.
type oldGroupHandler struct {
	recs   chan<- *sarama.ConsumerMessage
	claims chan<- []int32
}

func (h *oldGroupHandler) Setup(s sarama.ConsumerGroupSession) error {
	select {
	case h.claims <- s.Claims()["old-mixed"]:
	default:
	}
	return nil
}

func (h *oldGroupHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *oldGroupHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		select {
		case h.recs <- m:
		case <-s.Context().Done():
			return nil
		}
		s.MarkMessage(m, "")
		s.Commit()
	}
	return nil
}

// TestOldKcatAndKafkaPython reads what franz-go wrote with librdkafka
// (kcat) and kafka-python set to old protocol versions.
func TestOldKcatAndKafkaPython(t *testing.T) {
	b := startBroker(t)
	ctx := oldCtx(t)
	addr := b.Addr()
	adm := newAdmin(t, addr)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "old-k"); err != nil {
		t.Fatal(err)
	}
	want := modernOldTopic(ctx, t, addr, "old-k")

	for _, fallback := range []string{"0.9.0.1", "0.10.0.0"} {
		t.Run("kcat-"+fallback, func(t *testing.T) {
			needKcat(t)
			out, err := runClient(ctx, t, nil, "kcat", "-C", "-b", addr, "-t", "old-k", "-o", "beginning", "-e", "-q",
				"-X", "api.version.request=false", "-X", "broker.version.fallback="+fallback, "-f", "%s\n")
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Fields(string(out))
			if !slices.Equal(got, want) {
				t.Fatalf("kcat (fallback %s) read %v, want %v", fallback, got, want)
			}
		})
	}
	for _, api := range []string{"0.9", "0.10.1"} {
		t.Run("kafka-python-"+api, func(t *testing.T) {
			if got := pythonOldConsume(ctx, t, addr, "old-k", api); !slices.Equal(got, want) {
				t.Fatalf("kafka-python (api %s) read %v, want %v", api, got, want)
			}
		})
	}

	// kcat and kafka-python produce as old clients (Produce v0-v2); the
	// old readers and franz-go read it.
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "old-k2"); err != nil {
		t.Fatal(err)
	}
	var written []string
	t.Run("kcat-produce-0.9.0.1", func(t *testing.T) {
		needKcat(t)
		vals := []string{"kcat-0", "kcat-1", "kcat-2"}
		if _, err := runClient(ctx, t, []byte(strings.Join(vals, "\n")+"\n"), "kcat", "-P", "-b", addr, "-t", "old-k2", "-p", "0",
			"-z", "snappy", "-X", "api.version.request=false", "-X", "broker.version.fallback=0.9.0.1"); err != nil {
			t.Fatal(err)
		}
		written = append(written, vals...)
	})
	t.Run("kafka-python-produce-0.9", func(t *testing.T) {
		py, script := needKafkaPython(t)
		var in strings.Builder
		var vals []string
		for i := range 3 {
			v := fmt.Sprintf("python-%d", i)
			vals = append(vals, v)
			fmt.Fprintf(&in, `{"key":"k","value":%q,"headers":[]}`+"\n", v)
		}
		if _, err := runClient(ctx, t, []byte(in.String()), py, script, "produce", "--bootstrap", addr, "--topic", "old-k2",
			"--api-version", "0.9"); err != nil {
			t.Fatal(err)
		}
		written = append(written, vals...)
	})
	if len(written) == 0 {
		return
	}
	t.Run("read-old-produced", func(t *testing.T) {
		for _, v := range []sarama.KafkaVersion{sarama.V0_8_2_0, sarama.V0_10_0_0, sarama.V2_0_0_0} {
			if got := saramaConsume(ctx, t, addr, "old-k2", v, len(written)); !slices.Equal(got, written) {
				t.Errorf("sarama %s read %v, want %v", v, got, written)
			}
		}
		if got := kgoValues(ctx, t, addr, "old-k2", len(written)); !slices.Equal(got, written) {
			t.Errorf("franz-go read %v, want %v", got, written)
		}
		if _, err := exec.LookPath("kcat"); err == nil {
			out, err := runClient(ctx, t, nil, "kcat", "-C", "-b", addr, "-t", "old-k2", "-o", "beginning", "-e", "-q",
				"-X", "api.version.request=false", "-X", "broker.version.fallback=0.10.0.0", "-f", "%s\n")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(string(out)); !slices.Equal(got, written) {
				t.Errorf("kcat read %v, want %v", got, written)
			}
		}
	})
}

// pythonOldConsume reads topic with kafka-python set to api_version api.
func pythonOldConsume(ctx context.Context, t *testing.T, addr, topic, api string) []string {
	t.Helper()
	py, script := needKafkaPython(t)
	out, err := runClient(ctx, t, nil, py, script, "consume", "--bootstrap", addr, "--topic", topic, "--api-version", api)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m struct {
			Value string `json:"value"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("kafka-python output %q: %v", line, err)
		}
		got = append(got, m.Value)
	}
	return got
}
