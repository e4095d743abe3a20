package console

// ACLs: the acls page's API (assets/pages/acls.js).
//
//	GET    /api/acls?principal=&resourceType=&resourceName=  DescribeAcls; principal and resourceName match as case-insensitive substrings
//	POST   /api/acls                                        CreateAcls of one binding
//	DELETE /api/acls                                        DeleteAcls with one filter matching exactly the binding in the body
//
// A broker without an authorizer answers SECURITY_DISABLED and a user
// without ALTER (DESCRIBE) on the cluster CLUSTER_AUTHORIZATION_FAILED; the
// page shows Kafka's error and message.

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	handle("GET /api/acls", serveACLs)
	handle("POST /api/acls", serveCreateACL)
	handle("DELETE /api/acls", serveDeleteACL)
}

// aclBinding is one ACL as the page shows and sends it. The enums are
// Kafka's names (TOPIC, READ, ALLOW, LITERAL); parsing accepts any case
// and "Transactional-Id"-style separators.
type aclBinding struct {
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Permission   string `json:"permission"`
	Operation    string `json:"operation"`
	ResourceType string `json:"resourceType"`
	ResourceName string `json:"resourceName"`
	PatternType  string `json:"patternType"`
}

// kafkaError is the error of a response's error code, with the broker's
// message when it says more; nil for code 0.
func kafkaError(code int16, message *string) error {
	msg := ""
	if message != nil {
		msg = *message
	}
	return withMessage(kerr.ErrorForCode(code), msg)
}

// parsedACL is a binding in kmsg's enums, checked to name one ACL exactly.
type parsedACL struct {
	resourceType kmsg.ACLResourceType
	pattern      kmsg.ACLResourcePatternType
	operation    kmsg.ACLOperation
	permission   kmsg.ACLPermissionType
}

func (b *aclBinding) parse() (parsedACL, error) {
	var p parsedACL
	var err error
	b.Principal, b.ResourceName = strings.TrimSpace(b.Principal), strings.TrimSpace(b.ResourceName)
	if b.Host = strings.TrimSpace(b.Host); b.Host == "" {
		b.Host = "*"
	}
	if b.PatternType == "" {
		b.PatternType = "LITERAL"
	}
	if p.resourceType, err = kmsg.ParseACLResourceType(b.ResourceType); err != nil || p.resourceType == kmsg.ACLResourceTypeAny {
		return p, badRequest("unknown resource type %q", b.ResourceType)
	}
	if p.pattern, err = kmsg.ParseACLResourcePatternType(b.PatternType); err != nil ||
		(p.pattern != kmsg.ACLResourcePatternTypeLiteral && p.pattern != kmsg.ACLResourcePatternTypePrefixed) {
		return p, badRequest("pattern type must be LITERAL or PREFIXED, not %q", b.PatternType)
	}
	if p.operation, err = kmsg.ParseACLOperation(b.Operation); err != nil || p.operation == kmsg.ACLOperationAny {
		return p, badRequest("unknown operation %q", b.Operation)
	}
	if p.permission, err = kmsg.ParseACLPermissionType(b.Permission); err != nil || p.permission == kmsg.ACLPermissionTypeAny {
		return p, badRequest("permission must be ALLOW or DENY, not %q", b.Permission)
	}
	if !strings.Contains(b.Principal, ":") {
		return p, badRequest("principal %q is not of the form Type:name (such as User:alice)", b.Principal)
	}
	if b.ResourceName == "" {
		return p, badRequest("no resource name (use * for every resource, kafka-cluster for the cluster)")
	}
	return p, nil
}

