package broker

// Fidelity tests for the admin APIs, each pinning an answer of Apache
// Kafka's request handlers (KafkaApis, ControllerApis,
// ReplicationControlManager, ConfigHelper) that Silkworm gave differently.

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// msgOf is a response's ErrorMessage for failure messages: "<nil>" for nil.
func msgOf(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// KafkaApis.getCoordinator and FindCoordinatorResponse: before v4 the
// message is Errors.message(), "NONE" on success; from v4 a looked-up key
// carries "" and an unknown key type fails every key with INVALID_REQUEST's
// default message.
func TestFidelity3FindCoordinatorMessages(t *testing.T) {
	tb := newTestBroker(t)
	c := dialRaw(t, tb.b.Addr())
	invalid := kafkaMessages[kerr.InvalidRequest.Code]

	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 3
	req.CoordinatorKey = "g"
	resp := c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
	if resp.ErrorCode != 0 || msgOf(resp.ErrorMessage) != "NONE" {
		t.Fatalf("v3 success: code %d message %q, want 0 and \"NONE\"", resp.ErrorCode, msgOf(resp.ErrorMessage))
	}
	req.CoordinatorType = 7
	resp = c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
	if resp.ErrorCode != kerr.InvalidRequest.Code || msgOf(resp.ErrorMessage) != invalid {
		t.Fatalf("v3 unknown type: code %d message %q, want INVALID_REQUEST %q", resp.ErrorCode, msgOf(resp.ErrorMessage), invalid)
	}

	req = kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 4
	req.CoordinatorKeys = []string{"g1", "g2"}
	resp = c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
	for _, co := range resp.Coordinators {
		if co.ErrorCode != 0 || co.ErrorMessage == nil || *co.ErrorMessage != "" {
			t.Fatalf("v4 success %s: code %d message %q, want 0 and \"\"", co.Key, co.ErrorCode, msgOf(co.ErrorMessage))
		}
	}
	req.CoordinatorType = 7
	resp = c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
	if len(resp.Coordinators) != 2 {
		t.Fatalf("v4 unknown type: %d coordinators, want 2", len(resp.Coordinators))
	}
	for _, co := range resp.Coordinators {
		if co.ErrorCode != kerr.InvalidRequest.Code || msgOf(co.ErrorMessage) != invalid {
			t.Fatalf("v4 unknown type %s: code %d message %q, want INVALID_REQUEST %q", co.Key, co.ErrorCode, msgOf(co.ErrorMessage), invalid)
		}
	}
}

// ConfigHelper.describeConfigs: an empty ConfigNames is all configs, as a
// null one; an unknown topic is UNKNOWN_TOPIC_OR_PARTITION with no
// message.
func TestFidelity3DescribeConfigsEmptyNamesAndUnknownTopic(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "dc", 1, nil)

	req := kmsg.NewPtrDescribeConfigsRequest()
	all := kmsg.NewDescribeConfigsRequestResource()
	all.ResourceType, all.ResourceName = kmsg.ConfigResourceTypeTopic, "dc"
	empty := all
	empty.ConfigNames = []string{}
	missing := kmsg.NewDescribeConfigsRequestResource()
	missing.ResourceType, missing.ResourceName = kmsg.ConfigResourceTypeTopic, "no-such-topic"
	req.Resources = []kmsg.DescribeConfigsRequestResource{all, empty, missing}
	resp := tb.request(ctx, req).(*kmsg.DescribeConfigsResponse)
	if len(resp.Resources) != 3 {
		t.Fatalf("%d resources, want 3", len(resp.Resources))
	}
	nAll, nEmpty := len(resp.Resources[0].Configs), len(resp.Resources[1].Configs)
	if nAll == 0 || nEmpty != nAll {
		t.Fatalf("null ConfigNames gave %d configs, empty ConfigNames %d; want the same, non-zero", nAll, nEmpty)
	}
	m := resp.Resources[2]
	if m.ErrorCode != kerr.UnknownTopicOrPartition.Code || m.ErrorMessage != nil {
		t.Fatalf("unknown topic: code %d message %q, want UNKNOWN_TOPIC_OR_PARTITION and no message", m.ErrorCode, msgOf(m.ErrorMessage))
	}

	// A resource type Kafka does not know fails the whole request.
	odd := kmsg.NewDescribeConfigsRequestResource()
	odd.ResourceType, odd.ResourceName = kmsg.ConfigResourceType(3), "x"
	req.Resources = []kmsg.DescribeConfigsRequestResource{all, odd}
	resp = tb.request(ctx, req).(*kmsg.DescribeConfigsResponse)
	for _, rr := range resp.Resources {
		if rr.ErrorCode != kerr.InvalidRequest.Code || msgOf(rr.ErrorMessage) != kafkaMessages[kerr.InvalidRequest.Code] || len(rr.Configs) != 0 {
			t.Fatalf("with an unknown type, resource %s: code %d %q, %d configs; want INVALID_REQUEST for all",
				rr.ResourceName, rr.ErrorCode, msgOf(rr.ErrorMessage), len(rr.Configs))
		}
	}
}

