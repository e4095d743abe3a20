package storagetool

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/security/sasl"
)

// parseAddScram reads one --add-scram argument as Kafka's ScramParser does:
// MECHANISM=[name=alice,password=alice-secret] or, with a salted password
// computed elsewhere, [name=alice,iterations=8192,salt=<base64>,
// saltedpassword=<base64>]. Values may be in double quotes. Iterations
// default to 4096; a password gets a random salt.
func parseAddScram(arg string) (metadata.ScramChange, error) {
	var c metadata.ScramChange
	mech, rest, ok := strings.Cut(arg, "=")
	if !ok {
		return c, fmt.Errorf("Failed to find equals sign in SCRAM argument '%s'", arg)
	}
	mech = strings.TrimSpace(mech)
	if mech != security.ScramSHA256 && mech != security.ScramSHA512 {
		return c, fmt.Errorf("The add-scram mechanism %s is not supported.", mech)
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "[") || !strings.HasSuffix(rest, "]") {
		return c, fmt.Errorf("Expected configuration string to start with [ and end with ] in SCRAM argument '%s'", arg)
	}
	fields := map[string]string{}
	for _, kv := range strings.Split(rest[1:len(rest)-1], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return c, fmt.Errorf("Failed to find equals sign in SCRAM configuration '%s'", kv)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		switch k {
		case "name", "password", "iterations", "salt", "saltedpassword":
		default:
			return c, fmt.Errorf("Unknown SCRAM configuration key '%s'", k)
		}
		fields[k] = v
	}
	if fields["name"] == "" {
		return c, fmt.Errorf("You must supply 'name' to add-scram")
	}
	iterations := int32(sasl.MinScramIterations)
	if s, ok := fields["iterations"]; ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return c, fmt.Errorf("Invalid iterations '%s' in SCRAM argument '%s'", s, arg)
		}
		iterations = int32(n)
	}
	var cred security.ScramCredential
	var err error
	_, hasPassword := fields["password"]
	_, hasSalted := fields["saltedpassword"]
	switch {
	case hasPassword && hasSalted:
		return c, fmt.Errorf("You must supply one of 'password' or 'saltedpassword' to add-scram, not both")
	case hasPassword:
		salt := make([]byte, 32)
		if s, ok := fields["salt"]; ok {
			if salt, err = base64.StdEncoding.DecodeString(s); err != nil {
				return c, fmt.Errorf("Invalid salt in SCRAM argument '%s': %v", arg, err)
			}
		} else if _, err := rand.Read(salt); err != nil {
			return c, err
		}
		cred, err = sasl.NewScramCredential(mech, fields["password"], salt, iterations)
	case hasSalted:
		salt, err1 := base64.StdEncoding.DecodeString(fields["salt"])
		salted, err2 := base64.StdEncoding.DecodeString(fields["saltedpassword"])
		if fields["salt"] == "" || err1 != nil || err2 != nil {
			return c, fmt.Errorf("'saltedpassword' needs a base64 'salt' in SCRAM argument '%s'", arg)
		}
		cred, err = sasl.ScramCredentialFromSalted(mech, salt, salted, iterations)
	default:
		return c, fmt.Errorf("You must supply one of 'password' or 'saltedpassword' to add-scram")
	}
	if err != nil {
		return c, fmt.Errorf("SCRAM argument '%s': %v", arg, err)
	}
	return metadata.ScramChange{User: fields["name"], Mechanism: mech, Credential: &cred}, nil
}
