package sasl

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/internal/security"
)

// librdkafka before 2.6.1 (Debian 12's kcat) sends, in client-final, its
// own nonce followed by the whole server nonce (which already starts with
// it). Kafka up to 3.9 accepted that; so must we, with the proof checked
// over the message as sent. A nonce that does not end with the server's
// is still refused.
func TestScramAcceptsLibrdkafkaRepeatedNonce(t *testing.T) {
	const user, pass, cnonce = "alice", "alice-secret", "rOprNGfwEbeRWgbNEkqO"
	salt := []byte("some-salt")
	cred, err := NewScramCredential(security.ScramSHA512, pass, salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewScram(security.ScramSHA512, func(u string) (security.ScramCredential, bool) { return cred, u == user })
	if err != nil {
		t.Fatal(err)
	}
	salted, err := SaltedPassword(security.ScramSHA512, pass, salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha512.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	for _, c := range []struct {
		name   string
		nonce  func(server string) string
		accept bool
	}{
		{"client nonce repeated", func(s string) string { return cnonce + s }, true},
		{"server nonce as is", func(s string) string { return s }, true},
		{"foreign prefix", func(s string) string { return "x" + s[:len(s)-1] }, false},
	} {
		s := m.NewSession()
		first := "n,,n=" + user + ",r=" + cnonce
		serverFirst, _, err := s.Step([]byte(first))
		if err != nil {
			t.Fatalf("%s: client-first: %v", c.name, err)
		}
		var serverNonce string
		for _, f := range strings.Split(string(serverFirst), ",") {
			if v, ok := strings.CutPrefix(f, "r="); ok {
				serverNonce = v
			}
		}
		withoutProof := "c=biws,r=" + c.nonce(serverNonce)
		authMessage := "n=" + user + ",r=" + cnonce + "," + string(serverFirst) + "," + withoutProof
		clientKey := mac(salted, "Client Key")
		sig := mac(cred.StoredKey, authMessage)
		proof := make([]byte, len(clientKey))
		for i := range proof {
			proof[i] = clientKey[i] ^ sig[i]
		}
		out, done, err := s.Step([]byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)))
		if c.accept {
			want := "v=" + base64.StdEncoding.EncodeToString(mac(cred.ServerKey, authMessage))
			if err != nil || !done || string(out) != want {
				t.Errorf("%s: out %q done %v err %v, want %q", c.name, out, done, err, want)
			}
		} else if err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
