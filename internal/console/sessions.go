package console

// Login sessions. With a SASL listener each logged-in user has a session:
// a random cookie naming a Kafka client authenticated as that user. Without
// authentication every request shares one anonymous session.

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

const (
	cookieName = "silkworm_console"
	csrfHeader = "X-Console-CSRF"
)

// session is one logged-in user (or the anonymous user of an open
// console) and the Kafka client acting as them. Safe for concurrent use.
type session struct {
	id       string // cookie value; "" for the anonymous session
	csrf     string // the header token state-changing requests carry
	user     string
	password string // kept to open per-request consumers as the user
	cl       *kgo.Client
	adm      *kadm.Client
	last     atomic.Int64 // unix nanos of the last request
}

func (s *session) checkCSRF(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.csrf)) == 1
}

// sessions holds the logged-in users. Safe for concurrent use.
type sessions struct {
	srv  *Server
	idle time.Duration
	anon *session // the shared session of a console without login

	mu   sync.Mutex
	byID map[string]*session
}

func newSessions(srv *Server) *sessions {
	ss := &sessions{srv: srv, idle: srv.cfg.SessionIdle, byID: map[string]*session{}}
	if !srv.cfg.authRequired() {
		cl, _ := kgo.NewClient(srv.clientOpts("", "")...) // errors only on bad options
		ss.anon = &session{csrf: randomToken(), cl: cl, adm: kadm.NewClient(cl)}
	}
	return ss
}

// fromRequest is the request's session: the anonymous one on an open
// console, else the one its cookie names, if not expired.
func (ss *sessions) fromRequest(r *http.Request) (*session, error) {
	if ss.anon != nil {
		return ss.anon, nil
	}
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil, errors.New("login required")
	}
	ss.mu.Lock()
	sess := ss.byID[c.Value]
	ss.mu.Unlock()
	if sess == nil {
		return nil, errors.New("login required (session expired)")
	}
	sess.last.Store(time.Now().UnixNano())
	return sess, nil
}

// login checks user and password by connecting to the broker as the user
// and returns the new session.
func (ss *sessions) login(ctx context.Context, user, password string) (*session, error) {
	cl, err := ss.srv.connect(ctx, user, password)
	if err != nil {
		return nil, err
	}
	sess := &session{id: randomToken(), csrf: randomToken(), user: user, password: password, cl: cl, adm: kadm.NewClient(cl)}
	sess.last.Store(time.Now().UnixNano())
	ss.mu.Lock()
	ss.byID[sess.id] = sess
	ss.mu.Unlock()
	return sess, nil
}

func (ss *sessions) logout(id string) {
	ss.mu.Lock()
	sess := ss.byID[id]
	delete(ss.byID, id)
	ss.mu.Unlock()
	if sess != nil {
		sess.cl.Close()
	}
}

// expireLoop ends sessions idle for longer than ss.idle, until stop closes.
func (ss *sessions) expireLoop(stop <-chan struct{}) {
	t := time.NewTicker(min(ss.idle/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			ss.expire(now)
		}
	}
}

// expire ends the sessions unused for longer than ss.idle at now.
func (ss *sessions) expire(now time.Time) {
	var idle []*session
	ss.mu.Lock()
	for id, sess := range ss.byID {
		if now.Sub(time.Unix(0, sess.last.Load())) > ss.idle {
			idle = append(idle, sess)
			delete(ss.byID, id)
		}
	}
	ss.mu.Unlock()
	for _, sess := range idle {
		sess.cl.Close()
	}
}

func (ss *sessions) closeAll() {
	ss.mu.Lock()
	all := ss.byID
	ss.byID = map[string]*session{}
	ss.mu.Unlock()
	for _, sess := range all {
		sess.cl.Close()
	}
	if ss.anon != nil {
		ss.anon.cl.Close()
	}
}

// clientOpts are the kgo options of a client acting as user (ignored
// without SASL).
func (s *Server) clientOpts(user, password string) []kgo.Opt {
	return clientOpts(s.cfg.Bootstrap, s.cfg.ClientTLS, s.cfg.SASLMechanism, user, password)
}

func clientOpts(bootstrap string, tlsCfg *tls.Config, mechanism, user, password string) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(bootstrap),
		kgo.ClientID("silkworm-console"),
		kgo.RequestRetries(2),
		kgo.RetryTimeout(10 * time.Second),
	}
	if tlsCfg != nil {
		opts = append(opts, kgo.DialTLSConfig(tlsCfg.Clone()))
	}
	if m := saslMechanism(mechanism, user, password); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}

