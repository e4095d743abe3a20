// Package quota is Kafka's client quotas: the configured quotas per user
// and client id (and their defaults) with Kafka's precedence, and the
// sliding-window rate accounting that turns a client's usage into a
// throttle time. It knows nothing about connections; the broker records
// usage and mutes a throttled connection itself.
//
// Configuration (AlterClientQuotas, DescribeClientQuotas, the metadata
// log):
//
//   - Entity, Component and Entry are what the metadata log stores.
//     Entity.Canonical checks an entity with Kafka's rules and messages and
//     sorts it; Entity.String is a stable, unambiguous text form.
//   - ValidateAlteration checks one key of an AlterClientQuotas entry as
//     Kafka's controller does (ClientQuotaControlManager): which keys an
//     entity type accepts (the four user/client-id keys, or
//     connection_creation_rate for ip), values above 0, integral and within
//     LONG or INT where Kafka's type says so.
//   - Filter is DescribeClientQuotas: EXACT, DEFAULT and ANY components,
//     strict or not (ClientQuotasImage.describe).
//
// Errors are Go errors whose text is Kafka's message and which wrap a
// sentinel naming the Kafka error code (ErrInvalidRequest,
// ErrUnsupportedEntityType, ErrThrottlingQuotaExceeded).
//
// Enforcement (Manager, safe for concurrent use):
//
//   - SetQuotas takes the quotas of the metadata image; each Kind
//     (producer_byte_rate, consumer_byte_rate, request_percentage,
//     controller_mutation_rate) has its own quotas and sensors, as Kafka
//     has one quota manager per type.
//   - A client (user = principal name, client id) resolves to the most
//     specific configured entity, in Kafka's order: /users/<user>/clients/
//     <client-id>, /users/<user>/clients/<default>, /users/<user>,
//     /users/<default>/clients/<client-id>, /users/<default>/clients/
//     <default>, /users/<default>, /clients/<client-id>,
//     /clients/<default>. Usage is shared by the clients that resolve to
//     the same sensor: a quota at a user level without a client part is
//     shared by all the user's client ids; every other level is per
//     (user, client id) or per client id, defaults included.
//   - Record is called on the produce (request bytes), fetch (response
//     bytes), request (handler nanoseconds) and topic-mutation paths and
//     returns the throttle time. Produce, fetch and request quotas use
//     Kafka's Rate over quota.window.num samples of
//     quota.window.size.seconds and Kafka's throttle formula
//     (QuotaUtils.throttleTime); the request quota's throttle is capped at
//     one window. The controller mutation quota is Kafka's token bucket
//     (KIP-599), strict from the versions in StrictSince…; MutationQuota
//     is its per-request form for the CreateTopics, CreatePartitions and
//     DeleteTopics handlers.
//   - Unrecord takes back a throttled fetch's bytes and
//     MaxValueInQuotaWindow caps a consumer's fetch size, as Kafka does.
//
// Times are the caller's: every method that measures takes now, and all
// arithmetic is in whole milliseconds as in Kafka, so tests run on a
// simulated clock and give Kafka's numbers.
//
// Not here: the ip connection_creation_rate quota (the listener's
// business), quota metrics, and a client quota callback plug-in.
package quota
