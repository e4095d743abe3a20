package console

// Cluster endpoints: the overview (GET /api/cluster) and the brokers page
// (GET /api/brokers, GET /api/brokers/{broker}/configs).

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	handle("GET /api/cluster", serveCluster)
	handle("GET /api/brokers", serveBrokers)
	handle("GET /api/brokers/{broker}/configs", serveBrokerConfigs)
}

// requestTimeout bounds the Kafka requests of one API call.
const requestTimeout = 15 * time.Second

type brokerJSON struct {
	ID         int32         `json:"id"`
	Host       string        `json:"host"`
	Port       int32         `json:"port"`
	Rack       *string       `json:"rack"`
	Controller bool          `json:"controller"`
	Leaders    int           `json:"leaders"`
	Replicas   int           `json:"replicas"`
	APIs       int           `json:"apis,omitempty"`
	Features   []featureJSON `json:"features,omitempty"`
	LogDirs    []logDirJSON  `json:"logDirs"`
	Error      string        `json:"error,omitempty"`
}

type featureJSON struct {
	Name  string `json:"name"`
	Level int16  `json:"level"`
}

type logDirJSON struct {
	Broker      int32  `json:"broker"`
	Dir         string `json:"dir"`
	Size        int64  `json:"size"`
	Partitions  int    `json:"partitions"`
	TotalBytes  int64  `json:"totalBytes"`
	UsableBytes int64  `json:"usableBytes"`
	Error       string `json:"error,omitempty"`
}

// clusterJSON is what the overview shows.
type clusterJSON struct {
	ClusterID       string       `json:"clusterId"`
	Controller      int32        `json:"controller"`
	Brokers         []brokerJSON `json:"brokers"`
	Topics          int          `json:"topics"`
	InternalTopics  int          `json:"internalTopics"`
	Partitions      int          `json:"partitions"`
	UnderReplicated int          `json:"underReplicated"`
	Offline         int          `json:"offline"`
	LogDirsError    string       `json:"logDirsError,omitempty"`
	VersionsError   string       `json:"versionsError,omitempty"`
}

// describeCluster gathers the overview: metadata of every topic the user
// may describe (one Metadata request), log dirs of every broker
// (DescribeLogDirs, needs DESCRIBE on the cluster) and each broker's API
// versions. Failures of the last two are reported in the answer, not as
// an error, so a user without cluster ACLs still sees the rest.
func describeCluster(ctx context.Context, adm *kadm.Client, cl *kgo.Client) (clusterJSON, error) {
	md, err := adm.Metadata(ctx)
	if err != nil {
		return clusterJSON{}, err
	}
	out := clusterJSON{ClusterID: md.Cluster, Controller: md.Controller}
	leaders := map[int32]int{}
	replicas := map[int32]int{}
	for _, td := range md.Topics {
		if td.Err != nil {
			continue
		}
		if td.IsInternal {
			out.InternalTopics++
		} else {
			out.Topics++
		}
		for _, pd := range td.Partitions {
			out.Partitions++
			if pd.Leader < 0 {
				out.Offline++
			} else {
				leaders[pd.Leader]++
			}
			if len(pd.ISR) < len(pd.Replicas) {
				out.UnderReplicated++
			}
			for _, r := range pd.Replicas {
				replicas[r]++
			}
		}
	}
	byID := map[int32]*brokerJSON{}
	for _, b := range md.Brokers {
		out.Brokers = append(out.Brokers, brokerJSON{
			ID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack,
			Controller: b.NodeID == md.Controller,
			Leaders:    leaders[b.NodeID], Replicas: replicas[b.NodeID],
			LogDirs: []logDirJSON{},
		})
	}
	sort.Slice(out.Brokers, func(i, j int) bool { return out.Brokers[i].ID < out.Brokers[j].ID })
	for i := range out.Brokers {
		byID[out.Brokers[i].ID] = &out.Brokers[i]
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	wg.Go(func() {
		dirs, err := adm.DescribeAllLogDirs(ctx, nil)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			out.LogDirsError = err.Error()
			return
		}
		for id, ds := range dirs {
			b := byID[id]
			if b == nil {
				continue
			}
			for _, d := range ds {
				ld := logDirJSON{Broker: id, Dir: d.Dir, TotalBytes: d.TotalBytes, UsableBytes: d.UsableBytes}
				if d.Err != nil {
					ld.Error = d.Err.Error()
				} else {
					ld.Size = d.Size()
					for _, ps := range d.Topics {
						ld.Partitions += len(ps)
					}
				}
				b.LogDirs = append(b.LogDirs, ld)
			}
			sort.Slice(b.LogDirs, func(i, j int) bool { return b.LogDirs[i].Dir < b.LogDirs[j].Dir })
		}
	})
	for i := range out.Brokers {
		b := &out.Brokers[i]
		wg.Go(func() {
			req := kmsg.NewPtrApiVersionsRequest()
			req.ClientSoftwareName = "silkworm-console"
			req.ClientSoftwareVersion = "1"
			resp, err := req.RequestWith(ctx, cl.Broker(int(b.ID)))
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				err = kerrOf(resp.ErrorCode)
			}
			if err != nil {
				b.Error = "ApiVersions: " + err.Error()
				out.VersionsError = b.Error
				return
			}
			b.APIs = len(resp.ApiKeys)
			for _, f := range resp.FinalizedFeatures {
				b.Features = append(b.Features, featureJSON{f.Name, f.MaxVersionLevel})
			}
			sort.Slice(b.Features, func(i, j int) bool { return b.Features[i].Name < b.Features[j].Name })
		})
	}
	wg.Wait()
	return out, nil
}

