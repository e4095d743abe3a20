// Package scenarios ships the scenario files of `silkworm bench`, one YAML
// file per experiment of the seed study, embedded in the binary.
package scenarios

import "embed"

// FS holds the *.yaml scenario files at its root.
//
//go:embed *.yaml
var FS embed.FS
