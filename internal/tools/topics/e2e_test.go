package topics

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

func TestTopicsEndToEnd(t *testing.T) {
	addr := brokertest.Start(t)
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := Run(context.Background(), append([]string{"--bootstrap-server", addr}, args...), &out, &errOut)
		return out.String(), err
	}
	if out, err := run("--create", "--topic", "orders", "--partitions", "2", "--config", "retention.ms=1000"); err != nil || out != "Created topic orders.\n" {
		t.Fatalf("create: %q %v", out, err)
	}
	if _, err := run("--create", "--topic", "orders"); err == nil {
		t.Error("create twice: want an error")
	}
	if _, err := run("--create", "--topic", "orders", "--if-not-exists"); err != nil {
		t.Errorf("--if-not-exists: %v", err)
	}
	if out, err := run("--list"); err != nil || !strings.Contains(out, "orders\n") {
		t.Errorf("list: %q %v", out, err)
	}
	if _, err := run("--alter", "--topic", "orders", "--partitions", "3"); err != nil {
		t.Fatalf("alter: %v", err)
	}
	out, err := run("--describe", "--topic", "orders")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^Topic: orders\t(TopicId: \S+\t)?PartitionCount: 3\tReplicationFactor: 1\tConfigs: .*retention.ms=1000.*\n` +
		`(\tTopic: orders\tPartition: \d\tLeader: \d+\tReplicas: \d+\tIsr: \d+\tElr: N/A\tLastKnownElr: N/A\n){3}$`)
	if !want.MatchString(out) {
		t.Errorf("describe printed:\n%s", out)
	}
	if out, err := run("--describe", "--under-replicated-partitions"); err != nil || out != "" {
		t.Errorf("under-replicated: %q %v", out, err)
	}
	if _, err := run("--describe", "--topic", "missing"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing topic: %v", err)
	}
	if _, err := run("--delete", "--topic", "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := run("--delete", "--topic", "orders", "--if-exists"); err != nil {
		t.Errorf("delete --if-exists: %v", err)
	}
}