func serveACLs(s *Server, w http.ResponseWriter, r *http.Request) {
	cl, err := s.client(r)
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	if t := q.Get("resourceType"); t != "" {
		if req.ResourceType, err = kmsg.ParseACLResourceType(t); err != nil {
			writeError(w, badRequest("unknown resource type %q", t))
			return
		}
	}
	resp, err := req.RequestWith(r.Context(), cl)
	if err != nil {
		writeError(w, fmt.Errorf("describe ACLs: %w", err))
		return
	}
	if err := kafkaError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		writeError(w, fmt.Errorf("describe ACLs: %w", err))
		return
	}
	principal := strings.ToLower(strings.TrimSpace(q.Get("principal")))
	name := strings.ToLower(strings.TrimSpace(q.Get("resourceName")))
	out := []aclBinding{}
	for _, res := range resp.Resources {
		if name != "" && !strings.Contains(strings.ToLower(res.ResourceName), name) {
			continue
		}
		for _, a := range res.ACLs {
			if principal != "" && !strings.Contains(strings.ToLower(a.Principal), principal) {
				continue
			}
			out = append(out, aclBinding{
				Principal: a.Principal, Host: a.Host, Permission: a.PermissionType.String(), Operation: a.Operation.String(),
				ResourceType: res.ResourceType.String(), ResourceName: res.ResourceName, PatternType: res.ResourcePatternType.String(),
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		for _, c := range [][2]string{{a.ResourceType, b.ResourceType}, {a.ResourceName, b.ResourceName}, {a.PatternType, b.PatternType},
			{a.Principal, b.Principal}, {a.Operation, b.Operation}, {a.Permission, b.Permission}, {a.Host, b.Host}} {
			if c[0] != c[1] {
				return c[0] < c[1]
			}
		}
		return false
	})
	writeJSON(w, http.StatusOK, map[string]any{"acls": out})
}

func serveCreateACL(s *Server, w http.ResponseWriter, r *http.Request) {
	cl, err := s.client(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var b aclBinding
	if err := decodeJSON(r, &b); err != nil {
		writeError(w, err)
		return
	}
	p, err := b.parse()
	if err != nil {
		writeError(w, err)
		return
	}
	req := kmsg.NewPtrCreateACLsRequest()
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = p.resourceType, b.ResourceName, p.pattern
	c.Principal, c.Host, c.Operation, c.PermissionType = b.Principal, b.Host, p.operation, p.permission
	req.Creations = append(req.Creations, c)
	resp, err := req.RequestWith(r.Context(), cl)
	if err != nil {
		writeError(w, fmt.Errorf("create ACL: %w", err))
		return
	}
	if len(resp.Results) != 1 {
		writeError(w, fmt.Errorf("create ACL: the broker answered %d results for one creation", len(resp.Results)))
		return
	}
	if err := kafkaError(resp.Results[0].ErrorCode, resp.Results[0].ErrorMessage); err != nil {
		writeError(w, fmt.Errorf("create ACL: %w", err))
		return
	}
	b.ResourceType, b.PatternType, b.Operation, b.Permission = p.resourceType.String(), p.pattern.String(), p.operation.String(), p.permission.String()
	writeJSON(w, http.StatusOK, b)
}

func serveDeleteACL(s *Server, w http.ResponseWriter, r *http.Request) {
	cl, err := s.client(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var b aclBinding
	if err := decodeJSON(r, &b); err != nil {
		writeError(w, err)
		return
	}
	p, err := b.parse()
	if err != nil {
		writeError(w, err)
		return
	}
	req := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourceName, f.ResourcePatternType = p.resourceType, &b.ResourceName, p.pattern
	f.Principal, f.Host, f.Operation, f.PermissionType = &b.Principal, &b.Host, p.operation, p.permission
	req.Filters = append(req.Filters, f)
	resp, err := req.RequestWith(r.Context(), cl)
	if err != nil {
		writeError(w, fmt.Errorf("delete ACL: %w", err))
		return
	}
	if len(resp.Results) != 1 {
		writeError(w, fmt.Errorf("delete ACL: the broker answered %d results for one filter", len(resp.Results)))
		return
	}
	res := resp.Results[0]
	if err := kafkaError(res.ErrorCode, res.ErrorMessage); err != nil {
		writeError(w, fmt.Errorf("delete ACL: %w", err))
		return
	}
	deleted := 0
	for _, m := range res.MatchingACLs {
		if err := kafkaError(m.ErrorCode, m.ErrorMessage); err != nil {
			writeError(w, fmt.Errorf("delete ACL: %w", err))
			return
		}
		deleted++
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": deleted})
}
