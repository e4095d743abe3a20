package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// Authorization answers of the admin APIs, for a principal without ACLs:
// Kafka's default messages ("Topic authorization failed.", not franz-go's
// client-side text), none for CreatePartitions (ControllerApis sets only
// the code), and __cluster_metadata refused before authorization.
func TestFidelity3AuthorizationAnswers(t *testing.T) {
	tb := newSASLBroker(t,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS;User:admin")
	ctx := testCtx(t)
	tb.createTopic(ctx, "locked", 1, nil)
	alice := saslClient(t, tb, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())
	send := func(req kmsg.Request) kmsg.Response {
		t.Helper()
		resp, err := alice.Request(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
		}
		return resp
	}
	const taf = "Topic authorization failed."
	check := func(what string, code int16, msg *string, wantCode int16, wantMsg string) {
		t.Helper()
		if code != wantCode || msgOf(msg) != wantMsg {
			t.Errorf("%s: code %d message %q, want %d %q", what, code, msgOf(msg), wantCode, wantMsg)
		}
	}

	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "locked"}}
	r := send(dc).(*kmsg.DescribeConfigsResponse).Resources[0]
	check("DescribeConfigs", r.ErrorCode, r.ErrorMessage, kerr.TopicAuthorizationFailed.Code, taf)

	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "locked"}}
	ar := send(ac).(*kmsg.AlterConfigsResponse).Resources[0]
	check("AlterConfigs", ar.ErrorCode, ar.ErrorMessage, kerr.TopicAuthorizationFailed.Code, taf)

	iac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	iac.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "locked"}}
	ir := send(iac).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	check("IncrementalAlterConfigs", ir.ErrorCode, ir.ErrorMessage, kerr.TopicAuthorizationFailed.Code, taf)

	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "locked", Count: 2}}
	cr := send(cp).(*kmsg.CreatePartitionsResponse).Topics[0]
	check("CreatePartitions", cr.ErrorCode, cr.ErrorMessage, kerr.TopicAuthorizationFailed.Code, "<nil>")

	dt := kmsg.NewPtrDeleteTopicsRequest()
	name := "locked"
	dt.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: &name}}
	dt.TopicNames = []string{name}
	dr := send(dt).(*kmsg.DeleteTopicsResponse).Topics[0]
	check("DeleteTopics", dr.ErrorCode, dr.ErrorMessage, kerr.TopicAuthorizationFailed.Code, taf)

	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: "__cluster_metadata", NumPartitions: 1, ReplicationFactor: 1}}
	tr := send(ct).(*kmsg.CreateTopicsResponse).Topics[0]
	check("CreateTopics __cluster_metadata", tr.ErrorCode, tr.ErrorMessage, kerr.InvalidRequest.Code,
		"Creation of internal topic __cluster_metadata is prohibited.")

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = "g", []string{"g"}
	co := send(fc).(*kmsg.FindCoordinatorResponse).Coordinators[0]
	check("FindCoordinator v4+", co.ErrorCode, co.ErrorMessage, kerr.GroupAuthorizationFailed.Code, "")
	if tb.b.meta.Image().Topics["locked"] == nil || len(tb.b.meta.Image().Topics["locked"].Partitions) != 1 {
		t.Fatal("an unauthorized request changed the topic")
	}
}
