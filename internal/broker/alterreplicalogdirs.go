package broker

// AlterReplicaLogDirs: v0-2
//
// As Kafka's ReplicaManager.alterReplicaLogDirs, per partition: without
// CLUSTER ALTER, CLUSTER_AUTHORIZATION_FAILED; a directory that is not one
// of log.dirs, LOG_DIR_NOT_FOUND; a partition this broker holds no replica
// of, REPLICA_NOT_AVAILABLE; a replica already in that directory, NONE.
//
// Deviation: Silkworm does not move a replica to another log dir (Kafka
// copies it through a future replica); such a request is answered
// KAFKA_STORAGE_ERROR and logged. With one log dir, Kafka's default,
// every valid request is the no-op case.

import (
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.AlterReplicaLogDirs, 0, 2, handleAlterReplicaLogDirs) }

func handleAlterReplicaLogDirs(b *Broker, r *request) {
	req := r.kreq.(*kmsg.AlterReplicaLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	authorized := b.authorizeCluster(r, kmsg.ACLOperationAlter)
	configured := map[string]bool{}
	for _, d := range b.cfg.LogDirs {
		configured[absDir(d)] = true
	}
	index := map[string]int{} // topic -> its entry in resp.Topics
	for _, d := range req.Dirs {
		dir := absDir(d.Dir)
		for _, t := range d.Topics {
			i, ok := index[t.Topic]
			if !ok {
				i = len(resp.Topics)
				index[t.Topic] = i
				rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
				rt.Topic = t.Topic
				resp.Topics = append(resp.Topics, rt)
			}
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				rp.Partition = p
				rp.ErrorCode = b.alterReplicaLogDir(authorized, configured, dir, t.Topic, p)
				resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
			}
		}
	}
	r.respond(resp)
}

// alterReplicaLogDir is the error code of moving topic-p's replica here
// to dir.
func (b *Broker) alterReplicaLogDir(authorized bool, configured map[string]bool, dir, topic string, p int32) int16 {
	switch {
	case !authorized:
		return kerr.ClusterAuthorizationFailed.Code
	case !configured[dir]:
		return kerr.LogDirNotFound.Code
	}
	ts, part := b.partition(topic, p)
	if ts == nil || part == nil {
		return kerr.ReplicaNotAvailable.Code
	}
	if absDir(filepath.Dir(part.Log.Dir())) == dir {
		return 0
	}
	b.log.Warn("moving a replica to another log dir is not supported", "partition", part.String(), "dir", dir)
	return kerr.KafkaStorageError.Code
}
