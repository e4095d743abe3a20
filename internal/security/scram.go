package security

// SCRAM mechanism names, as Kafka spells them.
const (
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// ScramCredential is what the brokers keep of a SCRAM user (RFC 5802 §3):
// never the password, only the salt, the iteration count and the keys
// derived from the salted password. It is stored in the metadata log so
// that every broker authenticates the same users.
type ScramCredential struct {
	Mechanism  string `json:"mechanism"` // ScramSHA256 or ScramSHA512
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
	Iterations int32  `json:"iterations"`
}
