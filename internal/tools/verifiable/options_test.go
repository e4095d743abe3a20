package verifiable

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandConfig: Kafka 4.1's --command-config reads client properties
// like the deprecated --producer.config / --consumer.config, and the two
// together are refused.
func TestCommandConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(file, []byte("linger.ms=7\nclient.id=from-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--topic", "t", "--bootstrap-server", "127.0.0.1:1"}
	o, err := parseProducerOptions(append(base, "--command-config", file), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.props["linger.ms"] != "7" || o.props["client.id"] != "from-file" {
		t.Fatalf("producer props %v lack the --command-config file's", o.props)
	}
	_, err = parseProducerOptions(append(base, "--command-config", file, "--producer.config", file), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "mutually exclusive") {
		t.Fatalf("both config options: %v, want mutually exclusive", err)
	}
	_, err = parseConsumerOptions(append(base, "--group-id", "g", "--command-config", file, "--consumer.config", file), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "mutually exclusive") {
		t.Fatalf("consumer, both config options: %v, want mutually exclusive", err)
	}
}