// ConfigAdminManager.preprocess, for both AlterConfigs forms: every
// occurrence of a repeated resource, duplicate keys, null values and the
// broker id are INVALID_REQUEST with Kafka's messages.
func TestFidelity3AlterConfigsPreprocess(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "ac", 1, nil)
	val := func(s string) *string { return &s }

	type want struct {
		code int16
		msg  string
	}
	check := func(what string, got []want, exp []want) {
		t.Helper()
		if len(got) != len(exp) {
			t.Fatalf("%s: %d results, want %d: %v", what, len(got), len(exp), got)
		}
		for i := range exp {
			if got[i] != exp[i] {
				t.Fatalf("%s: result %d is %v, want %v", what, i, got[i], exp[i])
			}
		}
	}
	exp := []want{
		{kerr.InvalidRequest.Code, "Each resource must appear at most once."},
		{kerr.InvalidRequest.Code, "Each resource must appear at most once."},
		{kerr.InvalidRequest.Code, "Error due to duplicate config keys"},
		{kerr.InvalidRequest.Code, "Null value not supported for : retention.ms, segment.ms"},
		{kerr.InvalidRequest.Code, "Node id must be an integer, but it is: x"},
		{kerr.InvalidRequest.Code, "Unexpected broker id, expected 1, but received 7"},
		{kerr.InvalidRequest.Code, "Unknown resource type 9"},
	}

	legacy := kmsg.NewPtrAlterConfigsRequest()
	lres := func(typ kmsg.ConfigResourceType, name string, kv ...any) kmsg.AlterConfigsRequestResource {
		r := kmsg.NewAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = typ, name
		for i := 0; i < len(kv); i += 2 {
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = kv[i].(string), kv[i+1].(*string)
			r.Configs = append(r.Configs, c)
		}
		return r
	}
	legacy.Resources = []kmsg.AlterConfigsRequestResource{
		lres(kmsg.ConfigResourceTypeTopic, "twice", "retention.ms", val("1")),
		lres(kmsg.ConfigResourceTypeTopic, "twice"),
		lres(kmsg.ConfigResourceTypeTopic, "ac", "retention.ms", val("1"), "retention.ms", val("2")),
		lres(kmsg.ConfigResourceTypeTopic, "ac2", "retention.ms", (*string)(nil), "segment.ms", (*string)(nil)),
		lres(kmsg.ConfigResourceTypeBroker, "x"),
		lres(kmsg.ConfigResourceTypeBroker, "7"),
		lres(kmsg.ConfigResourceType(9), "r"),
	}
	lresp := tb.request(ctx, legacy).(*kmsg.AlterConfigsResponse)
	var got []want
	for _, r := range lresp.Resources {
		got = append(got, want{r.ErrorCode, msgOf(r.ErrorMessage)})
	}
	check("AlterConfigs", got, exp)

	inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ires := func(typ kmsg.ConfigResourceType, name string, kv ...any) kmsg.IncrementalAlterConfigsRequestResource {
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = typ, name
		for i := 0; i < len(kv); i += 2 {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value = kv[i].(string), kv[i+1].(*string)
			r.Configs = append(r.Configs, c)
		}
		return r
	}
	inc.Resources = []kmsg.IncrementalAlterConfigsRequestResource{
		ires(kmsg.ConfigResourceTypeTopic, "twice", "retention.ms", val("1")),
		ires(kmsg.ConfigResourceTypeTopic, "twice"),
		ires(kmsg.ConfigResourceTypeTopic, "ac", "retention.ms", val("1"), "retention.ms", val("2")),
		ires(kmsg.ConfigResourceTypeTopic, "ac2", "retention.ms", (*string)(nil), "segment.ms", (*string)(nil)),
		ires(kmsg.ConfigResourceTypeBroker, "x"),
		ires(kmsg.ConfigResourceTypeBroker, "7"),
		ires(kmsg.ConfigResourceType(9), "r"),
	}
	iresp := tb.request(ctx, inc).(*kmsg.IncrementalAlterConfigsResponse)
	got = nil
	for _, r := range iresp.Resources {
		got = append(got, want{r.ErrorCode, msgOf(r.ErrorMessage)})
	}
	check("IncrementalAlterConfigs", got, exp)

	// A DELETE may carry a null value; nothing above changed the topic.
	del := kmsg.NewPtrIncrementalAlterConfigsRequest()
	d := ires(kmsg.ConfigResourceTypeTopic, "ac", "retention.ms", (*string)(nil))
	d.Configs[0].Op = kmsg.IncrementalAlterConfigOpDelete
	del.Resources = []kmsg.IncrementalAlterConfigsRequestResource{d}
	if r := tb.request(ctx, del).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]; r.ErrorCode != 0 {
		t.Fatalf("DELETE with a null value: code %d %q", r.ErrorCode, msgOf(r.ErrorMessage))
	}
}

