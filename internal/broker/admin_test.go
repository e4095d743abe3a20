package broker

import (
	"errors"
	"net"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func strp(s string) *string { return &s }

func TestCreateListDeleteTopics(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)

	tb.createTopic(ctx, "orders", 3, map[string]*string{"retention.ms": strp("3600000")})
	topics, err := tb.adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := topics["orders"]; !ok || len(d.Partitions) != 3 {
		t.Fatalf("orders not listed with 3 partitions: %+v", topics)
	}

	resp, err := tb.adm.CreateTopic(ctx, 1, 1, nil, "orders")
	if !errors.Is(err, kerr.TopicAlreadyExists) || !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		t.Fatalf("create existing: err %v, resp %v", err, resp.Err)
	}
	if resp.ErrMessage != "Topic 'orders' already exists." {
		t.Errorf("message %q", resp.ErrMessage)
	}

	dr, err := tb.adm.DeleteTopics(ctx, "orders", "nope")
	if err != nil {
		t.Fatal(err)
	}
	if r := dr["orders"]; r.Err != nil {
		t.Fatalf("delete orders: %v", r.Err)
	}
	if r := dr["nope"]; !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("delete unknown topic: %v", r.Err)
	}
	if tb.b.topic("orders") != nil {
		t.Fatal("topic state still present after delete")
	}
	// The client may answer from its metadata cache for a moment.
	waitFor(t, "deleted topic no longer listed", func() bool {
		topics, err := tb.adm.ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, ok := topics["orders"]
		return !ok
	})
}

func TestCreateTopicsErrors(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)

	cases := []struct {
		name       string
		topic      string
		partitions int32
		rf         int16
		configs    []kmsg.CreateTopicsRequestTopicConfig
		want       *kerr.Error
		msg        string
	}{
		{name: "illegal name", topic: "bad/name", partitions: 1, rf: 1, want: kerr.InvalidTopicException},
		{name: "dot name", topic: "..", partitions: 1, rf: 1, want: kerr.InvalidTopicException},
		{name: "zero partitions", topic: "p0", partitions: 0, rf: 1, want: kerr.InvalidPartitions,
			msg: "Number of partitions was set to an invalid non-positive value."},
		{name: "zero rf", topic: "rf0", partitions: 1, rf: 0, want: kerr.InvalidReplicationFactor,
			msg: "Replication factor must be larger than 0, or -1 to use the default value."},
		{name: "rf above brokers", topic: "rf3", partitions: 1, rf: 3, want: kerr.InvalidReplicationFactor},
		{name: "unknown config", topic: "c1", partitions: 1, rf: 1, want: kerr.InvalidConfig,
			configs: []kmsg.CreateTopicsRequestTopicConfig{{Name: "no.such.config", Value: strp("1")}},
			msg:     "Unknown topic config name: no.such.config"},
		{name: "bad config value", topic: "c2", partitions: 1, rf: 1, want: kerr.InvalidConfig,
			configs: []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.ms", Value: strp("abc")}}},
		{name: "null config value", topic: "c3", partitions: 1, rf: 1, want: kerr.InvalidConfig,
			configs: []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.ms"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := kmsg.NewPtrCreateTopicsRequest()
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor, rt.Configs = c.topic, c.partitions, c.rf, c.configs
			req.Topics = append(req.Topics, rt)
			resp := tb.request(ctx, req).(*kmsg.CreateTopicsResponse)
			if len(resp.Topics) != 1 {
				t.Fatalf("%d topics in response", len(resp.Topics))
			}
			got := resp.Topics[0]
			if err := kerr.ErrorForCode(got.ErrorCode); !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if got.ErrorMessage == nil || *got.ErrorMessage == "" {
				t.Fatal("no error message")
			}
			if c.msg != "" && *got.ErrorMessage != c.msg {
				t.Errorf("message %q, want %q", *got.ErrorMessage, c.msg)
			}
			if tb.b.meta.Image().Topics[c.topic] != nil {
				t.Error("topic created despite the error")
			}
		})
	}

	t.Run("colliding name", func(t *testing.T) {
		tb.createTopic(ctx, "a.b", 1, nil)
		resp, err := tb.adm.CreateTopic(ctx, 1, 1, nil, "a_b")
		if !errors.Is(err, kerr.InvalidTopicException) || resp.ErrMessage != "Topic 'a_b' collides with existing topic: a.b" {
			t.Fatalf("collision: %v %q", err, resp.ErrMessage)
		}
	})

	t.Run("duplicate in one request", func(t *testing.T) {
		req := kmsg.NewPtrCreateTopicsRequest()
		for _, name := range []string{"dup", "dup", "single"} {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
			req.Topics = append(req.Topics, rt)
		}
		resp := tb.request(ctx, req).(*kmsg.CreateTopicsResponse)
		codes := map[string]int16{}
		for _, rt := range resp.Topics {
			codes[rt.Topic] = rt.ErrorCode
		}
		if len(resp.Topics) != 2 || codes["dup"] != kerr.InvalidRequest.Code || codes["single"] != 0 {
			t.Fatalf("codes %v (%d entries)", codes, len(resp.Topics))
		}
		if tb.b.meta.Image().Topics["dup"] != nil {
			t.Fatal("duplicate topic created")
		}
	})

	t.Run("validate only", func(t *testing.T) {
		resp, err := tb.adm.ValidateCreateTopics(ctx, 2, 1, map[string]*string{"cleanup.policy": strp("compact")}, "vo")
		if err != nil {
			t.Fatal(err)
		}
		if r := resp["vo"]; r.Err != nil || r.NumPartitions != 2 {
			t.Fatalf("validate only: %+v", r)
		}
		if tb.b.meta.Image().Topics["vo"] != nil {
			t.Fatal("validate only created the topic")
		}
	})

	t.Run("manual assignment", func(t *testing.T) {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "manual", -1, -1
		for p := int32(0); p < 2; p++ {
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, kmsg.CreateTopicsRequestTopicReplicaAssignment{Partition: p, Replicas: []int32{tb.b.nodeID}})
		}
		bad := rt
		bad.Topic = "manual-bad"
		bad.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: []int32{tb.b.nodeID + 1}}}
		req.Topics = append(req.Topics, rt, bad)
		resp := tb.request(ctx, req).(*kmsg.CreateTopicsResponse)
		if resp.Topics[0].ErrorCode != 0 || resp.Topics[0].NumPartitions != 2 {
			t.Fatalf("manual: %+v", resp.Topics[0])
		}
		if resp.Topics[1].ErrorCode != kerr.InvalidReplicaAssignment.Code {
			t.Fatalf("assignment to an unknown broker: code %d", resp.Topics[1].ErrorCode)
		}
	})
}

