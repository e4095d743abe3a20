package broker

// WriteTxnMarkers: v0-1
//
// Sent by a transaction coordinator on another broker: each marker is
// appended to the named partitions this broker leads (NOT_LEADER_OR_FOLLOWER
// otherwise) and waits for the ISR. The coordinator epoch is written in
// the marker but not checked against earlier markers.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.WriteTxnMarkers, 0, 1, handleWriteTxnMarkers) }

func handleWriteTxnMarkers(b *Broker, r *request) {
	req := r.kreq.(*kmsg.WriteTxnMarkersRequest)
	// Only brokers write markers: CLUSTER_ACTION (or ALTER) on the cluster.
	clusterOK := b.authorizeCluster(r, kmsg.ACLOperationClusterAction) || b.authorizeCluster(r, kmsg.ACLOperationAlter)
	go func() {
		resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
		for _, m := range req.Markers {
			rm := kmsg.NewWriteTxnMarkersResponseMarker()
			rm.ProducerID = m.ProducerID
			for _, t := range m.Topics {
				rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
					rp.Partition = p
					if clusterOK {
						rp.ErrorCode = b.writeMarker(t.Topic, p, m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch)
					} else {
						rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
					}
					rt.Partitions = append(rt.Partitions, rp)
				}
				rm.Topics = append(rm.Topics, rt)
			}
			resp.Markers = append(resp.Markers, rm)
		}
		r.respond(resp)
	}()
}