// ReplicationControlManager.createTopics checks configs before the
// partition count and replication factor, names every null config, and
// charges the mutation quota only for a topic that passed every check.
func TestFidelity3CreateTopicsCheckOrderAndQuota(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	create := func(version int16, name string, partitions int32, configs ...kmsg.CreateTopicsRequestTopicConfig) kmsg.CreateTopicsResponseTopic {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = version
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor, rt.Configs = name, partitions, 1, configs
		req.Topics = append(req.Topics, rt)
		resp := tb.request(ctx, req).(*kmsg.CreateTopicsResponse)
		if len(resp.Topics) != 1 {
			t.Fatalf("%d topics in response", len(resp.Topics))
		}
		return resp.Topics[0]
	}
	cfg := func(k string, v *string) kmsg.CreateTopicsRequestTopicConfig {
		return kmsg.CreateTopicsRequestTopicConfig{Name: k, Value: v}
	}

	st := create(7, "order", 0, cfg("no.such.config", strp("1")))
	if st.ErrorCode != kerr.InvalidConfig.Code {
		t.Fatalf("bad config and 0 partitions: code %d %q, want INVALID_CONFIG first", st.ErrorCode, msgOf(st.ErrorMessage))
	}
	st = create(7, "nulls", 1, cfg("retention.ms", nil), cfg("segment.ms", strp("60000")), cfg("cleanup.policy", nil))
	if want := "Null value not supported for topic configs: retention.ms,cleanup.policy"; st.ErrorCode != kerr.InvalidConfig.Code || msgOf(st.ErrorMessage) != want {
		t.Fatalf("null configs: code %d %q, want INVALID_CONFIG %q", st.ErrorCode, msgOf(st.ErrorMessage), want)
	}

	// One partition mutation per second: a refused topic of 50 partitions
	// must not use it up.
	ent := kmsg.NewAlterClientQuotasRequestEntry()
	ent.Entity = []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "client-id"}}
	ent.Ops = []kmsg.AlterClientQuotasRequestEntryOp{{Key: "controller_mutation_rate", Value: 1}}
	aq := kmsg.NewPtrAlterClientQuotasRequest()
	aq.Entries = []kmsg.AlterClientQuotasRequestEntry{ent}
	if r := tb.request(ctx, aq).(*kmsg.AlterClientQuotasResponse); r.Entries[0].ErrorCode != 0 {
		t.Fatalf("set quota: %d %q", r.Entries[0].ErrorCode, msgOf(r.Entries[0].ErrorMessage))
	}
	st = create(6, "refused", 50, cfg("no.such.config", strp("1")))
	if st.ErrorCode != kerr.InvalidConfig.Code {
		t.Fatalf("refused topic: code %d %q, want INVALID_CONFIG", st.ErrorCode, msgOf(st.ErrorMessage))
	}
	st = create(6, "allowed", 1)
	if st.ErrorCode != 0 {
		t.Fatalf("a valid topic after a refused one: code %d %q, want success (the refused topic is not charged)", st.ErrorCode, msgOf(st.ErrorMessage))
	}
}