func TestCreateTopicsResponseV7(t *testing.T) {
	tb := newTestBroker(t, "num.partitions=4")
	ctx := testCtx(t)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "v7", -1, -1
	rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.ms", Value: strp("60000")}}
	req.Topics = append(req.Topics, rt)
	resp := tb.request(ctx, req).(*kmsg.CreateTopicsResponse)
	got := resp.Topics[0]
	if got.ErrorCode != 0 {
		t.Fatalf("code %d", got.ErrorCode)
	}
	if got.NumPartitions != 4 || got.ReplicationFactor != 1 {
		t.Fatalf("partitions %d rf %d, want defaults 4 and 1", got.NumPartitions, got.ReplicationFactor)
	}
	if id := tb.b.meta.Image().Topics["v7"].ID; got.TopicID != id || got.TopicID == [16]byte{} {
		t.Fatalf("topic id %x, stored %x", got.TopicID, id)
	}
	var found bool
	for _, c := range got.Configs {
		if c.Name == "retention.ms" {
			found = true
			if c.Value == nil || *c.Value != "60000" || c.Source != int8(kmsg.ConfigSourceDynamicTopicConfig) {
				t.Fatalf("retention.ms config %+v", c)
			}
		}
	}
	if !found {
		t.Fatal("retention.ms missing from configs")
	}
}

