/* Rank placement: which GPU a rank drives, and binding its CPUs and memory next to that GPU. Pure C + hwloc (no CUDA,
 * no MPI) so it runs in unit tests on machines without a GPU; the GPU backend passes the device's PCI bus id.
 *
 * Binding policy of dr_binding_apply (mode AUTO):
 *   CPUs    the cpuset of the GPU's first non-I/O ancestor. A binding already inside that set (the launcher's, e.g.
 *           one core) is kept, never widened; otherwise the whole process (all its threads) is rebound.
 *   memory  the GPU's NUMA node, only when exactly one is known and the machine has more than one. hwloc's BIND
 *           without STRICT is a preference (MPOL_PREFERRED[_MANY]): allocations spill to other nodes when it is full.
 *           Memory policy is per thread on Linux: apply before creating threads; pages already touched stay put.
 *   Nothing fails: what could not be done is left as it was and explained in dr_binding_t.note. */
#ifndef DREDUCE_BINDING_H
#define DREDUCE_BINDING_H

#include <stddef.h>

#include <hwloc.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DR_BINDING_STR 256

typedef enum { DR_BIND_AUTO = 0, DR_BIND_NONE } dr_bind_mode_t;

/* Outcome of binding one rank; plain data, fixed size (it is gathered with MPI as bytes). */
typedef struct {
    int gpu_index;                   /* CUDA ordinal chosen, -1 for the CPU backend (set by the caller) */
    char pci_bus_id[32];             /* normalised "0000:1a:00.0" (dr_binding_busid_normalize), "" if none */
    int numa_node;                   /* OS index of the GPU's NUMA node; -1 if unknown, ambiguous, or the machine has
                                        a single NUMA node (no NUMA information) */
    char gpu_cpuset[DR_BINDING_STR]; /* the GPU's locality (dr_binding_format_set: "0-15,32-47"), "" if unknown or if
                                        none of its CPUs are available to us (note says which) */
    char affinity[DR_BINDING_STR];   /* CPU affinity afterwards: read back from the process; in a dry run the
                                        predicted one (see dry_run) */
    int bound_cpu;                   /* 1 if we changed the CPU binding (dry run: would have changed it) */
    int bound_mem;                   /* 1 if we set the memory policy to numa_node (dry run: would have set it) */
    int dry_run;                     /* 1 if nothing was applied: this_system was 0 or topo is not this machine (an
                                        XML). affinity then is gpu_cpuset when bound_cpu, else the current binding as
                                        hwloc reports it for that topology (its whole machine for a foreign XML) */
    int affinity_outside_gpu;        /* 1 if the GPU was found and affinity is not a subset of its CPUs (warn) */
    char note[DR_BINDING_STR];       /* why something degraded, "; "-separated; "" if all fine */
} dr_binding_t;

/* Local rank from the launcher's environment (before MPI_Init): OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID,
 * MPI_LOCALRANKID, PMI_LOCAL_RANK; first set to a decimal integer >= 0 wins. Returns it, or -1 with *source NULL. */
int dr_binding_env_local_rank(const char **source);

/* The DREDUCE_HWLOC_XML environment variable (a topology XML to load instead of probing), or NULL when unset/empty. */
const char *dr_binding_env_xml(void);

/* GPU ordinal of local_rank (of local_size) seeing ngpus GPUs: local_rank % ngpus; 0 if one_gpu_per_task (launcher
 * gave each task its own). -1 + one-line reason in err (may be NULL): ngpus < 1, bad rank, too many ranks unshared. */
int dr_binding_choose_gpu(int local_rank, int local_size, int ngpus, int one_gpu_per_task, int allow_share, char *err,
                          size_t errlen);

/* Normalise a PCI bus id ("00000000:1A:00.0", "0000:1a:00.0", "1a:00.0") to "dddd:bb:dd.f", lowercase, domain
 * at least 4 digits, into out. Returns 0, or -1 if it does not parse or out is too small (out is then ""). */
int dr_binding_busid_normalize(const char *in, char *out, size_t outlen);

/* Write set into dst as an hwloc list ("0-15,32-47"), or as a hex mask ("0x...") when the list does not fit, cut with
 * "..." when neither fits. Returns 0 list, 1 hex, 2 cut, -1 error (dst ""). */
int dr_binding_format_set(char *dst, size_t dstlen, hwloc_const_bitmap_t set);

/* Load a topology keeping GPUs' PCI devices: from xml_path if not NULL (foreign unless HWLOC_THISSYSTEM=1), else this
 * machine. Returns 0 (caller frees it: hwloc_topology_destroy) or -1, *topo NULL, reason in err (may be NULL). */
int dr_binding_topology_load(hwloc_topology_t *topo, const char *xml_path, char *err, size_t errlen);

/* Set every field of b to "nothing known": gpu_index and numa_node -1, strings "", flags 0. */
void dr_binding_init(dr_binding_t *b);

/* Locate GPU pci_bus_id (NULL/"": none) in topo; in mode AUTO with this_system (from hwloc_topology_is_thissystem)
 * bind as above. Fills b, keeping b->gpu_index. Returns 0 even degraded (b->note says why), -1 on bad arguments. */
int dr_binding_apply(hwloc_topology_t topo, int this_system, const char *pci_bus_id, dr_bind_mode_t mode,
                     dr_binding_t *b);


#ifdef __cplusplus
}
#endif

#endif
