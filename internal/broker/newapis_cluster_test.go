package broker

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestNewAPIsClusterQuorumAndFeatures runs DescribeQuorum against every
// node of a three-node cluster (brokers and controllers alike answer with
// the active controller's view) and checks that a feature update made on
// one node is what the others advertise.
func TestNewAPIsClusterQuorumAndFeatures(t *testing.T) {
	tc := newTestCluster(t, 3)

	var last string
	waitFor(t, "every node to describe the same quorum with every voter caught up", func() bool {
		var leaders []int32
		for _, b := range tc.brokers {
			resp := describeQuorum(t, func(req kmsg.Request) kmsg.Response {
				return dialRaw(t, b.Addr()).roundTrip(req)
			})
			p := resp.Topics[0].Partitions[0]
			last = fmt.Sprintf("node %d: %+v nodes %+v", b.nodeID, p, resp.Nodes)
			if p.ErrorCode != 0 || len(p.CurrentVoters) != 3 || len(p.Observers) != 0 || len(resp.Nodes) != 3 {
				return false
			}
			var leaderLEO int64 = -1
			for _, v := range p.CurrentVoters {
				if v.ReplicaID == p.LeaderID {
					leaderLEO = v.LogEndOffset
				}
			}
			if leaderLEO <= 0 || p.HighWatermark <= 0 || p.HighWatermark > leaderLEO || p.LeaderEpoch <= 0 {
				return false
			}
			for _, v := range p.CurrentVoters {
				if v.LogEndOffset != leaderLEO || v.LastFetchTimestamp <= 0 || v.LastCaughtUpTimestamp <= 0 {
					return false
				}
			}
			for i, n := range resp.Nodes {
				want := fmt.Sprintf("%d CONTROLLER 127.0.0.1:%d", i+1, tc.cports[i])
				if len(n.Listeners) != 1 || fmt.Sprintf("%d %s %s:%d", n.NodeID, n.Listeners[0].Name, n.Listeners[0].Host, n.Listeners[0].Port) != want {
					return false
				}
			}
			leaders = append(leaders, p.LeaderID)
		}
		return slices.Min(leaders) == slices.Max(leaders)
	})
	t.Log(last)

	// Finalize a lower level on node 2; node 3 advertises it.
	apiVersionsOn := func(i int) map[string]int16 {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 4
		req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1.0"
		return finalized(dialRaw(t, tc.brokers[i].Addr()).roundTrip(req).(*kmsg.ApiVersionsResponse))
	}
	before := apiVersionsOn(2)
	name := ""
	for _, n := range []string{"group.version", "transaction.version", "share.version"} {
		if before[n] > 0 {
			name = n
			break
		}
	}
	if name == "" {
		t.Fatalf("no optional feature finalized: %v", before)
	}
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version = 2
	req.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate(name, 0, upgradeTypeSafeDowngrade)}
	resp := dialRaw(t, tc.brokers[1].Addr()).roundTrip(req).(*kmsg.UpdateFeaturesResponse)
	if resp.ErrorCode != 0 {
		t.Fatalf("update features on node 2: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	// The update is acknowledged once every reachable node applied it.
	if after := apiVersionsOn(2); after[name] != 0 || after["metadata.version"] != before["metadata.version"] {
		t.Fatalf("node 3 after the update: %v (before %v)", after, before)
	}

	// Stop node 3: DescribeCluster v2 lists it, fenced, only when asked.
	tc.kill(3)
	describeCluster := func(includeFenced bool) map[int32]bool {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version = 2
		req.IncludeFencedBrokers = includeFenced
		resp := dialRaw(t, tc.brokers[0].Addr()).roundTrip(req).(*kmsg.DescribeClusterResponse)
		out := map[int32]bool{}
		for _, b := range resp.Brokers {
			out[b.NodeID] = b.IsFenced
		}
		return out
	}
	waitFor(t, "node 3 to be fenced", func() bool {
		all := describeCluster(true)
		fenced, listed := all[3]
		_, live := describeCluster(false)[3]
		return listed && fenced && !live && len(all) == 3 && !all[1] && !all[2]
	})
}