func TestDeleteTopicsByIDAndDisabled(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "byid", 1, nil)
	id := tb.b.meta.Image().Topics["byid"].ID

	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: id}, {TopicID: [16]byte{1, 2, 3}}}
	resp := tb.request(ctx, req).(*kmsg.DeleteTopicsResponse)
	if len(resp.Topics) != 2 {
		t.Fatalf("%d entries", len(resp.Topics))
	}
	if r := resp.Topics[0]; r.ErrorCode != 0 || r.Topic == nil || *r.Topic != "byid" {
		t.Fatalf("delete by id: %+v", r)
	}
	if r := resp.Topics[1]; r.ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown id: code %d", r.ErrorCode)
	}
	if tb.b.meta.Image().Topics["byid"] != nil {
		t.Fatal("topic not deleted")
	}

	off := newTestBroker(t, "delete.topic.enable=false")
	off.createTopic(ctx, "keep", 1, nil)
	dr, err := off.adm.DeleteTopics(ctx, "keep")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(dr["keep"].Err, kerr.TopicDeletionDisabled) {
		t.Fatalf("deletion disabled: %v", dr["keep"].Err)
	}
	if off.b.meta.Image().Topics["keep"] == nil {
		t.Fatal("topic deleted although deletion is disabled")
	}
}

func TestCreatePartitions(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "grow", 1, nil)

	vr, err := tb.adm.ValidateUpdatePartitions(ctx, 5, "grow")
	if err != nil || vr["grow"].Err != nil {
		t.Fatalf("validate only: %v %v", err, vr["grow"].Err)
	}
	if n := len(tb.b.meta.Image().Topics["grow"].Partitions); n != 1 {
		t.Fatalf("validate only changed the topic to %d partitions", n)
	}

	r, err := tb.adm.UpdatePartitions(ctx, 3, "grow")
	if err != nil || r["grow"].Err != nil {
		t.Fatalf("grow to 3: %v %v", err, r["grow"].Err)
	}
	if ts := tb.b.topic("grow"); ts == nil || len(ts.partitions) != 3 {
		t.Fatal("broker does not have 3 local partitions")
	}
	tb.produce(ctx, "grow", 2, 3)
	lo, err := tb.adm.ListEndOffsets(ctx, "grow")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := lo.Lookup("grow", 2); !ok || o.Offset != 3 {
		t.Fatalf("end offset of the new partition: %+v", o)
	}

	r, err = tb.adm.UpdatePartitions(ctx, 2, "grow")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(r["grow"].Err, kerr.InvalidPartitions) ||
		r["grow"].ErrMessage != "The topic grow currently has 3 partition(s); 2 would not be an increase." {
		t.Fatalf("shrink: %v %q", r["grow"].Err, r["grow"].ErrMessage)
	}
	r, err = tb.adm.UpdatePartitions(ctx, 3, "grow")
	if err != nil || !errors.Is(r["grow"].Err, kerr.InvalidPartitions) || r["grow"].ErrMessage != "Topic already has 3 partition(s)." {
		t.Fatalf("same count: %v %v %q", err, r["grow"].Err, r["grow"].ErrMessage)
	}
	r, err = tb.adm.UpdatePartitions(ctx, 3, "missing")
	if err != nil || !errors.Is(r["missing"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown topic: %v %v", err, r["missing"].Err)
	}
}

// config finds a config in a kadm describe result.
func findConfig(t *testing.T, rc kadm.ResourceConfig, name string) kadm.Config {
	t.Helper()
	if rc.Err != nil {
		t.Fatalf("resource %s: %v %s", rc.Name, rc.Err, rc.ErrMessage)
	}
	for _, c := range rc.Configs {
		if c.Key == name {
			return c
		}
	}
	t.Fatalf("config %s not described for %s", name, rc.Name)
	return kadm.Config{}
}

