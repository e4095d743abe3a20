package features

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
	"github.com/silkworm/silkworm/internal/tools/golden"
)

func check(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

func TestDescribeGolden(t *testing.T) {
	var out bytes.Buffer
	md := &Metadata{Epoch: 42, Features: []Feature{
		{Name: "group.version", SupportedMin: 0, SupportedMax: 1, Finalized: 1},
		{Name: "metadata.version", SupportedMin: 7, SupportedMax: 29, Finalized: 25},
		{Name: "kraft.version", SupportedMin: 0, SupportedMax: 1, Finalized: 0},
	}}
	if err := WriteDescribe(&out, md); err != nil {
		t.Fatal(err)
	}
	check(t, "describe", out.Bytes())
	out.Reset()
	md.Epoch = -1
	md.Features = []Feature{{Name: "metadata.version", SupportedMin: 1, SupportedMax: 40, Finalized: 7}}
	WriteDescribe(&out, md)
	if want := "Feature: metadata.version\tSupportedMinVersion: UNKNOWN 1\tSupportedMaxVersion: UNKNOWN 40\tFinalizedVersionLevel: 3.3-IV3\tEpoch: -\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestUpdateResultsGolden(t *testing.T) {
	var out bytes.Buffer
	updates := []Update{{"metadata.version", 25, Upgrade}, {"group.version", 1, Upgrade}}
	err := WriteUpdateResults(&out, "upgrade", updates, map[string]error{"metadata.version": errors.New("Invalid update version 25 for feature metadata.version. Broken.")}, false)
	if err == nil || err.Error() != "1 out of 2 operation(s) failed." {
		t.Errorf("error %v", err)
	}
	if err := WriteUpdateResults(&out, "downgrade", updates, map[string]error{}, true); err != nil {
		t.Fatal(err)
	}
	if err := WriteUpdateResults(&out, "disable", []Update{{"group.version", 0, SafeDowngrade}}, map[string]error{}, false); err != nil {
		t.Fatal(err)
	}
	WriteUpdateResults(&out, "disable", []Update{{"group.version", 0, SafeDowngrade}}, map[string]error{"group.version": errors.New("no")}, true)
	check(t, "update", out.Bytes())
}

func TestOfflineCommandsGolden(t *testing.T) {
	var out bytes.Buffer
	for _, rv := range []string{"", "3.9", "4.0-IV3", "3.3-IV3"} {
		if err := WriteVersionMapping(&out, rv); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteDependencies(&out, []string{"transaction.version=2", "transaction.version=1", "metadata.version=21", "group.version=1", "kraft.version=0"}); err != nil {
		t.Fatal(err)
	}
	check(t, "offline", out.Bytes())
	for _, tc := range []struct {
		err  error
		want string
	}{
		{WriteVersionMapping(&out, "2.8"), "Unknown release version '2.8'. Supported versions are: 3.3-IV3 to 4.2-IV1"},
		{WriteDependencies(&out, []string{"foo.version=1"}), "Unknown feature: foo.version"},
		{WriteDependencies(&out, []string{"metadata.version=3"}), "Unknown metadata.version 3"},
		{WriteDependencies(&out, []string{"group.version"}), "Can't parse feature=level string group.version: equals sign not found."},
		{WriteDependencies(&out, []string{"group.version=x"}), "Can't parse feature=level string group.version=x: unable to parse x as a short."},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%v, want %q", tc.err, tc.want)
		}
	}
}

func TestBuildUpdates(t *testing.T) {
	var note bytes.Buffer
	u, err := BuildUpdates(Upgrade, "", "3.9-IV0", nil, &note)
	if err != nil {
		t.Fatal(err)
	}
	// 3.9-IV0: metadata.version 21 and kraft.version 1; level-0 features
	// are not sent on an upgrade.
	if len(u) != 2 || u[0] != (Update{"metadata.version", 21, Upgrade}) || u[1] != (Update{"kraft.version", 1, Upgrade}) {
		t.Errorf("release 3.9-IV0: %v", u)
	}
	u, _ = BuildUpdates(SafeDowngrade, "", "3.9-IV0", nil, &note)
	if len(u) != 7 {
		t.Errorf("downgrade to a release sends every feature: %v", u)
	}
	u, err = BuildUpdates(Upgrade, "3.9", "", []string{"group.version=1"}, &note)
	if err != nil || len(u) != 2 || u[0].Level != 21 || note.String() != " `metadata` flag is deprecated and may be removed in a future release.\n" {
		t.Errorf("--metadata: %v %v %q", u, err, note.String())
	}
	for _, tc := range []struct {
		metadata, release string
		features          []string
		want              string
	}{
		{"", "4.0", []string{"group.version=1"}, "Can not specify `release-version` with other feature flags."},
		{"2.1", "", nil, "Unknown metadata.version 2.1. Supported metadata.version are 3.3-IV3, 3.4-IV0,"},
		{"", "", []string{"a=1", "a=2"}, "Feature a was specified more than once."},
	} {
		if _, err := BuildUpdates(Upgrade, tc.metadata, tc.release, tc.features, &note); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}

func TestEndToEnd(t *testing.T) {
	addr := brokertest.Start(t)
	ctx := context.Background()
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := Run(ctx, append([]string{"--bootstrap-server", addr}, args...), &out, &errOut)
		return out.String(), err
	}
	out, err := run("describe")
	if err != nil || !strings.Contains(out, "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.2-IV1\tFinalizedVersionLevel: 4.2-IV1\tEpoch: ") {
		t.Fatalf("describe: %q %v", out, err)
	}
	if out, err := run("disable", "--feature", "group.version", "--dry-run"); err != nil || out != "group.version can be disabled.\n" {
		t.Errorf("disable --dry-run: %q %v", out, err)
	}
	if out, err := run("downgrade", "--feature", "group.version=0"); err != nil || out != "group.version was downgraded to 0.\n" {
		t.Errorf("downgrade: %q %v", out, err)
	}
	if out, err := run("upgrade", "--feature", "group.version=1"); err != nil || out != "group.version was upgraded to 1.\n" {
		t.Errorf("upgrade: %q %v", out, err)
	}
	out, err = run("upgrade", "--feature", "metadata.version=25")
	if err == nil || err.Error() != "1 out of 1 operation(s) failed." || !strings.HasPrefix(out, "Could not upgrade metadata.version to 25. ") {
		t.Errorf("upgrade to a lower level: %q %v", out, err)
	}
	if _, err := run("upgrade"); err == nil || err.Error() != "You must specify at least one feature to upgrade" {
		t.Errorf("no feature: %v", err)
	}
	if _, err := run("upgrade", "--unsafe", "--feature", "a=1"); err == nil || err.Error() != "unrecognized arguments: '--unsafe'" {
		t.Errorf("--unsafe on upgrade: %v", err)
	}
}
