package broker

// DescribeClientQuotas: v0-1
//
// Lists the client quotas of the metadata image that the filter
// components match (EXACT, DEFAULT, ANY; strict or not), as Kafka's
// ClientQuotaImage does. Needs DESCRIBE_CONFIGS on the cluster.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/quota"
)

func init() { register(kmsg.DescribeClientQuotas, 0, 1, handleDescribeClientQuotas) }

func handleDescribeClientQuotas(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	if !b.authorizeCluster(r, kmsg.ACLOperationDescribeConfigs) {
		msg := kerr.ClusterAuthorizationFailed.Message
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, &msg
		r.respond(resp)
		return
	}
	comps := make([]quota.FilterComponent, len(req.Components))
	for i, c := range req.Components {
		comps[i] = quota.FilterComponent{Type: c.EntityType, MatchType: int8(c.MatchType), Match: c.Match}
	}
	entries, err := quota.Filter(b.meta.Image().ClientQuotas, comps, req.Strict)
	if err != nil {
		msg := err.Error()
		code := kerr.InvalidRequest.Code
		if errors.Is(err, quota.ErrUnsupportedEntityType) {
			code = kerr.UnsupportedVersion.Code // as Kafka answers an unknown entity type
		}
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		r.respond(resp)
		return
	}
	for _, e := range entries {
		re := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, c := range e.Entity {
			ee := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ee.Type, ee.Name = c.Type, c.Name
			re.Entity = append(re.Entity, ee)
		}
		// ClientQuotaImage.dataToEntity: a default HashMap.
		javaHashMapOrder(re.Entity, func(ee kmsg.DescribeClientQuotasResponseEntryEntity) int32 {
			return javaStringHash(ee.Type)
		}, javaHashMapCapacity(-1, len(re.Entity)))
		keys := make([]string, 0, len(e.Values))
		for k := range e.Values {
			keys = append(keys, k)
		}
		javaImageOrder(keys, javaStringHash)
		for _, k := range keys {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, e.Values[k]
			re.Values = append(re.Values, v)
		}
		resp.Entries = append(resp.Entries, re)
	}
	javaImageOrder(resp.Entries, func(re kmsg.DescribeClientQuotasResponseEntry) int32 {
		types, names := make([]string, len(re.Entity)), make([]*string, len(re.Entity))
		for i, ee := range re.Entity {
			types[i], names[i] = ee.Type, ee.Name
		}
		return quotaEntityHash(types, names)
	})
	r.respond(resp)
}

// javaImageOrder sorts items as Kafka's ClientQuotasImage and
// ClientQuotaImage maps iterate them: a HashMap rebuilt on each change
// (new HashMap<>(previous size), then every entry put), whose entries
// met in one change were put in the order of that change's own default
// HashMap. It assumes the map only grew, so its table is the one n puts
// make, and that its entries came in one change; items sharing a bucket
// then keep their current order after that of the change's map.
func javaImageOrder[T any](items []T, hash func(T) int32) {
	javaHashMapOrder(items, hash, javaHashMapCapacity(-1, len(items)))
	javaHashMapOrder(items, hash, javaHashMapCapacity(0, len(items)))
}