func TestDescribeConfigs(t *testing.T) {
	tb := newTestBroker(t, "log.segment.bytes=1048576")
	ctx := testCtx(t)
	tb.createTopic(ctx, "desc", 1, map[string]*string{"retention.ms": strp("60000")})

	rcs, err := tb.adm.DescribeTopicConfigs(ctx, "desc")
	if err != nil {
		t.Fatal(err)
	}
	rc := rcs[0]
	ret := findConfig(t, rc, "retention.ms")
	if ret.MaybeValue() != "60000" || ret.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("retention.ms: %+v", ret)
	}
	if len(ret.Synonyms) == 0 || ret.Synonyms[0].Key != "retention.ms" {
		t.Fatalf("retention.ms synonyms: %+v", ret.Synonyms)
	}
	seg := findConfig(t, rc, "segment.bytes")
	if seg.MaybeValue() != "1048576" || seg.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("segment.bytes: %+v", seg)
	}
	if len(seg.Synonyms) == 0 || seg.Synonyms[0].Key != "log.segment.bytes" {
		t.Fatalf("segment.bytes synonyms: %+v", seg.Synonyms)
	}
	if pre := findConfig(t, rc, "preallocate"); pre.Source != kmsg.ConfigSourceDefaultConfig || pre.MaybeValue() != "false" {
		t.Fatalf("preallocate: %+v", pre)
	}

	id := tb.b.nodeID
	brs, err := tb.adm.DescribeBrokerConfigs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c := findConfig(t, brs[0], "log.segment.bytes"); c.MaybeValue() != "1048576" || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("broker log.segment.bytes: %+v", c)
	}

	// Raw request: name filter, documentation, types, and errors.
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeDocumentation = true
	for _, r := range []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{
		{kmsg.ConfigResourceTypeTopic, "desc"},
		{kmsg.ConfigResourceTypeTopic, "missing"},
		{kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(id) + 1)},
		{kmsg.ConfigResourceTypeBroker, "x"},
	} {
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = r.typ, r.name
		rr.ConfigNames = []string{"cleanup.policy", "no.such.key"}
		req.Resources = append(req.Resources, rr)
	}
	resp := tb.request(ctx, req).(*kmsg.DescribeConfigsResponse)
	got := resp.Resources[0]
	if got.ErrorCode != 0 || len(got.Configs) != 1 || got.Configs[0].Name != "cleanup.policy" {
		t.Fatalf("filtered topic configs: %+v", got)
	}
	if c := got.Configs[0]; c.ConfigType != kmsg.ConfigTypeList || c.Documentation == nil || c.ConfigSynonyms != nil {
		t.Fatalf("cleanup.policy entry: %+v", c)
	}
	if code := resp.Resources[1].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: code %d", code)
	}
	for _, r := range resp.Resources[2:] {
		if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil {
			t.Fatalf("broker %q: code %d", r.ResourceName, r.ErrorCode)
		}
	}
}

