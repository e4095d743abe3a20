package broker

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/tools/storagetool"
)

// TestFormatReleaseVersionSetsFeatureLevels: `storage format
// --release-version 3.9` starts the cluster at metadata.version 3.9-IV0
// (21) with 3.9's feature levels (no group.version, transaction.version
// or share.version), as Kafka's bootstrap checkpoint does; a restart keeps
// them, and a later upgrade is the admin's (UpdateFeatures). Before,
// format printed the version and the broker ignored it.
func TestFormatReleaseVersionSetsFeatureLevels(t *testing.T) {
	const cid = "MkU3OEVBNTcwNTJENDM2Qg"
	tb := &testBroker{t: t, dir: t.TempDir(), extra: []string{"silkworm.cluster.id=" + cid}}
	cfgPath := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(cfgPath, []byte("node.id=1\nlog.dirs="+tb.dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := storagetool.Run([]string{"format", "-t", cid, "-c", cfgPath, "-N", "--release-version", "3.9"}, &out, &errOut); err != nil {
		t.Fatalf("format: %v %s", err, errOut.String())
	}
	finalized := func() map[string]int16 {
		t.Helper()
		resp := tb.request(testCtx(t), kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
		got := map[string]int16{}
		for _, f := range resp.FinalizedFeatures {
			got[f.Name] = f.MaxVersionLevel
		}
		return got
	}
	tb.start()
	t.Cleanup(tb.stop)
	want := map[string]int16{"metadata.version": 21}
	if got := finalized(); len(got) != 1 || got["metadata.version"] != 21 {
		t.Fatalf("finalized features after format --release-version 3.9: %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(tb.dir, metadata.BootstrapFeaturesFile)); !os.IsNotExist(err) {
		t.Errorf("the bootstrap features file is still there after the first start: %v", err)
	}
	tb.restart()
	if got := finalized(); len(got) != 1 || got["metadata.version"] != 21 {
		t.Fatalf("finalized features after a restart: %v, want %v", got, want)
	}
}

// TestFormatLatestReleaseWritesNoFeatureLevels: the default release
// leaves the levels to the broker (every feature at its top level).
func TestFormatLatestReleaseWritesNoFeatureLevels(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(cfgPath, []byte("node.id=1\nlog.dirs="+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := storagetool.Run([]string{"format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", cfgPath, "-N"}, &out, &errOut); err != nil {
		t.Fatalf("format: %v %s", err, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(dir, metadata.BootstrapFeaturesFile)); !os.IsNotExist(err) {
		t.Errorf("format of the latest release wrote %s: %v", metadata.BootstrapFeaturesFile, err)
	}
}
