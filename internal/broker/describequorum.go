package broker

// DescribeQuorum: v0-2
//
// Describes the metadata quorum (KIP-595; v1 adds each replica's last
// fetch and last caught-up times, KIP-836; v2 the voters' controller
// endpoints and error messages, KIP-853). Kafka 4 serves it on the
// controllers; a broker forwards it to the active controller, which is
// what an admin client with --bootstrap-server gets. Here any broker
// answers with the active controller's view, asked over the controller
// listener (metadata.Quorum.DescribeQuorum): leader, epoch (the Raft
// term), high watermark (the commit index), the voters and, as observers,
// the broker-only nodes, each with its log end offset and times (see
// metadata.QuorumStatus). DESCRIBE on CLUSTER is needed
// (CLUSTER_AUTHORIZATION_FAILED at the top level). The request must name
// __cluster_metadata partition 0, else each partition it names answers
// UNKNOWN_TOPIC_OR_PARTITION; while no controller answers the partition
// is NOT_LEADER_OR_FOLLOWER.
//
// A single node (no controller.quorum.voters) is a quorum of one: itself
// as leader at epoch 1, with the metadata image's epoch as log end offset
// and high watermark. Directory ids are zero (no KIP-853 directories).

import (
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
)

func init() { register(kmsg.DescribeQuorum, 0, 2, handleDescribeQuorum) }

// metadataTopicName is the KRaft metadata log's topic.
const metadataTopicName = "__cluster_metadata"

// quorumDescriber is the part of metadata.Quorum DescribeQuorum needs.
type quorumDescriber interface {
	DescribeQuorum() (metadata.QuorumStatus, error)
}

func handleDescribeQuorum(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeQuorumRequest)
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if !b.authorizeCluster(r, kmsg.ACLOperationDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		r.respond(resp)
		return
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != metadataTopicName ||
		len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		for _, t := range req.Topics {
			rt := kmsg.NewDescribeQuorumResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewDescribeQuorumResponseTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				rp.LeaderID = -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		r.respond(resp)
		return
	}
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic = metadataTopicName
	rp := kmsg.NewDescribeQuorumResponseTopicPartition()
	st, err := b.quorumStatus()
	if err != nil {
		rp.ErrorCode = kerr.NotLeaderForPartition.Code
		rp.LeaderID, rp.LeaderEpoch = -1, -1
		if r.hdr.APIVersion >= 2 {
			msg := err.Error()
			rp.ErrorMessage = &msg
		}
	} else {
		rp.LeaderID, rp.LeaderEpoch, rp.HighWatermark = st.LeaderID, st.LeaderEpoch, st.HighWatermark
		rp.CurrentVoters = quorumReplicas(st.Voters)
		rp.Observers = quorumReplicas(st.Observers)
		if r.hdr.APIVersion >= 2 {
			resp.Nodes = b.quorumNodes(st.Voters)
		}
	}
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	r.respond(resp)
}

// quorumStatus asks the metadata store for the quorum's state; a single
// node describes itself.
func (b *Broker) quorumStatus() (metadata.QuorumStatus, error) {
	if qd, ok := b.meta.(quorumDescriber); ok {
		return qd.DescribeQuorum()
	}
	now := time.Now().UnixMilli()
	epoch := b.meta.Image().Epoch
	return metadata.QuorumStatus{
		LeaderID: b.nodeID, LeaderEpoch: 1, HighWatermark: epoch,
		Voters: []metadata.ReplicaStatus{{NodeID: b.nodeID, LogEndOffset: epoch,
			LastFetchTimestamp: now, LastCaughtUpTimestamp: now}},
		Observers: []metadata.ReplicaStatus{},
	}, nil
}

func quorumReplicas(rs []metadata.ReplicaStatus) []kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	out := make([]kmsg.DescribeQuorumResponseTopicPartitionReplicaState, 0, len(rs))
	for _, s := range rs {
		rr := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		rr.ReplicaID, rr.LogEndOffset = s.NodeID, s.LogEndOffset
		rr.LastFetchTimestamp, rr.LastCaughtUpTimestamp = s.LastFetchTimestamp, s.LastCaughtUpTimestamp
		out = append(out, rr)
	}
	return out
}

// quorumNodes lists the voters' controller endpoints (v2), named by the
// first controller.listener.names entry.
func (b *Broker) quorumNodes(voters []metadata.ReplicaStatus) []kmsg.DescribeQuorumResponseNode {
	name := "CONTROLLER"
	if len(b.cfg.ControllerListenerNames) > 0 {
		name = b.cfg.ControllerListenerNames[0]
	}
	nodes := []kmsg.DescribeQuorumResponseNode{}
	for _, v := range voters {
		n := kmsg.NewDescribeQuorumResponseNode()
		n.NodeID = v.NodeID
		n.Listeners = []kmsg.DescribeQuorumResponseNodeListener{}
		if host, port, err := net.SplitHostPort(v.Address); err == nil {
			if p, err := strconv.ParseUint(port, 10, 16); err == nil {
				l := kmsg.NewDescribeQuorumResponseNodeListener()
				l.Name, l.Host, l.Port = name, host, uint16(p)
				n.Listeners = append(n.Listeners, l)
			}
		}
		nodes = append(nodes, n)
	}
	return nodes
}
