package metadata

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/quota"
	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/security/acl"
)

// This file holds the security state of the image (SCRAM credentials,
// ACLs, client quotas): the change types of the Store methods and how a
// change is applied to the next image. Local and Quorum apply a change the
// same way, through a txn, so both stores keep the same state.
//
// Copy on write: Image.clone shares Scram, ACLs and ClientQuotas with the
// image it copies. The txn methods below never write into them; they build
// a new map or slice (and a new per-user credential list, a new quota
// values map) and replace the field.

// ScramChange is one change of AlterScramCredentials: set (upsert) or
// delete the credential of User for Mechanism.
type ScramChange struct {
	User      string `json:"user"`
	Mechanism string `json:"mechanism"`
	// Credential is the new credential; nil deletes the user's credential
	// for Mechanism. It is stored with its Mechanism set to Mechanism.
	Credential *security.ScramCredential `json:"credential,omitempty"`
}

// QuotaChange is one change of AlterClientQuotas: Set adds or replaces
// values of Entity's quota, then Remove deletes keys from it. An entity
// left without values is removed from the image.
type QuotaChange struct {
	// Entity is canonical: its components sorted by Type, no type twice.
	Entity quota.Entity       `json:"entity"`
	Set    map[string]float64 `json:"set,omitempty"`
	Remove []string           `json:"remove,omitempty"`
}

// ScramCredential returns user's credential for mechanism, if the user has
// one. The credential's byte slices belong to the image: read them only.
func (im *Image) ScramCredential(user, mechanism string) (security.ScramCredential, bool) {
	for _, c := range im.Scram[user] {
		if c.Mechanism == mechanism {
			return c, true
		}
	}
	return security.ScramCredential{}, false
}

// ClientQuota returns the quota entry of exactly entity, which must be
// canonical (components sorted by Type), if one is set. Entities compare
// component by component; a nil Name (the default) differs from every
// name, "" included. The entry's Values belong to the image: read them
// only.
func (im *Image) ClientQuota(entity quota.Entity) (quota.Entry, bool) {
	i, ok := slices.BinarySearchFunc(im.ClientQuotas, entity, func(e quota.Entry, t quota.Entity) int {
		return compareEntities(e.Entity, t)
	})
	if !ok {
		return quota.Entry{}, false
	}
	return im.ClientQuotas[i], true
}

// alterScram applies changes in order and returns one error per change:
// nil when applied, ErrResourceNotFound for the deletion of a credential
// that does not exist (which changes nothing).
func (x *txn) alterScram(changes []ScramChange) changeErrors {
	errs := make(changeErrors, len(changes))
	if len(changes) == 0 {
		return errs
	}
	users := maps.Clone(x.im.Scram)
	if users == nil {
		users = map[string][]security.ScramCredential{}
	}
	for i, ch := range changes {
		creds := users[ch.User]
		at := slices.IndexFunc(creds, func(c security.ScramCredential) bool { return c.Mechanism == ch.Mechanism })
		if ch.Credential == nil {
			if at < 0 {
				errs[i] = fmt.Errorf("%w: user %q has no %s credential to delete", ErrResourceNotFound, ch.User, ch.Mechanism)
				continue
			}
			creds = slices.Delete(slices.Clone(creds), at, at+1)
			if len(creds) == 0 {
				delete(users, ch.User)
			} else {
				users[ch.User] = creds
			}
			continue
		}
		c := security.ScramCredential{
			Mechanism:  ch.Mechanism,
			Salt:       slices.Clone(ch.Credential.Salt),
			StoredKey:  slices.Clone(ch.Credential.StoredKey),
			ServerKey:  slices.Clone(ch.Credential.ServerKey),
			Iterations: ch.Credential.Iterations,
		}
		creds = slices.Clone(creds)
		if at >= 0 {
			creds[at] = c
		} else {
			creds = append(creds, c)
			slices.SortFunc(creds, func(a, b security.ScramCredential) int { return strings.Compare(a.Mechanism, b.Mechanism) })
		}
		users[ch.User] = creds
	}
	if len(users) == 0 {
		users = nil
	}
	x.im.Scram = users
	return errs
}

// createACLs adds bindings; one identical to a binding already present (or
// given twice) is stored once. Image.ACLs stays sorted (compareBindings).
func (x *txn) createACLs(bindings []acl.Binding) {
	if len(bindings) == 0 {
		return
	}
	out := make([]acl.Binding, 0, len(x.im.ACLs)+len(bindings))
	out = append(append(out, x.im.ACLs...), bindings...)
	slices.SortFunc(out, compareBindings)
	x.im.ACLs = slices.Compact(out)
}

// deleteACLs removes exactly bindings; those not present are ignored.
func (x *txn) deleteACLs(bindings []acl.Binding) {
	if len(bindings) == 0 {
		return
	}
	drop := make(map[acl.Binding]bool, len(bindings))
	for _, b := range bindings {
		drop[b] = true
	}
	var out []acl.Binding
	for _, b := range x.im.ACLs {
		if !drop[b] {
			out = append(out, b)
		}
	}
	x.im.ACLs = out
}

