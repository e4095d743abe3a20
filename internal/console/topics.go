package console

// Topic endpoints: the paged topic list, create, delete, a topic's paged
// partitions with offsets and sizes, add partitions, and configs (read
// with sources, edit with IncrementalAlterConfigs).

import (
	"context"
	"encoding/base64"
	"errors"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	handle("GET /api/topics", serveTopics)
	handle("POST /api/topics", serveCreateTopic)
	handle("GET /api/topics/{topic}", serveTopic)
	handle("DELETE /api/topics/{topic}", serveDeleteTopic)
	handle("GET /api/topics/{topic}/partitions", servePartitions)
	handle("POST /api/topics/{topic}/partitions", serveAddPartitions)
	handle("GET /api/topics/{topic}/configs", serveTopicConfigs)
	handle("PATCH /api/topics/{topic}/configs", serveAlterTopicConfigs)
}

// Paging of lists: ?offset=&limit=, limit at most maxLimit.
const (
	defaultLimit = 50
	maxLimit     = 1000
)

// paging reads ?offset= and ?limit=.
func paging(r *http.Request) (offset, limit int, err error) {
	q := r.URL.Query()
	offset, limit = 0, defaultLimit
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return 0, 0, badRequest("offset %q is not a non-negative number", v)
		}
	}
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit <= 0 {
			return 0, 0, badRequest("limit %q is not a positive number", v)
		}
	}
	return offset, min(limit, maxLimit), nil
}

// page cuts [offset, offset+limit) out of n items.
func page(n, offset, limit int) (lo, hi int) {
	lo = min(offset, n)
	return lo, min(lo+limit, n)
}

type topicJSON struct {
	Name              string `json:"name"`
	ID                string `json:"id"`
	Internal          bool   `json:"internal"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replicationFactor"`
	UnderReplicated   int    `json:"underReplicated"`
	Offline           int    `json:"offline"`
	Size              int64  `json:"size"` // bytes on the leaders; -1 unknown
	Error             string `json:"error,omitempty"`
}

func topicOf(td kadm.TopicDetail) topicJSON {
	t := topicJSON{Name: td.Topic, ID: base64.RawURLEncoding.EncodeToString(td.ID[:]), Internal: td.IsInternal, Partitions: len(td.Partitions), Size: -1}
	if td.Err != nil {
		t.Error = td.Err.Error()
	}
	for _, pd := range td.Partitions {
		if pd.Leader < 0 {
			t.Offline++
		}
		if len(pd.ISR) < len(pd.Replicas) {
			t.UnderReplicated++
		}
		t.ReplicationFactor = max(t.ReplicationFactor, len(pd.Replicas))
	}
	return t
}

// leaderSizes is the size of each partition's log on its leader, for the
// partitions in set, from DescribeLogDirs; nil when the user may not
// describe the cluster (sizes then show as unknown).
func leaderSizes(ctx context.Context, adm *kadm.Client, set kadm.TopicsSet, leaders map[string]map[int32]int32) map[string]map[int32]int64 {
	dirs, err := adm.DescribeAllLogDirs(ctx, set)
	if err != nil {
		return nil
	}
	out := map[string]map[int32]int64{}
	dirs.Each(func(d kadm.DescribedLogDir) {
		for topic, ps := range d.Topics {
			for p, dp := range ps {
				if leaders[topic][p] != d.Broker {
					continue
				}
				if out[topic] == nil {
					out[topic] = map[int32]int64{}
				}
				out[topic][p] += dp.Size
			}
		}
	})
	return out
}

