package broker

// DescribeLogDirs: v0-4, as Kafka 4.2 (the release Silkworm's
// metadata.version names); v5 (KIP-1066's IsCordoned) came with 4.3, and
// clients infer the broker's release from such maxima (kafka-python).
//
// Lists every log dir (absolute path, as Kafka) with the partitions it
// holds: all of them for a null Topics, else only the partitions asked
// for. Size is the partition's bytes on disk; OffsetLag is 0 and IsFuture
// false (no intra-broker moves). From v4 each dir carries its file
// system's total and usable bytes (statfs; -1 when it fails).
//
// Deviation: a log dir is never reported offline (KAFKA_STORAGE_ERROR);
// an offline log still lists with its last known size. The v3+ top-level
// ErrorCode is always 0 (no authorizer).

import (
	"path/filepath"
	"sort"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.DescribeLogDirs, 0, 4, handleDescribeLogDirs) }

func handleDescribeLogDirs(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !b.authorizeCluster(r, kmsg.ACLOperationDescribe) {
		// Kafka answers nothing; v3+ says why.
		if r.hdr.APIVersion >= 3 {
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		}
		r.respond(resp)
		return
	}

	var want map[string]map[int32]bool // nil: every partition
	if req.Topics != nil {
		want = map[string]map[int32]bool{}
		for _, t := range req.Topics {
			if want[t.Topic] == nil {
				want[t.Topic] = map[int32]bool{}
			}
			for _, p := range t.Partitions {
				want[t.Topic][p] = true
			}
		}
	}

	// dir -> topic -> partitions
	byDir := map[string]map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
	for _, l := range b.logs.Logs() {
		if ts, p := b.partition(l.Topic(), l.Partition()); ts == nil || p == nil || p.Log != l {
			continue // being deleted
		}
		if want != nil && !want[l.Topic()][l.Partition()] {
			continue
		}
		dir := absDir(filepath.Dir(l.Dir()))
		if byDir[dir] == nil {
			byDir[dir] = map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
		}
		dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		dp.Partition = l.Partition()
		dp.Size = l.Size()
		byDir[dir][l.Topic()] = append(byDir[dir][l.Topic()], dp)
	}

	for _, d := range b.cfg.LogDirs {
		dir := absDir(d)
		rd := kmsg.NewDescribeLogDirsResponseDir()
		rd.Dir = dir
		topics := byDir[dir]
		names := make([]string, 0, len(topics))
		for n := range topics {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			dt := kmsg.NewDescribeLogDirsResponseDirTopic()
			dt.Topic = n
			dt.Partitions = topics[n]
			sort.Slice(dt.Partitions, func(i, j int) bool { return dt.Partitions[i].Partition < dt.Partitions[j].Partition })
			rd.Topics = append(rd.Topics, dt)
		}
		if r.hdr.APIVersion >= 4 {
			rd.TotalBytes, rd.UsableBytes = diskSpace(dir)
		}
		resp.Dirs = append(resp.Dirs, rd)
	}
	r.respond(resp)
}

func absDir(d string) string {
	if a, err := filepath.Abs(d); err == nil {
		return a
	}
	return filepath.Clean(d)
}

// diskSpace returns the total and usable (available to unprivileged users)
// bytes of the file system holding dir, as Java's File.getTotalSpace and
// getUsableSpace; -1, -1 when statfs fails.
func diskSpace(dir string) (total, usable int64) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1, -1
	}
	bs := int64(st.Bsize)
	return int64(st.Blocks) * bs, int64(st.Bavail) * bs
}
