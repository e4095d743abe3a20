package features

import (
	"fmt"
	"strings"
)

// MetadataVersion feature name and the levels this tool knows by name.
const (
	MetadataVersionFeature = "metadata.version"

	minMetadataVersion    = 7  // 3.3-IV3, MINIMUM_BOOTSTRAP_VERSION
	latestMetadataVersion = 29 // 4.2-IV1, the latest production version
)

// metadataVersions names the metadata.version levels from 3.3-IV3 (7).
var metadataVersions = []string{
	"3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2",
	"3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0",
	"4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1",
}

// MetadataVersionName is Kafka's MetadataVersion.version() for a level,
// or "UNKNOWN n" as kafka-features.sh prints an unknown one.
func MetadataVersionName(level int16) string {
	if level < minMetadataVersion || int(level-minMetadataVersion) >= len(metadataVersions) {
		return fmt.Sprintf("UNKNOWN %d", level)
	}
	return metadataVersions[level-minMetadataVersion]
}

// ParseMetadataVersion is MetadataVersion.fromVersionString: "3.9-IV0",
// or a release "3.9" meaning its last IV.
func ParseMetadataVersion(s string) (int16, bool) {
	var found int16 = -1
	for i, v := range metadataVersions {
		release, _, _ := strings.Cut(v, "-")
		if v == s || release == s {
			found = int16(i + minMetadataVersion)
		}
	}
	return found, found >= 0
}

// productionFeature is one of Kafka's Features.PRODUCTION_FEATURES: the
// level it takes at each metadata.version (defaultValue), and the
// metadata.version each level needs (dependencies).
type productionFeature struct {
	name string
	// levels[i] is level i+1 and the metadata.version from which it is the
	// default.
	defaults []int16
	// needs[i] is the metadata.version level i+1 depends on.
	needs []int16
}

var productionFeatures = []productionFeature{
	{"kraft.version", []int16{21}, []int16{21}},
	{"transaction.version", []int16{24, 24}, []int16{0, 24}},
	{"group.version", []int16{22}, []int16{22}},
	{"eligible.leader.replicas.version", []int16{26}, []int16{23}},
	{"share.version", []int16{28}, []int16{26}},
	{"streams.version", []int16{28}, []int16{26}},
}

// defaultLevel is Features.defaultValue: the highest level whose default
// starts at or below mv.
func (f productionFeature) defaultLevel(mv int16) int16 {
	var level int16
	for i, from := range f.defaults {
		if mv >= from {
			level = int16(i + 1)
		}
	}
	return level
}

func metadataVersionRange() string {
	return strings.Join(metadataVersions, ", ")
}
