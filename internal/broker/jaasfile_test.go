package broker

import (
	"testing"

	kgosasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/silkworm/silkworm/internal/security/sasl"
)

// TestJAASFileUsers: a broker given a JAAS file (Kafka's
// -Djava.security.auth.login.config in KAFKA_OPTS, as Docker images and
// kafka-python's fixtures configure SASL) and no
// listener.name.<l>.<mechanism>.sasl.jaas.config takes its PLAIN users
// from the file: the listener's own <listener>.KafkaServer section when
// there is one, else KafkaServer. SCRAM needs no entry options.
func TestJAASFileUsers(t *testing.T) {
	sections, err := sasl.ParseJAASFile(`
KafkaServer {
  org.apache.kafka.common.security.plain.PlainLoginModule required
    username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";
  org.apache.kafka.common.security.scram.ScramLoginModule required;
};
other.KafkaServer {
  org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";
};`)
	if err != nil {
		t.Fatal(err)
	}
	tb := newTestBrokerWith(t, []Option{WithJAASFile(sections)},
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256")
	ctx := testCtx(t)
	if err := connectErr(ctx, saslClient(t, tb, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())); err != nil {
		t.Errorf("alice from the JAAS file's KafkaServer section: %v", err)
	}
	for who, m := range map[string]kgosasl.Mechanism{
		"wrong password":                       plain.Auth{User: "alice", Pass: "nope"}.AsMechanism(),
		"a user of another listener's section": plain.Auth{User: "bob", Pass: "bob-secret"}.AsMechanism(),
		"an unknown SCRAM user":                scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism(),
	} {
		if err := connectErr(ctx, saslClient(t, tb, m)); err == nil {
			t.Errorf("%s authenticated", who)
		}
	}
}
