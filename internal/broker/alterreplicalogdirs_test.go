package broker

import (
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAlterReplicaLogDirs: Kafka's answers per partition (kafka-python's
// test_alter_replica_log_dirs moves a replica to the dir it is in, which
// Silkworm used to answer by closing the connection): NONE for the
// current dir, LOG_DIR_NOT_FOUND for a dir outside log.dirs,
// REPLICA_NOT_AVAILABLE for a partition not held here. A move to the
// other configured dir is not done (KAFKA_STORAGE_ERROR).
func TestAlterReplicaLogDirs(t *testing.T) {
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	tb := newTestBroker(t, "log.dirs="+dirs[0]+","+dirs[1])
	ctx := testCtx(t)
	tb.createTopic(ctx, "moved", 1, nil)
	cur := absDir(filepath.Dir(tb.b.topic("moved").partitions[0].Log.Dir()))
	other := absDir(dirs[0])
	if other == cur {
		other = absDir(dirs[1])
	}
	for _, c := range []struct {
		dir, topic string
		want       int16
	}{
		{cur, "moved", 0},
		{"/no/such/dir", "moved", kerr.LogDirNotFound.Code},
		{cur, "nope", kerr.ReplicaNotAvailable.Code},
		{other, "moved", kerr.KafkaStorageError.Code},
	} {
		req := kmsg.NewPtrAlterReplicaLogDirsRequest()
		req.Version = 2
		d := kmsg.NewAlterReplicaLogDirsRequestDir()
		d.Dir = c.dir
		dt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
		dt.Topic, dt.Partitions = c.topic, []int32{0}
		d.Topics = append(d.Topics, dt)
		req.Dirs = append(req.Dirs, d)
		resp := rawRequest(tb, req).(*kmsg.AlterReplicaLogDirsResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != c.want {
			t.Errorf("%s-0 to %s: %+v, want %v", c.topic, c.dir, resp.Topics, kerr.ErrorForCode(c.want))
		}
	}
}
