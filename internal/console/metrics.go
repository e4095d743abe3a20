package console

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsHandler serves g in Prometheus' text format at /metrics. With
// check set (the broker has a SASL listener), every scrape must carry
// HTTP Basic credentials of a Kafka user that check accepts (Prometheus:
// basic_auth in the scrape config); without, /metrics is open. Other
// paths answer 404.
func MetricsHandler(g prometheus.Gatherer, check *PasswordChecker, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prom := promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if check != nil {
			user, pass, ok := r.BasicAuth()
			if !ok {
				w.Header().Set("WWW-Authenticate", `Basic realm="silkworm metrics", charset="UTF-8"`)
				http.Error(w, "metrics require HTTP Basic authentication as a Kafka user", http.StatusUnauthorized)
				return
			}
			if err := check.Check(r.Context(), user, pass); err != nil {
				log.Info("metrics: authentication failed", "user", user, "remote", r.RemoteAddr)
				w.Header().Set("WWW-Authenticate", `Basic realm="silkworm metrics", charset="UTF-8"`)
				http.Error(w, "authentication failed", http.StatusUnauthorized)
				return
			}
		}
		prom.ServeHTTP(w, r)
	})
	return mux
}
