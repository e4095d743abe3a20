package console

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

//go:embed assets
var assets embed.FS

// Config is what the broker tells the console. Bootstrap, SecurityProtocol
// and SASLMechanism describe the broker listener the console's Kafka
// clients connect to; its authentication decides whether the console asks
// for a login.
type Config struct {
	// Listener is silkworm.console.listener: host:port, http://host:port
	// or https://host:port. Port 0 picks a free port (see Server.Addr).
	Listener string
	// ServerTLS serves an https:// listener (built from the broker's
	// ssl.keystore.* settings); required for https, unused otherwise.
	ServerTLS *tls.Config

	// Bootstrap is host:port of the broker listener the console's clients
	// connect to.
	Bootstrap string
	// ClientTLS, when set, is used to dial Bootstrap (an SSL or SASL_SSL
	// listener).
	ClientTLS *tls.Config
	// SASLMechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 when the
	// Bootstrap listener authenticates with SASL; empty otherwise. With a
	// mechanism the console requires a login, and each user's requests
	// are made by a client authenticated as that user.
	SASLMechanism string

	// Gatherer is the broker's Prometheus registry, read for the live
	// produce and fetch rates. May be nil (no charts).
	Gatherer prometheus.Gatherer
	// BenchDir is silkworm.console.bench.dir, where the bench page finds
	// `silkworm bench` runs.
	BenchDir string
	// Logger receives the console's log lines; nil logs nothing.
	Logger *slog.Logger

	// SessionIdle is how long a login session lives unused (default 30m).
	SessionIdle time.Duration
	// SampleInterval is how often the live rates are sampled (default 5s).
	SampleInterval time.Duration
}

// authRequired reports whether console users must log in.
func (c *Config) authRequired() bool { return c.SASLMechanism != "" }

// endpoint is an API route registered by handle.
type endpoint struct {
	pattern string
	fn      func(s *Server, w http.ResponseWriter, r *http.Request)
}

var (
	endpointsMu sync.Mutex
	endpoints   []endpoint
)

// handle registers an API endpoint; pattern is a Go 1.22 ServeMux pattern
// such as "GET /api/groups/{group}". Call it from init() in the file that
// implements the endpoint. fn runs on the HTTP server's goroutine for the
// request, after the session check (and the CSRF check for methods other
// than GET and HEAD); s.admin(r) and s.client(r) act as the request's user.
func handle(pattern string, fn func(s *Server, w http.ResponseWriter, r *http.Request)) {
	endpointsMu.Lock()
	defer endpointsMu.Unlock()
	endpoints = append(endpoints, endpoint{pattern, fn})
}

// Server is a running web console. Create it with New, then Start; Close
// stops it. Safe for concurrent use.
type Server struct {
	cfg    Config
	log    *slog.Logger
	scheme string // http or https
	addr   string // host:port from Config.Listener
	mux    *http.ServeMux
	index  *template.Template
	pages  []string // assets/pages/*.js and *.css, in name order

	sessions *sessions
	rates    *rateSampler

	srv  *http.Server
	ln   net.Listener
	stop chan struct{}
	wg   sync.WaitGroup
}

// New checks cfg and builds the console; it does not listen yet. It
// refuses a console without authentication on a non-loopback address.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = 30 * time.Minute
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = 5 * time.Second
	}
	scheme, addr, err := ParseListener(cfg.Listener)
	if err != nil {
		return nil, fmt.Errorf("silkworm.console.listener: %w", err)
	}
	if scheme == "https" && cfg.ServerTLS == nil {
		return nil, fmt.Errorf("silkworm.console.listener %s is https but no TLS keystore is configured (set ssl.keystore.location and ssl.keystore.password)", cfg.Listener)
	}
	switch cfg.SASLMechanism {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return nil, fmt.Errorf("console: SASL mechanism %s cannot check a password; the console needs PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", cfg.SASLMechanism)
	}
	if !cfg.authRequired() && !IsLoopback(addr) {
		return nil, fmt.Errorf("refusing to start the web console on %s without authentication: anyone reaching it could delete topics. "+
			"Either bind silkworm.console.listener to a loopback address (127.0.0.1:<port>), or give the broker a SASL listener "+
			"(listeners=SASL_PLAINTEXT://... or SASL_SSL://..., sasl.enabled.mechanisms=SCRAM-SHA-512 or PLAIN) for the console's users to log in with", addr)
	}
	if cfg.Bootstrap == "" {
		return nil, errors.New("console: no broker listener to connect to")
	}
	s := &Server{
		cfg:    cfg,
		log:    cfg.Logger,
		scheme: scheme,
		addr:   addr,
		stop:   make(chan struct{}),
	}
	s.sessions = newSessions(s)
	s.rates = newRateSampler(cfg.Gatherer)
	if err := s.buildRoutes(); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseListener splits a silkworm.*.listener value (host:port,
// http://host:port or https://host:port) into scheme and host:port.
func ParseListener(v string) (scheme, addr string, err error) {
	v = strings.TrimSpace(v)
	scheme = "http"
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil {
			return "", "", fmt.Errorf("%q: %w", v, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return "", "", fmt.Errorf("%q: scheme must be http or https", v)
		}
		if u.Path != "" && u.Path != "/" {
			return "", "", fmt.Errorf("%q: no path allowed", v)
		}
		scheme, v = u.Scheme, u.Host
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		return "", "", fmt.Errorf("%q is not host:port: %w", v, err)
	}
	return scheme, v, nil
}

// IsLoopback reports whether host:port only accepts connections from this
// machine: a loopback IP or "localhost". An empty host (all interfaces)
// is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHost reports whether an HTTP Host header names this machine.
func loopbackHost(host string) bool {
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), "80")
	}
	return IsLoopback(host)
}