// ControllerApis.deleteTopics: an entry with neither name nor id is
// INVALID_REQUEST; a name given together with its own topic's id is one
// INVALID_REQUEST entry for the pair and deletes nothing; with deletion
// disabled the code comes without a message.
func TestFidelity3DeleteTopicsEntries(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "pair", 1, nil)
	id := tb.b.meta.Image().Topics["pair"].ID
	name := "pair"

	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.Topics = []kmsg.DeleteTopicsRequestTopic{{}, {TopicID: id}, {Topic: &name}}
	resp := tb.request(ctx, req).(*kmsg.DeleteTopicsResponse)
	if len(resp.Topics) != 2 {
		t.Fatalf("%d entries, want 2: %+v", len(resp.Topics), resp.Topics)
	}
	if r := resp.Topics[0]; r.ErrorCode != kerr.InvalidRequest.Code || msgOf(r.ErrorMessage) != "Neither topic name nor id were specified." {
		t.Fatalf("empty entry: code %d %q", r.ErrorCode, msgOf(r.ErrorMessage))
	}
	r := resp.Topics[1]
	if r.ErrorCode != kerr.InvalidRequest.Code || r.Topic == nil || *r.Topic != name || r.TopicID != id ||
		msgOf(r.ErrorMessage) != "The provided topic name maps to an ID that was already supplied." {
		t.Fatalf("name and its id: %+v %q", r, msgOf(r.ErrorMessage))
	}
	if tb.b.meta.Image().Topics["pair"] == nil {
		t.Fatal("topic deleted although the request named it twice")
	}

	off := newTestBroker(t, "delete.topic.enable=false")
	off.createTopic(ctx, "keep", 1, nil)
	dreq := kmsg.NewPtrDeleteTopicsRequest()
	dreq.Version = 5
	dreq.TopicNames = []string{"keep"}
	dresp := dialRaw(t, off.b.Addr()).roundTrip(dreq).(*kmsg.DeleteTopicsResponse)
	if r := dresp.Topics[0]; r.ErrorCode != kerr.TopicDeletionDisabled.Code || r.ErrorMessage != nil {
		t.Fatalf("deletion disabled: code %d message %q, want TOPIC_DELETION_DISABLED and no message", r.ErrorCode, msgOf(r.ErrorMessage))
	}
}

// ReplicaManager.deleteRecordsOnLocalLog refuses internal topics with
// INVALID_TOPIC_EXCEPTION (before the cleanup.policy check, which would
// say POLICY_VIOLATION for the compacted __consumer_offsets).
func TestFidelity3DeleteRecordsInternalTopic(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"g"} // creates __consumer_offsets
	if r := tb.request(ctx, fc).(*kmsg.FindCoordinatorResponse); len(r.Coordinators) != 1 || r.Coordinators[0].ErrorCode != 0 {
		t.Fatalf("find coordinator: %+v", r)
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "__consumer_offsets"
	rt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: -1}}
	req.Topics = []kmsg.DeleteRecordsRequestTopic{rt}
	resp := tb.request(ctx, req).(*kmsg.DeleteRecordsResponse)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.InvalidTopicException.Code || p.LowWatermark != -1 {
		t.Fatalf("internal topic: code %d low watermark %d, want INVALID_TOPIC_EXCEPTION and -1", p.ErrorCode, p.LowWatermark)
	}
}

// ReplicationControlManager.electLeader's messages: the default message of
// ELECTION_NOT_NEEDED, "No such topic as t", "No such partition as t-9";
// an unknown election type is "Unknown election type 5".
func TestFidelity3ElectLeadersMessages(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "el", 1, nil)
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version = 2
	req.Topics = []kmsg.ElectLeadersRequestTopic{
		{Topic: "el", Partitions: []int32{0, 9}},
		{Topic: "no-such", Partitions: []int32{0}},
	}
	resp := tb.request(ctx, req).(*kmsg.ElectLeadersResponse)
	type res struct {
		code int16
		msg  string
	}
	var got []res
	for _, st := range resp.Topics {
		for _, sp := range st.Partitions {
			got = append(got, res{sp.ErrorCode, msgOf(sp.ErrorMessage)})
		}
	}
	want := []res{
		{kerr.ElectionNotNeeded.Code, "Leader election not needed for topic partition."},
		{kerr.UnknownTopicOrPartition.Code, "No such partition as el-9"},
		{kerr.UnknownTopicOrPartition.Code, "No such topic as no-such"},
	}
	if len(got) != len(want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("result %d: %v, want %v", i, got[i], want[i])
		}
	}

	req.ElectionType = 5
	resp = tb.request(ctx, req).(*kmsg.ElectLeadersResponse)
	if resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("unknown election type: top-level code %d", resp.ErrorCode)
	}
	if sp := resp.Topics[0].Partitions[0]; msgOf(sp.ErrorMessage) != "Unknown election type 5" {
		t.Fatalf("unknown election type: message %q", msgOf(sp.ErrorMessage))
	}
}

