package broker

// ListConfigResources: v0-1
//
// KIP-1142 (Kafka 4.1; v0 is KIP-1000's ListClientMetricsResources). As
// Kafka's KafkaApis: DESCRIBE_CONFIGS on CLUSTER or
// CLUSTER_AUTHORIZATION_FAILED; v0 lists CLIENT_METRICS resources only, v1
// the types asked for (all of TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS
// and GROUP for an empty list), and a type outside those makes the whole
// request UNSUPPORTED_VERSION. TOPIC lists every topic, BROKER and
// BROKER_LOGGER every registered broker (by node id), GROUP the groups with
// config overrides; there are no client metrics subscriptions (no metrics
// receiver), so CLIENT_METRICS lists nothing. Resources are listed by type
// (GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC, as Kafka adds them)
// and by name within a type.

import (
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.ListConfigResources, 0, 1, handleListConfigResources) }

// Config resource types (Kafka's ConfigResource.Type ids).
const (
	configResourceTopic         int8 = 2
	configResourceBroker        int8 = 4
	configResourceBrokerLogger  int8 = 8
	configResourceClientMetrics int8 = 16
	configResourceGroup         int8 = 32
)

func handleListConfigResources(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ListConfigResourcesRequest)
	resp := req.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	if !b.authorizeCluster(r, kmsg.ACLOperationDescribeConfigs) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		r.respond(resp)
		return
	}
	supported := []int8{configResourceClientMetrics}
	if r.hdr.APIVersion >= 1 {
		supported = []int8{configResourceTopic, configResourceBroker, configResourceBrokerLogger,
			configResourceClientMetrics, configResourceGroup}
	}
	types := supported
	if r.hdr.APIVersion >= 1 && len(req.ResourceTypes) > 0 {
		types = req.ResourceTypes
	}
	for _, t := range types {
		if !slices.Contains(supported, t) {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
			r.respond(resp)
			return
		}
	}
	im := b.meta.Image()
	add := func(t int8, names []string) {
		if !slices.Contains(types, t) {
			return
		}
		for _, n := range names {
			cr := kmsg.NewListConfigResourcesResponseConfigResource()
			cr.Name, cr.Type = n, t
			resp.ConfigResources = append(resp.ConfigResources, cr)
		}
	}
	var brokers []string
	for _, br := range im.Brokers {
		brokers = append(brokers, strconv.Itoa(int(br.NodeID)))
	}
	slices.Sort(brokers)
	add(configResourceGroup, slices.Sorted(maps.Keys(im.GroupConfigs)))
	add(configResourceClientMetrics, nil)
	add(configResourceBrokerLogger, brokers)
	add(configResourceBroker, brokers)
	add(configResourceTopic, im.SortedTopics())
	if resp.ConfigResources == nil {
		resp.ConfigResources = []kmsg.ListConfigResourcesResponseConfigResource{}
	}
	r.respond(resp)
}
