package console

// Groups: the groups page's API (assets/pages/groups.js).
//
//	GET    /api/groups?q=&type=&offset=&limit=  classic, consumer (KIP-848) and share groups, a page of them described with their total lag
//	GET    /api/groups/{group}                  one group: members, per-partition committed offset, log end offset and lag
//	POST   /api/groups/{group}/reset-offsets    plan (dry run) or execute an offsets reset, as consumer-groups --reset-offsets
//	DELETE /api/groups/{group}                  DeleteGroups
//
// Lag is what `silkworm consumer-groups --describe` prints: the log end
// offset (ListOffsets, latest) minus the committed offset (OffsetFetch), per
// partition that has both; a share group's lag is the broker's
// (DescribeShareGroupOffsets) and its "committed" offset is the
// share-partition start offset.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	handle("GET /api/groups", serveGroups)
	handle("GET /api/groups/{group}", serveGroup)
	handle("POST /api/groups/{group}/reset-offsets", serveResetOffsets)
	handle("DELETE /api/groups/{group}", serveDeleteGroup)
}

// Group types as ListGroups v5 names them (lower case); a broker that does
// not name the type has classic groups.
const (
	groupClassic  = "classic"
	groupConsumer = "consumer"
	groupShare    = "share"
)

// groupListEntry is one row of the groups list.
type groupListEntry struct {
	Group        string `json:"group"`
	Type         string `json:"type"`
	State        string `json:"state"`
	ProtocolType string `json:"protocolType"`
	Protocol     string `json:"protocol"`
	Members      int    `json:"members"`     // -1 when the group could not be described
	Coordinator  int32  `json:"coordinator"` // broker id
	Lag          int64  `json:"lag"`         // total lag; -1 when no partition's lag is known
	Error        string `json:"error,omitempty"`
}

// groupView is one described group.
type groupView struct {
	Group           string           `json:"group"`
	Type            string           `json:"type"`
	State           string           `json:"state"`
	ProtocolType    string           `json:"protocolType"`
	Protocol        string           `json:"protocol"` // classic: the assignment protocol; consumer, share: the server assignor
	Coordinator     *coordinatorView `json:"coordinator"`
	Epoch           int32            `json:"epoch"`           // consumer and share groups: the group epoch
	AssignmentEpoch int32            `json:"assignmentEpoch"` // consumer and share groups
	Members         []groupMember    `json:"members"`
	Offsets         []groupOffset    `json:"offsets"`
	TotalLag        int64            `json:"totalLag"` // sum of the known lags; -1 when none is known
}

type coordinatorView struct {
	ID   int32  `json:"id"`
	Host string `json:"host"`
	Port int32  `json:"port"`
}

type groupMember struct {
	MemberID    string          `json:"memberId"`
	InstanceID  string          `json:"instanceId,omitempty"`
	ClientID    string          `json:"clientId"`
	Host        string          `json:"host"`
	Assignments []assignedTopic `json:"assignments"`
}

type assignedTopic struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// groupOffset is one row of `consumer-groups --describe`: -1 for an unknown
// committed offset, log end offset or lag.
type groupOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed int64  `json:"committed"`
	LogEnd    int64  `json:"logEnd"`
	Lag       int64  `json:"lag"`
	MemberID  string `json:"memberId,omitempty"`
	ClientID  string `json:"clientId,omitempty"`
	Host      string `json:"host,omitempty"`
}

// groupTP is a topic partition of a group's offsets.
type groupTP struct {
	topic string
	part  int32
}

// assignedTopics is ts sorted by topic and partition.
func assignedTopics(ts kadm.TopicsSet) []assignedTopic {
	out := []assignedTopic{}
	for _, t := range slices.Sorted(maps.Keys(ts)) {
		ps := make([]int32, 0, len(ts[t]))
		for p := range ts[t] {
			ps = append(ps, p)
		}
		slices.Sort(ps)
		out = append(out, assignedTopic{t, ps})
	}
	return out
}

