package broker

import (
	"slices"
	"unicode/utf16"
)

// Kafka answers some lists in the iteration order of a java.util.HashMap
// (client quota entities and values). Clients and their tests see that
// order, so the handlers reproduce it with these helpers.

// javaStringHash is Java's String.hashCode: s[0]*31^(n-1) + ... over UTF-16
// code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaHashMapCapacity is the table size of a HashMap after n puts of
// distinct keys: made with new HashMap<>(initial), or with the default
// constructor when initial < 0. The table doubles when a put takes the
// size past three quarters of it.
func javaHashMapCapacity(initial, n int) int {
	capacity := 16
	if initial >= 0 {
		capacity = 1
		for capacity < initial {
			capacity <<= 1
		}
	}
	for size := 1; size <= n; size++ {
		if size > capacity*3/4 {
			capacity <<= 1
		}
	}
	return capacity
}

// javaHashMapOrder sorts items, given in insertion order, as a HashMap of
// the given table size iterates them: by bucket (the spread hash masked to
// the table), ties in insertion order.
func javaHashMapOrder[T any](items []T, hash func(T) int32, capacity int) {
	bucket := func(t T) int {
		h := uint32(hash(t))
		return int((h ^ h>>16) & uint32(capacity-1))
	}
	slices.SortStableFunc(items, func(a, b T) int { return bucket(a) - bucket(b) })
}

// javaNullableHash is Objects.hashCode of a nullable string.
func javaNullableHash(s *string) int32 {
	if s == nil {
		return 0
	}
	return javaStringHash(*s)
}

// quotaEntityHash is ClientQuotaEntity.hashCode: that of its type to name
// map, the sum over its entries of key hash XOR value hash.
func quotaEntityHash(types []string, names []*string) int32 {
	var h int32
	for i := range types {
		h += javaStringHash(types[i]) ^ javaNullableHash(names[i])
	}
	return h
}
