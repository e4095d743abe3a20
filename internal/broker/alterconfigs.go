package broker

// AlterConfigs: v0-2
//
// The legacy, non-incremental form: the configs given replace every
// override of the resource (configs left out return to their defaults).
// First the checks of Kafka's broker (see preprocessAlterConfigs:
// duplicate resources or keys, null values, the broker id, unknown
// resource types, all INVALID_REQUEST), then authorization (with Kafka's
// default messages). TOPIC resources are validated as Kafka's
// controller does (INVALID_CONFIG with the first problem, e.g. "Unknown
// topic config name: x"); an unknown topic is UNKNOWN_TOPIC_OR_PARTITION.
// BROKER resources must name this broker; every key must be dynamically
// updatable and valid, else INVALID_REQUEST "Invalid config value for
// resource ConfigResource(type=BROKER, name='1'): ...", as Kafka's broker
// reports it. Changes are stored in the metadata store, so they survive a
// restart, and applied to the running broker and its logs. ValidateOnly
// runs every check and changes nothing.
//
// Deviation: the cluster-wide default broker resource ("") is rejected
// with INVALID_REQUEST (dynamic defaults are not stored yet);
// alter.config.policy.class.name is not supported.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
)

func init() { register(kmsg.AlterConfigs, 0, 2, handleAlterConfigs) }

func handleAlterConfigs(b *Broker, r *request) {
	req := r.kreq.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	pre := make([]alterResource, len(req.Resources))
	for i, res := range req.Resources {
		pre[i] = alterResource{typ: res.ResourceType, name: res.ResourceName}
		for _, c := range res.Configs {
			pre[i].keys = append(pre[i].keys, c.Name)
			if c.Value == nil {
				pre[i].nulls = append(pre[i].nulls, c.Name)
			}
		}
	}
	preErrs := preprocessAlterConfigs(b, pre, false)
	for i, res := range req.Resources {
		configs := map[string]string{}
		for _, c := range res.Configs {
			if c.Value != nil {
				configs[c.Name] = *c.Value
			}
		}
		e := preErrs[i]
		if e == nil {
			e = withKafkaMessage(b.authorizeConfigs(r, kmsg.ACLOperationAlterConfigs, res.ResourceType, res.ResourceName))
		}
		if e == nil && res.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
			e = b.authorizeGroupConfigs(r, kmsg.ACLOperationAlterConfigs, res.ResourceName)
		}
		switch {
		case e != nil:
		case res.ResourceType == kmsg.ConfigResourceTypeTopic:
			e = checkTopicResourceName(res.ResourceName)
			if e == nil {
				e = b.setTopicOverrides(res.ResourceName, configs, req.ValidateOnly)
			}
		case res.ResourceType == kmsg.ConfigResourceTypeBroker:
			e = b.checkBrokerAlterResource(res.ResourceName)
			if e == nil {
				e = b.setBrokerOverrides(res.ResourceName, configs, slices.Collect(maps.Keys(configs)), req.ValidateOnly)
			}
		case res.ResourceType == kmsg.ConfigResourceTypeGroupConfig:
			e = b.alterGroupConfigs(res.ResourceName, configs, req.ValidateOnly)
		default:
			e = newAPIError(kerr.InvalidRequest, "AlterConfigs is only supported for topics and brokers, but resource type is %s", res.ResourceType)
		}
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType = res.ResourceType
		rr.ResourceName = res.ResourceName
		rr.ErrorCode = e.errorCode()
		rr.ErrorMessage = e.messagePtr()
		resp.Resources = append(resp.Resources, rr)
	}
	r.respond(resp)
}

// alterResource is what preprocessAlterConfigs looks at in one resource of
// an AlterConfigs or IncrementalAlterConfigs request.
type alterResource struct {
	typ   kmsg.ConfigResourceType
	name  string
	keys  []string // config names, in request order
	nulls []string // names whose value is null (not counting DELETE ops)
}

// preprocessAlterConfigs makes the checks Kafka's broker makes on an
// AlterConfigs or IncrementalAlterConfigs request before anything else,
// authorization included (ConfigAdminManager.preprocess), and returns an
// error or nil per resource, in request order: a resource named twice is
// INVALID_REQUEST "Each resource must appear at most once." at every
// occurrence; a config key repeated within a resource "Error due to
// duplicate config keys"; null values "Null value not supported for : a,
// b"; a BROKER resource must name this node ("Node id must be an integer,
// but it is: x", "Unexpected broker id, expected 1, but received 2"); a
// resource type Kafka does not know (or BROKER_LOGGER for the legacy
// AlterConfigs) "Unknown resource type 9".
func preprocessAlterConfigs(b *Broker, rs []alterResource, incremental bool) []*apiError {
	type id struct {
		typ  kmsg.ConfigResourceType
		name string
	}
	count := map[id]int{}
	for _, r := range rs {
		count[id{r.typ, r.name}]++
	}
	out := make([]*apiError, len(rs))
	for i, r := range rs {
		if count[id{r.typ, r.name}] > 1 {
			out[i] = newAPIError(kerr.InvalidRequest, "Each resource must appear at most once.")
			continue
		}
		seen := map[string]bool{}
		for _, k := range r.keys {
			if seen[k] {
				out[i] = newAPIError(kerr.InvalidRequest, "Error due to duplicate config keys")
				break
			}
			seen[k] = true
		}
		if out[i] != nil {
			continue
		}
		if len(r.nulls) > 0 {
			out[i] = newAPIError(kerr.InvalidRequest, "Null value not supported for : %s", strings.Join(r.nulls, ", "))
			continue
		}
		switch r.typ {
		case kmsg.ConfigResourceTypeBroker:
			if r.name != "" {
				out[i] = b.checkNodeIDResource(r.name)
			}
		case kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeClientMetrics, kmsg.ConfigResourceTypeGroupConfig:
		case kmsg.ConfigResourceTypeBrokerLogger:
			if !incremental {
				out[i] = newAPIError(kerr.InvalidRequest, "Unknown resource type %d", int8(r.typ))
			}
		default:
			out[i] = newAPIError(kerr.InvalidRequest, "Unknown resource type %d", int8(r.typ))
		}
	}
	return out
}

