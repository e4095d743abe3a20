// Package javafmt prints values as Java prints them, where Kafka's wire
// answers or tools show Java's text (config values, quota values, JSON
// numbers of its tools).
package javafmt

import (
	"math"
	"strconv"
	"strings"
)

// Double formats v as Java's Double.toString does, which is how Kafka
// prints doubles: DescribeConfigs values of DOUBLE configs
// (ConfigDef.convertToString), kafka-configs.sh's quota values, the iat and
// exp of an unsecured OAUTHBEARER token. That is the shortest digits that read back as v, at least
// one digit after the point (1024.0), and computerized scientific notation
// below 1e-3 and from 1e7 up (1.0E7).
func Double(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case v == 0 && math.Signbit(v):
		return "-0.0"
	case v == 0:
		return "0.0"
	}
	if a := math.Abs(v); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(v, 'e', -1, 64), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}
