package broker

import (
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's AutoTopicCreationManager answers the Metadata request that
// creates a topic with LEADER_NOT_AVAILABLE and no partitions; the topic
// is there for the next request.
func TestFidelity2MetadataAutoCreateAnswersLeaderNotAvailable(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	metadata := func(allow bool) kmsg.MetadataResponseTopic {
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = allow
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("auto-made")
		req.Topics = append(req.Topics, rt)
		resp := tb.request(ctx, req).(*kmsg.MetadataResponse)
		if len(resp.Topics) != 1 {
			t.Fatalf("metadata: %d topics, want 1", len(resp.Topics))
		}
		return resp.Topics[0]
	}
	if mt := metadata(false); mt.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("without auto-creation: %v, want UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(mt.ErrorCode))
	}
	mt := metadata(true)
	if mt.ErrorCode != kerr.LeaderNotAvailable.Code || len(mt.Partitions) != 0 || mt.Topic == nil || *mt.Topic != "auto-made" {
		t.Fatalf("creating request: error %v, %d partitions, name %v; want LEADER_NOT_AVAILABLE, none, the name",
			kerr.ErrorForCode(mt.ErrorCode), len(mt.Partitions), mt.Topic)
	}
	waitFor(t, "auto-created topic with a leader", func() bool {
		mt := metadata(false)
		return mt.ErrorCode == 0 && len(mt.Partitions) == 1 && mt.Partitions[0].Leader == tb.b.nodeID
	})
}

// Kafka refuses only broker configs it knows to be read-only; a name it does
// not know is accepted (and ignored).
func TestFidelity2AlterBrokerConfigNames(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	node := strconv.Itoa(int(tb.b.nodeID))

	alter := func(name, value string) (int16, *string) {
		req := kmsg.NewPtrAlterConfigsRequest()
		res := kmsg.NewAlterConfigsRequestResource()
		res.ResourceType = kmsg.ConfigResourceTypeBroker
		res.ResourceName = node
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = name, kmsg.StringPtr(value)
		res.Configs = append(res.Configs, c)
		req.Resources = append(req.Resources, res)
		rr := tb.request(ctx, req).(*kmsg.AlterConfigsResponse).Resources[0]
		return rr.ErrorCode, rr.ErrorMessage
	}
	incremental := func(name, value string) (int16, *string) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType = kmsg.ConfigResourceTypeBroker
		res.ResourceName = node
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = name, kmsg.StringPtr(value), kmsg.IncrementalAlterConfigOpSet
		res.Configs = append(res.Configs, c)
		req.Resources = append(req.Resources, res)
		rr := tb.request(ctx, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
		return rr.ErrorCode, rr.ErrorMessage
	}
	for api, fn := range map[string]func(string, string) (int16, *string){"AlterConfigs": alter, "IncrementalAlterConfigs": incremental} {
		if code, msg := fn("some.plugin.setting", "x"); code != 0 {
			t.Errorf("%s unknown name: %v (%v), want accepted", api, kerr.ErrorForCode(code), deref(msg))
		}
		if code, msg := fn("log.dirs", "/elsewhere"); code != kerr.InvalidRequest.Code {
			t.Errorf("%s read-only log.dirs: %v (%v), want INVALID_REQUEST", api, kerr.ErrorForCode(code), deref(msg))
		}
		if code, msg := fn("log.retention.ms", "60000"); code != 0 {
			t.Errorf("%s dynamic log.retention.ms: %v (%v), want accepted", api, kerr.ErrorForCode(code), deref(msg))
		}
	}
	// The stored unknown name does not stop the broker from starting.
	tb.restart()
	if code, msg := incremental("other.plugin.setting", "y"); code != 0 {
		t.Errorf("after restart: %v (%v)", kerr.ErrorForCode(code), deref(msg))
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// A nullable string whose length is below −1 closes the connection as
// Kafka's parser does. Bytes after the last field do not: Kafka's readers
// ignore them, and librdkafka (2.1 and later) sends them with every
// Metadata request for all topics at v9+, a four-byte placeholder where
// the topic array's one-byte count belongs (librdkafka issue 5049).
func TestFidelity2MalformedBodiesCloseTheConnection(t *testing.T) {
	tb := newTestBroker(t)
	addr := tb.b.Addr()
	tb.createTopic(testCtx(t), "listed", 1, nil)

	rdk := dialRaw(t, addr)
	body := kbin.AppendInt16(nil, kmsg.Metadata.Int16())
	body = kbin.AppendInt16(body, 12)
	body = kbin.AppendInt32(body, 41)
	body = kbin.AppendNullableString(body, kmsg.StringPtr("rdkafka"))
	body = append(body, 0)          // header tags
	body = append(body, 0, 0, 0, 0) // the placeholder of the topic count
	body = append(body, 1, 0, 0)    // allow auto-creation, topic authorized operations, tags
	rdk.write(append(kbin.AppendInt32(nil, int32(len(body))), body...))
	md := kmsg.NewPtrMetadataResponse()
	md.SetVersion(12)
	rdk.readResponse(41, md)
	if len(md.Brokers) != 1 || len(md.Topics) != 1 || md.Topics[0].Topic == nil || *md.Topics[0].Topic != "listed" {
		t.Fatalf("librdkafka's all-topics Metadata: %d brokers, topics %+v; want the broker and topic listed", len(md.Brokers), md.Topics)
	}

	negative := dialRaw(t, addr)
	body = rawHeader(kmsg.Produce.Int16(), 3, 1)
	body = kbin.AppendInt16(body, -2) // transactional_id
	body = kbin.AppendInt16(body, 1)
	body = kbin.AppendInt32(body, 1000)
	body = kbin.AppendArrayLen(body, 0)
	negative.write(append(kbin.AppendInt32(nil, int32(len(body))), body...))
	negative.expectClosed("Produce v3 with a transactional id of length -2")

	// The same requests, well formed, are answered.
	ok := dialRaw(t, addr)
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	if resp := ok.roundTrip(req).(*kmsg.MetadataResponse); len(resp.Brokers) != 1 {
		t.Fatalf("well-formed Metadata: %d brokers", len(resp.Brokers))
	}
}
