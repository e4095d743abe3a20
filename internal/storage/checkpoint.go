package storage

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Names of the files Kafka keeps in a log dir and in a partition dir.
const (
	metaPropertiesFile          = "meta.properties"
	recoveryPointCheckpointFile = "recovery-point-offset-checkpoint"
	logStartCheckpointFile      = "log-start-offset-checkpoint"
	cleanShutdownFile           = ".kafka_cleanshutdown"
	leaderEpochCheckpointFile   = "leader-epoch-checkpoint"
	partitionMetadataFile       = "partition.metadata"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// parsePartitionDir splits "<topic>-<partition>".
func parsePartitionDir(name string) (TopicPartition, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return TopicPartition{}, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 || strings.ContainsAny(name[i+1:], "+") {
		return TopicPartition{}, false
	}
	return TopicPartition{Topic: name[:i], Partition: int32(p)}, true
}

// encodeOffsetCheckpoint writes Kafka's offset checkpoint format: version
// line "0", entry count, then "topic partition offset" lines.
func encodeOffsetCheckpoint(offsets map[TopicPartition]int64) []byte {
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(tps))
	for _, tp := range tps {
		fmt.Fprintf(&b, "%s %d %d\n", tp.Topic, tp.Partition, offsets[tp])
	}
	return b.Bytes()
}

// readOffsetCheckpoint reads a checkpoint written by encodeOffsetCheckpoint;
// a missing file is an empty checkpoint. Errors name the file.
func readOffsetCheckpoint(fs FS, path string) (map[TopicPartition]int64, error) {
	out := map[TopicPartition]int64{}
	lines, err := readCheckpointLines(fs, path)
	if err != nil || lines == nil {
		return out, err
	}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 {
			return nil, fmt.Errorf("checkpoint %s: malformed line %d %q", path, i+3, l)
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("checkpoint %s: malformed line %d %q", path, i+3, l)
		}
		out[TopicPartition{Topic: f[0], Partition: int32(p)}] = off
	}
	return out, nil
}

// readCheckpointLines checks the version and count lines and returns the
// entry lines; nil, nil when the file does not exist.
func readCheckpointLines(fs FS, path string) ([]string, error) {
	data, err := readWholeFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("checkpoint %s: missing or unknown version line", path)
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, fmt.Errorf("checkpoint %s: count line %q does not match %d entries", path, lines[1], len(lines)-2)
	}
	return lines[2:], nil
}

// EpochEntry is one leader epoch and the first offset written in it.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

func encodeEpochCheckpoint(entries []EpochEntry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return b.Bytes()
}

func readEpochCheckpoint(fs FS, path string) ([]EpochEntry, error) {
	lines, err := readCheckpointLines(fs, path)
	if err != nil || lines == nil {
		return nil, err
	}
	out := make([]EpochEntry, 0, len(lines))
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("checkpoint %s: malformed line %d %q", path, i+3, l)
		}
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		off, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("checkpoint %s: malformed line %d %q", path, i+3, l)
		}
		out = append(out, EpochEntry{Epoch: int32(e), StartOffset: off})
	}
	return out, nil
}

// FormatUUID renders a 16-byte id the way Kafka prints a Uuid: URL-safe
// base64 without padding.
func FormatUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// ParseUUID is the inverse of FormatUUID.
func ParseUUID(s string) ([16]byte, error) {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("bad uuid %q", s)
	}
	copy(id[:], b)
	return id, nil
}

func randomUUID() [16]byte {
	var id [16]byte
	_, _ = rand.Read(id[:])
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

func encodePartitionMetadata(topicID [16]byte) []byte {
	return []byte("version: 0\ntopic_id: " + FormatUUID(topicID) + "\n")
}

func readPartitionMetadata(fs FS, path string) ([16]byte, bool, error) {
	data, err := readWholeFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return [16]byte{}, false, nil
	}
	if err != nil {
		return [16]byte{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	var version, topicID string
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "version":
			version = strings.TrimSpace(v)
		case "topic_id":
			topicID = strings.TrimSpace(v)
		}
	}
	if version != "0" {
		return [16]byte{}, false, fmt.Errorf("%s: unknown version %q", path, version)
	}
	id, err := ParseUUID(topicID)
	if err != nil {
		return [16]byte{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return id, true, nil
}

// metaProperties is a log dir's meta.properties (KRaft format, version=1).
type metaProperties struct {
	nodeID      int32
	clusterID   string
	directoryID string
}

func encodeMetaProperties(m metaProperties) []byte {
	var b bytes.Buffer
	b.WriteString("#\n#Written by silkworm\n")
	if m.clusterID != "" {
		fmt.Fprintf(&b, "cluster.id=%s\n", m.clusterID)
	}
	if m.directoryID != "" {
		fmt.Fprintf(&b, "directory.id=%s\n", m.directoryID)
	}
	fmt.Fprintf(&b, "node.id=%d\nversion=1\n", m.nodeID)
	return b.Bytes()
}

// readMetaProperties parses a Java properties file with the keys Kafka
// writes; found is false when the file does not exist.
func readMetaProperties(fs FS, path string) (m metaProperties, found bool, err error) {
	data, err := readWholeFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("read %s: %w", path, err)
	}
	props := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' || l[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			k, v, ok = strings.Cut(l, ":")
		}
		if ok {
			props[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if props["version"] != "1" {
		return m, true, fmt.Errorf("%s: unsupported version %q (want 1)", path, props["version"])
	}
	id, err := strconv.ParseInt(props["node.id"], 10, 32)
	if err != nil {
		return m, true, fmt.Errorf("%s: bad node.id %q", path, props["node.id"])
	}
	return metaProperties{nodeID: int32(id), clusterID: props["cluster.id"], directoryID: props["directory.id"]}, true, nil
}

// FormattedClusterID returns the cluster.id that meta.properties records in
// the first of dirs that has one (a directory formatted by `silkworm
// storage format`, or written by an earlier start), or "" when none does.
// Two dirs naming different clusters are an error.
func FormattedClusterID(fs FS, dirs []string) (string, error) {
	id, from := "", ""
	for _, d := range dirs {
		path := filepath.Join(d, metaPropertiesFile)
		m, found, err := readMetaProperties(fs, path)
		if err != nil {
			return "", err
		}
		if !found || m.clusterID == "" {
			continue
		}
		if id != "" && m.clusterID != id {
			return "", fmt.Errorf("%s: cluster.id %s does not match cluster.id %s in %s", path, m.clusterID, id, from)
		}
		id, from = m.clusterID, path
	}
	return id, nil
}
