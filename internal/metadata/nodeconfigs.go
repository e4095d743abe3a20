package metadata

import "strconv"

// Dynamic broker configs come in two levels, as Kafka's ConfigRecords for
// BROKER resources: Image.BrokerConfigs is the cluster-wide default
// (resource name ""), Image.NodeConfigs holds each broker's own overrides
// (resource name "<node id>"), which apply to that broker only and win
// over the default. Readers must not modify the maps: a change replaces
// the outer map and the changed node's map.

const (
	recSetNodeConfigs recordType = "set_node_configs"
	opSetNodeConfigs             = "set_node_configs"
)

// NodeConfigsOf is node's own dynamic broker config overrides in im.
func (im *Image) NodeConfigsOf(node int32) map[string]string {
	return im.NodeConfigs[strconv.Itoa(int(node))]
}

// SetNodeConfigs replaces broker node's own dynamic config overrides (none
// removes them) and persists them.
func (s *Local) SetNodeConfigs(node int32, configs map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	im := s.image.clone()
	im.NodeConfigs = withGroupConfigs(im.NodeConfigs, strconv.Itoa(int(node)), configs)
	return s.publishLocked(im)
}

// SetNodeConfigs replaces broker node's own dynamic config overrides
// through the active controller.
func (q *Quorum) SetNodeConfigs(node int32, configs map[string]string) error {
	_, err := call[any](q, &request{Op: opSetNodeConfigs, NodeID: node, Configs: configs})
	return err
}