// Partition.checkCurrentLeaderEpoch checks any CurrentLeaderEpoch other
// than -1: a negative one is older than every epoch, FENCED_LEADER_EPOCH.
func TestFidelity3OffsetForLeaderEpochNegativeCurrentEpoch(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "oe", 1, nil)
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = -1
	req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: "oe",
		Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{{Partition: 0, CurrentLeaderEpoch: -5, LeaderEpoch: 0}}}}
	resp := tb.request(ctx, req).(*kmsg.OffsetForLeaderEpochResponse)
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("current leader epoch -5: code %d, want FENCED_LEADER_EPOCH", sp.ErrorCode)
	}
}

// ConfigurationControlManager.getParts: without an override, APPEND starts
// from the config's built-in default ("delete" for cleanup.policy), not
// from the broker's log.cleanup.policy.
func TestFidelity3IncrementalAppendStartsFromBuiltInDefault(t *testing.T) {
	tb := newTestBroker(t, "log.cleanup.policy=compact")
	ctx := testCtx(t)
	tb.createTopic(ctx, "app", 1, nil)
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "app"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = "cleanup.policy", kmsg.IncrementalAlterConfigOpAppend, strp("delete")
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	if r := tb.request(ctx, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]; r.ErrorCode != 0 {
		t.Fatalf("append: code %d %q", r.ErrorCode, msgOf(r.ErrorMessage))
	}
	if got := tb.b.meta.Image().Topics["app"].Configs["cleanup.policy"]; got != "delete" {
		t.Fatalf("cleanup.policy override %q, want \"delete\" (the built-in default plus delete)", got)
	}
}

