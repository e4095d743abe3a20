package reassign

import (
	"errors"
	"fmt"
	"slices"
)

// Broker is a broker id and its rack ("" for none), as Kafka's
// BrokerMetadata.
type Broker struct {
	ID   int32
	Rack string
}

// AssignReplicas is Kafka's AdminUtils.assignReplicasToBrokers with a fixed
// start: it places nPartitions partitions of replicationFactor replicas on
// brokers (in the order given), round-robin from startIndex with the
// second replica shifted by replicaShift. When every broker has a rack the
// placement is rack-aware: brokers are taken alternately from each rack
// and a partition's replicas spread over as many racks, then brokers, as
// possible. Kafka's tool draws startIndex and replicaShift at random in
// [0, len(brokers)).
func AssignReplicas(brokers []Broker, nPartitions, replicationFactor, startIndex, replicaShift int) (map[int32][]int32, error) {
	if nPartitions <= 0 {
		return nil, errors.New("Number of partitions must be larger than 0.")
	}
	if replicationFactor <= 0 {
		return nil, errors.New("Replication factor must be larger than 0.")
	}
	if replicationFactor > len(brokers) {
		return nil, fmt.Errorf("Replication factor: %d larger than available brokers: %d.", replicationFactor, len(brokers))
	}
	racked := 0
	for _, b := range brokers {
		if b.Rack != "" {
			racked++
		}
	}
	if racked == 0 {
		ids := make([]int32, len(brokers))
		for i, b := range brokers {
			ids[i] = b.ID
		}
		return assignRackUnaware(ids, nPartitions, replicationFactor, startIndex, replicaShift), nil
	}
	if racked != len(brokers) {
		return nil, errors.New("Not all brokers have rack information for replica rack aware assignment.")
	}
	return assignRackAware(brokers, nPartitions, replicationFactor, startIndex, replicaShift), nil
}

func assignRackUnaware(ids []int32, nPartitions, rf, startIndex, shift int) map[int32][]int32 {
	out := make(map[int32][]int32, nPartitions)
	n := len(ids)
	for p := range nPartitions {
		if p > 0 && p%n == 0 {
			shift++
		}
		first := (p + startIndex) % n
		replicas := []int32{ids[first]}
		for j := range rf - 1 {
			replicas = append(replicas, ids[replicaIndex(first, shift, j, n)])
		}
		out[int32(p)] = replicas
	}
	return out
}

func assignRackAware(brokers []Broker, nPartitions, rf, startIndex, shift int) map[int32][]int32 {
	rackOf := map[int32]string{}
	for _, b := range brokers {
		rackOf[b.ID] = b.Rack
	}
	arranged := rackAlternatedBrokers(rackOf)
	racks := map[string]bool{}
	for _, r := range rackOf {
		racks[r] = true
	}
	numRacks, n := len(racks), len(arranged)
	out := make(map[int32][]int32, nPartitions)
	for p := range nPartitions {
		if p > 0 && p%n == 0 {
			shift++
		}
		first := (p + startIndex) % n
		leader := arranged[first]
		replicas := []int32{leader}
		usedRacks := map[string]bool{rackOf[leader]: true}
		usedBrokers := map[int32]bool{leader: true}
		k := 0
		for range rf - 1 {
			for {
				b := arranged[replicaIndex(first, shift*numRacks, k, n)]
				k++
				rack := rackOf[b]
				// Skip a broker whose rack already has a replica while some
				// rack has none, or that has a replica while some broker
				// has none.
				if (!usedRacks[rack] || len(usedRacks) == numRacks) && (!usedBrokers[b] || len(usedBrokers) == n) {
					replicas = append(replicas, b)
					usedRacks[rack], usedBrokers[b] = true, true
					break
				}
			}
		}
		out[int32(p)] = replicas
	}
	return out
}

// rackAlternatedBrokers lists the brokers taking one from each rack in
// turn (racks sorted by name, brokers of a rack by id): rack a's first,
// rack b's first, ..., rack a's second, ...
func rackAlternatedBrokers(rackOf map[int32]string) []int32 {
	byRack := map[string][]int32{}
	for id, r := range rackOf {
		byRack[r] = append(byRack[r], id)
	}
	racks := make([]string, 0, len(byRack))
	for r, ids := range byRack {
		slices.Sort(ids)
		racks = append(racks, r)
	}
	slices.Sort(racks)
	var out []int32
	for i := 0; len(out) < len(rackOf); i++ {
		for _, r := range racks {
			if i < len(byRack[r]) {
				out = append(out, byRack[r][i])
			}
		}
	}
	return out
}

// replicaIndex is the broker index of the (replica+2)-th replica of a
// partition whose first replica is at first.
func replicaIndex(first, secondShift, replica, n int) int {
	shift := 1 + (secondShift+replica)%(n-1)
	return (first + shift) % n
}
