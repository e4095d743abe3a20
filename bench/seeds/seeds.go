// Package seeds ships the published figures of the seed studies (the
// hand-run Kafka benchmarks `silkworm bench` reproduces), one YAML file per
// study, embedded in the binary. internal/bench loads them with LoadSeeds
// and puts each figure beside this run's in the report.
package seeds

import "embed"

// FS holds the *.yaml seed files at its root.
//
//go:embed *.yaml
var FS embed.FS
