package broker

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// rawRequest sends req at the version set on it over a fresh connection
// (a client would pick its own version, and would not send APIs the broker
// does not advertise).
func rawRequest(tb *testBroker, req kmsg.Request) kmsg.Response {
	tb.t.Helper()
	return dialRaw(tb.t, tb.b.Addr()).roundTrip(req)
}

// apiVersions sends an ApiVersions request at version v.
func apiVersions(tb *testBroker, v int16, edit func(*kmsg.ApiVersionsRequest)) *kmsg.ApiVersionsResponse {
	tb.t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = v
	req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1.0"
	if edit != nil {
		edit(req)
	}
	return rawRequest(tb, req).(*kmsg.ApiVersionsResponse)
}

func finalized(resp *kmsg.ApiVersionsResponse) map[string]int16 {
	out := map[string]int16{}
	for _, f := range resp.FinalizedFeatures {
		if f.MinVersionLevel != f.MaxVersionLevel {
			panic(fmt.Sprintf("%s: min %d != max %d", f.Name, f.MinVersionLevel, f.MaxVersionLevel))
		}
		out[f.Name] = f.MaxVersionLevel
	}
	return out
}

func TestNewAPIsApiVersionsFeaturesAndTelemetryHidden(t *testing.T) {
	tb := newTestBroker(t)

	resp := apiVersions(tb, 4, nil)
	keys := map[int16]kmsg.ApiVersionsResponseApiKey{}
	for _, k := range resp.ApiKeys {
		keys[k.ApiKey] = k
	}
	for _, k := range []kmsg.Key{kmsg.GetTelemetrySubscriptions, kmsg.PushTelemetry} {
		if _, ok := keys[k.Int16()]; ok {
			t.Errorf("%s advertised; Kafka without a metrics receiver leaves it out", kmsg.NameForKey(k.Int16()))
		}
	}
	for k, max := range map[kmsg.Key]int16{kmsg.Fetch: 18, kmsg.Metadata: 13, kmsg.ListOffsets: 11,
		kmsg.DescribeCluster: 2, kmsg.ApiVersions: 5, kmsg.DescribeLogDirs: 4, kmsg.DescribeTopicPartitions: 0,
		kmsg.UpdateFeatures: 2, kmsg.DescribeQuorum: 2} {
		if got, ok := keys[k.Int16()]; !ok || got.MaxVersion != max {
			t.Errorf("%s: advertised %+v, want max %d", kmsg.NameForKey(k.Int16()), got, max)
		}
	}
	sup := map[string]kmsg.ApiVersionsResponseSupportedFeature{}
	for _, f := range resp.SupportedFeatures {
		sup[f.Name] = f
	}
	if f := sup["metadata.version"]; f.MinVersion != 7 || f.MaxVersion != metadataVersionLatest {
		t.Errorf("metadata.version supported %+v", f)
	}
	if _, ok := sup["group.version"]; !ok {
		t.Errorf("v4 must list features with minimum 0: %+v", resp.SupportedFeatures)
	}
	fin := finalized(resp)
	if fin["metadata.version"] != metadataVersionLatest || resp.FinalizedFeaturesEpoch < 0 {
		t.Errorf("finalized %v epoch %d", fin, resp.FinalizedFeaturesEpoch)
	}
	if _, ok := fin["kraft.version"]; ok {
		t.Errorf("kraft.version is 0 (static quorum) and must not be finalized: %v", fin)
	}
	// franz-go turns KIP-890 part 2 on from transaction.version 2; it may
	// be finalized only if the broker serves what it implies.
	if fin["transaction.version"] >= 2 && (keys[kmsg.EndTxn.Int16()].MaxVersion < 5 || keys[kmsg.Produce.Int16()].MaxVersion < 12) {
		t.Errorf("transaction.version %d finalized without EndTxn v5 / Produce v12", fin["transaction.version"])
	}

	// v3 leaves out features whose minimum is 0 (KAFKA-17011).
	v3 := apiVersions(tb, 3, nil)
	if len(v3.SupportedFeatures) != 1 || v3.SupportedFeatures[0].Name != "metadata.version" {
		t.Errorf("v3 supported features %+v, want metadata.version only", v3.SupportedFeatures)
	}

	// v5 (KIP-1242): cluster id and node id checked together.
	clusterID := tb.b.meta.Image().ClusterID
	ok := apiVersions(tb, 5, func(r *kmsg.ApiVersionsRequest) { r.ClusterID, r.NodeID = &clusterID, tb.b.nodeID })
	if ok.ErrorCode != 0 {
		t.Errorf("matching ids: %v", kerr.ErrorForCode(ok.ErrorCode))
	}
	other := "other-cluster"
	bad := apiVersions(tb, 5, func(r *kmsg.ApiVersionsRequest) { r.ClusterID, r.NodeID = &other, tb.b.nodeID })
	if bad.ErrorCode != kerr.RebootstrapRequired.Code {
		t.Errorf("wrong cluster id: %v, want REBOOTSTRAP_REQUIRED", kerr.ErrorForCode(bad.ErrorCode))
	}
	wrongNode := apiVersions(tb, 5, func(r *kmsg.ApiVersionsRequest) { r.ClusterID, r.NodeID = &clusterID, tb.b.nodeID+7 })
	if wrongNode.ErrorCode != kerr.RebootstrapRequired.Code {
		t.Errorf("wrong node id: %v, want REBOOTSTRAP_REQUIRED", kerr.ErrorForCode(wrongNode.ErrorCode))
	}
	half := apiVersions(tb, 5, func(r *kmsg.ApiVersionsRequest) { r.ClusterID, r.NodeID = &clusterID, -1 })
	if half.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("cluster id without node id: %v, want INVALID_REQUEST", kerr.ErrorForCode(half.ErrorCode))
	}
}

