package broker

// IncrementalAlterConfigs: v0-1
//
// Each config carries an operation on the resource's current overrides:
// SET (0), DELETE (1, back to the default), APPEND (2) and SUBTRACT (3),
// the last two only for LIST configs such as cleanup.policy (else
// INVALID_CONFIG "Can't APPEND to key x because its type is not LIST.").
// APPEND adds the values not present yet to the current value (the
// override, else the effective default); SUBTRACT removes them. As Kafka's
// broker: a key repeated in one resource is INVALID_REQUEST "Error due to
// duplicate config keys", a null value for an operation other than DELETE
// is INVALID_REQUEST "Null value not supported for : SET:key", an unknown
// operation is INVALID_REQUEST. The resulting overrides are then checked
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
	for i := range req.Resources {
		res := &req.Resources[i]
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType = res.ResourceType
		rr.ResourceName = res.ResourceName
		e := b.authorizeConfigs(r, kmsg.ACLOperationAlterConfigs, res.ResourceType, res.ResourceName)
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
	seen := map[string]bool{}
	for _, c := range res.Configs {
		if seen[c.Name] {
			return newAPIError(kerr.InvalidRequest, "Error due to duplicate config keys")
		}
		seen[c.Name] = true
		if c.Value == nil && c.Op != kmsg.IncrementalAlterConfigOpDelete {
			return newAPIError(kerr.InvalidRequest, "Null value not supported for : %s:%s", c.Op, c.Name)
		}
	}
	im := b.meta.Image()
	switch res.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		if e := b.checkTopicResource(res.ResourceName); e != nil {
			return e
		}
		t := im.Topics[res.ResourceName]
		current := func(name string) (string, bool) {
			k, ok := config.LookupTopicKey(name)
			if !ok {
				return "", false
			}
			for _, e := range config.DescribeTopic(b.dynamicConfig(im.BrokerConfigs), t.Configs) {
				if e.Name == name && e.Value != nil {
					return *e.Value, k.Type == kmsg.ConfigTypeList
				}
			}
			return k.Default, k.Type == kmsg.ConfigTypeList
		}
		overrides, e := applyConfigOps(t.Configs, res.Configs, current)
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
			v, _ := b.cfg.Value(name)
			return v, ok && k.Type == kmsg.ConfigTypeList
		}
		configs, e := applyConfigOps(im.BrokerConfigs, res.Configs, current)
		if e != nil {
			return e
		}
		touched := make([]string, len(res.Configs))
		for i, c := range res.Configs {
			touched[i] = c.Name
		}
		return b.setBrokerOverrides(res.ResourceName, configs, touched, validateOnly)
	}
	return newAPIError(kerr.InvalidRequest, "IncrementalAlterConfigs is only supported for topics and brokers, but resource type is %s", res.ResourceType)
}

// applyConfigOps applies the operations to a copy of the overrides.
// current returns the value a key has without an override and whether it
// is a LIST config.
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
			return nil, newAPIError(kerr.InvalidRequest, "Unknown alter config operation %d for key %s", int8(c.Op), c.Name)
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
