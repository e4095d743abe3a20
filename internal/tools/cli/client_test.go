package cli

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// build maps props and builds (without connecting) a client to inspect.
func build(t *testing.T, role Role, p Props) *kgo.Client {
	t.Helper()
	p = p.Clone()
	if _, ok := p["bootstrap.servers"]; !ok {
		p["bootstrap.servers"] = "127.0.0.1:9092"
	}
	opts, err := ClientOpts(role, p)
	if err != nil {
		t.Fatalf("ClientOpts(%v, %v): %v", role, p, err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("kgo.NewClient for %v: %v", p, err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestProducerProps(t *testing.T) {
	cl := build(t, Producer, Props{
		"bootstrap.servers":                     "a:1, b:2",
		"client.id":                             "perf-producer-client",
		"acks":                                  "1",
		"linger.ms":                             "7",
		"batch.size":                            "16384",
		"buffer.memory":                         "33554432",
		"compression.type":                      "lz4",
		"delivery.timeout.ms":                   "120000",
		"request.timeout.ms":                    "30000",
		"retries":                               "3",
		"max.in.flight.requests.per.connection": "3",
		"key.serializer":                        "org.apache.kafka.common.serialization.ByteArraySerializer",
		"ssl.truststore.location":               "/ignored",
	})
	checks := []struct {
		opt  any
		want any
	}{
		{kgo.SeedBrokers, []string{"a:1", "b:2"}},
		{kgo.ClientID, "perf-producer-client"},
		{kgo.RequiredAcks, kgo.LeaderAck()},
		{kgo.DisableIdempotentWrite, true},
		{kgo.MaxProduceRequestsInflightPerBroker, 3},
		{kgo.ProducerLinger, 7 * time.Millisecond},
		{kgo.MaxBufferedBytes, int64(33554432)},
		{kgo.RecordDeliveryTimeout, 120 * time.Second},
		{kgo.ProduceRequestTimeout, 30 * time.Second},
		{kgo.RequestRetries, int64(3)},
	}
	for _, c := range checks {
		if got := cl.OptValue(c.opt); !equalOpt(got, c.want) {
			t.Errorf("%T option = %#v, want %#v", c.opt, got, c.want)
		}
	}
	if got := cl.OptValue(kgo.ProducerBatchCompression); got == nil {
		t.Error("compression not set")
	} else if codecs := got.([]kgo.CompressionCodec); len(codecs) != 1 || codecs[0] != kgo.Lz4Compression() {
		t.Errorf("compression = %v, want lz4", codecs)
	}
}

func equalOpt(got, want any) bool {
	switch w := want.(type) {
	case []string:
		g, ok := got.([]string)
		return ok && strings.Join(g, ",") == strings.Join(w, ",")
	}
	return got == want
}

func TestProducerDefaults(t *testing.T) {
	cl := build(t, Producer, Props{})
	if got := cl.OptValue(kgo.DisableIdempotentWrite); got != false {
		t.Errorf("idempotence disabled by default: %v", got)
	}
	codecs := cl.OptValue(kgo.ProducerBatchCompression).([]kgo.CompressionCodec)
	if len(codecs) != 1 || codecs[0] != kgo.NoCompression() {
		t.Errorf("default compression = %v, want none (Kafka's default)", codecs)
	}
	// max.request.size caps the batch size.
	cl = build(t, Producer, Props{"batch.size": "100000", "max.request.size": "20000"})
	if fn, ok := cl.OptValue(kgo.ProducerBatchMaxBytesFn).(func(string) int32); !ok || fn("t") != 20000 {
		t.Errorf("batch max bytes not capped by max.request.size")
	}
}

func TestConsumerProps(t *testing.T) {
	cl := build(t, Consumer, Props{
		"group.id":                      "g1",
		"auto.offset.reset":             "earliest",
		"fetch.min.bytes":               "10",
		"fetch.max.bytes":               "1048576",
		"max.partition.fetch.bytes":     "65536",
		"fetch.max.wait.ms":             "100",
		"isolation.level":               "read_committed",
		"enable.auto.commit":            "false",
		"session.timeout.ms":            "10000",
		"heartbeat.interval.ms":         "1000",
		"max.poll.records":              "500",
		"partition.assignment.strategy": "org.apache.kafka.clients.consumer.RangeAssignor,cooperative-sticky",
		"client.rack":                   "r1",
		"value.deserializer":            "x",
	})
	checks := []struct {
		opt  any
		want any
	}{
		{kgo.ConsumerGroup, "g1"},
		{kgo.FetchMinBytes, int32(10)},
		{kgo.FetchMaxBytes, int32(1048576)},
		{kgo.FetchMaxPartitionBytes, int32(65536)},
		{kgo.FetchMaxWait, 100 * time.Millisecond},
		{kgo.DisableAutoCommit, true},
		{kgo.SessionTimeout, 10 * time.Second},
		{kgo.HeartbeatInterval, time.Second},
		{kgo.Rack, "r1"},
	}
	for _, c := range checks {
		if got := cl.OptValue(c.opt); got != c.want {
			t.Errorf("%T option = %#v, want %#v", c.opt, got, c.want)
		}
	}
	bs := cl.OptValue(kgo.Balancers).([]kgo.GroupBalancer)
	if len(bs) != 2 || bs[0].ProtocolName() != "range" || bs[1].ProtocolName() != "cooperative-sticky" {
		t.Errorf("balancers = %v", bs)
	}
}

func TestPropErrors(t *testing.T) {
	for _, tc := range []struct {
		role Role
		p    Props
		want string
	}{
		{Producer, Props{"lingerr.ms": "1"}, `unknown producer property "lingerr.ms"`},
		{Admin, Props{"acks": "1"}, `"acks" is not a admin property`},
		{Consumer, Props{"linger.ms": "1"}, `"linger.ms" is not a consumer property`},
		{Producer, Props{"linger.ms": "soon"}, `invalid value "soon" for configuration linger.ms`},
		{Producer, Props{"acks": "2"}, "configuration acks"},
		{Producer, Props{"compression.type": "brotli"}, "compression.type"},
		{Producer, Props{"acks": "1", "enable.idempotence": "true"}, "idempotent"},
		{Producer, Props{"max.in.flight.requests.per.connection": "6", "enable.idempotence": "true"}, "at most 5"},
		{Producer, Props{"acks": "0", "transactional.id": "tx"}, "transactional.id"},
		{Producer, Props{"partitioner.class": "com.example.Mine"}, "partitioner"},
		{Consumer, Props{"partition.assignment.strategy": "com.example.Mine"}, "com.example.Mine"},
		{Consumer, Props{"auto.offset.reset": "smallest"}, "auto.offset.reset"},
		{Admin, Props{"security.protocol": "SASL_SSL"}, "SASL mechanism GSSAPI is not supported"},
	} {
		p := tc.p.Clone()
		p["bootstrap.servers"] = "127.0.0.1:9092"
		_, err := ClientOpts(tc.role, p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ClientOpts(%v, %v) = %v, want error containing %q", tc.role, tc.p, err, tc.want)
		}
	}
	if _, err := ClientOpts(Admin, Props{}); err == nil || !strings.Contains(err.Error(), "bootstrap") {
		t.Errorf("no bootstrap.servers: %v", err)
	}
}

func TestNewClientUnreachable(t *testing.T) {
	// A port that was just free: connecting is refused at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = NewClient(context.Background(), Admin, Props{"bootstrap.servers": addr})
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("NewClient(unreachable) = %v, want error naming %s", err, addr)
	}
}

func TestAutoCommitWithoutGroup(t *testing.T) {
	// Java ignores enable.auto.commit without a group; kgo would reject
	// DisableAutoCommit, so it is only passed with group.id.
	cl := build(t, Consumer, Props{"enable.auto.commit": "false"})
	if got := cl.OptValue(kgo.DisableAutoCommit); got != false {
		t.Errorf("DisableAutoCommit without a group = %v", got)
	}
}