func updateFeatures(tb *testBroker, v int16, validateOnly bool, updates ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesResponse {
	tb.t.Helper()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version = v
	req.ValidateOnly = validateOnly
	req.FeatureUpdates = updates
	return rawRequest(tb, req).(*kmsg.UpdateFeaturesResponse)
}

func featureUpdate(name string, level int16, upgradeType int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, upgradeType
	return u
}

func TestNewAPIsUpdateFeatures(t *testing.T) {
	tb := newTestBroker(t)
	mv := int16(metadataVersionLatest)

	fails := []struct {
		name string
		u    kmsg.UpdateFeaturesRequestFeatureUpdate
	}{
		{"downgrade asked as upgrade", featureUpdate("metadata.version", mv-1, upgradeTypeUpgrade)},
		{"metadata.version safe downgrade", featureUpdate("metadata.version", mv-1, upgradeTypeSafeDowngrade)},
		{"metadata.version unsafe downgrade", featureUpdate("metadata.version", mv-1, upgradeTypeUnsafeDowngrade)},
		{"above the supported range", featureUpdate("metadata.version", mv+1, upgradeTypeUpgrade)},
		{"unknown feature", featureUpdate("no.such.version", 1, upgradeTypeUpgrade)},
		{"unsupported level", featureUpdate("kraft.version", 1, upgradeTypeUpgrade)},
		{"negative level", featureUpdate("group.version", -1, upgradeTypeSafeDowngrade)},
		{"unknown upgrade type", featureUpdate("group.version", 0, 9)},
	}
	for _, tc := range fails {
		resp := updateFeatures(tb, 2, false, tc.u)
		if resp.ErrorCode != kerr.InvalidUpdateVersion.Code || resp.ErrorMessage == nil {
			t.Errorf("%s: %v (%v), want INVALID_UPDATE_VERSION with a message", tc.name, kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
		}
	}
	if fin := finalized(apiVersions(tb, 4, nil)); fin["metadata.version"] != mv {
		t.Fatalf("a failed update changed the features: %v", fin)
	}

	// A downgrade of share.version (or whichever optional feature is
	// finalized) to 0 removes it; validate-only changes nothing.
	before := finalized(apiVersions(tb, 4, nil))
	var name string
	for _, n := range []string{"group.version", "transaction.version", "share.version"} {
		if before[n] > 0 {
			name = n
			break
		}
	}
	if name == "" {
		t.Fatalf("no optional feature finalized: %v", before)
	}
	if resp := updateFeatures(tb, 2, true, featureUpdate(name, 0, upgradeTypeSafeDowngrade)); resp.ErrorCode != 0 {
		t.Fatalf("validate-only downgrade: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	if fin := finalized(apiVersions(tb, 4, nil)); fin[name] != before[name] {
		t.Fatalf("validate-only changed %s: %v", name, fin)
	}
	resp := updateFeatures(tb, 1, false, featureUpdate(name, 0, upgradeTypeSafeDowngrade))
	if resp.ErrorCode != 0 || len(resp.Results) != 1 || resp.Results[0].Feature != name || resp.Results[0].ErrorCode != 0 {
		t.Fatalf("v1 downgrade: %+v", resp)
	}
	after := finalized(apiVersions(tb, 4, nil))
	if _, ok := after[name]; ok || after["metadata.version"] != mv {
		t.Fatalf("after downgrading %s to 0: %v", name, after)
	}
	// Upgrading it back needs no downgrade flag; v0 maps AllowDowngrade.
	up := featureUpdate(name, before[name], 0)
	if resp := updateFeatures(tb, 0, false, up); resp.ErrorCode != 0 {
		t.Fatalf("v0 upgrade: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	// The levels survive a restart (they are in the metadata).
	tb.restart()
	if fin := finalized(apiVersions(tb, 4, nil)); fin[name] != before[name] {
		t.Fatalf("after restart %s = %d, want %d", name, fin[name], before[name])
	}
}

func TestNewAPIsDescribeTopicPartitionsPaging(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "dtp-a", 3, nil)
	tb.createTopic(ctx, "dtp-b", 2, nil)
	tb.createTopic(ctx, "dtp-c", 1, nil)

	describe := func(names []string, limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor) *kmsg.DescribeTopicPartitionsResponse {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		for _, n := range names {
			rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
			rt.Topic = n
			req.Topics = append(req.Topics, rt)
		}
		req.ResponsePartitionLimit = limit
		req.Cursor = cursor
		return rawRequest(tb, req).(*kmsg.DescribeTopicPartitionsResponse)
	}
	// Page through all three topics two partitions at a time.
	var got []string
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		resp := describe([]string{"dtp-c", "dtp-a", "dtp-b"}, 2, cursor)
		n := 0
		for _, rt := range resp.Topics {
			if rt.ErrorCode != 0 {
				t.Fatalf("%s: %v", *rt.Topic, kerr.ErrorForCode(rt.ErrorCode))
			}
			if rt.AuthorizedOperations == -2147483648 {
				t.Errorf("%s: authorized operations not filled", *rt.Topic)
			}
			for _, p := range rt.Partitions {
				got = append(got, fmt.Sprintf("%s/%d", *rt.Topic, p.Partition))
				n++
				if p.LeaderID != tb.b.nodeID || !slices.Equal(p.Replicas, []int32{tb.b.nodeID}) ||
					p.EligibleLeaderReplicas == nil || len(p.EligibleLeaderReplicas) != 0 {
					t.Errorf("%s/%d: %+v", *rt.Topic, p.Partition, p)
				}
			}
		}
		if n > 2 {
			t.Fatalf("page of %d partitions, limit 2", n)
		}
		if resp.NextCursor == nil {
			break
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	want := []string{"dtp-a/0", "dtp-a/1", "dtp-a/2", "dtp-b/0", "dtp-b/1", "dtp-c/0"}
	if !slices.Equal(got, want) {
		t.Fatalf("paged %v, want %v", got, want)
	}

	// A limit that ends exactly at a topic boundary points at the next topic.
	resp := describe([]string{"dtp-a", "dtp-b"}, 3, nil)
	if resp.NextCursor == nil || resp.NextCursor.Topic != "dtp-b" || resp.NextCursor.Partition != 0 {
		t.Errorf("cursor at a boundary: %+v", resp.NextCursor)
	}
	// Unknown topics answer UNKNOWN_TOPIC_OR_PARTITION; a cursor topic not
	// in the list makes the request INVALID_REQUEST.
	resp = describe([]string{"dtp-missing"}, 10, nil)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: %+v", resp.Topics)
	}
	resp = describe([]string{"dtp-a"}, 10, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-b"})
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("cursor outside the list: %+v", resp.Topics)
	}
	// All topics (empty list) from a cursor in the middle of dtp-a.
	resp = describe(nil, 100, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-a", Partition: 2})
	var names []string
	for _, rt := range resp.Topics {
		names = append(names, fmt.Sprintf("%s:%d", *rt.Topic, len(rt.Partitions)))
	}
	if !slices.Equal(names, []string{"dtp-a:1", "dtp-b:2", "dtp-c:1"}) || resp.NextCursor != nil {
		t.Errorf("all topics from dtp-a/2: %v next %+v", names, resp.NextCursor)
	}
}

func TestNewAPIsTelemetry(t *testing.T) {
	tb := newTestBroker(t)
	get := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	sub := rawRequest(tb, get).(*kmsg.GetTelemetrySubscriptionsResponse)
	if sub.ErrorCode != 0 || sub.ClientInstanceID == [16]byte{} || sub.PushIntervalMillis != 300000 ||
		sub.TelemetryMaxBytes != 1<<20 || len(sub.RequestedMetrics) != 0 || !sub.DeltaTemporality ||
		!slices.Equal(sub.AcceptedCompressionTypes, []int8{4, 3, 1, 2}) {
		t.Fatalf("subscription: %+v", sub)
	}
	// Asking again within the push interval is throttled.
	again := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	again.ClientInstanceID = sub.ClientInstanceID
	if r := rawRequest(tb, again).(*kmsg.GetTelemetrySubscriptionsResponse); r.ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Errorf("second get: %v, want THROTTLING_QUOTA_EXCEEDED", kerr.ErrorForCode(r.ErrorCode))
	}
	push := func(edit func(*kmsg.PushTelemetryRequest)) int16 {
		req := kmsg.NewPtrPushTelemetryRequest()
		req.ClientInstanceID, req.SubscriptionID = sub.ClientInstanceID, sub.SubscriptionID
		req.Metrics = []byte("metrics")
		edit(req)
		return rawRequest(tb, req).(*kmsg.PushTelemetryResponse).ErrorCode
	}
	if code := push(func(r *kmsg.PushTelemetryRequest) { r.SubscriptionID++ }); code != kerr.UnknownSubscriptionID.Code {
		t.Errorf("wrong subscription: %v", kerr.ErrorForCode(code))
	}
	if code := push(func(r *kmsg.PushTelemetryRequest) { r.ClientInstanceID = [16]byte{} }); code != kerr.InvalidRequest.Code {
		t.Errorf("zero instance id: %v", kerr.ErrorForCode(code))
	}
	if code := push(func(*kmsg.PushTelemetryRequest) {}); code != 0 {
		t.Errorf("first push after get: %v", kerr.ErrorForCode(code))
	}
	if code := push(func(*kmsg.PushTelemetryRequest) {}); code != kerr.ThrottlingQuotaExceeded.Code {
		t.Errorf("second push within the interval: %v", kerr.ErrorForCode(code))
	}
	if code := push(func(r *kmsg.PushTelemetryRequest) { r.Terminating = true }); code != 0 {
		t.Errorf("terminating push: %v", kerr.ErrorForCode(code))
	}
	if code := push(func(r *kmsg.PushTelemetryRequest) { r.Terminating = true }); code != kerr.InvalidRequest.Code {
		t.Errorf("push after terminating: %v", kerr.ErrorForCode(code))
	}
}

func TestNewAPIsNewestVersions(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "newest", 1, nil)
	tb.produce(ctx, "newest", 0, 5)

	// ListOffsets: the tiered sentinels answer -1 without error at their
	// versions and UNSUPPORTED_VERSION below them.
	listOffsets := func(v int16, ts int64) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version = v
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "newest"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = ts
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := rawRequest(tb, req).(*kmsg.ListOffsetsResponse)
		return resp.Topics[0].Partitions[0]
	}
	for _, tc := range []struct {
		v      int16
		ts     int64
		code   int16
		offset int64
	}{
		{11, -1, 0, 5}, {11, -2, 0, 0}, {11, -5, 0, -1}, {11, -6, 0, -1}, {9, -5, 0, -1},
		{10, -6, kerr.UnsupportedVersion.Code, -1}, {8, -5, kerr.UnsupportedVersion.Code, -1},
		{11, -7, kerr.UnsupportedVersion.Code, -1},
	} {
		p := listOffsets(tc.v, tc.ts)
		if p.ErrorCode != tc.code || p.Offset != tc.offset || (tc.ts <= -5 && (p.Timestamp != -1 || p.LeaderEpoch != -1)) {
			t.Errorf("v%d timestamp %d: %+v, want error %d offset %d", tc.v, tc.ts, p, tc.code, tc.offset)
		}
	}

	// Metadata v13 has a top-level error code of 0.
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Version = 13
	if m := rawRequest(tb, mreq).(*kmsg.MetadataResponse); m.ErrorCode != 0 || len(m.Brokers) != 1 {
		t.Errorf("metadata v13: %+v", m)
	}

	// DescribeCluster v2 marks brokers' fencing.
	dreq := kmsg.NewPtrDescribeClusterRequest()
	dreq.Version = 2
	dreq.IncludeFencedBrokers = true
	if d := rawRequest(tb, dreq).(*kmsg.DescribeClusterResponse); d.ErrorCode != 0 || len(d.Brokers) != 1 || d.Brokers[0].IsFenced {
		t.Errorf("describe cluster v2: %+v", d)
	}

	// Fetch v18 by topic id, and an unknown id.
	im := tb.b.meta.Image()
	freq := kmsg.NewPtrFetchRequest()
	freq.Version = 18
	freq.SessionEpoch = -1
	for _, id := range [][16]byte{im.Topics["newest"].ID, {1, 2, 3}} {
		ft := kmsg.NewFetchRequestTopic()
		ft.TopicID = id
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes = 1 << 20
		ft.Partitions = append(ft.Partitions, fp)
		freq.Topics = append(freq.Topics, ft)
	}
	f := rawRequest(tb, freq).(*kmsg.FetchResponse)
	if len(f.Topics) != 2 || f.Topics[0].Partitions[0].ErrorCode != 0 || len(f.Topics[0].Partitions[0].RecordBatches) == 0 ||
		f.Topics[0].Partitions[0].HighWatermark != 5 || f.Topics[1].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Errorf("fetch v18: %+v", f)
	}

	// DescribeLogDirs v4 (Kafka 4.2's newest) with the file system's sizes.
	lreq := kmsg.NewPtrDescribeLogDirsRequest()
	lreq.Version = 4
	if l := rawRequest(tb, lreq).(*kmsg.DescribeLogDirsResponse); l.ErrorCode != 0 || len(l.Dirs) == 0 || l.Dirs[0].TotalBytes <= 0 {
		t.Errorf("describe log dirs v4: %+v", l)
	}

	// A franz-go client at its defaults (so at the newest versions)
	// produces and consumes.
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumeTopics("newest"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "newest", Value: []byte("six")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var n int
	for n < 6 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		n += fs.NumRecords()
	}
}

func TestNewAPIsDescribeQuorumSingleNode(t *testing.T) {
	tb := newTestBroker(t)
	resp := describeQuorum(t, func(req kmsg.Request) kmsg.Response { return rawRequest(tb, req) })
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.LeaderID != tb.b.nodeID || len(p.CurrentVoters) != 1 || p.CurrentVoters[0].ReplicaID != tb.b.nodeID ||
		p.CurrentVoters[0].LogEndOffset != p.HighWatermark || len(p.Observers) != 0 {
		t.Errorf("single node quorum: %+v", p)
	}
	// Another partition is unknown.
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 1}}
	req.Topics = append(req.Topics, rt)
	bad := rawRequest(tb, req).(*kmsg.DescribeQuorumResponse)
	if bad.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("partition 1: %+v", bad.Topics[0].Partitions[0])
	}
}

