package metadata

import "maps"

// The finalized feature levels (KIP-584) are kept in the image as Kafka
// keeps FeatureLevelRecords in its metadata log: Image.Features. Which
// levels are valid is the broker's business (it knows what its binary
// supports); the store only persists the map it is given.

// SetFeatures replaces the finalized feature levels with levels (every
// feature, metadata.version included; a level-0 feature is left out) and
// persists them. The caller validates the levels.
func (s *Local) SetFeatures(levels map[string]int16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx := newTxn(s.image)
	tx.im.Features = finalizedOnly(levels)
	return s.publishLocked(tx.im)
}

// SetFeatures replaces the finalized feature levels through the active
// controller; once acknowledged every reachable node has applied them.
func (q *Quorum) SetFeatures(levels map[string]int16) error {
	_, err := call[struct{}](q, &request{Op: opSetFeatures, Features: finalizedOnly(levels)})
	return err
}

// finalizedOnly copies levels without the features at level 0, which
// Kafka removes from the finalized set.
func finalizedOnly(levels map[string]int16) map[string]int16 {
	out := maps.Clone(levels)
	maps.DeleteFunc(out, func(_ string, v int16) bool { return v <= 0 })
	return out
}