// buildRoutes registers the static assets, the session endpoints and every
// endpoint registered with handle.
func (s *Server) buildRoutes() error {
	s.mux = http.NewServeMux()
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return err
	}
	for _, glob := range []string{"pages/*.css", "pages/*.js"} {
		names, err := fs.Glob(sub, glob)
		if err != nil {
			return err
		}
		sort.Strings(names)
		s.pages = append(s.pages, names...)
	}
	raw, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		return err
	}
	s.index, err = template.New("index").Parse(string(raw))
	if err != nil {
		return fmt.Errorf("console index.html: %w", err)
	}
	s.mux.HandleFunc("GET /{$}", s.serveIndex)
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(sub)))
	s.mux.HandleFunc("GET /api/session", s.serveSession)
	s.mux.HandleFunc("POST /api/login", s.serveLogin)
	s.mux.HandleFunc("POST /api/logout", s.serveLogout)
	endpointsMu.Lock()
	eps := append([]endpoint(nil), endpoints...)
	endpointsMu.Unlock()
	for _, ep := range eps {
		s.mux.Handle(ep.pattern, s.api(ep.fn))
	}
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such API endpoint: " + r.Method + " " + r.URL.Path})
	})
	return nil
}

// Handler is the console's HTTP handler (what Start serves), for tests.
func (s *Server) Handler() http.Handler { return s.secureHeaders(s.mux) }

// Start listens on the configured address and serves in the background
// until Close.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("web console: listen %s: %w", s.addr, err)
	}
	if s.scheme == "https" {
		ln = tls.NewListener(ln, s.cfg.ServerTLS)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.wg.Add(3)
	go func() {
		defer s.wg.Done()
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("web console stopped", "err", err)
		}
	}()
	go func() { defer s.wg.Done(); s.rates.run(s.stop, s.cfg.SampleInterval) }()
	go func() { defer s.wg.Done(); s.sessions.expireLoop(s.stop) }()
	s.log.Info("web console listening", "url", s.URL(), "login", s.cfg.authRequired())
	return nil
}

// Addr is the address the console listens on, once started.
func (s *Server) Addr() string {
	if s.ln == nil {
		return s.addr
	}
	return s.ln.Addr().String()
}

// URL is the console's base URL, such as http://127.0.0.1:8080.
func (s *Server) URL() string { return s.scheme + "://" + s.Addr() }

// Close stops serving, closes every session's Kafka clients and waits
// for the background goroutines.
func (s *Server) Close() error {
	var err error
	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = s.srv.Shutdown(ctx)
		cancel()
		if err != nil {
			s.srv.Close()
		}
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
	s.sessions.closeAll()
	return err
}

// secureHeaders adds the headers every console response carries.
func (s *Server) secureHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		if !s.cfg.authRequired() && !loopbackHost(r.Host) {
			// An open console is only for this machine: a page that
			// rebinds its own name to 127.0.0.1 (DNS rebinding) must not
			// reach it.
			http.Error(w, "this console has no login and only answers requests for a loopback host (127.0.0.1, ::1 or localhost)", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request) {
	var scripts, styles []string
	for _, p := range s.pages {
		if strings.HasSuffix(p, ".css") {
			styles = append(styles, "assets/"+p)
		} else {
			scripts = append(scripts, "assets/"+p)
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.index.Execute(w, map[string]any{"Scripts": scripts, "Styles": styles}); err != nil {
		s.log.Debug("web console: write index", "err", err)
	}
}

// ctxKey keys the request's session in its context.
type ctxKey struct{}

// api wraps an endpoint: it finds the request's session (401 without one
// when login is required), checks the CSRF header on state-changing
// methods, and puts the session in the request's context.
func (s *Server) api(fn func(s *Server, w http.ResponseWriter, r *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.sessions.fromRequest(r)
		if err != nil {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": err.Error()})
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !sess.checkCSRF(r.Header.Get(csrfHeader)) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "missing or wrong " + csrfHeader + " header"})
			return
		}
		fn(s, w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, sess)))
	})
}