// describeQuorum sends a v2 DescribeQuorum for __cluster_metadata-0.
func describeQuorum(t *testing.T, send func(kmsg.Request) kmsg.Response) *kmsg.DescribeQuorumResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = 2
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	resp := send(req).(*kmsg.DescribeQuorumResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("describe quorum: %+v", resp)
	}
	return resp
}

func TestNewAPIsListConfigResources(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "lcr-b", 1, nil)
	tb.createTopic(ctx, "lcr-a", 1, nil)
	list := func(v int16, types ...int8) *kmsg.ListConfigResourcesResponse {
		req := kmsg.NewPtrListConfigResourcesRequest()
		req.Version = v
		req.ResourceTypes = types
		return rawRequest(tb, req).(*kmsg.ListConfigResourcesResponse)
	}
	names := func(resp *kmsg.ListConfigResourcesResponse) []string {
		var out []string
		for _, c := range resp.ConfigResources {
			out = append(out, fmt.Sprintf("%d:%s", c.Type, c.Name))
		}
		return out
	}
	node := fmt.Sprint(tb.b.nodeID)
	if resp := list(1, configResourceTopic, configResourceBroker); resp.ErrorCode != 0 ||
		!slices.Equal(names(resp), []string{"4:" + node, "2:lcr-a", "2:lcr-b"}) {
		t.Errorf("topics and brokers: %v %v", kerr.ErrorForCode(resp.ErrorCode), names(resp))
	}
	all := list(1)
	if all.ErrorCode != 0 || !slices.Contains(names(all), "8:"+node) || !slices.Contains(names(all), "2:lcr-a") {
		t.Errorf("all types: %v %v", kerr.ErrorForCode(all.ErrorCode), names(all))
	}
	if resp := list(1, 1); resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("unknown type: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := list(0); resp.ErrorCode != 0 || len(resp.ConfigResources) != 0 {
		t.Errorf("v0 (client metrics only): %+v", resp)
	}
}

