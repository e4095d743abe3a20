package acls

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiError wraps the error a broker returned as a code and an optional
// message; errors.Is matches the kerr error of the code. Its text is the
// broker's message when there is one, as Kafka's exceptions carry it.
type apiError struct {
	err error
	msg string
}

func (e *apiError) Error() string {
	if e.msg != "" {
		return e.err.Error() + ": " + e.msg
	}
	return e.err.Error()
}

func (e *apiError) Unwrap() error { return e.err }

func brokerError(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	e := &apiError{err: err}
	if msg != nil {
		e.msg = *msg
	}
	return e
}

// describe returns the bindings that match the resource filter r, for any
// entry (Kafka's AclBindingFilter with AccessControlEntryFilter.ANY).
func describe(ctx context.Context, cl kmsg.Requestor, r ResourcePattern) ([]Binding, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = r.Type
	if !r.AnyName {
		req.ResourceName = kmsg.StringPtr(r.Name)
	}
	req.ResourcePatternType = r.Pattern
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("describe ACLs of %s: %w", r, err)
	}
	if err := brokerError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return nil, fmt.Errorf("describe ACLs of %s: %w", r, err)
	}
	var out []Binding
	for _, res := range resp.Resources {
		p := ResourcePattern{Type: res.ResourceType, Name: res.ResourceName, Pattern: res.ResourcePatternType}
		for _, a := range res.ACLs {
			out = append(out, Binding{Pattern: p, Entry: Entry{
				Principal: a.Principal, Host: a.Host, Operation: a.Operation, Permission: a.PermissionType,
			}})
		}
	}
	return out, nil
}

// createACLs creates the entries on resource r in one CreateAcls request;
// the first entry the broker refuses is the error.
func createACLs(ctx context.Context, cl kmsg.Requestor, r ResourcePattern, es []Entry) error {
	req := kmsg.NewPtrCreateACLsRequest()
	for _, e := range es {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType = r.Type
		c.ResourceName = r.Name
		c.ResourcePatternType = r.Pattern
		c.Principal = e.Principal
		c.Host = e.Host
		c.Operation = e.Operation
		c.PermissionType = e.Permission
		req.Creations = append(req.Creations, c)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("create ACLs for %s: %w", r, err)
	}
	if len(resp.Results) != len(req.Creations) {
		return fmt.Errorf("create ACLs for %s: %d results for %d creations", r, len(resp.Results), len(req.Creations))
	}
	for i, res := range resp.Results {
		if err := brokerError(res.ErrorCode, res.ErrorMessage); err != nil {
			return fmt.Errorf("create ACL %s: %w", Binding{Pattern: r, Entry: es[i]}, err)
		}
	}
	return nil
}

// deleteACLs deletes from the resource filter r the bindings matching each
// entry exactly, or every binding when es is empty, in one DeleteAcls
// request; an error for any filter or matching binding is the error.
func deleteACLs(ctx context.Context, cl kmsg.Requestor, r ResourcePattern, es []Entry) error {
	req := kmsg.NewPtrDeleteACLsRequest()
	filter := func() kmsg.DeleteACLsRequestFilter {
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType = r.Type
		if !r.AnyName {
			f.ResourceName = kmsg.StringPtr(r.Name)
		}
		f.ResourcePatternType = r.Pattern
		return f
	}
	if len(es) == 0 {
		f := filter()
		f.Operation = kmsg.ACLOperationAny
		f.PermissionType = kmsg.ACLPermissionTypeAny
		req.Filters = append(req.Filters, f)
	}
	for _, e := range es {
		f := filter()
		f.Principal = kmsg.StringPtr(e.Principal)
		f.Host = kmsg.StringPtr(e.Host)
		f.Operation = e.Operation
		f.PermissionType = e.Permission
		req.Filters = append(req.Filters, f)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("delete ACLs from %s: %w", r, err)
	}
	if len(resp.Results) != len(req.Filters) {
		return fmt.Errorf("delete ACLs from %s: %d results for %d filters", r, len(resp.Results), len(req.Filters))
	}
	for _, res := range resp.Results {
		if err := brokerError(res.ErrorCode, res.ErrorMessage); err != nil {
			return fmt.Errorf("delete ACLs from %s: %w", r, err)
		}
		for _, m := range res.MatchingACLs {
			if err := brokerError(m.ErrorCode, m.ErrorMessage); err != nil {
				b := Binding{
					Pattern: ResourcePattern{Type: m.ResourceType, Name: m.ResourceName, Pattern: m.ResourcePatternType},
					Entry:   Entry{Principal: m.Principal, Host: m.Host, Operation: m.Operation, Permission: m.PermissionType},
				}
				return fmt.Errorf("delete ACL %s: %w", b, err)
			}
		}
	}
	return nil
}
