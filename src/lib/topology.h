/* Where each rank sits: its host, its node (real, or emulated with --ranks-per-node), and the communicators of the
 * two combine levels: `node` (the ranks of one node) and `leaders` (local rank 0 of every node). */
#ifndef DREDUCE_TOPOLOGY_H
#define DREDUCE_TOPOLOGY_H

#include <mpi.h>

#include "status.h"

typedef struct {
    MPI_Comm comm;              /* the communicator of the run (a dup of the caller's: MPI_COMM_WORLD for the CLI) */
    int rank, nranks;
    int local_rank, local_size; /* within the node */
    int node, nnodes;           /* node index, in order of the nodes' first ranks */
    int emulated;               /* nodes are groups of --ranks-per-node ranks of one host */
    char host[64];              /* MPI_Get_processor_name */
    char node_name[80];         /* host, or "host/node<i>" when emulated */
    MPI_Comm node_comm;         /* ranks of this node */
    MPI_Comm leaders_comm;      /* node leaders; MPI_COMM_NULL on other ranks */
    MPI_Comm host_comm;         /* every rank of this host (the same as node_comm unless emulated) */
    int host_local_rank, host_local_size; /* within the whole host (for GPU choice) */
} dr_topology_t;

/* Build the topology of comm (duplicated, so our traffic never matches the caller's); ranks_per_node > 0 splits each
 * host into emulated nodes of that many. */
dr_status_t dr_topology_init(dr_topology_t *t, MPI_Comm comm, int ranks_per_node);

/* The two halves of dr_topology_init, for dreduce_create, which agrees on the configuration over the duplicate
 * before splitting it: open duplicates comm (errors returned, not fatal) and learns rank, size and host; split
 * builds the host, node and leaders communicators. After a failure of either, dr_topology_free releases what was
 * made. */
dr_status_t dr_topology_open(dr_topology_t *t, MPI_Comm comm);
dr_status_t dr_topology_split(dr_topology_t *t, int ranks_per_node);

void dr_topology_free(dr_topology_t *t);

#endif
