// Package security holds what Silkworm's authentication shares between the
// broker, the metadata store and the tools: Kafka principals, SCRAM
// credentials as they are stored, and TLS configuration built from Kafka's
// ssl.* keys. The SASL mechanisms live in security/sasl, the authorizer in
// security/acl. Nothing here knows about connections or requests.
package security
