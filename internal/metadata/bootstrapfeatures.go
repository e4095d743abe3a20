package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// BootstrapFeaturesFile holds the feature levels `storage format
// --release-version` gives a new cluster (metadata.version and the levels
// its release starts with), as Kafka writes them into its bootstrap
// checkpoint. The broker applies them at its first start, while the
// cluster has no finalized levels yet (ApplyBootstrapFeatures), and
// renames the file. Format writes none for the latest release, which is
// what a cluster without finalized levels runs.
const BootstrapFeaturesFile = "bootstrap-features.json"

// WriteBootstrapFeatures stores levels in dir for the first start.
func WriteBootstrapFeatures(dir string, levels map[string]int16) error {
	data, err := json.Marshal(levels)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, BootstrapFeaturesFile), data, 0o644)
}

// FeatureStore is a metadata store's part that ApplyBootstrapFeatures
// needs (Local and Quorum).
type FeatureStore interface {
	Image() *Image
	SetFeatures(levels map[string]int16) error
}

// ApplyBootstrapFeatures sets the levels of dir's BootstrapFeaturesFile,
// if there is one, through s while the cluster has no finalized levels
// (on a cluster every formatted node brings the same file, and the first
// to start wins), renames the file (".applied") and returns the levels it
// set. fit turns the stored levels into those to set (capped to what this
// binary supports), or refuses them.
func ApplyBootstrapFeatures(s FeatureStore, dir string, fit func(map[string]int16) (map[string]int16, error)) (map[string]int16, error) {
	path := filepath.Join(dir, BootstrapFeaturesFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var levels map[string]int16
	if err := json.Unmarshal(data, &levels); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var set map[string]int16
	if s.Image().Features == nil {
		if set, err = fit(levels); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err := s.SetFeatures(set); err != nil {
			return nil, fmt.Errorf("apply %s: %w", path, err)
		}
	}
	return set, os.Rename(path, path+".applied")
}
