package main

import (
	"bytes"
	"cmp"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

// TestMain lets a test run the real command line: with SILKWORM_TEST_MAIN=1
// the test binary is the silkworm binary, its arguments the command's.
func TestMain(m *testing.M) {
	if os.Getenv("SILKWORM_TEST_MAIN") == "1" {
		// SILKWORM_TEST_ARGV0 is the name the binary runs under (a link).
		os.Args = append([]string{cmp.Or(os.Getenv("SILKWORM_TEST_ARGV0"), "silkworm")}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// silkworm runs the binary with args and returns stdout, stderr and the
// exit code.
func silkworm(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "SILKWORM_TEST_MAIN=1")
	cmd.Stdin = strings.NewReader("")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.ExitCode()
	default:
		t.Fatalf("run silkworm %q: %v", args, err)
		return "", "", -1
	}
}

// toolCommands are the Kafka tools among the subcommands (all but server).
func toolCommands() []string {
	var names []string
	for _, c := range commands {
		if c.name != "server" {
			names = append(names, c.name)
		}
	}
	return names
}

// randomGroup matches consumer-perf-test's default group, random as in
// Kafka.
var randomGroup = regexp.MustCompile(`perf-consumer-[0-9]+`)

// TestToolHelpGolden checks every tool's --help: exit 0, the usage on
// stdout in Kafka's layout with Kafka's option names, nothing on stderr.
func TestToolHelpGolden(t *testing.T) {
	names := toolCommands()
	if len(names) < 11 {
		t.Fatalf("only %d tool subcommands registered: %q", len(names), names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := silkworm(t, name, "--help")
			out = randomGroup.ReplaceAllString(out, "perf-consumer-NNNNN")
			if code != 0 || errOut != "" {
				t.Fatalf("%s --help: exit %d, stderr %q", name, code, errOut)
			}
			if !strings.Contains(out, "\nOption                                   Description\n------                                   -----------\n") {
				t.Errorf("%s --help lacks Kafka's option table:\n%s", name, out)
			}
			path := filepath.Join("testdata", "help", name+".golden")
			if golden.Update() {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden file (run with -update to create it): %v", err)
			}
			if out != string(want) {
				t.Errorf("%s --help differs from %s\n--- got\n%s\n--- want\n%s", name, path, out, want)
			}
			// -h is the same.
			if short, _, code := silkworm(t, name, "-h"); code != 0 || randomGroup.ReplaceAllString(short, "perf-consumer-NNNNN") != out {
				t.Errorf("%s -h: exit %d, output differs from --help", name, code)
			}
		})
	}
}

// TestToolUnknownOption checks that every tool rejects an unknown option,
// naming it, with a non-zero exit, before it tries to connect anywhere.
func TestToolUnknownOption(t *testing.T) {
	for _, name := range toolCommands() {
		t.Run(name, func(t *testing.T) {
			_, errOut, code := silkworm(t, name, "--no-such-option", "x")
			if code == 0 {
				t.Errorf("%s --no-such-option: exit 0", name)
			}
			if !strings.Contains(errOut, "--no-such-option") {
				t.Errorf("%s --no-such-option: stderr %q does not name the option", name, errOut)
			}
			_, errOut, code = silkworm(t, name, "--zookeeper", "127.0.0.1:2181")
			if code == 0 || !strings.Contains(errOut, "ZooKeeper") || !strings.Contains(errOut, "--bootstrap-server") {
				t.Errorf("%s --zookeeper: exit %d, stderr %q", name, code, errOut)
			}
		})
	}
}

// TestRunAsKafkaScript: the binary run through a link named after a Kafka
// script is that tool, its arguments the tool's.
func TestRunAsKafkaScript(t *testing.T) {
	t.Setenv("SILKWORM_TEST_ARGV0", "/opt/kafka/bin/kafka-topics.sh")
	_, errOut, code := silkworm(t, "--zookeeper", "127.0.0.1:2181")
	if code == 0 || !strings.Contains(errOut, "silkworm topics:") || !strings.Contains(errOut, "ZooKeeper") {
		t.Errorf("kafka-topics.sh --zookeeper: exit %d, stderr %q", code, errOut)
	}
}

func TestUnknownCommand(t *testing.T) {
	for _, name := range []string{"nope", "kafka-nope.sh"} {
		_, errOut, code := silkworm(t, name)
		if code == 0 || !strings.Contains(errOut, `unknown command "`+name+`"`) {
			t.Errorf("%s: exit %d, stderr %q", name, code, errOut)
		}
	}
}
