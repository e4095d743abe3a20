package brokertest

import (
	"strings"
	"testing"

	"github.com/silkworm/silkworm/embed"
)

// Start runs a one-broker cluster (embed.NewCluster) on 127.0.0.1 with a
// kernel-chosen port and its data in t.TempDir(), with the given broker
// config overrides ("key=value", Kafka's server.properties keys, applied
// after embed's defaults), and closes it when the test ends. It returns
// the address to bootstrap from.
func Start(t testing.TB, overrides ...string) string {
	t.Helper()
	return Cluster(t, overrides...).Addr(1)
}

// Cluster is Start returning the cluster itself, for tests that need
// its data dir or its faults.
func Cluster(t testing.TB, overrides ...string) *embed.Cluster {
	t.Helper()
	opts := []embed.Option{embed.Dir(t.TempDir())}
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			t.Fatalf("brokertest: override %q is not key=value", o)
		}
		opts = append(opts, embed.BrokerConfig(k, v))
	}
	c, err := embed.NewCluster(opts...)
	if err != nil {
		t.Fatalf("brokertest: start broker: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("brokertest: close broker: %v", err)
		}
	})
	return c
}
