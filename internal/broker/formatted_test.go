package broker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/silkworm/silkworm/internal/config"
)

// TestStartsWithTheFormattedClusterID: a log dir formatted as
// kafka-storage.sh format does (meta.properties with a cluster.id) starts
// a node of that cluster without silkworm.cluster.id, and keeps it across
// restarts; a freshly formatted dir with a different configured id is
// refused.
func TestStartsWithTheFormattedClusterID(t *testing.T) {
	const id = "MkU3OEVBNTcwNTJENDM2Qk"
	var dir string
	open := func(extra ...string) (*Broker, error) {
		cfg, err := config.Load("", append([]string{"listeners=PLAINTEXT://127.0.0.1:0", "log.dirs=" + dir}, extra...))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "meta.properties"),
			fmt.Appendf(nil, "#\n#Tue Dec 01 12:00:00 UTC 2026\nnode.id=%d\nversion=1\ncluster.id=%s\n", cfg.NodeID, id), 0o644); err != nil {
			t.Fatal(err)
		}
		return New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	dir = t.TempDir()
	for range 2 {
		b, err := open()
		if err != nil {
			t.Fatalf("start on a formatted dir: %v", err)
		}
		got := b.meta.Image().ClusterID
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if got != id {
			t.Fatalf("cluster id %q, want the formatted %q", got, id)
		}
	}
	dir = t.TempDir()
	if b, err := open("silkworm.cluster.id=AnotherClusterIdAAAAAA"); err == nil {
		b.Close()
		t.Fatal("started with a configured cluster id that differs from meta.properties")
	}
}

// TestClusterStartsWithTheFormattedClusterID: three nodes whose dirs were
// formatted with one cluster id (kafka-storage.sh format -t ID on each,
// no silkworm.cluster.id) form a cluster of that id, as KRaft does.
func TestClusterStartsWithTheFormattedClusterID(t *testing.T) {
	const id = "Q2x1c3RlckZvcm1hdHRlZA"
	tc := newTestClusterOnDirs(t, 3, func(node int, dir string) {
		meta := fmt.Appendf(nil, "#\n#Tue Dec 01 12:00:00 UTC 2026\nnode.id=%d\nversion=1\ncluster.id=%s\n", node, id)
		if err := os.WriteFile(filepath.Join(dir, "meta.properties"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	for i, b := range tc.brokers {
		if got := b.meta.Image().ClusterID; got != id {
			t.Fatalf("node %d: cluster id %q, want the formatted %q", i+1, got, id)
		}
	}
	md, err := kadm.NewClient(tc.client()).BrokerMetadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if md.Cluster != id {
		t.Fatalf("Metadata: cluster id %q, want %q", md.Cluster, id)
	}
}
