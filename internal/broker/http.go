package broker

// The broker's HTTP listeners: silkworm.metrics.listener (/metrics, the
// Prometheus registry) and silkworm.console.listener (the web console,
// internal/console). Both are off unless configured. An https:// listener
// uses the broker's ssl.keystore.* settings. When a broker listener
// authenticates with SASL PLAIN or SCRAM, the console asks for a login and
// /metrics asks for HTTP Basic credentials, both checked by connecting to
// that listener as the user.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/silkworm/silkworm/internal/console"
	"github.com/silkworm/silkworm/internal/security"
)

// httpListeners are the running HTTP servers; Start sets them, Close
// stops them.
type httpListeners struct {
	mu        sync.Mutex
	metrics   *http.Server
	metricsLn net.Listener
	console   *console.Server
	stopTLS   []func() // stop the keystore file watches
}

// consoleTarget is the broker listener the console's and /metrics' Kafka
// clients connect to.
type consoleTarget struct {
	name      string // listener name
	bootstrap string // host:port to dial
	tls       *tls.Config
	mechanism string // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or "" (no SASL)
}

// passwordMechanisms are the SASL mechanisms the console can log in with,
// most preferred first.
var passwordMechanisms = []string{"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"}

// consoleTarget picks the listener for the console: a SASL listener with
// a password mechanism if there is one (so that users log in and their
// ACLs apply), else a PLAINTEXT listener, else an SSL one.
func (b *Broker) consoleTarget() (consoleTarget, error) {
	var best *boundListener
	rank := func(bl *boundListener) int {
		switch {
		case bl.sec.usesSASL() && passwordMechanism(bl.sec) != "":
			return 3
		case bl.sec.protocol == protoPlaintext:
			return 2
		case bl.sec.protocol == protoSSL:
			return 1
		}
		return 0
	}
	for _, bl := range b.srv.lns {
		if r := rank(bl); r > 0 && (best == nil || r > rank(best)) {
			best = bl
		}
	}
	if best == nil {
		return consoleTarget{}, errors.New("no broker listener the console can use: it needs PLAINTEXT, SSL, or SASL with PLAIN or SCRAM")
	}
	t := consoleTarget{name: best.sec.name, bootstrap: dialable(best.ln.Addr())}
	if best.sec.usesSASL() {
		t.mechanism = passwordMechanism(best.sec)
	}
	if best.sec.usesTLS() {
		get := func(key string) (string, bool) { return b.cfg.ListenerValue(best.sec.name, key) }
		c, err := security.NewClientTLS(get)
		if err != nil {
			return consoleTarget{}, fmt.Errorf("console client TLS for listener %s: %w", best.sec.name, err)
		}
		// The console dials its own broker on a loopback address: verify
		// the certificate chain, and the name the broker advertises.
		for _, al := range b.cfg.BrokerAdvertisedListeners() {
			if al.Name == best.sec.name && c.ServerName == "" && !c.InsecureSkipVerify {
				c.ServerName = al.Host
			}
		}
		t.tls = c
	}
	return t, nil
}

func passwordMechanism(ls *listenerSec) string {
	for _, m := range passwordMechanisms {
		if slices.Contains(ls.names, m) {
			return m
		}
	}
	return ""
}

// dialable turns a bound address into one to dial: an unspecified host
// (0.0.0.0, ::) becomes loopback.
func dialable(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := ta.IP
	if ip == nil || ip.IsUnspecified() {
		if ip != nil && ip.To4() == nil {
			ip = net.IPv6loopback
		} else {
			ip = net.IPv4(127, 0, 0, 1)
		}
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(ta.Port))
}

// httpTLS builds the TLS config of an https:// HTTP listener from the
// broker's ssl.keystore.* settings. Browsers and Prometheus carry no
// client certificate, so ssl.client.auth does not apply.
func (b *Broker) httpTLS(what string) (*tls.Config, error) {
	get := func(key string) (string, bool) {
		if key == "ssl.client.auth" {
			return "none", true
		}
		return b.cfg.Value(key)
	}
	st, err := security.NewServerTLS(get, security.WithLogger(b.log.With("listener", what)))
	if err != nil {
		return nil, fmt.Errorf("%s is https: %w", what, err)
	}
	b.http.stopTLS = append(b.http.stopTLS, st.WatchFiles(tlsFileCheck))
	return st.Config(), nil
}