func TestNewAPIsAuthorization(t *testing.T) {
	tb := newSASLBroker(t,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS;User:admin")
	ctx := testCtx(t)
	tb.createTopic(ctx, "orders", 1, nil)
	tb.createTopic(ctx, "secret", 1, nil)
	if res, err := tb.adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpDescribe)); err != nil || res[0].Err != nil {
		t.Fatalf("create ACL: %v %+v", err, res)
	}
	alice := saslClient(t, tb, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())

	q := kmsg.NewPtrDescribeQuorumRequest()
	qt := kmsg.NewDescribeQuorumRequestTopic()
	qt.Topic = "__cluster_metadata"
	qt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	q.Topics = append(q.Topics, qt)
	if resp, err := q.RequestWith(ctx, alice); err != nil || resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("describe quorum without DESCRIBE on CLUSTER: %v %+v", err, resp)
	}
	u := kmsg.NewPtrUpdateFeaturesRequest()
	u.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("group.version", 0, upgradeTypeSafeDowngrade)}
	if resp, err := u.RequestWith(ctx, alice); err != nil || resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("update features without ALTER on CLUSTER: %v %+v", err, resp)
	}
	l := kmsg.NewPtrListConfigResourcesRequest()
	if resp, err := l.RequestWith(ctx, alice); err != nil || resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("list config resources without DESCRIBE_CONFIGS on CLUSTER: %v %+v", err, resp)
	}

	dtp := func(names ...string) []string {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		for _, n := range names {
			rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
			rt.Topic = n
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, rt := range resp.Topics {
			out = append(out, fmt.Sprintf("%s:%d:%v", *rt.Topic, rt.ErrorCode, rt.TopicID != [16]byte{}))
		}
		return out
	}
	waitFor(t, "alice to describe orders", func() bool { return slices.Equal(dtp(), []string{"orders:0:true"}) })
	if got := dtp("secret", "orders"); !slices.Equal(got, []string{"orders:0:true", fmt.Sprintf("secret:%d:false", kerr.TopicAuthorizationFailed.Code)}) {
		t.Errorf("named topics: %v", got)
	}
}
