package quota

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Entity types of a client quota, as Kafka names them.
const (
	EntityUser     = "user"
	EntityClientID = "client-id"
	EntityIP       = "ip"
)

// Component is one part of a quota entity: a type and a name, or the
// type's default when Name is nil (Kafka's <default>).
type Component struct {
	Type string  `json:"type"`
	Name *string `json:"name,omitempty"`
}

// Entity names what a quota applies to: a user, a client id, both, or an
// ip, each by name or default. Its components are sorted by Type and no
// type repeats; Canonical makes one so.
//
// An Entity is a plain value: safe for concurrent reads, never mutated by
// this package.
type Entity []Component

// Entry is the quota values set for one entity, keyed by Kafka's quota
// config names (producer_byte_rate, consumer_byte_rate,
// request_percentage, controller_mutation_rate, connection_creation_rate).
// It is stored in the metadata log.
type Entry struct {
	Entity Entity             `json:"entity"`
	Values map[string]float64 `json:"values"`
}

// Canonical returns a copy of e with its components sorted by Type, after
// checking it the way Kafka's controller checks an AlterClientQuotas
// entity: not empty, only user, client-id and ip, no type twice, no empty
// name (use the default instead), ip not combined with user or client-id,
// and an ip name that is an IP address. The error wraps ErrInvalidRequest
// and its text is Kafka's message.
//
// Kafka also accepts a host name for ip and resolves it; this package does
// no DNS, so only literal IPv4 and IPv6 addresses are accepted.
func (e Entity) Canonical() (Entity, error) {
	if len(e) == 0 {
		return nil, invalidRequest("Invalid empty client quota entity")
	}
	var hasUser, hasClientID, hasIP bool
	for _, c := range e {
		var seen *bool
		switch c.Type {
		case EntityUser:
			seen = &hasUser
		case EntityClientID:
			seen = &hasClientID
		case EntityIP:
			seen = &hasIP
		}
		if seen != nil && *seen {
			return nil, invalidRequest("Invalid client quota entity, duplicate entity entry " + c.Type)
		}
		if seen == nil {
			return nil, invalidRequest("Unhandled client quota entity type: " + c.Type)
		}
		*seen = true
		if c.Name != nil && *c.Name == "" {
			return nil, invalidRequest("Empty " + c.Type + " not supported")
		}
	}
	if hasIP {
		if hasUser || hasClientID {
			// Kafka's message, missing space included.
			return nil, invalidRequest("Invalid quota entity combination, IP entity should" +
				"not be combined with User or ClientId")
		}
		if ip := e[0].Name; ip != nil {
			if _, err := netip.ParseAddr(*ip); err != nil {
				return nil, invalidRequest(*ip + " is not a valid IP or resolvable host.")
			}
		}
	}
	out := slices.Clone(e)
	slices.SortFunc(out, func(a, b Component) int { return strings.Compare(a.Type, b.Type) })
	return out, nil
}

// String returns the entity as "type=name" pairs joined by commas, user
// first, then client-id, then ip, whatever the order of the components;
// a default is <default>, e.g. "user=alice,client-id=<default>". A name
// that could be mistaken for syntax (it contains , = < > " or \, or is
// not printable) is quoted as a Go string, so two different entities
// never have the same String and it can serve as a key.
func (e Entity) String() string {
	var b strings.Builder
	for _, c := range slices.SortedFunc(slices.Values(e), func(a, b Component) int {
		ra, rb := typeRank(a.Type), typeRank(b.Type)
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Type, b.Type)
	}) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quoteIfNeeded(c.Type))
		b.WriteByte('=')
		if c.Name == nil {
			b.WriteString("<default>")
		} else {
			b.WriteString(quoteIfNeeded(*c.Name))
		}
	}
	return b.String()
}

// typeRank orders entity types as Kafka writes them (/users/u/clients/c).
func typeRank(t string) int {
	switch t {
	case EntityUser:
		return 0
	case EntityClientID:
		return 1
	case EntityIP:
		return 2
	}
	return 3
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, `,=<>"\`) || !strconv.CanBackquote(s) {
		return strconv.Quote(s)
	}
	return s
}

// lookup returns the component of type t, if e has one.
func (e Entity) lookup(t string) (c Component, ok bool) {
	for _, c := range e {
		if c.Type == t {
			return c, true
		}
	}
	return Component{}, false
}
