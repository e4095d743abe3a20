package broker

// AlterClientQuotas: v0-1
//
// Sets and removes client quotas (producer_byte_rate, consumer_byte_rate,
// request_percentage, controller_mutation_rate for users and client ids,
// connection_creation_rate for ips) in the metadata log; every broker
// enforces them from its image. Each entry is validated on its own (an
// invalid entity or value fails only that entry, with Kafka's message);
// validate_only checks without applying. Needs ALTER_CONFIGS on the
// cluster.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/quota"
)

func init() { register(kmsg.AlterClientQuotas, 0, 1, handleAlterClientQuotas) }

func handleAlterClientQuotas(b *Broker, r *request) {
	req := r.kreq.(*kmsg.AlterClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	authorized := b.authorizeCluster(r, kmsg.ACLOperationAlterConfigs)
	var changes []metadata.QuotaChange
	var changeIdx []int
	for _, e := range req.Entries {
		re := kmsg.NewAlterClientQuotasResponseEntry()
		ent := make(quota.Entity, len(e.Entity))
		for j, c := range e.Entity {
			ee := kmsg.NewAlterClientQuotasResponseEntryEntity()
			ee.Type, ee.Name = c.Type, c.Name
			re.Entity = append(re.Entity, ee)
			ent[j] = quota.Component{Type: c.Type, Name: c.Name}
		}
		resp.Entries = append(resp.Entries, re)
		i := len(resp.Entries) - 1
		fail := func(code int16, msg string) {
			resp.Entries[i].ErrorCode, resp.Entries[i].ErrorMessage = code, &msg
		}
		if !authorized {
			fail(kerr.ClusterAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Message)
			continue
		}
		canon, err := ent.Canonical()
		if err != nil {
			fail(kerr.InvalidRequest.Code, err.Error())
			continue
		}
		ch := metadata.QuotaChange{Entity: canon, Set: map[string]float64{}}
		var bad error
		seenKey := map[string]bool{}
		for _, op := range e.Ops {
			if seenKey[op.Key] {
				bad = fmt.Errorf("Duplicate quota key %s not updating quota for this entity %s", op.Key, canon)
				break
			}
			seenKey[op.Key] = true
			var v *float64
			if !op.Remove {
				val := op.Value
				v = &val
			}
			if err := quota.ValidateAlteration(canon, op.Key, v); err != nil {
				bad = err
				break
			}
			if op.Remove {
				ch.Remove = append(ch.Remove, op.Key)
			} else {
				ch.Set[op.Key] = op.Value
			}
		}
		if bad != nil {
			fail(kerr.InvalidRequest.Code, bad.Error())
			continue
		}
		if !req.ValidateOnly {
			changes = append(changes, ch)
			changeIdx = append(changeIdx, i)
		}
	}
	if len(changes) > 0 {
		if err := b.meta.AlterClientQuotas(changes); err != nil {
			for _, i := range changeIdx {
				msg := err.Error()
				resp.Entries[i].ErrorCode, resp.Entries[i].ErrorMessage = clusterErrorCode(err), &msg
			}
		}
	}
	javaQuotaResultOrder(resp)
	r.respond(resp)
}

// javaQuotaResultOrder puts the answer in Kafka's order: the controller
// keeps the results in a default HashMap keyed by entity, and each entity
// is the HashMap AlterClientQuotasRequest.entries builds (new
// HashMap<>(components), then each put in request order).
func javaQuotaResultOrder(resp *kmsg.AlterClientQuotasResponse) {
	for i := range resp.Entries {
		ent := resp.Entries[i].Entity
		javaHashMapOrder(ent, func(ee kmsg.AlterClientQuotasResponseEntryEntity) int32 {
			return javaStringHash(ee.Type)
		}, javaHashMapCapacity(len(ent), len(ent)))
	}
	javaHashMapOrder(resp.Entries, func(re kmsg.AlterClientQuotasResponseEntry) int32 {
		types, names := make([]string, len(re.Entity)), make([]*string, len(re.Entity))
		for i, ee := range re.Entity {
			types[i], names[i] = ee.Type, ee.Name
		}
		return quotaEntityHash(types, names)
	}, javaHashMapCapacity(-1, len(resp.Entries)))
}