// groupType normalises ListGroups' GroupType.
func groupType(t string) string {
	switch t = strings.ToLower(t); t {
	case "", groupClassic:
		return groupClassic
	default:
		return t
	}
}

// describeGroups describes the groups of types (group id → its type from
// ListGroups) and fills in their offsets and lag, with one request of each
// kind (DescribeGroups, ConsumerGroupDescribe, ShareGroupDescribe,
// OffsetFetch, DescribeShareGroupOffsets, ListOffsets) for all of them, so
// a page of the list costs the same few round trips as one group. A group
// that cannot be described is absent from views and its error is in errs;
// err is set only when a whole request failed.
func describeGroups(ctx context.Context, adm *kadm.Client, types map[string]string) (views map[string]*groupView, errs map[string]error, err error) {
	views, errs = map[string]*groupView{}, map[string]error{}
	var classic, consumer, share []string
	for id, t := range types {
		switch t {
		case groupConsumer:
			consumer = append(consumer, id)
		case groupShare:
			share = append(share, id)
		default:
			classic = append(classic, id)
		}
	}
	// owners maps each assigned partition to its member, per group.
	owners := map[string]map[groupTP]*groupMember{}
	addMember := func(g *groupView, m groupMember, assigned kadm.TopicsSet) {
		m.Assignments = assignedTopics(assigned)
		g.Members = append(g.Members, m)
		if owners[g.Group] == nil {
			owners[g.Group] = map[groupTP]*groupMember{}
		}
		for t, ps := range assigned {
			for p := range ps {
				owners[g.Group][groupTP{t, p}] = &m
			}
		}
	}
	coordinator := func(b kadm.BrokerDetail) *coordinatorView {
		return &coordinatorView{ID: b.NodeID, Host: b.Host, Port: b.Port}
	}
	if len(classic) > 0 {
		described, err := adm.DescribeGroups(ctx, classic...)
		if err != nil && len(described) == 0 {
			return nil, nil, fmt.Errorf("describe groups: %w", err)
		}
		for _, id := range classic {
			d, ok := described[id]
			switch {
			case !ok:
				errs[id] = fmt.Errorf("describe group %s: %w", id, noAnswer(err))
				continue
			case d.Err != nil:
				errs[id] = fmt.Errorf("describe group %s: %w", id, d.Err)
				continue
			}
			g := &groupView{Group: id, Type: groupClassic, State: d.State, ProtocolType: d.ProtocolType, Protocol: d.Protocol,
				Coordinator: coordinator(d.Coordinator), Epoch: -1, AssignmentEpoch: -1, Members: []groupMember{}}
			for _, m := range d.Members {
				mv := groupMember{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost}
				if m.InstanceID != nil {
					mv.InstanceID = *m.InstanceID
				}
				assigned := kadm.TopicsSet{}
				if a, ok := m.Assigned.AsConsumer(); ok {
					for _, t := range a.Topics {
						assigned.Add(t.Topic, t.Partitions...)
					}
				}
				addMember(g, mv, assigned)
			}
			views[id] = g
		}
	}
	if len(consumer) > 0 {
		described, err := adm.DescribeConsumerGroups(ctx, consumer...)
		if err != nil && len(described) == 0 {
			return nil, nil, fmt.Errorf("describe consumer groups: %w", err)
		}
		for _, id := range consumer {
			d, ok := described[id]
			switch {
			case !ok:
				errs[id] = fmt.Errorf("describe group %s: %w", id, noAnswer(err))
				continue
			case d.Err != nil:
				errs[id] = fmt.Errorf("describe group %s: %w", id, d.Err)
				continue
			}
			g := &groupView{Group: id, Type: groupConsumer, State: d.State, ProtocolType: "consumer", Protocol: d.AssignorName,
				Coordinator: coordinator(d.Coordinator), Epoch: d.Epoch, AssignmentEpoch: d.AssignmentEpoch, Members: []groupMember{}}
			for _, m := range d.Members {
				mv := groupMember{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost}
				if m.InstanceID != nil {
					mv.InstanceID = *m.InstanceID
				}
				addMember(g, mv, m.Assignment)
			}
			views[id] = g
		}
	}
	if len(share) > 0 {
		described, err := adm.DescribeShareGroups(ctx, share...)
		if err != nil && len(described) == 0 {
			return nil, nil, fmt.Errorf("describe share groups: %w", err)
		}
		for _, id := range share {
			d, ok := described[id]
			switch {
			case !ok:
				errs[id] = fmt.Errorf("describe group %s: %w", id, noAnswer(err))
				continue
			case d.Err != nil:
				errs[id] = fmt.Errorf("describe group %s: %w", id, d.Err)
				continue
			}
			g := &groupView{Group: id, Type: groupShare, State: d.GroupState, ProtocolType: "share", Protocol: d.Assignor,
				Coordinator: coordinator(d.Coordinator), Epoch: d.GroupEpoch, AssignmentEpoch: d.AssignmentEpoch, Members: []groupMember{}}
			for _, m := range d.Members {
				addMember(g, groupMember{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost}, m.Assignment)
			}
			views[id] = g
		}
	}

	// Offsets: OffsetFetch for classic and consumer groups,
	// DescribeShareGroupOffsets for share groups, then the log end offsets
	// of every topic seen, in one ListOffsets round.
	committed := map[string]map[groupTP]int64{}
	shareLag := map[string]map[groupTP]int64{}
	topics := map[string]bool{}
	var offsetGroups, shareGroups []string
	for id, g := range views {
		for t := range owners[id] {
			topics[t.topic] = true
		}
		if g.Type == groupShare {
			shareGroups = append(shareGroups, id)
		} else if g.State != "Dead" {
			offsetGroups = append(offsetGroups, id)
		}
	}
	if len(offsetGroups) > 0 {
		for _, f := range adm.FetchManyOffsets(ctx, offsetGroups...) {
			if f.Err != nil {
				if !errors.Is(f.Err, kerr.GroupIDNotFound) {
					errs[f.Group] = fmt.Errorf("fetch offsets of group %s: %w", f.Group, f.Err)
					delete(views, f.Group)
				}
				continue
			}
			c := map[groupTP]int64{}
			f.Fetched.Each(func(r kadm.OffsetResponse) {
				if r.Err == nil && r.At >= 0 {
					c[groupTP{r.Topic, r.Partition}] = r.At
					topics[r.Topic] = true
				}
			})
			committed[f.Group] = c
		}
	}
	if len(shareGroups) > 0 {
		described, err := adm.DescribeShareGroupOffsets(ctx, shareGroups...)
		if err != nil && len(described) == 0 {
			return nil, nil, fmt.Errorf("describe share group offsets: %w", err)
		}
		for _, id := range shareGroups {
			d, ok := described[id]
			if !ok || d.Err != nil {
				continue // members and state are still worth showing
			}
			c, l := map[groupTP]int64{}, map[groupTP]int64{}
			for t, ps := range d.Offsets {
				for p, o := range ps {
					if o.Err != nil || o.StartOffset < 0 {
						continue
					}
					c[groupTP{t, p}] = o.StartOffset
					l[groupTP{t, p}] = o.Lag
					topics[t] = true
				}
			}
			committed[id], shareLag[id] = c, l
		}
	}
	ends := kadm.ListedOffsets{}
	if len(topics) > 0 {
		names := make([]string, 0, len(topics))
		for t := range topics {
			names = append(names, t)
		}
		ends, err = adm.ListEndOffsets(ctx, names...)
		if err != nil && len(ends) == 0 {
			return nil, nil, fmt.Errorf("list end offsets: %w", err)
		}
	}
	for id, g := range views {
		seen := map[groupTP]bool{}
		for t := range owners[id] {
			seen[t] = true
		}
		for t := range committed[id] {
			seen[t] = true
		}
		g.Offsets = []groupOffset{}
		g.TotalLag = -1
		for t := range seen {
			o := groupOffset{Topic: t.topic, Partition: t.part, Committed: -1, LogEnd: -1, Lag: -1}
			if c, ok := committed[id][t]; ok {
				o.Committed = c
			}
			if e, ok := ends.Lookup(t.topic, t.part); ok && e.Err == nil {
				o.LogEnd = e.Offset
			}
			if o.Committed >= 0 && o.LogEnd >= 0 {
				o.Lag = o.LogEnd - o.Committed
			}
			if l, ok := shareLag[id][t]; ok {
				o.Lag = l
			}
			if m := owners[id][t]; m != nil {
				o.MemberID, o.ClientID, o.Host = m.MemberID, m.ClientID, m.Host
			}
			if o.Lag >= 0 {
				g.TotalLag = max(g.TotalLag, 0) + o.Lag
			}
			g.Offsets = append(g.Offsets, o)
		}
		sort.Slice(g.Offsets, func(i, j int) bool {
			a, b := g.Offsets[i], g.Offsets[j]
			if a.Topic != b.Topic {
				return a.Topic < b.Topic
			}
			return a.Partition < b.Partition
		})
	}
	return views, errs, nil
}

