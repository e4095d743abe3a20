package sasl

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"

	"github.com/silkworm/silkworm/internal/security"
)

// Kafka's bounds on SCRAM iterations: a credential Kafka creates
// (AlterUserScramCredentials, kafka-configs, kafka-storage) has between
// MinScramIterations and MaxScramIterations; authentication refuses a
// stored credential with fewer than MinScramIterations and does not check
// the maximum.
const (
	MinScramIterations = 4096
	MaxScramIterations = 16384
)

// Errors of credential creation, with the texts Kafka's controller puts in
// AlterUserScramCredentials results (UNSUPPORTED_SASL_MECHANISM for the
// first, UNACCEPTABLE_CREDENTIAL for the others).
var (
	ErrUnknownScramMechanism = errors.New("Unknown SCRAM mechanism")
	ErrTooFewIterations      = errors.New("Too few iterations")
	ErrTooManyIterations     = errors.New("Too many iterations")
)

// scramHash is the hash function of a SCRAM mechanism.
func scramHash(mechanism string) (func() hash.Hash, error) {
	switch mechanism {
	case security.ScramSHA256:
		return sha256.New, nil
	case security.ScramSHA512:
		return sha512.New, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownScramMechanism, mechanism)
}

func checkIterations(iterations int32) error {
	switch {
	case iterations < MinScramIterations:
		return ErrTooFewIterations
	case iterations > MaxScramIterations:
		return ErrTooManyIterations
	}
	return nil
}

// SaltedPassword is RFC 5802's SaltedPassword := Hi(Normalize(password),
// salt, i): PBKDF2 with the mechanism's HMAC. As in Kafka, Normalize is the
// password's UTF-8 bytes (no SASLprep), so clients that do not prepare
// passwords (Kafka's, franz-go's) agree with it for any password. This is
// what an AlterUserScramCredentials client sends; tools and tests use it.
func SaltedPassword(mechanism, password string, salt []byte, iterations int32) ([]byte, error) {
	h, err := scramHash(mechanism)
	if err != nil {
		return nil, err
	}
	if err := checkIterations(iterations); err != nil {
		return nil, err
	}
	if password == "" {
		return nil, errors.New("SCRAM password must not be empty")
	}
	return pbkdf2.Key(h, password, salt, int(iterations), h().Size())
}

// ScramCredentialFromSalted derives the stored credential from what
// AlterUserScramCredentials carries: the salt, the salted password the
// client computed, and the iteration count (Kafka's ScramControlManager:
// StoredKey := H(HMAC(SaltedPassword, "Client Key")), ServerKey :=
// HMAC(SaltedPassword, "Server Key")). Iterations outside Kafka's bounds
// are refused with ErrTooFewIterations or ErrTooManyIterations.
func ScramCredentialFromSalted(mechanism string, salt, saltedPassword []byte, iterations int32) (security.ScramCredential, error) {
	h, err := scramHash(mechanism)
	if err != nil {
		return security.ScramCredential{}, err
	}
	if err := checkIterations(iterations); err != nil {
		return security.ScramCredential{}, err
	}
	if len(saltedPassword) == 0 {
		return security.ScramCredential{}, errors.New("SCRAM salted password must not be empty")
	}
	clientKey := hmacSum(h, saltedPassword, "Client Key")
	storedKey := h()
	storedKey.Write(clientKey)
	return security.ScramCredential{
		Mechanism:  mechanism,
		Salt:       append([]byte(nil), salt...),
		StoredKey:  storedKey.Sum(nil),
		ServerKey:  hmacSum(h, saltedPassword, "Server Key"),
		Iterations: iterations,
	}, nil
}

// NewScramCredential derives a stored credential from a password, for
// tools, tests and configuration: SaltedPassword, then
// ScramCredentialFromSalted.
func NewScramCredential(mechanism, password string, salt []byte, iterations int32) (security.ScramCredential, error) {
	salted, err := SaltedPassword(mechanism, password, salt, iterations)
	if err != nil {
		return security.ScramCredential{}, err
	}
	return ScramCredentialFromSalted(mechanism, salt, salted, iterations)
}

func hmacSum(h func() hash.Hash, key []byte, msg string) []byte {
	mac := hmac.New(h, key)
	mac.Write([]byte(msg))
	return mac.Sum(nil)
}
