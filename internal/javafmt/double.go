// Package javafmt prints values as Java prints them, where Kafka's wire
// answers or tools show Java's text: Double (Double.toString) for config
// values, quota values and the tools' JSON numbers, Fixed
// (String.format("%.nf")) for the perf tools' figures.
package javafmt

import (
	"math"
	"strconv"
	"strings"
)

// Double formats v as Java's Double.toString does, which is how Kafka
// prints doubles: DescribeConfigs values of DOUBLE configs
// (ConfigDef.convertToString), kafka-configs.sh's quota values, the iat and
// exp of an unsecured OAUTHBEARER token. That is the shortest digits that
// read back as v, at least one digit after the point (1024.0), and
// computerized scientific notation
// below 1e-3 and from 1e7 up (1.0E7).
func Double(v float64) string {
	if s, ok := special(v); ok {
		return s
	}
	switch {
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

// special spells NaN and the infinities as Java does.
func special(v float64) (string, bool) {
	switch {
	case math.IsNaN(v):
		return "NaN", true
	case math.IsInf(v, 1):
		return "Infinity", true
	case math.IsInf(v, -1):
		return "-Infinity", true
	}
	return "", false
}

// Fixed formats v like Java's String.format("%.<prec>f", v): Java rounds
// the shortest decimal representation of the double half up (Go rounds the
// exact binary value half to even, which differs on ties such as 0.125), and
// spells the special values NaN, Infinity and -Infinity. The perf tools print
// with it: their output is parsed by scripts written against Kafka, so the
// digits must agree.
func Fixed(v float64, prec int) string {
	if s, ok := special(v); ok {
		return s
	}
	neg := math.Signbit(v)
	if neg {
		v = -v
	}
	// Shortest digits d1d2...dn with v = 0.d1d2...dn * 10^exp.
	e := strconv.FormatFloat(v, 'e', -1, 64) // d.ddddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := []byte(strings.Replace(mant, ".", "", 1))
	point := exp + 1 // digits before the decimal point
	if v == 0 {
		digits, point = []byte{'0'}, 1
	}
	// Pad so that there are point+prec digits (point may be <= 0).
	if point < 0 {
		digits = append([]byte(strings.Repeat("0", -point)), digits...)
		point = 0
	}
	keep := point + prec
	for len(digits) < keep+1 {
		digits = append(digits, '0')
	}
	roundUp := digits[keep] >= '5'
	digits = digits[:keep]
	if roundUp {
		i := len(digits) - 1
		for ; i >= 0; i-- {
			if digits[i] == '9' {
				digits[i] = '0'
				continue
			}
			digits[i]++
			break
		}
		if i < 0 {
			digits = append([]byte{'1'}, digits...)
			point++
		}
	}
	intPart := string(digits[:point])
	if intPart == "" {
		intPart = "0"
	}
	s := intPart
	if prec > 0 {
		s += "." + string(digits[point:])
	}
	if neg && strings.Trim(s, "0.") != "" {
		s = "-" + s
	}
	return s
}
