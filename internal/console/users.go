package console

// SCRAM users: the users page's API (assets/pages/users.js).
//
//	GET    /api/users                     DescribeUserScramCredentials of every user
//	POST   /api/users                     AlterUserScramCredentials upsert: {user, password, mechanism, iterations}
//	DELETE /api/users/{user}?mechanism=   AlterUserScramCredentials deletion of one mechanism's credential
//
// The salted password is computed here (kadm salts it with a random salt),
// so the password itself never reaches the broker, as with
// kafka-configs --alter --add-config 'SCRAM-SHA-256=[password=...]'.

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	handle("GET /api/users", serveUsers)
	handle("POST /api/users", serveUpsertUser)
	handle("DELETE /api/users/{user}", serveDeleteUserCredential)
}

// Kafka's bounds on SCRAM iterations (ScramMechanism.minIterations and
// the maximum AlterUserScramCredentials accepts).
const (
	minSCRAMIterations = 4096
	maxSCRAMIterations = 16384
)

type scramCredential struct {
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations"`
}

type scramUser struct {
	User        string            `json:"user"`
	Credentials []scramCredential `json:"credentials"`
	Error       string            `json:"error,omitempty"`
}

func parseMechanism(m string) (kadm.ScramMechanism, error) {
	switch strings.ToUpper(strings.TrimSpace(m)) {
	case "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, badRequest("mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512, not %q", m)
}

func serveUsers(s *Server, w http.ResponseWriter, r *http.Request) {
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	described, err := adm.DescribeUserSCRAMs(r.Context())
	if err != nil {
		writeError(w, fmt.Errorf("describe SCRAM users: %w", err))
		return
	}
	out := []scramUser{}
	for _, d := range described.Sorted() {
		// Describing every user never names one that has no credential;
		// RESOURCE_NOT_FOUND would only answer a named user.
		if errors.Is(d.Err, kerr.ResourceNotFound) {
			continue
		}
		u := scramUser{User: d.User, Credentials: []scramCredential{}}
		if d.Err != nil {
			u.Error = withMessage(d.Err, d.ErrMessage).Error()
		}
		for _, c := range d.CredInfos {
			u.Credentials = append(u.Credentials, scramCredential{Mechanism: c.Mechanism.String(), Iterations: c.Iterations})
		}
		out = append(out, u)
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": out})
}

func serveUpsertUser(s *Server, w http.ResponseWriter, r *http.Request) {
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var in struct {
		User       string `json:"user"`
		Password   string `json:"password"`
		Mechanism  string `json:"mechanism"`
		Iterations int32  `json:"iterations"`
	}
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, err)
		return
	}
	mech, err := parseMechanism(in.Mechanism)
	if err != nil {
		writeError(w, err)
		return
	}
	if in.User = strings.TrimSpace(in.User); in.User == "" {
		writeError(w, badRequest("no user name"))
		return
	}
	if in.Password == "" {
		writeError(w, badRequest("no password"))
		return
	}
	if in.Iterations == 0 {
		in.Iterations = minSCRAMIterations
	}
	if in.Iterations < minSCRAMIterations || in.Iterations > maxSCRAMIterations {
		writeError(w, badRequest("iterations must be from %d to %d, not %d", minSCRAMIterations, maxSCRAMIterations, in.Iterations))
		return
	}
	altered, err := adm.AlterUserSCRAMs(r.Context(), nil, []kadm.UpsertSCRAM{{
		User: in.User, Mechanism: mech, Iterations: in.Iterations, Password: in.Password,
	}})
	if err == nil {
		if a, ok := altered[in.User]; ok {
			err = withMessage(a.Err, a.ErrMessage)
		} else {
			err = errors.New("the broker did not answer for the user")
		}
	}
	if err != nil {
		writeError(w, fmt.Errorf("set %s credential of %s: %w", mech, in.User, err))
		return
	}
	writeJSON(w, http.StatusOK, scramUser{User: in.User, Credentials: []scramCredential{{mech.String(), in.Iterations}}})
}

func serveDeleteUserCredential(s *Server, w http.ResponseWriter, r *http.Request) {
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	user := r.PathValue("user")
	mech, err := parseMechanism(r.URL.Query().Get("mechanism"))
	if err != nil {
		writeError(w, err)
		return
	}
	altered, err := adm.AlterUserSCRAMs(r.Context(), []kadm.DeleteSCRAM{{User: user, Mechanism: mech}}, nil)
	if err == nil {
		if a, ok := altered[user]; ok {
			err = withMessage(a.Err, a.ErrMessage)
		} else {
			err = errors.New("the broker did not answer for the user")
		}
	}
	if err != nil {
		writeError(w, fmt.Errorf("delete %s credential of %s: %w", mech, user, err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"user": user, "deleted": mech.String()})
}
