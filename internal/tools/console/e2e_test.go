package console

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
	"github.com/silkworm/silkworm/internal/tools/topics"
)

func startBroker(t *testing.T) string {
	t.Helper()
	return brokertest.Start(t, "group.initial.rebalance.delay.ms=0")
}

func TestProduceConsumeEndToEnd(t *testing.T) {
	addr := startBroker(t)
	ctx := context.Background()
	var out, errOut bytes.Buffer
	if err := topics.Run(ctx, []string{"--bootstrap-server", addr, "--create", "--topic", "e2e", "--partitions", "1"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	in := strings.NewReader("k1:v1\nk2:v2\nk3:v3\n")
	if err := RunProducer(ctx, []string{"--bootstrap-server", addr, "--topic", "e2e", "--property", "parse.key=true", "--property", "key.separator=:"}, in, &out, &errOut); err != nil {
		t.Fatalf("producer: %v (stderr %s)", err, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	err := RunConsumer(ctx, []string{"--bootstrap-server", addr, "--topic", "e2e", "--from-beginning", "--max-messages", "3",
		"--property", "print.key=true", "--property", "print.offset=true"}, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Offset:0\tk1\tv1\nOffset:1\tk2\tv2\nOffset:2\tk3\tv3\n"; out.String() != want {
		t.Errorf("consumer printed %q, want %q", out.String(), want)
	}
	if !strings.Contains(errOut.String(), "Processed a total of 3 messages") {
		t.Errorf("stderr %q", errOut.String())
	}
	// --partition/--offset reads from the given offset.
	out.Reset()
	errOut.Reset()
	if err := RunConsumer(ctx, []string{"--bootstrap-server", addr, "--topic", "e2e", "--partition", "0", "--offset", "2", "--max-messages", "1"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if out.String() != "v3\n" {
		t.Errorf("from offset 2: %q", out.String())
	}
}

func TestUnreachableBootstrap(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the error must come back instead of hanging
	var out, errOut bytes.Buffer
	if err := RunConsumer(ctx, []string{"--bootstrap-server", "127.0.0.1:1", "--topic", "x"}, &out, &errOut); err == nil {
		t.Error("want an error")
	}
}
