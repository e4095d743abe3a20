package broker

// UnregisterBroker: v0
//
// Removes a broker's registration as Kafka's controller does
// (ReplicationControlManager.unregisterBroker): ALTER on CLUSTER or
// CLUSTER_AUTHORIZATION_FAILED; an id that is not registered gets
// BROKER_ID_NOT_REGISTERED ("Broker ID N is not currently registered").
// Like Kafka, a running broker is not refused: its leaderships and ISR
// memberships move away as when it is fenced, it leaves the broker list,
// and it registers again at its next heartbeat (metadata.Quorum's
// heartbeat loop). Any broker answers; the change goes to the active
// controller (NOT_CONTROLLER when none answers in time).
//
// On a single node (no metadata quorum) the only registered broker is
// this one: unregistering it answers success and changes nothing (it
// would register again at once); any other id is BROKER_ID_NOT_REGISTERED.

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
)

func init() { register(kmsg.UnregisterBroker, 0, 0, handleUnregisterBroker) }

// brokerUnregisterer is the metadata quorum's UnregisterBroker.
type brokerUnregisterer interface {
	UnregisterBroker(nodeID int32) error
}

var _ brokerUnregisterer = (*metadata.Quorum)(nil)

func handleUnregisterBroker(b *Broker, r *request) {
	req := r.kreq.(*kmsg.UnregisterBrokerRequest)
	resp := req.ResponseKind().(*kmsg.UnregisterBrokerResponse)
	var err error
	switch u, ok := b.cluster.(brokerUnregisterer); {
	case !b.authorizeCluster(r, kmsg.ACLOperationAlter):
		err = errClusterAuthorization
	case ok:
		err = u.UnregisterBroker(req.BrokerID)
	case req.BrokerID != b.nodeID:
		err = metadata.ErrBrokerNotRegistered
	}
	if err != nil {
		resp.ErrorCode = clusterErrorCode(err)
		msg := err.Error()
		switch {
		case errors.Is(err, metadata.ErrBrokerNotRegistered):
			msg = fmt.Sprintf("Broker ID %d is not currently registered", req.BrokerID)
		case resp.ErrorCode == kerr.ClusterAuthorizationFailed.Code:
			msg = ""
		}
		if msg != "" {
			resp.ErrorMessage = &msg
		}
	}
	r.respond(resp)
}
