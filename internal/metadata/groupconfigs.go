package metadata

import "maps"

// Group configs (ConfigResource type GROUP, KIP-848/KIP-932) are kept in
// the image as Kafka keeps ConfigRecords for GROUP resources in its
// metadata log: Image.GroupConfigs, group id -> key -> value. Which keys
// and values are valid is the broker's business; the store persists what
// it is given. Readers must not modify the maps: a change replaces the
// outer map and the changed group's map.

const (
	recSetGroupConfigs recordType = "set_group_configs"
	opSetGroupConfigs             = "set_group_configs"
)

// SetGroupConfigs replaces the config overrides of group (none removes
// them) and persists them.
func (s *Local) SetGroupConfigs(group string, configs map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	im := s.image.clone()
	im.GroupConfigs = withGroupConfigs(im.GroupConfigs, group, configs)
	return s.publishLocked(im)
}

// SetGroupConfigs replaces the config overrides of group through the
// active controller.
func (q *Quorum) SetGroupConfigs(group string, configs map[string]string) error {
	_, err := call[any](q, &request{Op: opSetGroupConfigs, Name: group, Configs: configs})
	return err
}

// withGroupConfigs is all with group's overrides replaced by configs,
// as a new map.
func withGroupConfigs(all map[string]map[string]string, group string, configs map[string]string) map[string]map[string]string {
	out := maps.Clone(all)
	if out == nil {
		out = map[string]map[string]string{}
	}
	if len(configs) == 0 {
		delete(out, group)
	} else {
		out[group] = maps.Clone(configs)
	}
	return out
}
