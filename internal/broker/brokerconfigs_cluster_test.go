package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestBrokerConfigLevels: as Kafka keeps a ConfigRecord per BROKER
// resource, a dynamic config altered for broker 2 applies to broker 2
// only, one altered for the cluster-wide default (resource name "",
// kafka-configs --entity-default) to every broker that has no value of
// its own, and describing each broker shows where its value comes from.
// Per-broker keys cannot be set as a default.
func TestBrokerConfigLevels(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(tc.client())
	set := func(name, value string, brokers ...int32) {
		t.Helper()
		rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: name, Value: &value}}, brokers...)
		if err == nil {
			for _, r := range rs {
				if r.Err != nil {
					err = errors.Join(err, r.Err)
				}
			}
		}
		if err != nil {
			t.Fatalf("set %s=%s on %v: %v", name, value, brokers, err)
		}
	}
	describe := func(node int32, name string) (string, kmsg.ConfigSource) {
		t.Helper()
		rcs, err := adm.DescribeBrokerConfigs(ctx, node)
		if err != nil {
			t.Fatalf("describe broker %d: %v", node, err)
		}
		c := findConfig(t, rcs[0], name)
		return c.MaybeValue(), c.Source
	}
	expect := func(node int32, name, value string, src kmsg.ConfigSource) {
		t.Helper()
		if v, s := describe(node, name); v != value || s != src {
			t.Errorf("broker %d %s = %q from %v, want %q from %v", node, name, v, s, value, src)
		}
	}

	set("log.retention.ms", "7200000", 2)
	expect(2, "log.retention.ms", "7200000", kmsg.ConfigSourceDynamicBrokerConfig)
	expect(1, "log.retention.ms", "", kmsg.ConfigSourceDefaultConfig) // no default: log.retention.hours rules
	expect(3, "log.retention.ms", "", kmsg.ConfigSourceDefaultConfig)

	set("log.retention.ms", "3600000") // the cluster-wide default
	expect(1, "log.retention.ms", "3600000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	expect(3, "log.retention.ms", "3600000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	expect(2, "log.retention.ms", "7200000", kmsg.ConfigSourceDynamicBrokerConfig)

	// The default resource describes only what is set at that level.
	rcs, err := adm.DescribeBrokerConfigs(ctx)
	if err != nil || len(rcs) != 1 {
		t.Fatalf("describe the default: %v %v", rcs, err)
	}
	if c := findConfig(t, rcs[0], "log.retention.ms"); c.MaybeValue() != "3600000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || len(rcs[0].Configs) != 1 {
		t.Errorf("default resource: %+v", rcs[0].Configs)
	}

	// Each broker runs with its own layered value (topic defaults follow
	// it).
	if got := tc.brokers[0].dynamicConfig(tc.brokers[0].meta.Image()).LogRetentionMs; got != 3600000 {
		t.Errorf("broker 1 runs with log.retention.ms %d, want the default 3600000", got)
	}
	if got := tc.brokers[1].dynamicConfig(tc.brokers[1].meta.Image()).LogRetentionMs; got != 7200000 {
		t.Errorf("broker 2 runs with log.retention.ms %d, want its own 7200000", got)
	}

	// transaction.partition.verification.enable is dynamic in Kafka.
	set("transaction.partition.verification.enable", "false")
	if tc.brokers[2].txnVerificationEnabled() {
		t.Error("transaction.partition.verification.enable=false at the default level: broker 3 still verifies")
	}

	// Per-broker keys need a broker id.
	v := "/tmp/ks.jks"
	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "listener.name.plaintext.ssl.keystore.location", Value: &v}})
	if err != nil || len(rs) != 1 || !errors.Is(rs[0].Err, kerr.InvalidRequest) {
		t.Fatalf("per-broker key at the default level: %v %v, want INVALID_REQUEST", rs, err)
	}
}
