package quota

// Entity types of a client quota, as Kafka names them.
const (
	EntityUser     = "user"
	EntityClientID = "client-id"
	EntityIP       = "ip"
)

// Component is one part of a quota entity: a type and a name, or the
// type's default when Name is nil (Kafka's <default>).
type Component struct {
	Type string  `json:"type"`
	Name *string `json:"name,omitempty"`
}

// Entity names what a quota applies to: a user, a client id, both, or an
// ip, each by name or default. Its components are sorted by Type and no
// type repeats; Canonical makes one so.
type Entity []Component

// Entry is the quota values set for one entity, keyed by Kafka's quota
// config names (producer_byte_rate, consumer_byte_rate,
// request_percentage, controller_mutation_rate, connection_creation_rate).
// It is stored in the metadata log.
type Entry struct {
	Entity Entity             `json:"entity"`
	Values map[string]float64 `json:"values"`
}