// alterClientQuotas applies changes in order. Image.ClientQuotas stays
// sorted by entity (compareEntities), one entry per entity, none empty.
func (x *txn) alterClientQuotas(changes []QuotaChange) {
	if len(changes) == 0 {
		return
	}
	out := slices.Clone(x.im.ClientQuotas)
	for _, ch := range changes {
		entity := copyEntity(ch.Entity)
		i, found := slices.BinarySearchFunc(out, entity, func(e quota.Entry, t quota.Entity) int {
			return compareEntities(e.Entity, t)
		})
		values := map[string]float64{}
		if found {
			values = maps.Clone(out[i].Values)
			entity = out[i].Entity
		}
		maps.Copy(values, ch.Set)
		for _, k := range ch.Remove {
			delete(values, k)
		}
		switch {
		case len(values) == 0 && found:
			out = slices.Delete(out, i, i+1)
		case len(values) == 0:
		case found:
			out[i] = quota.Entry{Entity: entity, Values: values}
		default:
			out = slices.Insert(out, i, quota.Entry{Entity: entity, Values: values})
		}
	}
	if len(out) == 0 {
		out = nil
	}
	x.im.ClientQuotas = out
}

// compareBindings orders ACL bindings by resource (type, pattern type,
// name), then principal, host, operation and permission.
func compareBindings(a, b acl.Binding) int {
	return cmp.Or(
		cmp.Compare(a.ResourceType, b.ResourceType),
		cmp.Compare(a.PatternType, b.PatternType),
		strings.Compare(a.ResourceName, b.ResourceName),
		strings.Compare(a.Principal, b.Principal),
		strings.Compare(a.Host, b.Host),
		cmp.Compare(a.Operation, b.Operation),
		cmp.Compare(a.Permission, b.Permission),
	)
}

// compareEntities orders quota entities component by component: by Type,
// then the default (nil Name) before any name, then by name; a prefix of
// another entity comes first. It returns 0 only for equal entities.
func compareEntities(a, b quota.Entity) int {
	for i := range min(len(a), len(b)) {
		if c := strings.Compare(a[i].Type, b[i].Type); c != 0 {
			return c
		}
		an, bn := a[i].Name, b[i].Name
		switch {
		case an == nil && bn == nil:
		case an == nil:
			return -1
		case bn == nil:
			return 1
		default:
			if c := strings.Compare(*an, *bn); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(a), len(b))
}

// copyEntity copies e, names included, so that the image shares no memory
// with the caller; the copy is sorted by Type.
func copyEntity(e quota.Entity) quota.Entity {
	out := make(quota.Entity, len(e))
	for i, c := range e {
		out[i].Type = c.Type
		if c.Name != nil {
			name := *c.Name
			out[i].Name = &name
		}
	}
	slices.SortStableFunc(out, func(a, b quota.Component) int { return strings.Compare(a.Type, b.Type) })
	return out
}

// checkBindings returns an error wrapping ErrInvalidRequest if a binding
// has an enum value that the metadata encoding cannot carry (kmsg writes
// the enums by name, and UNKNOWN or an unnamed code does not read back):
// such a binding would make the metadata log or document unreadable.
func checkBindings(bindings []acl.Binding) error {
	for _, b := range bindings {
		if !storableBinding(b) {
			return fmt.Errorf("%w: ACL binding %+v has an unknown resource type, pattern type, operation or permission",
				ErrInvalidRequest, b)
		}
	}
	return nil
}

// storableOnly returns the bindings that checkBindings accepts: the
// others cannot be present (and would not survive the forwarding RPC's
// JSON), so a deletion leaves them out.
func storableOnly(bindings []acl.Binding) []acl.Binding {
	return slices.DeleteFunc(slices.Clone(bindings), func(b acl.Binding) bool { return !storableBinding(b) })
}

func storableBinding(b acl.Binding) bool {
	return knownEnum(b.ResourceType, kmsg.ParseACLResourceType) &&
		knownEnum(b.PatternType, kmsg.ParseACLResourcePatternType) &&
		knownEnum(b.Operation, kmsg.ParseACLOperation) &&
		knownEnum(b.Permission, kmsg.ParseACLPermissionType)
}

// knownEnum reports whether v reads back from its name.
func knownEnum[E interface {
	~int8
	String() string
}](v E, parse func(string) (E, error)) bool {
	p, err := parse(v.String())
	return err == nil && p == v
}

// checkQuotaChanges returns an error wrapping ErrInvalidRequest if a value
// is NaN or infinite, which JSON cannot carry.
func checkQuotaChanges(changes []QuotaChange) error {
	for _, ch := range changes {
		for k, v := range ch.Set {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: quota %s = %v", ErrInvalidRequest, k, v)
			}
		}
	}
	return nil
}
