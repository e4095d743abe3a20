// Package omb ships OpenMessaging Benchmark workloads (the common ones
// Kafka vendors publish with) and a Kafka driver file, embedded in the
// binary, so that `silkworm bench --omb-workload NAME` runs them by name.
// Their parameters are OMB's workloads/ files of the same name.
package omb

import "embed"

// Workloads holds the workload files (*.yaml) at its root and the driver
// files under drivers/.
//
//go:embed *.yaml drivers/*.yaml
var Workloads embed.FS
