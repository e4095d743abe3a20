package apiversions

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
	"github.com/silkworm/silkworm/internal/tools/golden"
)

func TestFormatGolden(t *testing.T) {
	rack := "r1"
	n := Node{ID: 2, Host: "kafka-2", Port: 9092, Rack: &rack}
	versions := []APIVersion{
		{Key: 18, MinVersion: 0, MaxVersion: 4},
		{Key: 0, MinVersion: 3, MaxVersion: 99}, // newer than the client: usable is the client's top
		{Key: 17, MinVersion: 1, MaxVersion: 1},
		{Key: 22, MinVersion: 99, MaxVersion: 100}, // the node is too new
		{Key: 500, MinVersion: 0, MaxVersion: 2},   // unknown to the client
	}
	got := n.String() + " -> " + Format(versions) + "\n"
	golden.Check(t, filepath.Join("testdata", "format.golden"), []byte(got))
	for _, want := range []string{"kafka-2:9092 (id: 2 rack: r1 isFenced: false) -> (\n\tProduce(0): 3 to 99 [usable: ",
		"\tSaslHandshake(17): 1 [usable: 1],\n", "\tApiVersions(18): 0 to 4 [usable: 4],\n",
		"\tInitProducerId(22): 99 to 100 [unusable: node too new],\n", "\tFetch(1): UNSUPPORTED,\n", "\tUNKNOWN(500): 0 to 2\n)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Controller-only APIs are not client APIs: never listed.
	if strings.Contains(got, "Vote(52)") || strings.Contains(got, "BrokerHeartbeat(63)") {
		t.Error("controller-only APIs listed")
	}
}

func TestEndToEnd(t *testing.T) {
	addr := brokertest.Start(t)
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), []string{"--bootstrap-server", addr}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	head := regexp.MustCompile(`\A127\.0\.0\.1:\d+ \(id: 1 rack: null isFenced: false\) -> \(\n\tProduce\(0\): \d+ to \d+ \[usable: \d+\],\n`)
	if !head.MatchString(out.String()) || !strings.HasSuffix(out.String(), "\n)\n") ||
		!regexp.MustCompile(`\n\tApiVersions\(18\): 0 to \d \[usable: \d\],\n`).MatchString(out.String()) {
		t.Errorf("output:\n%s", out.String())
	}
	if err := Run(context.Background(), nil, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--bootstrap-server") {
		t.Errorf("no bootstrap: %v", err)
	}
}
