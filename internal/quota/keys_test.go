package quota

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestValidateAlteration(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	userEntity := Entity{user("alice")}
	clientEntity := Entity{client("")}
	ipEntity := Entity{ip("10.1.2.3")}
	for _, tc := range []struct {
		e     Entity
		key   string
		value *float64
		msg   string // "" = valid
	}{
		{userEntity, ProducerByteRate, f(1024), ""},
		{userEntity, ConsumerByteRate, f(1e6), ""},
		{clientEntity, RequestPercentage, f(12.5), ""},
		{clientEntity, RequestPercentage, f(250), ""}, // more than one thread is allowed
		{Entity{user(""), client("")}, ControllerMutationRate, f(0.5), ""},
		{ipEntity, ConnectionCreationRate, f(100), ""},
		{Entity{ip("")}, ConnectionCreationRate, f(100), ""},
		// Removal: any key, as long as the entity is valid.
		{userEntity, "whatever", nil, ""},
		{ipEntity, ProducerByteRate, nil, ""},

		{userEntity, "producer_bytes_rate", f(1), "Invalid configuration key producer_bytes_rate"},
		{userEntity, ConnectionCreationRate, f(10), "Invalid configuration key connection_creation_rate"},
		{ipEntity, ProducerByteRate, f(10), "Invalid configuration key producer_byte_rate"},
		{userEntity, ProducerByteRate, f(-1), "Quota producer_byte_rate must be greater than 0"},
		{userEntity, RequestPercentage, f(0), "Quota request_percentage must be greater than 0"},
		{userEntity, ProducerByteRate, f(10.5), "producer_byte_rate cannot be a fractional value."},
		{ipEntity, ConnectionCreationRate, f(1.25), "connection_creation_rate cannot be a fractional value."},
		{userEntity, ConsumerByteRate, f(1e19), "Proposed value for consumer_byte_rate is too large for a LONG."},
		{ipEntity, ConnectionCreationRate, f(math.MaxInt32 + 1), "Proposed value for connection_creation_rate is too large for an INT."},
		{userEntity, RequestPercentage, f(math.NaN()), "Quota request_percentage must be a finite number"},
		{userEntity, ControllerMutationRate, f(math.Inf(1)), "Quota controller_mutation_rate must be a finite number"},
		// The entity is checked first, for removals too.
		{Entity{}, ProducerByteRate, nil, "Invalid empty client quota entity"},
		{Entity{ip("10.0.0.1"), client("x")}, ConnectionCreationRate, f(1), "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"},
	} {
		err := ValidateAlteration(tc.e, tc.key, tc.value)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%v %s: unexpected error %v", tc.e, tc.key, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.msg {
			t.Errorf("%v %s: err = %v, want %q", tc.e, tc.key, err, tc.msg)
		}
		if !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%v %s: %v does not wrap ErrInvalidRequest", tc.e, tc.key, err)
		}
	}
}

func TestKeysAndKinds(t *testing.T) {
	if got := KeysFor(Entity{ip("")}); !slices.Equal(got, []string{ConnectionCreationRate}) {
		t.Errorf("KeysFor(ip) = %v", got)
	}
	if got := KeysFor(Entity{user("u"), client("")}); len(got) != 4 || slices.Contains(got, ConnectionCreationRate) {
		t.Errorf("KeysFor(user, client-id) = %v", got)
	}
	for k := Kind(0); k < numKinds; k++ {
		back, ok := KindOf(k.ConfigKey())
		if !ok || back != k {
			t.Errorf("KindOf(%q) = %v, %v; want %v", k.ConfigKey(), back, ok, k)
		}
		if !slices.Contains(KeysFor(Entity{user("u")}), k.ConfigKey()) {
			t.Errorf("%s not accepted for a user entity", k.ConfigKey())
		}
	}
	if _, ok := KindOf(ConnectionCreationRate); ok {
		t.Error("connection_creation_rate has a Manager kind")
	}
}