// ControllerConfigurationValidator and ConfigurationControlManager: an
// empty topic name is INVALID_REQUEST "Default topic resources are not
// allowed.", and configs are validated before the topic's existence.
func TestFidelity3AlterTopicConfigsCheckOrder(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	alter := func(name, key, value string) kmsg.IncrementalAlterConfigsResponseResource {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, name
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = key, &value
		res.Configs = append(res.Configs, c)
		req.Resources = append(req.Resources, res)
		return tb.request(ctx, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	}
	if r := alter("", "retention.ms", "1"); r.ErrorCode != kerr.InvalidRequest.Code || msgOf(r.ErrorMessage) != "Default topic resources are not allowed." {
		t.Fatalf("empty topic name: code %d %q", r.ErrorCode, msgOf(r.ErrorMessage))
	}
	if r := alter("missing", "retention.ms", "abc"); r.ErrorCode != kerr.InvalidConfig.Code {
		t.Fatalf("bad value on a missing topic: code %d %q, want INVALID_CONFIG first", r.ErrorCode, msgOf(r.ErrorMessage))
	}
	if r := alter("missing", "retention.ms", "1"); r.ErrorCode != kerr.UnknownTopicOrPartition.Code || msgOf(r.ErrorMessage) != "The topic 'missing' does not exist." {
		t.Fatalf("missing topic: code %d %q", r.ErrorCode, msgOf(r.ErrorMessage))
	}
}

// ReplicationControlManager.createTopic draws the topic id before it looks
// at ValidateOnly: a validate-only success carries a non-zero id, and no
// topic is created.
func TestFidelity3CreateTopicsValidateOnlyTopicID(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.ValidateOnly = true
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "dry", 2, 1
	req.Topics = append(req.Topics, rt)
	st := tb.request(ctx, req).(*kmsg.CreateTopicsResponse).Topics[0]
	if st.ErrorCode != 0 || st.TopicID == [16]byte{} || st.NumPartitions != 2 {
		t.Fatalf("validate only: code %d id %x partitions %d; want success, a non-zero id, 2", st.ErrorCode, st.TopicID, st.NumPartitions)
	}
	if tb.b.meta.Image().Topics["dry"] != nil {
		t.Fatal("validate only created the topic")
	}
}

// librdkafka's 0081-admin.c do_test_AlterConfigs and
// do_test_IncrementalAlterConfigs, both forms: valid topic configs, a
// valid broker config, and valid configs for a topic that does not exist
// (UNKNOWN_TOPIC_OR_PARTITION, after the configs validated).
func TestFidelity3LibrdkafkaAlterConfigsExpectations(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "rdk", 1, nil)
	type kv struct{ k, v string }
	resources := []struct {
		typ  kmsg.ConfigResourceType
		name string
		kvs  []kv
		want int16
	}{
		{kmsg.ConfigResourceTypeTopic, "rdk", []kv{{"compression.type", "gzip"}, {"flush.ms", "12345678"}}, 0},
		{kmsg.ConfigResourceTypeBroker, "1", []kv{{"sasl.kerberos.min.time.before.relogin", "58000"}}, 0},
		{kmsg.ConfigResourceTypeTopic, "rdk-missing", []kv{{"compression.type", "lz4"}, {"max.compaction.lag.ms", "3600000"}},
			kerr.UnknownTopicOrPartition.Code},
	}
	legacy := kmsg.NewPtrAlterConfigsRequest()
	inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, r := range resources {
		lr := kmsg.NewAlterConfigsRequestResource()
		lr.ResourceType, lr.ResourceName = r.typ, r.name
		ir := kmsg.NewIncrementalAlterConfigsRequestResource()
		ir.ResourceType, ir.ResourceName = r.typ, r.name
		for _, c := range r.kvs {
			lr.Configs = append(lr.Configs, kmsg.AlterConfigsRequestResourceConfig{Name: c.k, Value: strp(c.v)})
			ir.Configs = append(ir.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: c.k, Value: strp(c.v)})
		}
		legacy.Resources = append(legacy.Resources, lr)
		inc.Resources = append(inc.Resources, ir)
	}
	for i, rr := range tb.request(ctx, legacy).(*kmsg.AlterConfigsResponse).Resources {
		if rr.ErrorCode != resources[i].want {
			t.Errorf("AlterConfigs %s: code %d %q, want %d", rr.ResourceName, rr.ErrorCode, msgOf(rr.ErrorMessage), resources[i].want)
		}
	}
	for i, rr := range tb.request(ctx, inc).(*kmsg.IncrementalAlterConfigsResponse).Resources {
		if rr.ErrorCode != resources[i].want {
			t.Errorf("IncrementalAlterConfigs %s: code %d %q, want %d", rr.ResourceName, rr.ErrorCode, msgOf(rr.ErrorMessage), resources[i].want)
		}
	}
}

// KafkaApis.getCoordinator for key type SHARE: INVALID_REQUEST before v6;
// from v6 the leader of the key's __share_group_state partition, and
// INVALID_REQUEST (no message, like every looked-up key) for a key that
// is not "group:topicId:partition".
func TestFidelity3FindCoordinatorShareKeys(t *testing.T) {
	tb := newTestBroker(t, "share.coordinator.state.topic.num.partitions=3")
	c := dialRaw(t, tb.b.Addr())
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 5
	req.CoordinatorType = 2
	req.CoordinatorKeys = []string{"g:AAAAAAAAAAAAAAAAAAAAAQ:0"}
	resp := c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
	if co := resp.Coordinators[0]; co.ErrorCode != kerr.InvalidRequest.Code || co.NodeID != -1 {
		t.Fatalf("share key at v5: code %d node %d, want INVALID_REQUEST -1", co.ErrorCode, co.NodeID)
	}
	req.Version = 6
	req.CoordinatorKeys = []string{"g:AAAAAAAAAAAAAAAAAAAAAQ:0", "not-a-share-key"}
	resp = c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
	if co := resp.Coordinators[0]; co.ErrorCode != 0 || co.NodeID != tb.b.nodeID || msgOf(co.ErrorMessage) != "" {
		t.Fatalf("share key at v6: code %d node %d message %q, want success on node %d", co.ErrorCode, co.NodeID, msgOf(co.ErrorMessage), tb.b.nodeID)
	}
	if co := resp.Coordinators[1]; co.ErrorCode != kerr.InvalidRequest.Code || co.NodeID != -1 || msgOf(co.ErrorMessage) != "" {
		t.Fatalf("malformed share key: code %d node %d message %q, want INVALID_REQUEST -1 \"\"", co.ErrorCode, co.NodeID, msgOf(co.ErrorMessage))
	}
}
