package broker

// DescribeGroups: v0-5
//
// Unknown groups are reported as Dead with no error, as Kafka does.
// Without an authorizer every group operation is reported as allowed.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(kmsg.DescribeGroups, 0, 5, handleDescribeGroups) }

func handleDescribeGroups(b *Broker, r *request) {
	r.respond(b.groups.DescribeGroups(r.kreq.(*kmsg.DescribeGroupsRequest)))
}
