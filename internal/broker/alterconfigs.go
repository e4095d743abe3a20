package broker

// AlterConfigs: v0-2
//
// The legacy, non-incremental form: the configs given replace every
// override of the resource (configs left out return to their defaults; a
// null value is left out). TOPIC resources are validated as Kafka's
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
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
)

func init() { register(kmsg.AlterConfigs, 0, 2, handleAlterConfigs) }

func handleAlterConfigs(b *Broker, r *request) {
	req := r.kreq.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, res := range req.Resources {
		configs := map[string]string{}
		for _, c := range res.Configs {
			if c.Value != nil {
				configs[c.Name] = *c.Value
			}
		}
		e := b.authorizeConfigs(r, kmsg.ACLOperationAlterConfigs, res.ResourceType, res.ResourceName)
		switch {
		case e != nil:
		case res.ResourceType == kmsg.ConfigResourceTypeTopic:
			e = b.checkTopicResource(res.ResourceName)
			if e == nil {
				e = b.setTopicOverrides(res.ResourceName, configs, req.ValidateOnly)
			}
		case res.ResourceType == kmsg.ConfigResourceTypeBroker:
			e = b.checkBrokerAlterResource(res.ResourceName)
			if e == nil {
				e = b.setBrokerOverrides(res.ResourceName, configs, slices.Collect(maps.Keys(configs)), req.ValidateOnly)
			}
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

// checkTopicResource checks that a topic resource names an existing topic.
func (b *Broker) checkTopicResource(name string) *apiError {
	if err := topicNameProblem(name); err != nil {
		return newAPIError(kerr.InvalidTopicException, "%s", err)
	}
	if b.meta.Image().Topics[name] == nil {
		return newAPIError(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", name)
	}
	return nil
}

// checkBrokerAlterResource checks the name of a BROKER resource to alter.
func (b *Broker) checkBrokerAlterResource(name string) *apiError {
	if name == "" {
		return newAPIError(kerr.InvalidRequest,
			"Cluster-wide default broker configs are not supported; alter broker %d instead", b.nodeID)
	}
	return b.checkBrokerResource(name)
}

// setTopicOverrides validates overrides as a topic's complete set of
// config overrides and, unless validateOnly, stores them.
func (b *Broker) setTopicOverrides(topic string, overrides map[string]string, validateOnly bool) *apiError {
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		if err := config.ValidateTopicConfig(k, overrides[k]); err != nil {
			return newAPIError(kerr.InvalidConfig, "%s", err)
		}
	}
	im := b.meta.Image()
	if _, err := config.ResolveTopic(b.dynamicConfig(im.BrokerConfigs), overrides); err != nil {
		return newAPIError(kerr.InvalidConfig, "%s", err)
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

// setBrokerOverrides validates configs as this broker's complete set of
// dynamic configs and, unless validateOnly, stores them.
//
// touched are the keys the request named: setting a listener's ssl.* key,
// even to its current value, reloads the listener's certificates (Kafka's
// way to rotate them).
func (b *Broker) setBrokerOverrides(name string, configs map[string]string, touched []string, validateOnly bool) *apiError {
	invalid := func(err error) *apiError {
		return newAPIError(kerr.InvalidRequest, "Invalid config value for resource ConfigResource(type=BROKER, name='%s'): %s", name, err)
	}
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		if err := config.ValidateBrokerDynamic(k, configs[k]); err != nil {
			return invalid(err)
		}
	}
	if len(configs) > 0 {
		if _, err := b.cfg.WithDynamic(configs, nil); err != nil {
			return invalid(err)
		}
	}
	if validateOnly {
		return nil
	}
	if len(configs) == 0 {
		configs = nil
	}
	if err := b.meta.SetBrokerConfigs(configs); err != nil {
		return toAPIError(fmt.Errorf("store broker configs: %w", err))
	}
	for _, k := range touched {
		if strings.HasPrefix(k, "listener.name.") && strings.Contains(k, ".ssl.") {
			b.refreshListenerTLS(configs, true)
			break
		}
	}
	return nil
}
