// Package wire is the Kafka framing layer: size-prefixed frames, request
// headers, response headers, and responses made of byte chunks and file
// regions so that record data can be sent from segment files with sendfile.
//
// Codecs for request and response bodies come from franz-go's kmsg; this
// package only handles what surrounds them. It knows nothing of topics,
// partitions or storage.
package wire
