package broker

// DescribeConfigs: v0-4
//
// TOPIC resources list every topic config with its effective value and
// source (DYNAMIC_TOPIC_CONFIG for an override, else the broker key that
// supplies the default, else DEFAULT_CONFIG); BROKER resources named with
// this node's id list every broker config, dynamic overrides included. As
// Kafka's ConfigHelper: a broker resource named "" is the cluster-wide
// dynamic default, another id or a non-integer name is INVALID_REQUEST; an
// illegal topic name is INVALID_TOPIC_EXCEPTION and an unknown topic
// UNKNOWN_TOPIC_OR_PARTITION without a message. A null or empty
// ConfigNames means all configs (Kafka's ConfigHelper treats both alike);
// names that are not configs are left out. An unauthorized resource gets
// TOPIC_ or CLUSTER_AUTHORIZATION_FAILED with Kafka's default message.
// A resource of a type Kafka does not know fails the whole request (every
// resource INVALID_REQUEST). Synonyms (v1+) and documentation (v3+) are
// sent only when asked for; sensitive values are null.
//
// Deviation: cluster-wide dynamic broker defaults are not stored yet, so
// the "" broker resource is always empty. BROKER_LOGGER and the other
// resource types get INVALID_REQUEST.

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
)

func init() { register(kmsg.DescribeConfigs, 0, 4, handleDescribeConfigs) }

func handleDescribeConfigs(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	if unknownConfigResourceType(req.Resources) {
		// Kafka's ConfigHelper throws for a type it does not know, which
		// fails the whole request: every resource gets INVALID_REQUEST.
		e := kafkaError(kerr.InvalidRequest)
		for _, res := range req.Resources {
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
			rr.ErrorCode, rr.ErrorMessage = e.code, e.messagePtr()
			resp.Resources = append(resp.Resources, rr)
		}
		r.respond(resp)
		return
	}
	im := b.meta.Image()
	for _, res := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType = res.ResourceType
		rr.ResourceName = res.ResourceName
		// Authorized first, so an unauthorized principal cannot tell
		// whether a topic exists.
		e := withKafkaMessage(b.authorizeConfigs(r, kmsg.ACLOperationDescribeConfigs, res.ResourceType, res.ResourceName))
		if e == nil && res.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
			e = b.authorizeGroupConfigs(r, kmsg.ACLOperationDescribeConfigs, res.ResourceName)
		}
		var entries []config.Entry
		if e == nil {
			entries, e = b.describeResource(im, res.ResourceType, res.ResourceName)
		}
		if e != nil {
			rr.ErrorCode = e.code
			rr.ErrorMessage = e.messagePtr()
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		var want map[string]bool
		if len(res.ConfigNames) > 0 {
			want = map[string]bool{}
			for _, n := range res.ConfigNames {
				want[n] = true
			}
		}
		for _, e := range entries {
			if want != nil && !want[e.Name] {
				continue
			}
			rr.Configs = append(rr.Configs, describeConfigsEntry(e, req.IncludeSynonyms, req.IncludeDocumentation))
		}
		resp.Resources = append(resp.Resources, rr)
	}
	r.respond(resp)
}

// unknownConfigResourceType reports whether a resource has a type Kafka's
// ConfigResource.Type does not know (TOPIC, BROKER, BROKER_LOGGER,
// CLIENT_METRICS and GROUP are known).
func unknownConfigResourceType(rs []kmsg.DescribeConfigsRequestResource) bool {
	for _, res := range rs {
		switch res.ResourceType {
		case kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger,
			kmsg.ConfigResourceTypeClientMetrics, kmsg.ConfigResourceTypeGroupConfig:
		default:
			return true
		}
	}
	return false
}

// describeResource returns the config entries of one resource.
func (b *Broker) describeResource(im *metadata.Image, typ kmsg.ConfigResourceType, name string) ([]config.Entry, *apiError) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if err := topicNameProblem(name); err != nil {
			return nil, newAPIError(kerr.InvalidTopicException, "%s", err)
		}
		t := im.Topics[name]
		if t == nil {
			return nil, &apiError{code: kerr.UnknownTopicOrPartition.Code} // Kafka sets no message
		}
		return config.DescribeTopic(b.dynamicConfig(im), t.Configs), nil
	case kmsg.ConfigResourceTypeBroker:
		if name == "" {
			return config.DescribeBrokerDefaults(b.cfg, im.BrokerConfigs), nil
		}
		if e := b.checkBrokerResource(name); e != nil {
			return nil, e
		}
		return config.DescribeBroker(b.cfg, im.NodeConfigsOf(b.nodeID), im.BrokerConfigs), nil
	case kmsg.ConfigResourceTypeGroupConfig:
		return b.describeGroupConfigs(im, name)
	}
	return nil, newAPIError(kerr.InvalidRequest, "Unsupported resource type: %s", typ)
}

// checkBrokerResource applies Kafka's rule for the name of a BROKER
// resource other than "": it must be this broker's id.
func (b *Broker) checkBrokerResource(name string) *apiError {
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return newAPIError(kerr.InvalidRequest, "Broker id must be an integer, but it is: %s", name)
	}
	if int32(id) != b.nodeID {
		return newAPIError(kerr.InvalidRequest, "Unexpected broker id, expected %d or empty string, but received %s", b.nodeID, name)
	}
	return nil
}

func describeConfigsEntry(e config.Entry, synonyms, docs bool) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name = e.Name
	c.Value = e.Value
	if e.Sensitive {
		c.Value = nil
	}
	c.ReadOnly = e.ReadOnly
	c.IsDefault = e.Source == kmsg.ConfigSourceDefaultConfig
	c.Source = e.Source
	c.IsSensitive = e.Sensitive
	c.ConfigType = e.Type
	if synonyms {
		c.ConfigSynonyms = make([]kmsg.DescribeConfigsResponseResourceConfigConfigSynonym, 0, len(e.Synonyms))
		for _, s := range e.Synonyms {
			cs := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			cs.Name = s.Name
			cs.Value = s.Value
			if e.Sensitive {
				cs.Value = nil
			}
			cs.Source = s.Source
			c.ConfigSynonyms = append(c.ConfigSynonyms, cs)
		}
	}
	if docs && e.Doc != "" {
		d := e.Doc
		c.Documentation = &d
	}
	return c
}

// dynamicConfig is the broker config with the image's dynamic broker
// configs applied: this broker's own overrides over the cluster-wide
// defaults over the static config, so that topic defaults follow
// AlterConfigs on the broker. Overrides that no longer validate are logged
// and ignored.
func (b *Broker) dynamicConfig(im *metadata.Image) *config.Broker {
	node := im.NodeConfigsOf(b.nodeID)
	if len(node) == 0 && len(im.BrokerConfigs) == 0 {
		return b.cfg
	}
	c, err := b.cfg.WithDynamic(node, im.BrokerConfigs)
	if err != nil {
		b.log.Warn("dynamic broker configs do not validate; using static configs", "err", err)
		return b.cfg
	}
	return c
}
