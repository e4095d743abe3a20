package broker

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/security/sasl"
	"github.com/silkworm/silkworm/internal/tools/storagetool"
)

// TestFormatAddScramUsersAuthenticate: `storage format --add-scram`, as
// Kafka's kafka-storage.sh format, creates SCRAM users that authenticate
// at the broker's first start (kafka-python's SASL fixtures and Docker
// images set users up this way). Both of Kafka's forms: a password, and a
// salt with a salted password. A restart after a password change does not
// bring the formatted one back.
func TestFormatAddScramUsersAuthenticate(t *testing.T) {
	const cid = "MkU3OEVBNTcwNTJENDM2Qg"
	tb := &testBroker{t: t, dir: t.TempDir(), extra: []string{
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
		"silkworm.cluster.id=" + cid,
	}}
	cfgPath := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(cfgPath, []byte("node.id=1\nlog.dirs="+tb.dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// bob's salted password for salt "salt" and 4096 iterations, as a
	// client would compute it.
	var out, errOut bytes.Buffer
	err := storagetool.Run([]string{"format", "-t", cid, "-c", cfgPath, "-N",
		"--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret]",
		"--add-scram", `SCRAM-SHA-512=[name="bob",iterations=4096,salt="c2FsdA==",saltedpassword="` + bobSalted(t) + `"]`,
	}, &out, &errOut)
	if err != nil {
		t.Fatalf("format: %v %s", err, errOut.String())
	}
	tb.start()
	t.Cleanup(tb.stop)
	ctx := testCtx(t)
	for _, c := range []struct {
		who  string
		mech scram.Auth
		sha  int
	}{{"alice", scram.Auth{User: "alice", Pass: "alice-secret"}, 256}, {"bob", scram.Auth{User: "bob", Pass: "bob-secret"}, 512}} {
		m := c.mech.AsSha256Mechanism()
		if c.sha == 512 {
			m = c.mech.AsSha512Mechanism()
		}
		if err := connectErr(ctx, saslClient(t, tb, m)); err != nil {
			t.Errorf("%s authenticates after format --add-scram: %v", c.who, err)
		}
	}
	if _, err := os.Stat(filepath.Join(tb.dir, metadata.BootstrapScramFile)); !os.IsNotExist(err) {
		t.Errorf("the bootstrap credentials file is still there after the first start: %v", err)
	}

	// A password changed after the first start survives a restart.
	res, err := tb.adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "new-secret"}})
	if err != nil || res.Error() != nil {
		t.Fatalf("change alice's password: %v %v", err, res.Error())
	}
	tb.stop()
	tb.start()
	if err := connectErr(ctx, saslClient(t, tb, scram.Auth{User: "alice", Pass: "new-secret"}.AsSha256Mechanism())); err != nil {
		t.Errorf("alice's changed password after a restart: %v", err)
	}
	if err := connectErr(ctx, saslClient(t, tb, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism())); err == nil || !strings.Contains(err.Error(), "SASL") {
		t.Errorf("alice's formatted password still works after it was changed: %v", err)
	}
}

// bobSalted is bob's SCRAM-SHA-512 salted password for salt "salt" and
// 4096 iterations, base64, as --add-scram's saltedpassword takes it.
func bobSalted(t *testing.T) string {
	t.Helper()
	salted, err := sasl.SaltedPassword(security.ScramSHA512, "bob-secret", []byte("salt"), 4096)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(salted)
}
