package main

import "testing"

// TestKafkaScriptNames: every tool answers to its Kafka script name, as
// scripts written for Kafka's bin/ directory call it.
func TestKafkaScriptNames(t *testing.T) {
	for name, want := range map[string]string{
		"topics": "topics", "kafka-topics.sh": "topics", "kafka-topics": "topics",
		"kafka-configs.sh": "configs", "kafka-console-consumer.sh": "console-consumer",
		"kafka-consumer-groups.sh": "consumer-groups", "kafka-storage.sh": "storage",
		"kafka-server-start.sh": "server", "kafka-e2e-latency.sh": "e2e-latency",
		"kafka-get-offsets.sh": "get-offsets", "kafka-metadata-quorum.sh": "metadata-quorum",
		"kafka-nope.sh": "", "silkworm": "", "kafka-": "", "server-start": "",
	} {
		c, ok := lookup(name)
		if ok != (want != "") || c.name != want {
			t.Errorf("lookup(%q) = %q, %v; want %q", name, c.name, ok, want)
		}
	}
}