// startHTTP starts the configured HTTP listeners; Start calls it once the
// Kafka listeners are bound. An error (a bad listener value, a missing
// keystore, an unauthenticated console on a non-loopback address) fails
// Start.
func (b *Broker) startHTTP() error {
	if b.cfg.MetricsListener == "" && b.cfg.ConsoleListener == "" {
		return nil
	}
	b.http.mu.Lock()
	defer b.http.mu.Unlock()
	target, err := b.consoleTarget()
	if err != nil {
		return err
	}
	if v := b.cfg.MetricsListener; v != "" {
		if err := b.startMetricsLocked(v, target); err != nil {
			return err
		}
	}
	if v := b.cfg.ConsoleListener; v != "" {
		cc := console.Config{
			Listener:      v,
			Bootstrap:     target.bootstrap,
			ClientTLS:     target.tls,
			SASLMechanism: target.mechanism,
			Gatherer:      b.Metrics(),
			BenchDir:      b.cfg.ConsoleBenchDir,
			Logger:        b.log.With("component", "console"),
		}
		if scheme, _, err := console.ParseListener(v); err == nil && scheme == "https" {
			if cc.ServerTLS, err = b.httpTLS("silkworm.console.listener"); err != nil {
				return err
			}
		}
		srv, err := console.New(cc)
		if err != nil {
			return err
		}
		if err := srv.Start(); err != nil {
			return err
		}
		b.http.console = srv
	}
	return nil
}

func (b *Broker) startMetricsLocked(v string, target consoleTarget) error {
	scheme, addr, err := console.ParseListener(v)
	if err != nil {
		return fmt.Errorf("silkworm.metrics.listener: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("silkworm.metrics.listener: listen %s: %w", addr, err)
	}
	if scheme == "https" {
		c, err := b.httpTLS("silkworm.metrics.listener")
		if err != nil {
			ln.Close()
			return err
		}
		ln = tls.NewListener(ln, c)
	}
	var check *console.PasswordChecker
	if target.mechanism != "" {
		check = console.NewPasswordChecker(target.bootstrap, target.tls, target.mechanism)
	}
	log := b.log.With("component", "metrics")
	srv := &http.Server{
		Handler:           console.MetricsHandler(b.Metrics(), check, log),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	b.http.metrics, b.http.metricsLn = srv, ln
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	log.Info("metrics listening", "url", scheme+"://"+ln.Addr().String()+"/metrics", "basic_auth", check != nil)
	return nil
}

// closeHTTP stops the HTTP listeners; Close calls it first.
func (b *Broker) closeHTTP() {
	b.http.mu.Lock()
	defer b.http.mu.Unlock()
	if b.http.console != nil {
		b.http.console.Close()
		b.http.console = nil
	}
	if b.http.metrics != nil {
		b.http.metrics.Close()
		b.http.metrics, b.http.metricsLn = nil, nil
	}
	for _, stop := range b.http.stopTLS {
		stop()
	}
	b.http.stopTLS = nil
}

// MetricsAddr is the address /metrics is served on, or "" when
// silkworm.metrics.listener is off.
func (b *Broker) MetricsAddr() string {
	b.http.mu.Lock()
	defer b.http.mu.Unlock()
	if b.http.metricsLn == nil {
		return ""
	}
	return b.http.metricsLn.Addr().String()
}

// ConsoleURL is the web console's base URL (http://host:port), or "" when
// silkworm.console.listener is off.
func (b *Broker) ConsoleURL() string {
	b.http.mu.Lock()
	defer b.http.mu.Unlock()
	if b.http.console == nil {
		return ""
	}
	return b.http.console.URL()
}
