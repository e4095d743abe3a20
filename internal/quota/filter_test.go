package quota

import (
	"errors"
	"slices"
	"testing"
)

func TestFilter(t *testing.T) {
	entries := []Entry{
		{Entity: Entity{user("alice")}},                // 0
		{Entity: Entity{user("")}},                     // 1
		{Entity: Entity{client("app"), user("alice")}}, // 2
		{Entity: Entity{client(""), user("alice")}},    // 3
		{Entity: Entity{client(""), user("")}},         // 4
		{Entity: Entity{client("app")}},                // 5
		{Entity: Entity{client("")}},                   // 6
		{Entity: Entity{ip("10.0.0.1")}},               // 7
		{Entity: Entity{ip("")}},                       // 8
	}
	exact := func(typ, n string) FilterComponent {
		return FilterComponent{Type: typ, MatchType: MatchExact, Match: name(n)}
	}
	def := func(typ string) FilterComponent { return FilterComponent{Type: typ, MatchType: MatchDefault} }
	anyOf := func(typ string) FilterComponent { return FilterComponent{Type: typ, MatchType: MatchAny} }
	for _, tc := range []struct {
		desc   string
		comps  []FilterComponent
		strict bool
		want   []int
	}{
		{"no components matches all", nil, false, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"no components strict matches none", nil, true, nil},
		{"exact user", []FilterComponent{exact(EntityUser, "alice")}, false, []int{0, 2, 3}},
		{"exact user strict", []FilterComponent{exact(EntityUser, "alice")}, true, []int{0}},
		{"default user", []FilterComponent{def(EntityUser)}, false, []int{1, 4}},
		{"default user strict", []FilterComponent{def(EntityUser)}, true, []int{1}},
		{"any user", []FilterComponent{anyOf(EntityUser)}, false, []int{0, 1, 2, 3, 4}},
		{"any user strict", []FilterComponent{anyOf(EntityUser)}, true, []int{0, 1}},
		{"exact user any client", []FilterComponent{exact(EntityUser, "alice"), anyOf(EntityClientID)}, false, []int{2, 3}},
		{"exact user default client", []FilterComponent{exact(EntityUser, "alice"), def(EntityClientID)}, true, []int{3}},
		{"any client strict", []FilterComponent{anyOf(EntityClientID)}, true, []int{5, 6}},
		{"exact client", []FilterComponent{exact(EntityClientID, "app")}, false, []int{2, 5}},
		{"exact name never matches a default", []FilterComponent{exact(EntityUser, "<default>")}, false, nil},
		{"any ip", []FilterComponent{anyOf(EntityIP)}, false, []int{7, 8}},
		{"default ip", []FilterComponent{def(EntityIP)}, true, []int{8}},
		{"exact ip", []FilterComponent{exact(EntityIP, "10.0.0.1")}, false, []int{7}},
	} {
		got, err := Filter(entries, tc.comps, tc.strict)
		if err != nil {
			t.Errorf("%s: %v", tc.desc, err)
			continue
		}
		var idx []int
		for _, g := range got {
			idx = append(idx, slices.IndexFunc(entries, func(e Entry) bool { return e.Entity.String() == g.Entity.String() }))
		}
		if !slices.Equal(idx, tc.want) {
			t.Errorf("%s: matched %v, want %v", tc.desc, idx, tc.want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	for _, tc := range []struct {
		comps []FilterComponent
		code  error
		msg   string
	}{
		{[]FilterComponent{{Type: "", MatchType: MatchAny}}, ErrInvalidRequest, "Invalid empty entity type."},
		{[]FilterComponent{{Type: EntityUser, MatchType: MatchAny}, {Type: EntityUser, MatchType: MatchDefault}}, ErrInvalidRequest,
			"Entity type user cannot appear more than once in the filter."},
		{[]FilterComponent{{Type: "topic", MatchType: MatchAny}}, ErrUnsupportedEntityType, "Unsupported entity type topic"},
		{[]FilterComponent{{Type: EntityUser, MatchType: MatchExact}}, ErrInvalidRequest,
			"Request specified MATCH_TYPE_EXACT, but set match string to null."},
		{[]FilterComponent{{Type: EntityUser, MatchType: MatchDefault, Match: name("a")}}, ErrInvalidRequest,
			"Request specified MATCH_TYPE_DEFAULT, but also specified a match string."},
		{[]FilterComponent{{Type: EntityUser, MatchType: MatchAny, Match: name("a")}}, ErrInvalidRequest,
			"Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."},
		{[]FilterComponent{{Type: EntityUser, MatchType: 3}}, ErrInvalidRequest, "Unknown match type 3"},
		{[]FilterComponent{{Type: EntityIP, MatchType: MatchAny}, {Type: EntityClientID, MatchType: MatchDefault}}, ErrInvalidRequest,
			"Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component."},
	} {
		_, err := Filter(nil, tc.comps, false)
		if err == nil || err.Error() != tc.msg || !errors.Is(err, tc.code) {
			t.Errorf("%+v: err = %v, want %q wrapping %v", tc.comps, err, tc.msg, tc.code)
		}
	}
}
