// Package metadata holds the cluster metadata every broker works from:
// brokers, topics and their ids, partition assignments, leaders, leader
// epochs, ISR and configs. It is modelled on KRaft: changes are records
// applied to an immutable Image, and brokers read the latest Image.
//
// This version is the single-node store: the image is persisted as one
// JSON document (<dir>/silkworm-metadata.json, written atomically with a
// temporary file and rename). The multi-broker issue replaces Local with a
// store replicated by a Raft library; callers depend only on the Store
// interface declared by their own package.
package metadata