// noAnswer is err, or an error saying the broker did not answer for the
// group.
func noAnswer(err error) error {
	if err != nil {
		return err
	}
	return errors.New("no answer from its coordinator")
}

// listGroups is ListGroups with each group's type; it fails only when no
// broker answered.
func listGroups(ctx context.Context, adm *kadm.Client) (kadm.ListedGroups, error) {
	listed, err := adm.ListGroups(ctx)
	if err != nil && len(listed) == 0 {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	return listed, nil
}

func serveGroups(s *Server, w http.ResponseWriter, r *http.Request) {
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q")))
	wantType := strings.ToLower(r.URL.Query().Get("type"))
	offset, limit := 0, 50
	if v := r.URL.Query().Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			writeError(w, badRequest("offset %q is not a non-negative number", v))
			return
		}
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > 500 {
			writeError(w, badRequest("limit %q is not a number from 1 to 500", v))
			return
		}
	}
	listed, err := listGroups(r.Context(), adm)
	if err != nil {
		writeError(w, err)
		return
	}
	var page []kadm.ListedGroup
	for _, g := range listed.Sorted() {
		if q != "" && !strings.Contains(strings.ToLower(g.Group), q) {
			continue
		}
		if wantType != "" && groupType(g.GroupType) != wantType {
			continue
		}
		page = append(page, g)
	}
	total := len(page)
	page = page[min(offset, total):min(offset+limit, total)]
	types := map[string]string{}
	for _, g := range page {
		types[g.Group] = groupType(g.GroupType)
	}
	views, errs, err := describeGroups(r.Context(), adm, types)
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]groupListEntry, 0, len(page))
	for _, g := range page {
		e := groupListEntry{Group: g.Group, Type: groupType(g.GroupType), State: g.State, ProtocolType: g.ProtocolType,
			Members: -1, Coordinator: g.Coordinator, Lag: -1}
		if v := views[g.Group]; v != nil {
			e.State, e.Protocol, e.Members, e.Lag = v.State, v.Protocol, len(v.Members), v.TotalLag
			if v.ProtocolType != "" {
				e.ProtocolType = v.ProtocolType
			}
		} else if err := errs[g.Group]; err != nil {
			e.Error = err.Error()
		}
		out = append(out, e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"total": total, "offset": offset, "limit": limit, "groups": out})
}

