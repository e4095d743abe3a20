package javafmt

import (
	"math"
	"testing"
)

func TestDouble(t *testing.T) {
	for v, want := range map[float64]string{
		1024: "1024.0", 12.5: "12.5", 0.001: "0.001", 0.0005: "5.0E-4", 1e7: "1.0E7", 1.5e7: "1.5E7",
		9999999: "9999999.0", 1.2345e-10: "1.2345E-10", 0: "0.0", -3: "-3.0", math.Inf(1): "Infinity",
		1712345678.901: "1.712345678901E9",
	} {
		if got := Double(v); got != want {
			t.Errorf("Double(%v) = %q, want %q", v, got, want)
		}
	}
}