func TestAlterConfigsRoundTripAndRestart(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "alt", 1, nil)

	check := func(resps kadm.AlterConfigsResponses, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resps {
			if r.Err != nil {
				t.Fatalf("alter %s: %v %s", r.Name, r.Err, r.ErrMessage)
			}
		}
	}
	check(tb.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: strp("120000")},
		{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: strp("compact")},
	}, "alt"))
	if got := tb.b.meta.Image().Topics["alt"].Configs; got["retention.ms"] != "120000" || got["cleanup.policy"] != "delete,compact" {
		t.Fatalf("overrides after SET and APPEND: %v", got)
	}
	if ts := tb.b.topic("alt"); ts.cfg.RetentionMs != 120000 || !slices.Contains(ts.cfg.CleanupPolicy, "compact") {
		t.Fatalf("running topic config not updated: %+v", ts.cfg)
	}
	check(tb.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SubtractConfig, Name: "cleanup.policy", Value: strp("delete")},
	}, "alt"))
	if got := tb.b.meta.Image().Topics["alt"].Configs["cleanup.policy"]; got != "compact" {
		t.Fatalf("cleanup.policy after SUBTRACT: %q", got)
	}

	// Errors: APPEND to a non-list, bad value, validate only, unknown topic.
	rs, err := tb.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.AppendConfig, Name: "retention.ms", Value: strp("1")}}, "alt")
	if err != nil || !errors.Is(rs[0].Err, kerr.InvalidConfig) {
		t.Fatalf("append to a long: %v %v", err, rs)
	}
	rs, err = tb.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: strp("soon")}}, "alt")
	if err != nil || !errors.Is(rs[0].Err, kerr.InvalidConfig) {
		t.Fatalf("bad value: %v %v", err, rs)
	}
	check(tb.adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: strp("5")}}, "alt"))
	if got := tb.b.meta.Image().Topics["alt"].Configs["retention.ms"]; got != "120000" {
		t.Fatalf("validate only changed retention.ms to %q", got)
	}
	rs, err = tb.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: strp("5")}}, "missing")
	if err != nil || !errors.Is(rs[0].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown topic: %v %v", err, rs)
	}

	// Broker: a dynamic key, then a read-only one.
	id := tb.b.nodeID
	check(tb.adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.ms", Value: strp("7200000")}}, id))
	rs, err = tb.adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.dirs", Value: strp("/x")}}, id)
	if err != nil || !errors.Is(rs[0].Err, kerr.InvalidRequest) {
		t.Fatalf("read-only broker key: %v %v", err, rs)
	}

	tb.restart()
	ctx = testCtx(t)

	rcs, err := tb.adm.DescribeTopicConfigs(ctx, "alt")
	if err != nil {
		t.Fatal(err)
	}
	if c := findConfig(t, rcs[0], "retention.ms"); c.MaybeValue() != "120000" {
		t.Fatalf("retention.ms after restart: %+v", c)
	}
	if c := findConfig(t, rcs[0], "cleanup.policy"); c.MaybeValue() != "compact" {
		t.Fatalf("cleanup.policy after restart: %+v", c)
	}
	brs, err := tb.adm.DescribeBrokerConfigs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c := findConfig(t, brs[0], "log.retention.ms"); c.MaybeValue() != "7200000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("broker log.retention.ms after restart: %+v", c)
	}

	// A topic without its own retention.ms takes the dynamic broker value.
	tb.createTopic(ctx, "plain", 1, nil)
	rcs, err = tb.adm.DescribeTopicConfigs(ctx, "plain")
	if err != nil {
		t.Fatal(err)
	}
	if c := findConfig(t, rcs[0], "retention.ms"); c.MaybeValue() != "7200000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("plain retention.ms: %+v", c)
	}
	if got := tb.b.topic("plain").cfg.RetentionMs; got != 7200000 {
		t.Errorf("running topic retention.ms is %d, want the dynamic broker value 7200000", got)
	}

	// Legacy AlterConfigs replaces the whole set of overrides.
	check(tb.adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "segment.ms", Value: strp("3600000")}}, "alt"))
	if got := tb.b.meta.Image().Topics["alt"].Configs; len(got) != 1 || got["segment.ms"] != "3600000" {
		t.Fatalf("overrides after legacy alter: %v", got)
	}
	check(tb.adm.AlterBrokerConfigsState(ctx, nil, id))
	if got := tb.b.meta.Image().NodeConfigsOf(id); len(got) != 0 {
		t.Fatalf("broker overrides after legacy alter with none: %v", got)
	}
}

func TestDeleteRecords(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "dr", 1, nil)
	tb.produce(ctx, "dr", 0, 10)

	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "dr", Partition: 0, At: 4})
	res, err := tb.adm.DeleteRecords(ctx, os)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Lookup("dr", 0); r.Err != nil || r.LowWatermark != 4 {
		t.Fatalf("delete before 4: %+v", r)
	}
	so, err := tb.adm.ListStartOffsets(ctx, "dr")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := so.Lookup("dr", 0); o.Offset != 4 {
		t.Fatalf("earliest offset %d, want 4", o.Offset)
	}

	os = nil
	os.Add(kadm.Offset{Topic: "dr", Partition: 0, At: 11})
	res, err = tb.adm.DeleteRecords(ctx, os)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Lookup("dr", 0); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Fatalf("offset past the high watermark: %+v", r)
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "dr", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 7, Offset: 1}}}}
	resp := tb.request(ctx, req).(*kmsg.DeleteRecordsResponse)
	if r := resp.Topics[0].Partitions[0]; r.ErrorCode != kerr.UnknownTopicOrPartition.Code || r.LowWatermark != -1 {
		t.Fatalf("unknown partition: %+v", r)
	}

	os = nil
	os.Add(kadm.Offset{Topic: "dr", Partition: 0, At: -1})
	res, err = tb.adm.DeleteRecords(ctx, os)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Lookup("dr", 0); r.Err != nil || r.LowWatermark != 10 {
		t.Fatalf("delete up to the high watermark: %+v", r)
	}
	if lso := tb.b.topic("dr").partitions[0].Log.LogStartOffset(); lso != 10 {
		t.Fatalf("log start offset %d, want 10", lso)
	}
}

