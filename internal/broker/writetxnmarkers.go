package broker

// WriteTxnMarkers: v0-1
//
// Sent by a transaction coordinator on another broker (or by an admin
// aborting a hanging transaction): each marker is appended to the named
// partitions this broker leads (NOT_LEADER_OR_FOLLOWER otherwise) and
// waits for the ISR. A marker whose coordinator epoch is below that of
// the producer's last marker in the partition comes from a deposed
// coordinator: TRANSACTION_COORDINATOR_FENCED, as Kafka's producer state
// check.

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
					switch {
					case !clusterOK:
						rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
					case b.markerFenced(t.Topic, p, m.ProducerID, m.CoordinatorEpoch):
						rp.ErrorCode = kerr.TransactionCoordinatorFenced.Code
					default:
						rp.ErrorCode = b.writeMarker(t.Topic, p, m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch)
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

// markerFenced reports whether a marker of coordinator epoch epoch is
// older than the producer's last marker in a partition this broker holds.
func (b *Broker) markerFenced(topic string, index int32, producerID int64, epoch int32) bool {
	_, p := b.partition(topic, index)
	if p == nil {
		return false
	}
	last, ok := p.Log.CoordinatorEpoch(producerID)
	return ok && epoch < last
}
