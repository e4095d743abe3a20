package quota

import (
	"strconv"
)

// Match types of a DescribeClientQuotas filter component, as on the wire.
const (
	// MatchExact matches the entity type with the name in Match.
	MatchExact int8 = 0
	// MatchDefault matches the entity type's default (<default>).
	MatchDefault int8 = 1
	// MatchAny matches the entity type with any name or the default
	// (Kafka's MATCH_TYPE_SPECIFIED).
	MatchAny int8 = 2
)

// FilterComponent is one component of a DescribeClientQuotas filter: an
// entity type, how to match it and, for MatchExact, the name.
type FilterComponent struct {
	Type      string
	MatchType int8
	Match     *string
}

// Filter returns the entries DescribeClientQuotas answers for a filter,
// with Kafka's semantics: an entry matches when it has every component
// the filter names, with the exact name (MatchExact), the default
// (MatchDefault) or anything (MatchAny); when strict, the entry must also
// have no component the filter does not name. No components and not
// strict matches every entry; no components and strict matches none.
//
// The filter is checked first as Kafka's broker checks it; the error's
// text is Kafka's message and it wraps ErrUnsupportedEntityType for a type
// other than user, client-id and ip (Kafka answers UNSUPPORTED_VERSION),
// ErrInvalidRequest otherwise.
//
// The result keeps the order of entries and shares their Entity and
// Values; the caller must not modify them.
func Filter(entries []Entry, comps []FilterComponent, strict bool) ([]Entry, error) {
	if err := checkFilter(comps); err != nil {
		return nil, err
	}
	var out []Entry
	for _, e := range entries {
		if filterMatches(e.Entity, comps, strict) {
			out = append(out, e)
		}
	}
	return out, nil
}

func checkFilter(comps []FilterComponent) error {
	var seenUser, seenClient, seenIP bool
	for i, c := range comps {
		if c.Type == "" {
			return invalidRequest("Invalid empty entity type.")
		}
		for _, prev := range comps[:i] {
			if prev.Type == c.Type {
				return invalidRequest("Entity type " + c.Type + " cannot appear more than once in the filter.")
			}
		}
		switch c.Type {
		case EntityUser:
			seenUser = true
		case EntityClientID:
			seenClient = true
		case EntityIP:
			seenIP = true
		default:
			return &kafkaError{code: ErrUnsupportedEntityType, msg: "Unsupported entity type " + c.Type}
		}
		switch c.MatchType {
		case MatchExact:
			if c.Match == nil {
				return invalidRequest("Request specified MATCH_TYPE_EXACT, but set match string to null.")
			}
		case MatchDefault:
			if c.Match != nil {
				return invalidRequest("Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
			}
		case MatchAny:
			if c.Match != nil {
				return invalidRequest("Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
			}
		default:
			return invalidRequest("Unknown match type " + strconv.Itoa(int(c.MatchType)))
		}
	}
	if seenIP && (seenUser || seenClient) {
		return invalidRequest("Invalid entity filter component combination. IP filter component " +
			"should not be used with user or clientId filter component.")
	}
	return nil
}

func filterMatches(e Entity, comps []FilterComponent, strict bool) bool {
	if strict && len(e) != len(comps) {
		return false
	}
	for _, fc := range comps {
		c, ok := e.lookup(fc.Type)
		if !ok {
			return false
		}
		switch fc.MatchType {
		case MatchExact:
			if c.Name == nil || *c.Name != *fc.Match {
				return false
			}
		case MatchDefault:
			if c.Name != nil {
				return false
			}
		}
	}
	return true
}
