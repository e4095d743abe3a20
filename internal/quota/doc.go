// Package quota is Kafka's client quotas: the configured quotas per user
// and client id (and their defaults) with Kafka's precedence, and the
// sliding-window rate accounting that turns a client's usage into a
// throttle time. It knows nothing about connections; the broker records
// usage and mutes a throttled connection itself.
package quota
