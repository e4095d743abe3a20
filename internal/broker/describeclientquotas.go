package broker

// DescribeClientQuotas: v0-1
//
// Lists the client quotas of the metadata image that the filter
// components match (EXACT, DEFAULT, ANY; strict or not), as Kafka's
// ClientQuotaImage does. Needs DESCRIBE_CONFIGS on the cluster.

import (
	"errors"
	"sort"

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
		keys := make([]string, 0, len(e.Values))
		for k := range e.Values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, e.Values[k]
			re.Values = append(re.Values, v)
		}
		resp.Entries = append(resp.Entries, re)
	}
	r.respond(resp)
}
