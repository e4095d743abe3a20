package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// BootstrapScramFile holds the SCRAM credentials `storage format
// --add-scram` puts into a new cluster, as Kafka writes them into its
// bootstrap checkpoint: the broker applies them at its first start
// (ApplyBootstrapScram) and renames the file, so a password changed later
// is not reset by a restart.
const BootstrapScramFile = "bootstrap-scram.json"

// WriteBootstrapScram stores changes in dir for the first start.
func WriteBootstrapScram(dir string, changes []ScramChange) error {
	data, err := json.Marshal(changes)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, BootstrapScramFile), data, 0o600)
}

// ApplyBootstrapScram applies the credentials of dir's BootstrapScramFile,
// if there is one, through s, then renames the file (".applied"), and
// returns those it added. A user that already has a credential for the
// mechanism keeps it: on a cluster every formatted node brings the same
// file, and the first to start wins.
func ApplyBootstrapScram(s Store, dir string) ([]ScramChange, error) {
	path := filepath.Join(dir, BootstrapScramFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var all []ScramChange
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	im := s.Image()
	var changes []ScramChange
	for _, c := range all {
		have := false
		for _, cred := range im.Scram[c.User] {
			have = have || cred.Mechanism == c.Mechanism
		}
		if !have {
			changes = append(changes, c)
		}
	}
	errs, err := s.AlterScramCredentials(changes)
	if err != nil {
		return nil, fmt.Errorf("apply %s: %w", path, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("apply %s: %w", path, err)
	}
	return changes, os.Rename(path, path+".applied")
}