func saslMechanism(mechanism, user, password string) sasl.Mechanism {
	switch mechanism {
	case "PLAIN":
		return plain.Auth{User: user, Pass: password}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: password}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: password}.AsSha512Mechanism()
	}
	return nil
}

// connect opens a client as user and checks that the broker accepts the
// password (a Metadata request without topics needs no ACL).
func (s *Server) connect(ctx context.Context, user, password string) (*kgo.Client, error) {
	return connectAs(ctx, s.cfg.Bootstrap, s.cfg.ClientTLS, s.cfg.SASLMechanism, user, password)
}

func connectAs(ctx context.Context, bootstrap string, tlsCfg *tls.Config, mechanism, user, password string) (*kgo.Client, error) {
	if user == "" {
		return nil, &httpError{http.StatusUnauthorized, "login failed: no user name"}
	}
	cl, err := kgo.NewClient(clientOpts(bootstrap, tlsCfg, mechanism, user, password)...)
	if err != nil {
		return nil, fmt.Errorf("console client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		return nil, &httpError{http.StatusUnauthorized, fmt.Sprintf("login failed for %s: %v", user, err)}
	}
	return cl, nil
}

func (s *Server) serveSession(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{"auth": s.cfg.authRequired(), "mechanism": s.cfg.SASLMechanism}
	if sess, err := s.sessions.fromRequest(r); err == nil {
		out["user"] = sess.user
		out["csrf"] = sess.csrf
		out["loggedIn"] = true
	} else {
		out["loggedIn"] = false
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) serveLogin(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.authRequired() {
		writeError(w, badRequest("this console has no login: its broker listener has no SASL"))
		return
	}
	// A form on another site cannot send JSON without a CORS preflight,
	// which the console does not answer: no logging a browser in from
	// elsewhere.
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, badRequest("login wants Content-Type: application/json"))
		return
	}
	var in struct{ User, Password string }
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, err)
		return
	}
	sess, err := s.sessions.login(r.Context(), in.User, in.Password)
	if err != nil {
		s.log.Info("web console: login failed", "user", in.User, "remote", r.RemoteAddr)
		writeError(w, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: sess.id, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.scheme == "https",
	})
	s.log.Info("web console: login", "user", in.User, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, map[string]any{"user": sess.user, "csrf": sess.csrf, "loggedIn": true, "auth": true})
}

func (s *Server) serveLogout(w http.ResponseWriter, r *http.Request) {
	sess, err := s.sessions.fromRequest(r)
	if err != nil || sess.id == "" {
		writeJSON(w, http.StatusOK, map[string]any{"loggedIn": false})
		return
	}
	if !sess.checkCSRF(r.Header.Get(csrfHeader)) {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "missing or wrong " + csrfHeader + " header"})
		return
	}
	s.sessions.logout(sess.id)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.scheme == "https"})
	writeJSON(w, http.StatusOK, map[string]any{"loggedIn": false})
}

// PasswordChecker checks user names and passwords the way the console's
// login does, by opening a SASL connection to the broker as the user; a
// success is remembered for a minute so that a Prometheus scrape does not
// cost a SASL handshake each time. Safe for concurrent use.
type PasswordChecker struct {
	bootstrap string
	tls       *tls.Config
	mechanism string

	mu sync.Mutex
	ok map[[32]byte]time.Time // hash of user and password → until when it is known good
}

// NewPasswordChecker checks passwords against the broker listener at
// bootstrap, dialled with tlsCfg (nil: plaintext) and authenticated with
// mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512).
func NewPasswordChecker(bootstrap string, tlsCfg *tls.Config, mechanism string) *PasswordChecker {
	return &PasswordChecker{bootstrap: bootstrap, tls: tlsCfg, mechanism: mechanism, ok: map[[32]byte]time.Time{}}
}

// Check returns nil when the broker accepts user's password.
func (p *PasswordChecker) Check(ctx context.Context, user, password string) error {
	key := sha256.Sum256([]byte(user + "\x00" + password))
	now := time.Now()
	p.mu.Lock()
	until, ok := p.ok[key]
	p.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	cl, err := connectAs(ctx, p.bootstrap, p.tls, p.mechanism, user, password)
	if err != nil {
		return err
	}
	cl.Close()
	p.mu.Lock()
	for k, t := range p.ok {
		if now.After(t) {
			delete(p.ok, k)
		}
	}
	p.ok[key] = now.Add(time.Minute)
	p.mu.Unlock()
	return nil
}
