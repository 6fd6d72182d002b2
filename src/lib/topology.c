#include "topology.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

dr_status_t dr_topology_open(dr_topology_t *t, MPI_Comm comm)
{
    memset(t, 0, sizeof *t);
    t->comm = MPI_COMM_NULL;
    t->node_comm = MPI_COMM_NULL;
    t->leaders_comm = MPI_COMM_NULL;
    t->host_comm = MPI_COMM_NULL;
    DR_MPI_CHECK(MPI_Comm_dup(comm, &t->comm));
    DR_MPI_CHECK(MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN));
    DR_MPI_CHECK(MPI_Comm_rank(t->comm, &t->rank));
    DR_MPI_CHECK(MPI_Comm_size(t->comm, &t->nranks));
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    DR_MPI_CHECK(MPI_Get_processor_name(name, &len));
    snprintf(t->host, sizeof t->host, "%.63s", name);
    return DR_OK;
}

dr_status_t dr_topology_split(dr_topology_t *t, int ranks_per_node)
{

    DR_MPI_CHECK(MPI_Comm_split_type(t->comm, MPI_COMM_TYPE_SHARED, t->rank, MPI_INFO_NULL, &t->host_comm));
    DR_MPI_CHECK(MPI_Comm_set_errhandler(t->host_comm, MPI_ERRORS_RETURN));
    DR_MPI_CHECK(MPI_Comm_rank(t->host_comm, &t->host_local_rank));
    DR_MPI_CHECK(MPI_Comm_size(t->host_comm, &t->host_local_size));
    /* Emulated nodes: consecutive groups of ranks_per_node ranks within the host. */
    const int color = ranks_per_node > 0 ? t->host_local_rank / ranks_per_node : 0;
    DR_MPI_CHECK(MPI_Comm_split(t->host_comm, color, t->host_local_rank, &t->node_comm));
    t->emulated = ranks_per_node > 0;
    DR_MPI_CHECK(MPI_Comm_set_errhandler(t->node_comm, MPI_ERRORS_RETURN));
    DR_MPI_CHECK(MPI_Comm_rank(t->node_comm, &t->local_rank));
    DR_MPI_CHECK(MPI_Comm_size(t->node_comm, &t->local_size));

    DR_MPI_CHECK(MPI_Comm_split(t->comm, t->local_rank == 0 ? 0 : MPI_UNDEFINED, t->rank, &t->leaders_comm));
    if (t->local_rank == 0) {
        DR_MPI_CHECK(MPI_Comm_set_errhandler(t->leaders_comm, MPI_ERRORS_RETURN));
        DR_MPI_CHECK(MPI_Comm_rank(t->leaders_comm, &t->node));
        DR_MPI_CHECK(MPI_Comm_size(t->leaders_comm, &t->nnodes));
    }
    int ids[2] = {t->node, t->nnodes};
    DR_MPI_CHECK(MPI_Bcast(ids, 2, MPI_INT, 0, t->node_comm));
    t->node = ids[0];
    t->nnodes = ids[1];
    if (t->emulated) snprintf(t->node_name, sizeof t->node_name, "%s/node%d", t->host, t->node);
    else snprintf(t->node_name, sizeof t->node_name, "%s", t->host);
    return DR_OK;
}

dr_status_t dr_topology_init(dr_topology_t *t, MPI_Comm comm, int ranks_per_node)
{
    DR_CHECK(dr_topology_open(t, comm));
    return dr_topology_split(t, ranks_per_node);
}

void dr_topology_free(dr_topology_t *t)
{
    if (t->leaders_comm != MPI_COMM_NULL) MPI_Comm_free(&t->leaders_comm);
    if (t->node_comm != MPI_COMM_NULL) MPI_Comm_free(&t->node_comm);
    if (t->host_comm != MPI_COMM_NULL) MPI_Comm_free(&t->host_comm);
    if (t->comm != MPI_COMM_NULL) MPI_Comm_free(&t->comm);
}
