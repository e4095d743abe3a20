package console

// Client quotas: the quotas page's API (assets/pages/quotas.js).
//
//	GET  /api/quotas   DescribeClientQuotas of every entity (user, client-id, ip, and their defaults)
//	POST /api/quotas   AlterClientQuotas of one entity: {entity: [{type, name}], set: {key: value}, remove: [key]}
//
// An entity component whose name is null is the default of its type
// (<default> in kafka-configs).

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

func init() {
	handle("GET /api/quotas", serveQuotas)
	handle("POST /api/quotas", serveAlterQuota)
}

type quotaEntityComponent struct {
	Type string  `json:"type"`
	Name *string `json:"name"` // nil: the default
}

type quotaEntry struct {
	Entity []quotaEntityComponent `json:"entity"`
	Values map[string]float64     `json:"values"`
}

// entityKey orders entities for display.
func entityKey(e []quotaEntityComponent) string {
	var parts []string
	for _, c := range e {
		n := "\x00" // defaults first
		if c.Name != nil {
			n = *c.Name
		}
		parts = append(parts, c.Type+"="+n)
	}
	return strings.Join(parts, ",")
}

func serveQuotas(s *Server, w http.ResponseWriter, r *http.Request) {
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	// No component and not strict matches every entity.
	described, err := adm.DescribeClientQuotas(r.Context(), false, nil)
	if err != nil {
		writeError(w, fmt.Errorf("describe client quotas: %w", err))
		return
	}
	out := []quotaEntry{}
	for _, d := range described {
		q := quotaEntry{Values: map[string]float64{}}
		for _, c := range d.Entity {
			q.Entity = append(q.Entity, quotaEntityComponent{Type: c.Type, Name: c.Name})
		}
		sort.Slice(q.Entity, func(i, j int) bool { return q.Entity[i].Type > q.Entity[j].Type }) // user before client-id
		for _, v := range d.Values {
			q.Values[v.Key] = v.Value
		}
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return entityKey(out[i].Entity) < entityKey(out[j].Entity) })
	writeJSON(w, http.StatusOK, map[string]any{"quotas": out})
}

func serveAlterQuota(s *Server, w http.ResponseWriter, r *http.Request) {
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var in struct {
		Entity []quotaEntityComponent `json:"entity"`
		Set    map[string]float64     `json:"set"`
		Remove []string               `json:"remove"`
	}
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, err)
		return
	}
	if len(in.Entity) == 0 {
		writeError(w, badRequest("no entity (user, client-id or ip)"))
		return
	}
	if len(in.Set)+len(in.Remove) == 0 {
		writeError(w, badRequest("nothing to set or remove"))
		return
	}
	entry := kadm.AlterClientQuotaEntry{}
	for _, c := range in.Entity {
		switch c.Type {
		case "user", "client-id", "ip":
		default:
			writeError(w, badRequest("entity type must be user, client-id or ip, not %q", c.Type))
			return
		}
		entry.Entity = append(entry.Entity, kadm.ClientQuotaEntityComponent{Type: c.Type, Name: c.Name})
	}
	keys := make([]string, 0, len(in.Set))
	for k := range in.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Value: in.Set[k]})
	}
	for _, k := range in.Remove {
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
	}
	altered, err := adm.AlterClientQuotas(r.Context(), []kadm.AlterClientQuotaEntry{entry})
	if err == nil {
		for _, a := range altered {
			if a.Err != nil {
				err = withMessage(a.Err, a.ErrMessage)
				break
			}
		}
	}
	if err != nil {
		writeError(w, fmt.Errorf("alter client quotas of %s: %w", entry.Entity, err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"entity": in.Entity})
}
