package broker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/testcluster"
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
	tc := newTestClusterOnDirs(t, 3, func(_ *testCluster, node int, dir string) {
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

// TestClusterOfInitialControllers: nodes configured as Kafka 4 documents
// a dynamic quorum (controller.quorum.bootstrap.servers, no
// controller.quorum.voters) and formatted with --initial-controllers form
// one cluster of those voters. Without the formatted voter set, bootstrap
// servers naming other nodes are refused (the node would otherwise start
// a cluster of its own); naming only its own controller listener, as
// `--standalone` does, the node starts alone.
func TestClusterOfInitialControllers(t *testing.T) {
	tc := newTestClusterOnDirs(t, 3, func(tc *testCluster, node int, dir string) {
		var voters, servers []string
		for i, p := range tc.cports {
			voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, p))
			servers = append(servers, fmt.Sprintf("127.0.0.1:%d", p))
		}
		if node == 1 {
			tc.extra = append(tc.extra, "controller.quorum.voters=", "controller.quorum.bootstrap.servers="+strings.Join(servers, ","))
		}
		if err := metadata.WriteBootstrapVoters(dir, strings.Join(voters, ",")); err != nil {
			t.Fatal(err)
		}
	})
	for i, b := range tc.brokers {
		if !isCluster(b.cfg) || len(b.meta.Image().Brokers) != 3 {
			t.Fatalf("node %d: not one cluster of three: %d brokers", i+1, len(b.meta.Image().Brokers))
		}
	}
	if res, err := kadm.NewClient(tc.client()).CreateTopic(context.Background(), 1, 3, nil, "t"); err != nil || res.Err != nil {
		t.Fatalf("a topic of three replicas: %v %v", err, res.Err)
	}

	ports := testcluster.Ports(t, 2)
	open := func(port int, servers string) (*Broker, error) {
		cfg, err := config.Load("", []string{"process.roles=broker,controller", "node.id=1",
			"listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://localhost:" + fmt.Sprint(port),
			"controller.listener.names=CONTROLLER", "controller.quorum.bootstrap.servers=" + servers,
			"log.dirs=" + t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	if b, err := open(ports[0], fmt.Sprintf("localhost:%d,localhost:%d", ports[0], ports[1])); err == nil {
		b.Close()
		t.Fatal("started alone with bootstrap servers naming another node and no voter set")
	} else if !strings.Contains(err.Error(), fmt.Sprintf("localhost:%d, another node", ports[1])) {
		t.Fatalf("error does not name the other node: %v", err)
	}
	b, err := open(ports[0], fmt.Sprintf("127.0.0.1:%d", ports[0]))
	if err != nil {
		t.Fatalf("standalone: %v", err)
	}
	b.Close()
}

// TestOwnControllerAddress: which bootstrap servers name this node.
func TestOwnControllerAddress(t *testing.T) {
	cfg, err := config.Load("", []string{"process.roles=broker,controller", "node.id=1",
		"listeners=PLAINTEXT://:9092,CONTROLLER://:9093", "advertised.listeners=PLAINTEXT://kafka-1:9092,CONTROLLER://kafka-1:9093",
		"controller.listener.names=CONTROLLER", "log.dirs=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{
		"localhost:9093": true, "127.0.0.1:9093": true, "kafka-1:9093": true, "0.0.0.0:9093": true,
		"localhost:9092": false, "localhost:9094": false, "kafka-2.invalid:9093": false, "nonsense": false,
	} {
		if got := ownControllerAddress(cfg, addr); got != want {
			t.Errorf("%s: own %v, want %v", addr, got, want)
		}
	}
}
