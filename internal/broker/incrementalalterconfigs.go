package broker

// IncrementalAlterConfigs: v0-1
//
// Each config carries an operation on the resource's current overrides:
// SET (0), DELETE (1, back to the default), APPEND (2) and SUBTRACT (3),
// the last two only for LIST configs such as cleanup.policy (else
// INVALID_CONFIG "Can't APPEND to key x because its type is not LIST.").
// APPEND adds the values not present yet to the current value (the
// override, else the config's built-in default, whatever the broker's
// static or dynamic defaults say, as Kafka's controller); SUBTRACT removes
// them. First the
// checks of Kafka's broker (preprocessAlterConfigs in alterconfigs.go): a
// resource named twice, a key repeated in one resource ("Error due to
// duplicate config keys"), null values for operations other than DELETE
// ("Null value not supported for : a, b"), a broker id other than this
// node's and an unknown resource type are INVALID_REQUEST, before
// authorization; an unknown operation is INVALID_REQUEST "Unknown
// operations type 7". The resulting overrides are then checked
// and stored as AlterConfigs does (see alterconfigs.go), and ValidateOnly
// runs every check and changes nothing.
//
// Deviation: as for AlterConfigs, the cluster-wide default broker
// resource ("") is rejected.

import (
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
)

func init() { register(kmsg.IncrementalAlterConfigs, 0, 1, handleIncrementalAlterConfigs) }

func handleIncrementalAlterConfigs(b *Broker, r *request) {
	req := r.kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	pre := make([]alterResource, len(req.Resources))
	for i, res := range req.Resources {
		pre[i] = alterResource{typ: res.ResourceType, name: res.ResourceName}
		for _, c := range res.Configs {
			pre[i].keys = append(pre[i].keys, c.Name)
			if c.Value == nil && c.Op != kmsg.IncrementalAlterConfigOpDelete {
				pre[i].nulls = append(pre[i].nulls, c.Name)
			}
		}
	}
	preErrs := preprocessAlterConfigs(b, pre, true)
	for i := range req.Resources {
		res := &req.Resources[i]
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType = res.ResourceType
		rr.ResourceName = res.ResourceName
		e := preErrs[i]
		if e == nil {
			e = withKafkaMessage(b.authorizeConfigs(r, kmsg.ACLOperationAlterConfigs, res.ResourceType, res.ResourceName))
		}
		if e == nil && res.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
			e = b.authorizeGroupConfigs(r, kmsg.ACLOperationAlterConfigs, res.ResourceName)
		}
		if e == nil {
			e = b.incrementalAlter(res, req.ValidateOnly)
		}
		rr.ErrorCode = e.errorCode()
		rr.ErrorMessage = e.messagePtr()
		resp.Resources = append(resp.Resources, rr)
	}
	r.respond(resp)
}

func (b *Broker) incrementalAlter(res *kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) *apiError {
	im := b.meta.Image()
	switch res.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		if e := checkTopicResourceName(res.ResourceName); e != nil {
			return e
		}
		var existing map[string]string // none for a topic that does not exist
		if t := im.Topics[res.ResourceName]; t != nil {
			existing = t.Configs
		}
		// Without an override, APPEND and SUBTRACT start from the
		// config's built-in default, not from a broker-level default
		// (Kafka's ConfigurationControlManager.getParts).
		current := func(name string) (string, bool) {
			k, ok := config.LookupTopicKey(name)
			return k.Default, ok && k.Type == kmsg.ConfigTypeList
		}
		overrides, e := applyConfigOps(existing, res.Configs, current)
		if e != nil {
			return e
		}
		return b.setTopicOverrides(res.ResourceName, overrides, validateOnly)
	case kmsg.ConfigResourceTypeBroker:
		if e := b.checkBrokerAlterResource(res.ResourceName); e != nil {
			return e
		}
		current := func(name string) (string, bool) {
			k, ok := config.LookupBrokerKey(name)
			v := ""
			if k.Default != nil {
				v = *k.Default
			}
			return v, ok && k.Type == kmsg.ConfigTypeList
		}
		configs, e := applyConfigOps(b.brokerOverrides(im, res.ResourceName), res.Configs, current)
		if e != nil {
			return e
		}
		touched := make([]string, len(res.Configs))
		for i, c := range res.Configs {
			touched[i] = c.Name
		}
		return b.setBrokerOverrides(res.ResourceName, configs, touched, validateOnly)
	case kmsg.ConfigResourceTypeGroupConfig:
		return b.incrementalAlterGroupConfigs(res, validateOnly)
	}
	return newAPIError(kerr.InvalidRequest, "IncrementalAlterConfigs is only supported for topics and brokers, but resource type is %s", res.ResourceType)
}

// applyConfigOps applies the operations to a copy of the overrides.
// current returns the value APPEND and SUBTRACT start from for a key
// without an override and whether it is a LIST config.
func applyConfigOps(overrides map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig,
	current func(name string) (string, bool)) (map[string]string, *apiError) {
	out := maps.Clone(overrides)
	if out == nil {
		out = map[string]string{}
	}
	for _, c := range ops {
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			out[c.Name] = *c.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(out, c.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			def, isList := current(c.Name)
			if !isList {
				return nil, newAPIError(kerr.InvalidConfig, "Can't %s to key %s because its type is not LIST.", c.Op, c.Name)
			}
			old, ok := out[c.Name]
			if !ok {
				old = def
			}
			list := splitConfigList(old)
			for _, v := range splitConfigList(*c.Value) {
				if c.Op == kmsg.IncrementalAlterConfigOpAppend {
					if !slices.Contains(list, v) {
						list = append(list, v)
					}
				} else {
					list = slices.DeleteFunc(list, func(s string) bool { return s == v })
				}
			}
			out[c.Name] = strings.Join(list, ",")
		default:
			return nil, newAPIError(kerr.InvalidRequest, "Unknown operations type %d", int8(c.Op))
		}
	}
	return out, nil
}

// splitConfigList splits a LIST config value on commas, trimming blanks.
func splitConfigList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