func TestDescribeLogDirs(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "ld", 2, nil)
	tb.produce(ctx, "ld", 1, 5)

	dirs, err := tb.adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	dirs.Each(func(d kadm.DescribedLogDir) {
		if d.Err != nil {
			t.Errorf("dir %s: %v", d.Dir, d.Err)
		}
		for _, p := range []int32{0, 1} {
			lp, ok := d.Topics.Lookup("ld", p)
			if !ok {
				t.Errorf("partition ld-%d not listed in %s", p, d.Dir)
				continue
			}
			if p == 1 {
				found = true
				if lp.Size <= 0 {
					t.Errorf("ld-1 size %d after producing", lp.Size)
				}
			}
		}
	})
	if !found {
		t.Fatal("no log dir listed ld-1")
	}

	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.Version = 4
	req.Topics = []kmsg.DescribeLogDirsRequestTopic{{Topic: "ld", Partitions: []int32{1}}}
	resp := tb.request(ctx, req).(*kmsg.DescribeLogDirsResponse)
	if len(resp.Dirs) != 1 {
		t.Fatalf("%d dirs", len(resp.Dirs))
	}
	d := resp.Dirs[0]
	if d.TotalBytes <= 0 || d.UsableBytes < 0 || d.UsableBytes > d.TotalBytes {
		t.Fatalf("total %d usable %d", d.TotalBytes, d.UsableBytes)
	}
	if len(d.Topics) != 1 || len(d.Topics[0].Partitions) != 1 || d.Topics[0].Partitions[0].Partition != 1 {
		t.Fatalf("filtered topics: %+v", d.Topics)
	}
}

func TestDescribeCluster(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeClusterAuthorizedOperations = true
	resp := tb.request(ctx, req).(*kmsg.DescribeClusterResponse)
	if resp.ErrorCode != 0 {
		t.Fatalf("code %d", resp.ErrorCode)
	}
	if resp.ClusterID == "" || resp.ClusterID != tb.b.meta.Image().ClusterID {
		t.Fatalf("cluster id %q", resp.ClusterID)
	}
	if resp.ControllerID != tb.b.nodeID || len(resp.Brokers) != 1 {
		t.Fatalf("controller %d brokers %+v", resp.ControllerID, resp.Brokers)
	}
	_, port, _ := net.SplitHostPort(tb.b.Addr())
	if strconv.Itoa(int(resp.Brokers[0].Port)) != port || resp.Brokers[0].NodeID != tb.b.nodeID {
		t.Fatalf("broker %+v, listening on %s", resp.Brokers[0], tb.b.Addr())
	}
	if resp.ClusterAuthorizedOperations&(1<<8) == 0 {
		t.Fatalf("authorized operations %b lack DESCRIBE", resp.ClusterAuthorizedOperations)
	}

	req = kmsg.NewPtrDescribeClusterRequest()
	req.Version = 1
	req.EndpointType = endpointTypeController
	resp = tb.request(ctx, req).(*kmsg.DescribeClusterResponse)
	if resp.ErrorCode != kerr.UnsupportedEndpointType.Code {
		t.Fatalf("controller endpoint: code %d", resp.ErrorCode)
	}
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "ep", 1, nil)
	tb.produce(ctx, "ep", 0, 5)

	var r kadm.OffsetForLeaderEpochRequest
	r.Add("ep", 0, 0)
	res, err := tb.adm.OffsetForLeaderEpoch(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if o := res["ep"][0]; o.Err != nil || o.LeaderEpoch != 0 || o.EndOffset != 5 {
		t.Errorf("ep-0: %+v", o)
	}

	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = -1
	for _, pc := range [][2]int32{{0, -1}, {0, 1}, {3, -1}} {
		p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		p.Partition, p.CurrentLeaderEpoch, p.LeaderEpoch = pc[0], pc[1], 0
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "ep"
		rt.Partitions = append(rt.Partitions, p)
		req.Topics = append(req.Topics, rt)
	}
	resp := tb.request(ctx, req).(*kmsg.OffsetForLeaderEpochResponse)
	if got := resp.Topics[0].Partitions[0]; got.ErrorCode != 0 || got.EndOffset != 5 {
		t.Fatalf("unchecked current epoch: %+v", got)
	}
	if got := resp.Topics[1].Partitions[0]; got.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("current epoch from the future: %+v", got)
	}
	if got := resp.Topics[2].Partitions[0]; got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown partition: %+v", got)
	}
}
