package broker

// DescribeCluster: v0-2
//
// Returns the cluster id, the controller and the live (unfenced) brokers;
// from v2 (KIP-1073) a request with IncludeFencedBrokers also gets the
// fenced ones, flagged IsFenced. From
// v1 the request names the endpoint type it wants: this listener serves
// brokers (1); asking it for controllers (2) gets
// UNSUPPORTED_ENDPOINT_TYPE, as Kafka. ClusterAuthorizedOperations is
// Kafka's "not requested" value (INT32_MIN) unless asked for; then, with
// no authorizer, every operation the CLUSTER resource supports.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.DescribeCluster, 0, 2, handleDescribeCluster) }

// ACL operation codes of the operations the CLUSTER resource supports
// (Kafka's AclOperation: CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9,
// DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12).
var clusterOperations = []int32{5, 7, 8, 9, 10, 11, 12}

const (
	endpointTypeBroker     = 1
	endpointTypeController = 2
)

func handleDescribeCluster(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = endpointTypeBroker
	if r.hdr.APIVersion >= 1 && req.EndpointType != endpointTypeBroker {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		msg := "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"
		if req.EndpointType != endpointTypeController {
			msg = "The request was sent to an endpoint of type BROKER, but an unknown endpoint type was wanted"
		}
		resp.ErrorMessage = &msg
		r.respond(resp)
		return
	}
	im := b.meta.Image()
	resp.ClusterID = im.ClusterID
	resp.ControllerID = im.ControllerID
	for i := range im.Brokers {
		br := onListener(&im.Brokers[i], r.c.ls.name)
		if br == nil || br.Fenced && !(r.hdr.APIVersion >= 2 && req.IncludeFencedBrokers) {
			continue // Kafka lists the live (unfenced) brokers unless asked
		}
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack = br.NodeID, br.Host, br.Port, br.Rack
		rb.IsFenced = br.Fenced
		resp.Brokers = append(resp.Brokers, rb)
	}
	resp.ClusterAuthorizedOperations = b.authorizedOperations(r, req.IncludeClusterAuthorizedOperations,
		kmsg.ACLResourceTypeCluster, clusterResourceName)
	r.respond(resp)
}
