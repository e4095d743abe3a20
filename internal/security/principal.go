package security

import (
	"fmt"
	"strings"
)

// Principal is Kafka's KafkaPrincipal: a type ("User" for every built-in
// authentication) and a name. The zero value is not a valid principal.
type Principal struct {
	Type string
	Name string
}

// UserType is the principal type of every built-in authentication.
const UserType = "User"

// Anonymous is the principal of a PLAINTEXT connection, and of an SSL
// connection whose client sent no certificate (Kafka's ANONYMOUS).
var Anonymous = Principal{Type: UserType, Name: "ANONYMOUS"}

// User returns the principal User:name.
func User(name string) Principal { return Principal{Type: UserType, Name: name} }

// String is Kafka's form "Type:Name", as ACLs and super.users name principals.
func (p Principal) String() string { return p.Type + ":" + p.Name }

// ParsePrincipal parses "Type:Name". Only the first ':' separates, so a
// name may contain ':' (as an X.500 name may); both parts must be non-empty.
func ParsePrincipal(s string) (Principal, error) {
	typ, name, ok := strings.Cut(s, ":")
	if !ok || typ == "" || name == "" {
		return Principal{}, fmt.Errorf("invalid principal %q: expected Type:Name, e.g. User:alice", s)
	}
	return Principal{Type: typ, Name: name}, nil
}
