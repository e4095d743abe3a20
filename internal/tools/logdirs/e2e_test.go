package logdirs

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

func TestDescribeEndToEnd(t *testing.T) {
	c := brokertest.Cluster(t)
	addr := c.Addr(1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, topic := range []string{"orders", "audit"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("hello")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if err := Run(ctx, []string{"--bootstrap-server", addr, "--describe", "--topic-list", "orders"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(out.String(), "\n", 3)
	if len(lines) != 3 || lines[0] != "Querying brokers for log directories information" ||
		lines[1] != "Received log directory information from brokers 1" {
		t.Fatalf("output:\n%s", out.String())
	}
	var doc struct {
		Version int `json:"version"`
		Brokers []struct {
			Broker  int `json:"broker"`
			LogDirs []struct {
				LogDir     string  `json:"logDir"`
				Error      *string `json:"error"`
				Partitions []struct {
					Partition string `json:"partition"`
					Size      int64  `json:"size"`
					OffsetLag int64  `json:"offsetLag"`
					IsFuture  bool   `json:"isFuture"`
				} `json:"partitions"`
			} `json:"logDirs"`
		} `json:"brokers"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &doc); err != nil {
		t.Fatalf("%v in %s", err, lines[2])
	}
	if doc.Version != 1 || len(doc.Brokers) != 1 || doc.Brokers[0].Broker != 1 || len(doc.Brokers[0].LogDirs) != 1 {
		t.Fatalf("document: %s", lines[2])
	}
	d := doc.Brokers[0].LogDirs[0]
	if d.Error != nil || !strings.HasPrefix(d.LogDir, "/") || len(d.Partitions) != 1 || d.Partitions[0].Partition != "orders-0" ||
		d.Partitions[0].Size <= 0 || d.Partitions[0].IsFuture {
		t.Errorf("log dir: %s", lines[2])
	}

	out.Reset()
	err = Run(ctx, []string{"--bootstrap-server", addr, "--describe", "--broker-list", "1,7"}, &out, &errOut)
	if err == nil || err.Error() != "ERROR: The given brokers do not exist from --broker-list: 7. Current existent brokers: 1" || out.Len() != 0 {
		t.Errorf("unknown broker: %v, output %q", err, out.String())
	}
}
