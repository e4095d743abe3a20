package broker

// DescribeProducers: v0
//
// The producer state of each partition replica on this broker (leader or
// follower, as Kafka: `--broker-id` describes a follower's copy): producer
// id and epoch, last sequence and timestamp, the coordinator epoch of its
// last marker and the first offset of its open transaction. READ on the
// topic, else TOPIC_AUTHORIZATION_FAILED; a partition without a replica
// here is NOT_LEADER_OR_FOLLOWER, an unknown one UNKNOWN_TOPIC_OR_PARTITION.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.DescribeProducers, 0, 0, handleDescribeProducers) }

func handleDescribeProducers(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeProducersRequest)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	im := b.meta.Image()
	for _, rt := range req.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		authorized := b.authorize(r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, rt.Topic)
		mt := im.Topics[rt.Topic]
		for _, idx := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = idx
			_, p := b.partition(rt.Topic, idx)
			switch {
			case !authorized:
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case mt == nil || idx < 0 || int(idx) >= len(mt.Partitions):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case p == nil:
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
			default:
				for _, pi := range p.Log.Producers() {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID, ap.ProducerEpoch = pi.ProducerID, int32(pi.ProducerEpoch)
					ap.LastSequence, ap.LastTimestamp = pi.LastSequence, pi.LastTimestamp
					ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = pi.CoordinatorEpoch, pi.CurrentTxnStartOffset
					sp.ActiveProducers = append(sp.ActiveProducers, ap)
				}
			}
			if sp.ErrorCode != 0 && sp.ErrorCode != kerr.NotLeaderForPartition.Code {
				// Kafka's ApiError for these carries the error's message.
				msg := kerr.ErrorForCode(sp.ErrorCode).(*kerr.Error).Message
				sp.ErrorMessage = &msg
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	r.respond(resp)
}
