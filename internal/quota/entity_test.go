package quota

import (
	"errors"
	"testing"
)

func name(s string) *string { return &s }

// user, client and ip build components; "" means the default (<default>).
func user(n string) Component   { return comp(EntityUser, n) }
func client(n string) Component { return comp(EntityClientID, n) }
func ip(n string) Component     { return comp(EntityIP, n) }

func comp(t, n string) Component {
	if n == "" {
		return Component{Type: t}
	}
	return Component{Type: t, Name: name(n)}
}

func TestCanonicalSortsAndLeavesInputAlone(t *testing.T) {
	in := Entity{user("alice"), client("app")}
	got, err := in.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Type != EntityClientID || got[1].Type != EntityUser {
		t.Fatalf("Canonical = %v, want client-id before user", got)
	}
	if in[0].Type != EntityUser {
		t.Fatalf("Canonical modified its receiver: %v", in)
	}
	for _, e := range []Entity{{user("")}, {client("")}, {client(""), user("")}, {ip("")}, {ip("10.0.0.1")}, {ip("::1")}} {
		if _, err := e.Canonical(); err != nil {
			t.Errorf("%v: unexpected error %v", e, err)
		}
	}
}

func TestCanonicalErrorsAreKafkas(t *testing.T) {
	for _, tc := range []struct {
		e   Entity
		msg string
	}{
		{nil, "Invalid empty client quota entity"},
		{Entity{}, "Invalid empty client quota entity"},
		{Entity{user("a"), user("b")}, "Invalid client quota entity, duplicate entity entry user"},
		{Entity{client("a"), user("b"), client("")}, "Invalid client quota entity, duplicate entity entry client-id"},
		{Entity{comp("group", "g")}, "Unhandled client quota entity type: group"},
		{Entity{{Type: EntityUser, Name: name("")}}, "Empty user not supported"},
		{Entity{{Type: EntityClientID, Name: name("")}}, "Empty client-id not supported"},
		{Entity{ip("1.2.3.4"), user("a")}, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"},
		{Entity{client(""), ip("")}, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"},
		{Entity{ip("not-an-ip")}, "not-an-ip is not a valid IP or resolvable host."},
	} {
		_, err := tc.e.Canonical()
		if err == nil || err.Error() != tc.msg {
			t.Errorf("%v: err = %v, want %q", tc.e, err, tc.msg)
		}
		if !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%v: %v does not wrap ErrInvalidRequest", tc.e, err)
		}
	}
}

func TestEntityString(t *testing.T) {
	for _, tc := range []struct {
		e    Entity
		want string
	}{
		{Entity{client(""), user("alice")}, "user=alice,client-id=<default>"},
		{Entity{user("alice"), client("")}, "user=alice,client-id=<default>"},
		{Entity{user("")}, "user=<default>"},
		{Entity{client("app-1")}, "client-id=app-1"},
		{Entity{ip("10.0.0.1")}, "ip=10.0.0.1"},
		{Entity{user("a,client-id=b")}, `user="a,client-id=b"`},
		{Entity{user("<default>")}, `user="<default>"`},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	// A name that looks like syntax never collides with another entity.
	a := Entity{user("a,client-id=b")}.String()
	b := Entity{user("a"), client("b")}.String()
	if a == b {
		t.Fatalf("different entities share String %q", a)
	}
}