// checkNodeIDResource is Kafka's check of the name of a BROKER resource to
// alter (ConfigAdminManager.validateResourceNameIsCurrentNodeId), whose
// messages differ from DescribeConfigs'.
func (b *Broker) checkNodeIDResource(name string) *apiError {
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return newAPIError(kerr.InvalidRequest, "Node id must be an integer, but it is: %s", name)
	}
	if int32(id) != b.nodeID {
		return newAPIError(kerr.InvalidRequest, "Unexpected broker id, expected %d, but received %s", b.nodeID, name)
	}
	return nil
}

// checkTopicResourceName checks the name of a TOPIC resource to alter as
// Kafka's ControllerConfigurationValidator does: "" (a default topic
// resource) is INVALID_REQUEST, an illegal name INVALID_TOPIC_EXCEPTION.
// Whether the topic exists is checked after the configs validate.
func checkTopicResourceName(name string) *apiError {
	if name == "" {
		return newAPIError(kerr.InvalidRequest, "Default topic resources are not allowed.")
	}
	if err := topicNameProblem(name); err != nil {
		return newAPIError(kerr.InvalidTopicException, "%s", err)
	}
	return nil
}

// checkBrokerAlterResource checks the name of a BROKER resource to alter.
// The name "" is the cluster-wide default every broker reads under its own
// overrides; any broker takes it.
func (b *Broker) checkBrokerAlterResource(name string) *apiError {
	if name == "" {
		return nil
	}
	return b.checkBrokerResource(name)
}

// brokerOverrides is the dynamic broker configs stored for the BROKER
// resource name: the cluster-wide defaults for "", else this broker's own.
func (b *Broker) brokerOverrides(im *metadata.Image, name string) map[string]string {
	if name == "" {
		return im.BrokerConfigs
	}
	return im.NodeConfigsOf(b.nodeID)
}

// setTopicOverrides validates overrides as a topic's complete set of
// config overrides and, unless validateOnly, stores them. As Kafka's
// ConfigurationControlManager, the configs are validated before the
// topic's existence is checked (UNKNOWN_TOPIC_OR_PARTITION "The topic 't'
// does not exist.").
func (b *Broker) setTopicOverrides(topic string, overrides map[string]string, validateOnly bool) *apiError {
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		if err := config.ValidateTopicConfig(k, overrides[k]); err != nil {
			return newAPIError(kerr.InvalidConfig, "%s", err)
		}
	}
	im := b.meta.Image()
	if _, err := config.ResolveTopic(b.dynamicConfig(im), overrides); err != nil {
		return newAPIError(kerr.InvalidConfig, "%s", err)
	}
	if im.Topics[topic] == nil {
		return newAPIError(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", topic)
	}
	if validateOnly {
		return nil
	}
	if len(overrides) == 0 {
		overrides = nil
	}
	if err := b.meta.SetTopicConfigs(topic, overrides); err != nil {
		return toAPIError(err)
	}
	return nil
}

// setBrokerOverrides validates configs as the complete set of dynamic
// configs of the BROKER resource name (this broker's own, or with "" the
// cluster-wide defaults) and, unless validateOnly, stores them.
//
// touched are the keys the request named: setting a listener's ssl.* key,
// even to its current value, reloads the listener's certificates (Kafka's
// way to rotate them).
func (b *Broker) setBrokerOverrides(name string, configs map[string]string, touched []string, validateOnly bool) *apiError {
	invalid := func(err error) *apiError {
		return newAPIError(kerr.InvalidRequest, "Invalid config value for resource ConfigResource(type=BROKER, name='%s'): %s", name, err)
	}
	var perBrokerOnly []string
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		if err := config.ValidateBrokerDynamic(k, configs[k]); err != nil {
			return invalid(err)
		}
		if name == "" && config.PerBrokerOnly(k) {
			perBrokerOnly = append(perBrokerOnly, k)
		}
	}
	if len(perBrokerOnly) > 0 {
		return invalid(fmt.Errorf("Cannot update these configs at default cluster level, broker id must be specified: Set(%s)",
			strings.Join(perBrokerOnly, ", ")))
	}
	im := b.meta.Image()
	node, clusterDefault := im.NodeConfigsOf(b.nodeID), im.BrokerConfigs
	if name == "" {
		clusterDefault = configs
	} else {
		node = configs
	}
	if len(configs) > 0 {
		if _, err := b.cfg.WithDynamic(node, clusterDefault); err != nil {
			return invalid(err)
		}
	}
	if validateOnly {
		return nil
	}
	if len(configs) == 0 {
		configs = nil
	}
	var err error
	if name == "" {
		err = b.meta.SetBrokerConfigs(configs)
	} else {
		err = b.meta.SetNodeConfigs(b.nodeID, configs)
	}
	if err != nil {
		return toAPIError(fmt.Errorf("store broker configs: %w", err))
	}
	for _, k := range touched {
		if strings.HasPrefix(k, "listener.name.") && strings.Contains(k, ".ssl.") {
			b.refreshListenerTLS(b.meta.Image(), true)
			break
		}
	}
	return nil
}