// findGroup describes one group, finding its type with ListGroups; a group
// no broker lists is GROUP_ID_NOT_FOUND.
func findGroup(ctx context.Context, adm *kadm.Client, id string) (*groupView, error) {
	listed, err := listGroups(ctx, adm)
	if err != nil {
		return nil, err
	}
	lg, ok := listed[id]
	if !ok {
		return nil, fmt.Errorf("group %s: %w", id, kerr.GroupIDNotFound)
	}
	views, errs, err := describeGroups(ctx, adm, map[string]string{id: groupType(lg.GroupType)})
	if err != nil {
		return nil, err
	}
	if v := views[id]; v != nil {
		return v, nil
	}
	return nil, noAnswer(errs[id])
}

func serveGroup(s *Server, w http.ResponseWriter, r *http.Request) {
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	g, err := findGroup(r.Context(), adm, r.PathValue("group"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, g)
}

func serveDeleteGroup(s *Server, w http.ResponseWriter, r *http.Request) {
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	id := r.PathValue("group")
	resp, err := adm.DeleteGroup(r.Context(), id)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		writeError(w, fmt.Errorf("delete group %s: %w", id, err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": id})
}

// resetRequest is the body of POST /api/groups/{group}/reset-offsets.
type resetRequest struct {
	// To is earliest, latest, timestamp or offset.
	To string `json:"to"`
	// Timestamp (Unix milliseconds) for "timestamp": the first offset at or
	// after it, the log end offset where there is none.
	Timestamp *int64 `json:"timestamp"`
	// Offset for "offset", clamped to [log start, log end].
	Offset *int64 `json:"offset"`
	// Topic limits the reset to the partitions of one topic; empty resets
	// every partition the group has committed offsets for.
	Topic string `json:"topic"`
	// Execute commits the planned offsets; without it the answer is a dry
	// run.
	Execute bool `json:"execute"`
}

// resetPlanRow is one partition of a reset plan.
type resetPlanRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Current   int64  `json:"current"` // -1 when nothing is committed
	NewOffset int64  `json:"newOffset"`
}

func serveResetOffsets(s *Server, w http.ResponseWriter, r *http.Request) {
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req resetRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	switch req.To {
	case "earliest", "latest":
	case "timestamp":
		if req.Timestamp == nil {
			writeError(w, badRequest("reset to a timestamp needs \"timestamp\" (Unix milliseconds)"))
			return
		}
	case "offset":
		if req.Offset == nil || *req.Offset < 0 {
			writeError(w, badRequest("reset to an offset needs a non-negative \"offset\""))
			return
		}
	default:
		writeError(w, badRequest("\"to\" must be earliest, latest, timestamp or offset, not %q", req.To))
		return
	}
	ctx, id := r.Context(), r.PathValue("group")
	rows, err := resetOffsets(ctx, adm, id, &req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"group": id, "executed": req.Execute, "rows": rows})
}

// resetOffsets plans the reset of req for group id and commits it when
// req.Execute is set. Like consumer-groups --reset-offsets, it refuses a
// group that is not Empty (or Dead: a group that does not exist yet gets
// its first offsets).
func resetOffsets(ctx context.Context, adm *kadm.Client, id string, req *resetRequest) ([]resetPlanRow, error) {
	state, typ := "Dead", groupClassic
	listed, err := listGroups(ctx, adm)
	if err != nil {
		return nil, err
	}
	if lg, ok := listed[id]; ok {
		typ = groupType(lg.GroupType)
		views, errs, err := describeGroups(ctx, adm, map[string]string{id: typ})
		if err != nil {
			return nil, err
		}
		if views[id] == nil {
			return nil, noAnswer(errs[id])
		}
		state = views[id].State
	}
	if typ == groupShare {
		return nil, badRequest("group %s is a share group: the console resets the offsets of classic and consumer groups only", id)
	}
	if state != "Empty" && state != "Dead" {
		return nil, &httpError{status: http.StatusConflict,
			msg: fmt.Sprintf("Assignments can only be reset if the group '%s' is inactive, but the current state is %s.", id, state)}
	}
	fetched, err := adm.FetchOffsets(ctx, id)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return nil, fmt.Errorf("fetch offsets of group %s: %w", id, err)
	}
	current := map[groupTP]int64{}
	var tps []groupTP
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil || o.At < 0 {
			return
		}
		current[groupTP{o.Topic, o.Partition}] = o.At
		if req.Topic == "" {
			tps = append(tps, groupTP{o.Topic, o.Partition})
		}
	})
	if req.Topic != "" {
		details, err := adm.ListTopics(ctx, req.Topic)
		if err != nil {
			return nil, fmt.Errorf("describe topic %s: %w", req.Topic, err)
		}
		d, ok := details[req.Topic]
		if !ok {
			return nil, fmt.Errorf("topic %s: %w", req.Topic, kerr.UnknownTopicOrPartition)
		}
		if d.Err != nil {
			return nil, fmt.Errorf("topic %s: %w", req.Topic, d.Err)
		}
		for _, p := range d.Partitions.Sorted() {
			tps = append(tps, groupTP{req.Topic, p.Partition})
		}
	}
	if len(tps) == 0 {
		return []resetPlanRow{}, nil
	}
	topicSet := map[string]bool{}
	for _, t := range tps {
		topicSet[t.topic] = true
	}
	topics := make([]string, 0, len(topicSet))
	for t := range topicSet {
		topics = append(topics, t)
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil && len(starts) == 0 {
		return nil, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil && len(ends) == 0 {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	var byTime kadm.ListedOffsets
	if req.To == "timestamp" {
		byTime, err = adm.ListOffsetsAfterMilli(ctx, *req.Timestamp, topics...)
		if err != nil && len(byTime) == 0 {
			return nil, fmt.Errorf("list offsets by timestamp: %w", err)
		}
	}
	lookup := func(lo kadm.ListedOffsets, t groupTP, what string) (int64, error) {
		o, ok := lo.Lookup(t.topic, t.part)
		if !ok {
			return 0, fmt.Errorf("%s offset of %s-%d: no answer", what, t.topic, t.part)
		}
		if o.Err != nil {
			return 0, fmt.Errorf("%s offset of %s-%d: %w", what, t.topic, t.part, o.Err)
		}
		return o.Offset, nil
	}
	rows := make([]resetPlanRow, 0, len(tps))
	for _, t := range tps {
		start, err := lookup(starts, t, "log start")
		if err != nil {
			return nil, err
		}
		end, err := lookup(ends, t, "log end")
		if err != nil {
			return nil, err
		}
		var off int64
		switch req.To {
		case "earliest":
			off = start
		case "latest":
			off = end
		case "offset":
			off = min(max(*req.Offset, start), end)
		case "timestamp":
			// No record at or after the time: the log end offset, as the
			// tool falls back to.
			off = end
			if o, ok := byTime.Lookup(t.topic, t.part); ok && o.Err == nil && o.Offset >= 0 {
				off = o.Offset
			}
		}
		cur, ok := current[t]
		if !ok {
			cur = -1
		}
		rows = append(rows, resetPlanRow{Topic: t.topic, Partition: t.part, Current: cur, NewOffset: off})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Topic != rows[j].Topic {
			return rows[i].Topic < rows[j].Topic
		}
		return rows[i].Partition < rows[j].Partition
	})
	if req.Execute {
		os := kadm.Offsets{}
		for _, r := range rows {
			os.Add(kadm.Offset{Topic: r.Topic, Partition: r.Partition, At: r.NewOffset, LeaderEpoch: -1})
		}
		resps, err := adm.CommitOffsets(ctx, id, os)
		if err == nil {
			err = resps.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("commit offsets of group %s: %w", id, err)
		}
	}
	return rows, nil
}
