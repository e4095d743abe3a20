package storagetool

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/embed"
	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/storage"
	"github.com/silkworm/silkworm/internal/tools/golden"
)

// writeConfig writes a server.properties in dir with the given lines.
func writeConfig(t *testing.T, dir string, lines ...string) string {
	t.Helper()
	path := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func run(args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := Run(args, &out, &errOut)
	return out.String(), err
}

func TestRandomUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		out, err := run("random-uuid")
		if err != nil {
			t.Fatal(err)
		}
		id := strings.TrimSuffix(out, "\n")
		if _, err := storage.ParseUUID(id); err != nil || len(id) != 22 || strings.HasPrefix(id, "-") || seen[id] {
			t.Fatalf("random-uuid %q: %v", id, err)
		}
		seen[id] = true
	}
}

// TestFormatAndInfoGolden formats a broker's two log dirs, then runs info
// and format again, comparing with Kafka's output (the temporary dir and
// random directory ids replaced).
func TestFormatAndInfoGolden(t *testing.T) {
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, "node.id=2", "process.roles=broker",
		"log.dirs="+filepath.Join(dir, "b")+","+filepath.Join(dir, "a"))
	const cid = "MkU3OEVBNTcwNTJENDM2Qg"
	var all bytes.Buffer
	step := func(args ...string) {
		t.Helper()
		out, err := run(args...)
		all.WriteString("$ storage " + strings.Join(args, " ") + "\n" + out)
		if err != nil {
			all.WriteString("error: " + err.Error() + "\n")
		}
	}
	step("info", "-c", cfgPath)
	step("format", "-t", cid, "-c", cfgPath)
	step("info", "--config", cfgPath)
	step("format", "--cluster-id", cid, "--config", cfgPath)
	step("format", "-t", cid, "-c", cfgPath, "--ignore-formatted")
	step("format", "-t", "MkU3OEVBNTcwNTJENDM2Qw", "-c", cfgPath, "--ignore-formatted")
	text := strings.ReplaceAll(all.String(), dir, "/DATA")
	text = regexp.MustCompile(`directory.id=[A-Za-z0-9_-]{22}`).ReplaceAllString(text, "directory.id=ID")
	golden.Check(t, filepath.Join("testdata", "format-info.golden"), []byte(text))

	data, err := os.ReadFile(filepath.Join(dir, "a", "meta.properties"))
	if err != nil {
		t.Fatal(err)
	}
	props, err := config.ParseProperties(bytes.NewReader(data))
	if err != nil || props["cluster.id"] != cid || props["node.id"] != "2" || props["version"] != "1" || len(props["directory.id"]) != 22 {
		t.Errorf("meta.properties: %q %v", data, err)
	}
	// A second dir with another node id is a problem info reports.
	if err := os.WriteFile(filepath.Join(dir, "b", "meta.properties"), []byte("version=1\nnode.id=3\ncluster.id="+cid+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run("info", "-c", cfgPath)
	if !errors.Is(err, ErrProblems) || !strings.Contains(out, "Found problem:\n  Mismatched node IDs between storage directories.\n") {
		t.Errorf("mismatched node ids: %q %v", out, err)
	}
}

func TestFormatErrors(t *testing.T) {
	dir := t.TempDir()
	combined := writeConfig(t, dir, "node.id=1", "log.dirs="+filepath.Join(dir, "d"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "a command is required"},
		{[]string{"wipe"}, "invalid choice: 'wipe'"},
		{[]string{"format", "-t", "MkU3OEVBNTcwNTJENDM2Qg"}, "argument --config/-c is required"},
		{[]string{"format", "-c", combined}, "argument --cluster-id/-t is required"},
		{[]string{"format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", combined}, "Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers."},
		{[]string{"format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", combined, "-s", "-N"}, "not allowed with"},
		{[]string{"format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", combined, "-N", "--release-version", "2.8"}, "Unknown release version '2.8'"},
		{[]string{"info", "-c", combined, "-t", "MkU3OEVBNTcwNTJENDM2Qg"}, "unrecognized arguments: '--cluster-id'"},
	} {
		_, err := run(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
	broker := writeConfig(t, t.TempDir(), "node.id=1", "process.roles=broker", "log.dirs="+filepath.Join(dir, "d"))
	if _, err := run("format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", broker, "--standalone"); err == nil || err.Error() != "You can only use --standalone on a controller." {
		t.Errorf("--standalone on a broker: %v", err)
	}
	// Any id is taken as given, as Kafka 4's format does (not URL-safe
	// base64 here, as kafka-python's fixture makes them).
	other := writeConfig(t, t.TempDir(), "node.id=1", "log.dirs="+filepath.Join(t.TempDir(), "d"))
	if _, err := run("format", "-t", "pMWitBDHQSiaKwX+16gSSw", "-c", other, "-N"); err != nil {
		t.Errorf("format with a standard base64 cluster id: %v", err)
	}
	// A combined node formats with --standalone: its dir is the metadata one.
	out, err := run("format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", combined, "--standalone", "-r", "3.9")
	if err != nil || out != "Formatting dynamic metadata voter directory "+filepath.Join(dir, "d")+" with metadata.version 3.9-IV0.\n" {
		t.Errorf("--standalone: %q %v", out, err)
	}
}

// TestServerStartsOnFormattedDir formats a node's data dir and starts a
// broker on it: the server accepts the meta.properties format wrote and
// keeps its node id, cluster id and directory id, also with the same id
// set as silkworm.cluster.id.
func TestServerStartsOnFormattedDir(t *testing.T) {
	dir := t.TempDir()
	nodeDir := filepath.Join(dir, "node-1")
	cfgPath := writeConfig(t, t.TempDir(), "node.id=1", "log.dirs="+nodeDir)
	const cid = "MkU3OEVBNTcwNTJENDM2Qg"
	if _, err := run("format", "-t", cid, "-c", cfgPath, "--standalone"); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(nodeDir, "meta.properties"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := embed.NewCluster(embed.Dir(dir), embed.BrokerConfig("silkworm.cluster.id", cid))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join(nodeDir, "meta.properties"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("the server rewrote meta.properties:\n%s\nwas:\n%s", after, before)
	}
	out, err := run("info", "-c", cfgPath)
	if err != nil || !strings.Contains(out, "Found metadata: {cluster.id="+cid+", directory.id=") {
		t.Errorf("info after a start: %q %v", out, err)
	}
}

// TestParseAddScram reads Kafka's --add-scram forms and refuses the bad
// ones with Kafka's texts.
func TestParseAddScram(t *testing.T) {
	c, err := parseAddScram(`SCRAM-SHA-256=[name=alice,password="alice-secret"]`)
	if err != nil || c.User != "alice" || c.Mechanism != "SCRAM-SHA-256" || c.Credential == nil ||
		c.Credential.Iterations != 4096 || len(c.Credential.Salt) == 0 {
		t.Fatalf("password form: %+v %v", c, err)
	}
	c, err = parseAddScram(`SCRAM-SHA-512=[name=bob,iterations=8192,salt="c2FsdA==",saltedpassword="c2FsdGVk"]`)
	if err != nil || c.User != "bob" || c.Credential.Iterations != 8192 || string(c.Credential.Salt) != "salt" {
		t.Fatalf("salted form: %+v %v", c, err)
	}
	for arg, want := range map[string]string{
		"SCRAM-SHA-1=[name=a,password=b]":                "The add-scram mechanism SCRAM-SHA-1 is not supported.",
		"SCRAM-SHA-256=[password=b]":                     "You must supply 'name' to add-scram",
		"SCRAM-SHA-256=[name=a]":                         "You must supply one of 'password' or 'saltedpassword'",
		"SCRAM-SHA-256=[name=a,password=b,iterations=1]": "Too few iterations",
		"SCRAM-SHA-256=name=a,password=b":                "Expected configuration string to start with [",
	} {
		if _, err := parseAddScram(arg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", arg, err, want)
		}
	}
}

// TestFormatInitialControllers: --initial-controllers (KIP-853) gives a
// controller its directory id from the list and leaves the voter set for
// the node's start; a node not in the list gets a dynamic metadata
// directory with the same voters; malformed lists get Kafka's messages.
func TestFormatInitialControllers(t *testing.T) {
	const (
		cid     = "MkU3OEVBNTcwNTJENDM2Qg"
		initial = "1@localhost:9093:e8V0xKZ-TQ-pHztN6wBIQg,2@localhost:9094:3Db5QLSqSZieL3rJBUUegA,3@[::1]:9095:L3Db5QLSqSZieL3rJBUUeg"
	)
	for _, tc := range []struct {
		node, roles, kind, dirID string
	}{
		{"2", "broker,controller", "dynamic metadata voter directory", "3Db5QLSqSZieL3rJBUUegA"},
		{"4", "broker", "dynamic metadata directory", ""},
	} {
		d := filepath.Join(t.TempDir(), "d")
		cfgPath := writeConfig(t, t.TempDir(), "node.id="+tc.node, "process.roles="+tc.roles,
			"log.dirs="+d)
		out, err := run("format", "-t", cid, "-c", cfgPath, "--initial-controllers", initial)
		if err != nil || out != "Formatting "+tc.kind+" "+d+" with metadata.version 4.2-IV1.\n" {
			t.Fatalf("node %s: %q %v", tc.node, out, err)
		}
		data, err := os.ReadFile(filepath.Join(d, "meta.properties"))
		if err != nil {
			t.Fatal(err)
		}
		props, _ := config.ParseProperties(bytes.NewReader(data))
		if tc.dirID != "" && props["directory.id"] != tc.dirID {
			t.Errorf("node %s: directory.id %q, want the initial controllers' %q", tc.node, props["directory.id"], tc.dirID)
		}
		voters, ok, err := metadata.ReadBootstrapVoters(d)
		if err != nil || !ok || voters != "1@localhost:9093,2@localhost:9094,3@[::1]:9095" {
			t.Errorf("node %s: bootstrap voters %q %v %v", tc.node, voters, ok, err)
		}
	}
	cfgPath := writeConfig(t, t.TempDir(), "node.id=1", "log.dirs="+filepath.Join(t.TempDir(), "d"))
	for _, tc := range []struct{ list, want string }{
		{"1localhost:9093:e8V0xKZ-TQ-pHztN6wBIQg", "No @ found in dynamic voter string."},
		{"x@localhost:9093:e8V0xKZ-TQ-pHztN6wBIQg", "Failed to parse node id in dynamic voter string."},
		{"1@localhost:9093", "No colon following port could be found."},
		{"1@localhost:99999:e8V0xKZ-TQ-pHztN6wBIQg", "Invalid port 99999 in dynamic voter string."},
		{"1@localhost:9093:nope", "Failed to parse directory ID in dynamic voter string."},
		{"1@a:1:e8V0xKZ-TQ-pHztN6wBIQg,1@b:2:3Db5QLSqSZieL3rJBUUegA", "Node id 1 was specified more than once."},
	} {
		if _, err := run("format", "-t", cid, "-c", cfgPath, "-I", tc.list); err == nil || err.Error() != tc.want {
			t.Errorf("-I %q: %v, want %q", tc.list, err, tc.want)
		}
	}
}
