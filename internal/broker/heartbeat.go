package broker

// Heartbeat: v0-4
//
// Keeps a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(kmsg.Heartbeat, 0, 4, handleHeartbeat) }

func handleHeartbeat(b *Broker, r *request) {
	r.respond(b.groups.Heartbeat(r.kreq.(*kmsg.HeartbeatRequest)))
}
