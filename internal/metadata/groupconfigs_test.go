package metadata

import (
	"maps"
	"testing"
)

// TestGroupConfigsOnBothStores sets, replaces and removes GROUP config
// overrides on Local (and across a reopen) and on a single-node Quorum.
func TestGroupConfigsOnBothStores(t *testing.T) {
	self := Broker{NodeID: 1, Host: "127.0.0.1", Port: 9092}
	dir := t.TempDir()
	local, err := OpenLocal(dir, self, "cluster")
	if err != nil {
		t.Fatal(err)
	}
	c := newTestCluster(t, 1, 0, func(cfg *QuorumConfig) { cfg.ClusterID = "cluster" })
	q := c.node(1)
	type store interface {
		Image() *Image
		SetGroupConfigs(string, map[string]string) error
	}
	for _, s := range []store{local, q} {
		if err := s.SetGroupConfigs("g", map[string]string{"share.auto.offset.reset": "earliest"}); err != nil {
			t.Fatalf("%T: %v", s, err)
		}
		if err := s.SetGroupConfigs("h", map[string]string{"share.session.timeout.ms": "50000"}); err != nil {
			t.Fatal(err)
		}
		before := s.Image().GroupConfigs
		if err := s.SetGroupConfigs("g", nil); err != nil {
			t.Fatal(err)
		}
		got := s.Image().GroupConfigs
		if _, ok := got["g"]; ok || got["h"]["share.session.timeout.ms"] != "50000" {
			t.Fatalf("%T: group configs %v", s, got)
		}
		if before["g"]["share.auto.offset.reset"] != "earliest" {
			t.Fatalf("%T: an earlier image changed: %v", s, before)
		}
	}
	r, err := OpenLocal(dir, self, "")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(r.Image().GroupConfigs["h"], map[string]string{"share.session.timeout.ms": "50000"}) {
		t.Fatalf("after reopen: %v", r.Image().GroupConfigs)
	}
}
