package quota

import (
	"math"
	"strconv"
)

// Kafka's quota config keys: the Values keys of an Entry and the keys of
// AlterClientQuotas and DescribeClientQuotas.
const (
	// ProducerByteRate is the produce bandwidth, bytes per second, of a
	// user and/or client-id entity. Integral.
	ProducerByteRate = "producer_byte_rate"
	// ConsumerByteRate is the fetch bandwidth, bytes per second, of a user
	// and/or client-id entity. Integral.
	ConsumerByteRate = "consumer_byte_rate"
	// RequestPercentage is the share of one request handler thread's time
	// a user and/or client-id entity may use, in percent (100 = one whole
	// thread; it may exceed 100).
	RequestPercentage = "request_percentage"
	// ControllerMutationRate is the number of partitions a user and/or
	// client-id entity may create or delete per second (KIP-599).
	ControllerMutationRate = "controller_mutation_rate"
	// ConnectionCreationRate is the number of connections per second an
	// ip entity may open (KIP-612). Integral. The Manager does not enforce
	// it; the listener does.
	ConnectionCreationRate = "connection_creation_rate"
)

// Kind is what a client quota limits; each Kind has its own config key,
// its own quotas and its own sensors in a Manager.
type Kind int

// The kinds of client quota the Manager enforces.
const (
	// ProduceBytes is produce request bytes (producer_byte_rate).
	ProduceBytes Kind = iota
	// FetchBytes is fetch response bytes (consumer_byte_rate).
	FetchBytes
	// RequestTime is request handler time (request_percentage).
	RequestTime
	// ControllerMutations is partitions created or deleted
	// (controller_mutation_rate).
	ControllerMutations

	numKinds = iota
)

// ConfigKey returns the quota config key that sets quotas of kind k.
func (k Kind) ConfigKey() string {
	switch k {
	case ProduceBytes:
		return ProducerByteRate
	case FetchBytes:
		return ConsumerByteRate
	case RequestTime:
		return RequestPercentage
	case ControllerMutations:
		return ControllerMutationRate
	}
	return ""
}

// String returns Kafka's name of the quota type (QuotaType).
func (k Kind) String() string {
	switch k {
	case ProduceBytes:
		return "Produce"
	case FetchBytes:
		return "Fetch"
	case RequestTime:
		return "Request"
	case ControllerMutations:
		return "ControllerMutation"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// KindOf returns the Kind a quota config key sets; ok is false for
// connection_creation_rate and unknown keys.
func KindOf(key string) (k Kind, ok bool) {
	switch key {
	case ProducerByteRate:
		return ProduceBytes, true
	case ConsumerByteRate:
		return FetchBytes, true
	case RequestPercentage:
		return RequestTime, true
	case ControllerMutationRate:
		return ControllerMutations, true
	}
	return 0, false
}

// valueType is the Kafka ConfigDef type of a quota key, which bounds its
// values.
type valueType int

const (
	typeDouble valueType = iota
	typeLong
	typeInt
)

var (
	userClientKeys = map[string]valueType{
		ProducerByteRate:       typeLong,
		ConsumerByteRate:       typeLong,
		RequestPercentage:      typeDouble,
		ControllerMutationRate: typeDouble,
	}
	ipKeys = map[string]valueType{
		ConnectionCreationRate: typeInt,
	}
)

// KeysFor returns the quota config keys an entity accepts, sorted: the
// four user/client-id keys, or connection_creation_rate for an ip entity.
// e must be valid (Canonical).
func KeysFor(e Entity) []string {
	if _, ok := e.lookup(EntityIP); ok {
		return []string{ConnectionCreationRate}
	}
	return []string{ConsumerByteRate, ControllerMutationRate, ProducerByteRate, RequestPercentage}
}

// ValidateAlteration checks one operation of an AlterClientQuotas entry
// as Kafka's controller does: setting key to *value on e, or removing key
// when value is nil. The entity is checked as Canonical does; a removal is
// then always valid (Kafka ignores the removal of a key that is not set).
// A set must name a key the entity type accepts, with a value greater
// than 0, integral for the byte rates and the connection rate, and within
// the key's type (LONG, INT). The error wraps ErrInvalidRequest and its
// text is Kafka's message.
//
// Unlike Kafka, NaN and infinite values are refused ("Quota <key> must be
// a finite number"): the metadata log stores quotas as JSON, which cannot
// hold them.
//
// Checking that an AlterClientQuotas request names no entity and no key
// of an entity twice is the handler's job.
func ValidateAlteration(e Entity, key string, value *float64) error {
	e, err := e.Canonical()
	if err != nil {
		return err
	}
	if value == nil {
		return nil
	}
	keys := userClientKeys
	if _, ok := e.lookup(EntityIP); ok {
		keys = ipKeys
	}
	t, ok := keys[key]
	if !ok {
		return invalidRequest("Invalid configuration key " + key)
	}
	v := *value
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return invalidRequest("Quota " + key + " must be a finite number")
	}
	if v <= 0 {
		return invalidRequest("Quota " + key + " must be greater than 0")
	}
	switch t {
	case typeLong:
		if v > math.MaxInt64 {
			return invalidRequest("Proposed value for " + key + " is too large for a LONG.")
		}
	case typeInt:
		if v > math.MaxInt32 {
			return invalidRequest("Proposed value for " + key + " is too large for an INT.")
		}
	default:
		return nil
	}
	if math.Abs(math.Mod(v, 1)) > 1e-6 {
		return invalidRequest(key + " cannot be a fractional value.")
	}
	return nil
}