func serveCluster(s *Server, w http.ResponseWriter, r *http.Request) {
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	cl, _ := s.client(r)
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	out, err := describeCluster(ctx, adm, cl)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func serveBrokers(s *Server, w http.ResponseWriter, r *http.Request) {
	serveCluster(s, w, r) // the brokers page shows the same data by broker
}

type configJSON struct {
	Name      string        `json:"name"`
	Value     *string       `json:"value"`
	Source    string        `json:"source"`
	Sensitive bool          `json:"sensitive"`
	ReadOnly  bool          `json:"readOnly,omitempty"`
	Synonyms  []synonymJSON `json:"synonyms,omitempty"`
	Doc       string        `json:"doc,omitempty"`
	Type      string        `json:"type,omitempty"`
}

type synonymJSON struct {
	Name   string  `json:"name"`
	Value  *string `json:"value"`
	Source string  `json:"source"`
}

// configsOf turns a DescribeConfigs result into JSON, sorted by name.
func configsOf(rc kadm.ResourceConfig) []configJSON {
	out := make([]configJSON, 0, len(rc.Configs))
	for _, c := range rc.Configs {
		cj := configJSON{Name: c.Key, Value: c.Value, Source: sourceName(c.Source), Sensitive: c.Sensitive}
		for _, syn := range c.Synonyms {
			cj.Synonyms = append(cj.Synonyms, synonymJSON{syn.Key, syn.Value, sourceName(syn.Source)})
		}
		out = append(out, cj)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sourceName is a config source as Kafka's tools print it.
func sourceName(s kmsg.ConfigSource) string {
	switch s {
	case kmsg.ConfigSourceDynamicTopicConfig:
		return "DYNAMIC_TOPIC_CONFIG"
	case kmsg.ConfigSourceDynamicBrokerConfig:
		return "DYNAMIC_BROKER_CONFIG"
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return "DYNAMIC_DEFAULT_BROKER_CONFIG"
	case kmsg.ConfigSourceStaticBrokerConfig:
		return "STATIC_BROKER_CONFIG"
	case kmsg.ConfigSourceDefaultConfig:
		return "DEFAULT_CONFIG"
	case kmsg.ConfigSourceDynamicBrokerLoggerConfig:
		return "DYNAMIC_BROKER_LOGGER_CONFIG"
	case kmsg.ConfigSourceClientMetricsConfig:
		return "CLIENT_METRICS_CONFIG"
	case kmsg.ConfigSourceGroupConfig:
		return "GROUP_CONFIG"
	}
	return "UNKNOWN"
}

func serveBrokerConfigs(s *Server, w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("broker"), 10, 32)
	if err != nil {
		writeError(w, badRequest("broker id %q is not a number", r.PathValue("broker")))
		return
	}
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	rcs, err := adm.DescribeBrokerConfigs(ctx, int32(id))
	if err != nil {
		writeError(w, err)
		return
	}
	rc, err := rcs.On(strconv.Itoa(int(id)), nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"broker": id, "configs": configsOf(rc)})
}
