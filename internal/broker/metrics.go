package broker

// Prometheus metrics named as the Prometheus JMX exporter names Kafka's
// MBeans (kafka_server_brokertopicmetrics_messagesin_total, ...). The
// registry always exists; silkworm.metrics.listener only decides whether
// it is served over HTTP (http.go).

import "github.com/prometheus/client_golang/prometheus"

// brokerMetrics holds the broker's registry and its instruments.
type brokerMetrics struct {
	reg *prometheus.Registry
}

func newBrokerMetrics(b *Broker) *brokerMetrics {
	return &brokerMetrics{reg: prometheus.NewRegistry()}
}

// Metrics is the broker's Prometheus registry: what /metrics serves, and
// what the web console reads its live rates from. Safe for concurrent use.
func (b *Broker) Metrics() *prometheus.Registry { return b.metrics.reg }
