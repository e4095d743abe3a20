package console

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func createTopic(t *testing.T, addr, topic string, partitions int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
}

func runConsumer(t *testing.T, args ...string) (string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := RunConsumer(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("console-consumer %q: %v (stderr %q)", args, err, errOut.String())
	}
	return out.String(), errOut.String()
}

func runProducer(t *testing.T, in string, args ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := RunProducer(context.Background(), args, strings.NewReader(in), &out, &errOut); err != nil {
		t.Fatalf("console-producer %q: %v (stderr %q)", args, err, errOut.String())
	}
}

// TestConsoleHeadersAndFormat produces with parse.headers/parse.key and a
// --producer.config file, and prints with print.partition, print.headers,
// print.key and a key.separator.
func TestConsoleHeadersAndFormat(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "h", 1)
	cfgFile := filepath.Join(t.TempDir(), "producer.properties")
	if err := os.WriteFile(cfgFile, []byte("# the console producer's own settings\nacks=1\nlinger.ms=0\nclient.id=console-test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runProducer(t, "h1:v1,h2:v2\tk1|one\n\tk2|two\nh3:x\tk3|three\n",
		"--bootstrap-server", addr, "--topic", "h", "--producer.config", cfgFile,
		"--property", "parse.headers=true", "--property", "parse.key=true", "--property", "key.separator=|")
	out, errOut := runConsumer(t, "--bootstrap-server", addr, "--topic", "h", "--from-beginning", "--max-messages", "3",
		"--property", "print.partition=true", "--property", "print.headers=true", "--property", "print.key=true",
		"--property", "key.separator= | ")
	want := "Partition:0 | h1:v1,h2:v2 | k1 | one\nPartition:0 | NO_HEADERS | k2 | two\nPartition:0 | h3:x | k3 | three\n"
	if out != want {
		t.Errorf("consumer printed %q, want %q", out, want)
	}
	if !strings.Contains(errOut, "Processed a total of 3 messages") {
		t.Errorf("stderr %q", errOut)
	}
	// The records carry the headers, read with a plain client.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"h": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fs := cl.PollRecords(context.Background(), 1)
	if recs := fs.Records(); len(recs) != 1 || len(recs[0].Headers) != 2 || recs[0].Headers[1].Key != "h2" || string(recs[0].Headers[1].Value) != "v2" || string(recs[0].Key) != "k1" {
		t.Errorf("first record as stored: %+v", recs)
	}

	// An unknown property in --producer.config is named.
	if err := os.WriteFile(cfgFile, []byte("no.such.producer.prop=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	err = RunProducer(context.Background(), []string{"--bootstrap-server", addr, "--topic", "h", "--producer.config", cfgFile}, strings.NewReader("x\n"), &o, &e)
	if err == nil || !strings.Contains(err.Error(), "no.such.producer.prop") {
		t.Errorf("unknown producer property: %v", err)
	}
	// A line without the headers delimiter is an error naming the line.
	err = RunProducer(context.Background(), []string{"--bootstrap-server", addr, "--topic", "h", "--property", "parse.headers=true"}, strings.NewReader("no-delimiter\n"), &o, &e)
	if err == nil || !strings.Contains(err.Error(), "line number 1") {
		t.Errorf("missing headers delimiter: %v", err)
	}
}

// TestConsoleConsumerGroupResumes consumes part of a topic in a group; a
// second run in the same group continues where the first stopped, and the
// group's committed offset says so.
func TestConsoleConsumerGroupResumes(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "g", 1)
	runProducer(t, "a\nb\nc\nd\ne\n", "--bootstrap-server", addr, "--topic", "g")
	args := []string{"--bootstrap-server", addr, "--topic", "g", "--group", "cg", "--from-beginning", "--max-messages", "2"}
	if out, _ := runConsumer(t, args...); out != "a\nb\n" {
		t.Errorf("first run: %q", out)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	committed := func() int64 {
		t.Helper()
		os, err := adm.FetchOffsets(context.Background(), "cg")
		if err != nil {
			t.Fatal(err)
		}
		o, ok := os.Lookup("g", 0)
		if !ok || o.Err != nil {
			return -1
		}
		return o.At
	}
	if c := committed(); c != 2 {
		t.Errorf("committed after the first run: %d, want 2", c)
	}
	if out, _ := runConsumer(t, args...); out != "c\nd\n" {
		t.Errorf("second run: %q, want it to resume at c", out)
	}
	if c := committed(); c != 4 {
		t.Errorf("committed after the second run: %d, want 4", c)
	}
	// --timeout-ms ends a run that finds nothing more after the last record.
	out, errOut := runConsumer(t, "--bootstrap-server", addr, "--topic", "g", "--group", "cg", "--timeout-ms", "2000")
	if out != "e\n" || !strings.Contains(errOut, "TimeoutException") || !strings.Contains(errOut, "Processed a total of 1 messages") {
		t.Errorf("--timeout-ms run: %q, stderr %q", out, errOut)
	}
	if c := committed(); c != 5 {
		t.Errorf("committed after the timed-out run: %d, want 5", c)
	}
}

func TestConsoleIsolationLevel(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "iso", 1)
	runProducer(t, "x\ny\n", "--bootstrap-server", addr, "--topic", "iso")
	for _, level := range []string{"read_committed", "read_uncommitted"} {
		out, _ := runConsumer(t, "--bootstrap-server", addr, "--topic", "iso", "--from-beginning", "--max-messages", "2", "--isolation-level", level)
		if out != "x\ny\n" {
			t.Errorf("--isolation-level %s: %q", level, out)
		}
	}
	var o, e bytes.Buffer
	err := RunConsumer(context.Background(), []string{"--bootstrap-server", addr, "--topic", "iso", "--isolation-level", "read_most"}, &o, &e)
	if err == nil || !strings.Contains(err.Error(), "read_most") {
		t.Errorf("bad --isolation-level: %v", err)
	}
}