// sessionOf is the request's session, put there by api.
func sessionOf(r *http.Request) (*session, error) {
	sess, _ := r.Context().Value(ctxKey{}).(*session)
	if sess == nil {
		return nil, errors.New("no console session for this request")
	}
	return sess, nil
}

// admin returns a kadm client acting as the request's logged-in user (ACLs
// apply). It is shared by the user's requests; do not close it.
func (s *Server) admin(r *http.Request) (*kadm.Client, error) {
	sess, err := sessionOf(r)
	if err != nil {
		return nil, err
	}
	return sess.adm, nil
}

// client returns the kgo client under that admin (for raw kmsg requests,
// produce, consume). It is shared by the user's requests: do not close it
// and do not add consumed partitions to it (newConsumer makes a client of
// one's own).
func (s *Server) client(r *http.Request) (*kgo.Client, error) {
	sess, err := sessionOf(r)
	if err != nil {
		return nil, err
	}
	return sess.cl, nil
}

// newConsumer returns a new kgo client acting as the request's user, with
// opts added (such as kgo.ConsumePartitions); the caller closes it.
func (s *Server) newConsumer(r *http.Request, opts ...kgo.Opt) (*kgo.Client, error) {
	sess, err := sessionOf(r)
	if err != nil {
		return nil, err
	}
	return kgo.NewClient(append(s.clientOpts(sess.user, sess.password), opts...)...)
}

// writeJSON answers v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	enc.Encode(v)
}

// httpError is an error with the HTTP status it should be answered with.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// badRequest is an error writeError answers with 400.
func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// notFound is an error writeError answers with 404.
func notFound(format string, args ...any) error {
	return &httpError{http.StatusNotFound, fmt.Sprintf(format, args...)}
}

// writeError answers {"error": "<message>"} with a status fitting the
// error: authorization failures 403, authentication failures 401, unknown
// topic or group 404, invalid input 400 (including badRequest), a broker
// that cannot be reached 502, others 500.
func writeError(w http.ResponseWriter, err error) {
	writeJSON(w, errorStatus(err), map[string]string{"error": err.Error()})
}

func errorStatus(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.status
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed, kerr.ClusterAuthorizationFailed,
			kerr.TransactionalIDAuthorizationFailed, kerr.DelegationTokenAuthorizationFailed:
			return http.StatusForbidden
		case kerr.SaslAuthenticationFailed:
			return http.StatusUnauthorized
		case kerr.UnknownTopicOrPartition, kerr.UnknownTopicID, kerr.GroupIDNotFound, kerr.ResourceNotFound:
			return http.StatusNotFound
		case kerr.TopicAlreadyExists:
			return http.StatusConflict
		case kerr.NotController, kerr.LeaderNotAvailable, kerr.NotLeaderForPartition, kerr.RequestTimedOut,
			kerr.CoordinatorNotAvailable, kerr.CoordinatorLoadInProgress, kerr.NotCoordinator, kerr.BrokerNotAvailable:
			return http.StatusBadGateway
		}
		if strings.HasPrefix(ke.Message, "INVALID_") || ke == kerr.PolicyViolation || ke == kerr.UnsupportedVersion ||
			ke == kerr.InvalidRequest || ke == kerr.NonEmptyGroup || ke == kerr.UnknownMemberID {
			return http.StatusBadRequest
		}
		return http.StatusInternalServerError
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

// randomToken is 32 random bytes in hex.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// decodeJSON reads a JSON request body (at most 4 MiB) into v.
func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 4<<20))
	if err := dec.Decode(v); err != nil {
		return badRequest("request body: %v", err)
	}
	return nil
}

// kerrOf is the error for a Kafka error code, nil for 0.
func kerrOf(code int16) error { return kerr.ErrorForCode(code) }

// withMessage adds a Kafka response's error message to its error code's
// error, keeping the code's error for errors.Is and writeError.
func withMessage(err error, msg string) error {
	if err == nil || msg == "" || strings.Contains(err.Error(), msg) {
		return err
	}
	return &messageError{err, msg}
}

type messageError struct {
	err error
	msg string
}

func (e *messageError) Error() string { return e.err.Error() + ": " + e.msg }
func (e *messageError) Unwrap() error { return e.err }

// userOf is the request's logged-in user, "" on an open console.
func userOf(r *http.Request) string {
	if sess, err := sessionOf(r); err == nil {
		return sess.user
	}
	return ""
}
