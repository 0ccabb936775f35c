// Package cluster is what the instances of lazuli that share one engine
// (several processes on one PostgreSQL database) agree on: which of them
// are alive (Membership, with heartbeats in the engine) and what time it
// is (Clock, whose test offset every instance reads from the engine).
//
// It knows nothing of Azure. The resources an instance holds on behalf of
// its clients (the File domain's open SMB handles) record the id of the
// member that owns them; the domain fences its writes with Alive and
// releases what dead members held when the membership asks it to
// (Holder), so neither side reads the other's records.
package cluster