func serveTopics(s *Server, w http.ResponseWriter, r *http.Request) {
	offset, limit, err := paging(r)
	if err != nil {
		writeError(w, err)
		return
	}
	q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q")))
	internal := r.URL.Query().Get("internal") != "false"
	withSizes := r.URL.Query().Get("sizes") != "false"
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	md, err := adm.Metadata(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	var names []string
	for name, td := range md.Topics {
		if (!internal && td.IsInternal) || (q != "" && !strings.Contains(strings.ToLower(name), q)) {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	lo, hi := page(len(names), offset, limit)
	topics := make([]topicJSON, 0, hi-lo)
	set := kadm.TopicsSet{}
	leaders := map[string]map[int32]int32{}
	for _, name := range names[lo:hi] {
		td := md.Topics[name]
		topics = append(topics, topicOf(td))
		leaders[name] = map[int32]int32{}
		for _, pd := range td.Partitions {
			set.Add(name, pd.Partition)
			leaders[name][pd.Partition] = pd.Leader
		}
	}
	if len(set) > 0 && withSizes {
		if sizes := leaderSizes(ctx, adm, set, leaders); sizes != nil {
			for i := range topics {
				topics[i].Size = 0
				for _, sz := range sizes[topics[i].Name] {
					topics[i].Size += sz
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total": len(names), "offset": lo, "limit": limit, "topics": topics})
}

type createTopicJSON struct {
	Name              string            `json:"name"`
	Partitions        int32             `json:"partitions"`
	ReplicationFactor int16             `json:"replicationFactor"`
	Configs           map[string]string `json:"configs"`
}

func serveCreateTopic(s *Server, w http.ResponseWriter, r *http.Request) {
	var in createTopicJSON
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, err)
		return
	}
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		writeError(w, badRequest("a topic needs a name"))
		return
	}
	if in.Partitions == 0 {
		in.Partitions = -1 // the broker's num.partitions
	}
	if in.ReplicationFactor == 0 {
		in.ReplicationFactor = -1 // the broker's default.replication.factor
	}
	configs := map[string]*string{}
	for k, v := range in.Configs {
		configs[k] = kadm.StringPtr(v)
	}
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, in.Partitions, in.ReplicationFactor, configs, in.Name)
	if err == nil {
		err = withMessage(resp.Err, resp.ErrMessage)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	s.log.Info("web console: created topic", "topic", in.Name, "user", userOf(r))
	writeJSON(w, http.StatusCreated, map[string]any{"name": resp.Topic, "id": resp.ID.String(), "partitions": resp.NumPartitions, "replicationFactor": resp.ReplicationFactor})
}

func serveDeleteTopic(s *Server, w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("topic")
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	resp, err := adm.DeleteTopic(ctx, topic)
	if err == nil {
		err = withMessage(resp.Err, resp.ErrMessage)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	s.log.Info("web console: deleted topic", "topic", topic, "user", userOf(r))
	writeJSON(w, http.StatusOK, map[string]any{"deleted": topic})
}

// describeTopic is the metadata of one topic; an unknown topic (or one
// the user may not describe) is an error.
func describeTopic(ctx context.Context, adm *kadm.Client, topic string) (kadm.TopicDetail, error) {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	td, ok := md.Topics[topic]
	if !ok {
		return kadm.TopicDetail{}, notFound("topic %s not found", topic)
	}
	if td.Err != nil {
		return td, fmtTopicErr(topic, td.Err)
	}
	return td, nil
}

func fmtTopicErr(topic string, err error) error {
	return &topicError{topic, err}
}

// topicError names the topic in a Kafka error, keeping the error for
// writeError's status.
type topicError struct {
	topic string
	err   error
}

func (e *topicError) Error() string { return "topic " + e.topic + ": " + e.err.Error() }
func (e *topicError) Unwrap() error { return e.err }

func serveTopic(s *Server, w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("topic")
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	td, err := describeTopic(ctx, adm, topic)
	if err != nil {
		writeError(w, err)
		return
	}
	t := topicOf(td)
	set := kadm.TopicsSet{}
	leaders := map[string]map[int32]int32{topic: {}}
	for _, pd := range td.Partitions {
		set.Add(topic, pd.Partition)
		leaders[topic][pd.Partition] = pd.Leader
	}
	if sizes := leaderSizes(ctx, adm, set, leaders); sizes != nil {
		t.Size = 0
		for _, sz := range sizes[topic] {
			t.Size += sz
		}
	}
	writeJSON(w, http.StatusOK, t)
}

type partitionJSON struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leaderEpoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offlineReplicas"`
	LogStartOffset  int64   `json:"logStartOffset"` // -1 unknown
	HighWatermark   int64   `json:"highWatermark"`  // the end offset consumers see; -1 unknown
	Size            int64   `json:"size"`           // bytes on the leader; -1 unknown
	Error           string  `json:"error,omitempty"`
}

// servePartitions answers one page of a topic's partitions, with offsets
// (ListOffsets) and sizes (DescribeLogDirs) asked for that page only.
func servePartitions(s *Server, w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("topic")
	offset, limit, err := paging(r)
	if err != nil {
		writeError(w, err)
		return
	}
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	cl, _ := s.client(r)
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	td, err := describeTopic(ctx, adm, topic)
	if err != nil {
		writeError(w, err)
		return
	}
	pds := td.Partitions.Sorted()
	lo, hi := page(len(pds), offset, limit)
	pds = pds[lo:hi]
	out := make([]partitionJSON, len(pds))
	ids := make([]int32, len(pds))
	leaders := map[string]map[int32]int32{topic: {}}
	set := kadm.TopicsSet{}
	for i, pd := range pds {
		out[i] = partitionJSON{
			Partition: pd.Partition, Leader: pd.Leader, LeaderEpoch: pd.LeaderEpoch,
			Replicas: nonNil(pd.Replicas), ISR: nonNil(pd.ISR), OfflineReplicas: nonNil(pd.OfflineReplicas),
			LogStartOffset: -1, HighWatermark: -1, Size: -1,
		}
		if pd.Err != nil {
			out[i].Error = pd.Err.Error()
		}
		ids[i] = pd.Partition
		leaders[topic][pd.Partition] = pd.Leader
		set.Add(topic, pd.Partition)
	}
	var wg sync.WaitGroup
	var starts, ends map[int32]int64
	var sizes map[string]map[int32]int64
	var offErr error
	if len(ids) > 0 {
		wg.Go(func() {
			var err1, err2 error
			starts, err1 = listOffsets(ctx, cl, topic, ids, -2)
			ends, err2 = listOffsets(ctx, cl, topic, ids, -1)
			offErr = errors.Join(err1, err2)
		})
		wg.Go(func() { sizes = leaderSizes(ctx, adm, set, leaders) })
		wg.Wait()
	}
	for i := range out {
		p := out[i].Partition
		if o, ok := starts[p]; ok {
			out[i].LogStartOffset = o
		}
		if o, ok := ends[p]; ok {
			out[i].HighWatermark = o
		}
		if sz, ok := sizes[topic][p]; ok {
			out[i].Size = sz
		}
	}
	res := map[string]any{"topic": topic, "total": len(td.Partitions), "offset": lo, "limit": limit, "partitions": out}
	if offErr != nil {
		res["offsetsError"] = offErr.Error()
	}
	writeJSON(w, http.StatusOK, res)
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// listOffsets asks the leaders of topic's partitions ids for the offset
// at timestamp (-2 earliest, -1 latest, else the first offset at or after
// that time in milliseconds; -1 in the answer means none). Partitions
// whose leader answered with an error are left out; the first such error
// is returned.
func listOffsets(ctx context.Context, cl *kgo.Client, topic string, ids []int32, timestamp int64) (map[int32]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, p := range ids {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p
		rp.Timestamp = timestamp
		rp.CurrentLeaderEpoch = -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	out := map[int32]int64{}
	var first error
	for _, sr := range cl.RequestSharded(ctx, req) {
		if sr.Err != nil {
			if first == nil {
				first = sr.Err
			}
			continue
		}
		resp := sr.Resp.(*kmsg.ListOffsetsResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					if first == nil {
						first = fmtTopicErr(topic, err)
					}
					continue
				}
				out[p.Partition] = p.Offset
			}
		}
	}
	return out, first
}

func serveAddPartitions(s *Server, w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("topic")
	var in struct {
		Count int `json:"count"` // the new total
	}
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, err)
		return
	}
	if in.Count <= 0 {
		writeError(w, badRequest("count must be the new total number of partitions"))
		return
	}
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	resps, err := adm.UpdatePartitions(ctx, in.Count, topic)
	if err == nil {
		var resp kadm.CreatePartitionsResponse
		resp, err = resps.On(topic, nil)
		if err == nil {
			err = withMessage(resp.Err, resp.ErrMessage)
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	s.log.Info("web console: added partitions", "topic", topic, "count", in.Count, "user", userOf(r))
	writeJSON(w, http.StatusOK, map[string]any{"topic": topic, "partitions": in.Count})
}

func serveTopicConfigs(s *Server, w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("topic")
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		writeError(w, err)
		return
	}
	rc, err := rcs.On(topic, nil)
	if err == nil && rc.Err != nil {
		err = fmtTopicErr(topic, rc.Err)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"topic": topic, "configs": configsOf(rc)})
}

// alterConfigsJSON is an IncrementalAlterConfigs: keys to set and keys to
// delete (back to their default).
type alterConfigsJSON struct {
	Set    map[string]string `json:"set"`
	Delete []string          `json:"delete"`
}

func serveAlterTopicConfigs(s *Server, w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("topic")
	var in alterConfigsJSON
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, err)
		return
	}
	var alters []kadm.AlterConfig
	for _, k := range slices.Sorted(maps.Keys(in.Set)) {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(in.Set[k])})
	}
	for _, k := range in.Delete {
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	if len(alters) == 0 {
		writeError(w, badRequest("nothing to change: give set and/or delete"))
		return
	}
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	resps, err := adm.AlterTopicConfigs(ctx, alters, topic)
	if err == nil {
		for _, resp := range resps {
			if resp.Err != nil {
				err = fmtTopicErr(topic, withMessage(resp.Err, resp.ErrMessage))
				break
			}
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	s.log.Info("web console: altered topic configs", "topic", topic, "set", len(in.Set), "delete", len(in.Delete), "user", userOf(r))
	writeJSON(w, http.StatusOK, map[string]any{"topic": topic, "altered": len(alters)})
}
