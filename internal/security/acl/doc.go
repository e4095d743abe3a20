// Package acl is Silkworm's authorizer: Kafka's ACL model (KIP-11, prefixed
// patterns from KIP-290) decided the way Kafka's StandardAuthorizer decides
// it. It is pure: a set of Bindings and a request (principal, client host,
// operation, resource) go in, a decision comes out. It knows nothing of
// connections, requests or the metadata store.
//
// Who calls what:
//
//   - The broker builds one Authorizer with New from super.users and
//     allow.everyone.if.no.acl.found, and calls SetBindings with the whole
//     ACL set each time the metadata image changes (from the image's apply
//     goroutine).
//   - Request handlers call Authorize (every request), AuthorizedOperations
//     (KIP-430 fields of Metadata, DescribeCluster, DescribeGroups),
//     AuthorizeByResourceType (KIP-679: the IdempotentWrite fallback of
//     InitProducerId) and Bindings (DescribeAcls) from any goroutine.
//   - The CreateAcls handler checks each creation with ValidateBinding and
//     the DescribeAcls/DeleteAcls handlers check each filter with
//     ValidateFilter before the metadata store sees them; DeleteAcls selects
//     the bindings to remove with Filter.Matches.
//
// Decision rules, as Kafka's StandardAuthorizer applies them:
//
//   - A principal named in super.users ("User:admin") may do everything.
//   - The bindings on a resource are those of its type that are LITERAL with
//     its exact name, LITERAL "*" (the wildcard), or PREFIXED with a name
//     that is a prefix of its name. A PREFIXED "*" is an ordinary prefix: it
//     matches names that start with '*'.
//   - A binding applies to a request when its principal is the request's
//     principal or "User:*", its host is the client's address or "*", and
//     its operation is the requested one or ALL. An ALLOW binding also
//     applies through implication: READ, WRITE, DELETE and ALTER allow
//     DESCRIBE; ALTER_CONFIGS allows DESCRIBE_CONFIGS. A DENY binding never
//     implies anything: DENY READ does not deny DESCRIBE.
//   - Any applying DENY denies. Otherwise any applying ALLOW allows.
//     Otherwise, if the resource has bindings at all (for any principal,
//     host or operation), the request is denied; if it has none, the answer
//     is allow.everyone.if.no.acl.found.
//
// Authorize allocates nothing: bindings are indexed by resource type, then
// by literal name and by prefix, in an immutable snapshot that SetBindings
// replaces atomically (copy-on-write).
package acl
