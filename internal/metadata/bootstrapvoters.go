package metadata

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// BootstrapVotersFile holds the voter set `storage format
// --initial-controllers` gives a new dynamic quorum (KIP-853), which Kafka
// writes into its bootstrap snapshot, as a controller.quorum.voters value
// ("1@host:9093,2@host:9094"). Silkworm's voter set is static: a node
// configured with controller.quorum.bootstrap.servers and no
// controller.quorum.voters takes it from this file at every start.
const BootstrapVotersFile = "bootstrap-voters"

// WriteBootstrapVoters stores voters in dir.
func WriteBootstrapVoters(dir, voters string) error {
	return writeFileAtomic(filepath.Join(dir, BootstrapVotersFile), []byte(voters+"\n"), 0o644)
}

// ReadBootstrapVoters returns the voters of dir's BootstrapVotersFile, and
// whether there is one.
func ReadBootstrapVoters(dir string) (string, bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, BootstrapVotersFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(string(data)), true, nil
}
