/* Rank placement: which GPU a rank drives, its share of the node's CPUs, and binding its CPUs and memory there.
 * Pure C + hwloc (no CUDA, no MPI) so it runs in unit tests on machines without a GPU; the GPU backend passes the
 * device's PCI bus id, and the library gathers every local rank's wanted CPUs (dr_binding_want) itself.
 *
 * The share: the node's CPUs divided among its ranks (dr_binding_share). Each rank wants the CPUs near its GPU (the
 * cpuset of the GPU's first non-I/O ancestor), or every CPU the process may use for the CPU backend or a GPU of
 * unknown locality; under a Slurm task allocation (SLURM_CPUS_PER_TASK) only within the rank's own binding, which is
 * never exceeded. Ranks wanting the same CPUs split them into disjoint runs of whole cores.
 *
 * Binding policy of dr_binding_apply:
 *   AUTO    CPUs: the whole process (all its threads) is bound to its share whenever its binding differs from it: a
 *           launcher's narrower binding (mpirun binds each of 1-2 ranks to one core) is widened, a wider one narrowed.
 *           Memory: the GPU's NUMA node, only when exactly one is known and the machine has more than one; for the
 *           CPU backend the NUMA node of its share when the share lies within exactly one. hwloc's BIND without STRICT
 *           is a preference (MPOL_PREFERRED[_MANY]): allocations spill to other nodes when it is full. Memory policy
 *           is per thread on Linux: apply before creating threads; pages already touched stay put.
 *   WORKERS the caller's threads are left alone; the share is recorded for the library's own worker threads.
 *   NONE    nothing is bound and no share is recorded.
 *   Nothing fails: what could not be done is left as it was and explained in dr_binding_t.note. */
#ifndef DREDUCE_BINDING_H
#define DREDUCE_BINDING_H

#include <stddef.h>

#include <hwloc.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DR_BINDING_STR 256

typedef enum { DR_BIND_AUTO = 0, DR_BIND_NONE, DR_BIND_WORKERS } dr_bind_mode_t;

/* Outcome of binding one rank; plain data, fixed size (it is gathered with MPI as bytes). */
typedef struct {
    int gpu_index;                   /* CUDA ordinal chosen, -1 for the CPU backend (set by the caller) */
    char pci_bus_id[32];             /* normalised "0000:1a:00.0" (dr_binding_busid_normalize), "" if none */
    int numa_node;                   /* OS index of the GPU's NUMA node (the CPU backend: its share's, mode AUTO); -1
                                        if unknown, ambiguous, or the machine has a single NUMA node */
    char gpu_cpuset[DR_BINDING_STR]; /* the GPU's locality (dr_binding_format_set: "0-15,32-47"), "" if unknown or if
                                        none of its CPUs are available to us (note says which) */
    char affinity[DR_BINDING_STR];   /* CPU affinity afterwards: read back from the calling thread; in a dry run the
                                        predicted one (see dry_run) */
    int bound_cpu;                   /* 1 if we changed the CPU binding (dry run: would have changed it) */
    int bound_mem;                   /* 1 if we set the memory policy to numa_node (dry run: would have set it) */
    int dry_run;                     /* 1 if nothing was applied: this_system was 0 or topo is not this machine (an
                                        XML). affinity then is share when bound_cpu, else the current binding as
                                        hwloc reports it for that topology (its whole machine for a foreign XML) */
    int affinity_outside_gpu;        /* 1 if the GPU was found and affinity is not a subset of its CPUs (warn) */
    char note[DR_BINDING_STR];       /* why something degraded, "; "-separated; "" if all fine */
    char share[DR_BINDING_STR];      /* this rank's share of the node's CPUs (modes AUTO and WORKERS), "" if none */
    int widened;                     /* 1 if the CPU binding was widened past the launcher's (to a larger share) */
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

/* 1 when the launcher gave this task a CPU allocation of its own that a rank must stay within: Slurm's
 * SLURM_CPUS_PER_TASK set to a number >= 1 (srun --cpus-per-task); else 0. */
int dr_binding_env_task_cpus(void);

/* The CPUs a rank wants before the node is divided, into want: the CPUs this process may use on topo
 * (hwloc_topology_get_allowed_cpuset), narrowed to its current binding when task_allocation (dr_binding_env_task_cpus),
 * then to the locality of GPU pci_bus_id (NULL/"": the CPU backend) where the GPU is found and that leaves any.
 * Returns 0, or -1 (want empty) on bad arguments or no memory. */
int dr_binding_want(hwloc_topology_t topo, const char *pci_bus_id, int task_allocation, hwloc_bitmap_t want);

/* Local rank me's share of the node's CPUs, into share. wants[0..nranks) holds every local rank's dr_binding_want
 * (NULL or empty: a rank that takes no part), the same array on every rank, so that every rank computes the same
 * partition. Ranks wanting the same set form a group; groups, narrowest set first (ties: in the order of their first
 * rank), take their set less the CPUs of earlier groups and less the cores one of whose hardware threads an earlier
 * group took (where that leaves any; all of the set, sharing, when nothing is left: noted) and split the cores there
 * into runs of consecutive cores in topology order, one per rank in rank order, sizes differing by at most one core;
 * fewer cores than ranks split hardware threads instead, fewer of those than ranks share them round-robin (both
 * noted).
 * note gets how the division degraded, "" if it did not (may be NULL). Returns 0, or -1 (share empty) on bad
 * arguments, no memory, or an empty wants[me]. */
int dr_binding_share(hwloc_topology_t topo, hwloc_const_bitmap_t const *wants, int nranks, int me, hwloc_bitmap_t share,
                     char *note, size_t notelen);

/* Locate GPU pci_bus_id (NULL/"": none) in topo; with this_system (from hwloc_topology_is_thissystem) bind as mode
 * says (above) to share (NULL or empty: this rank alone on the node, its whole dr_binding_want). Fills b, keeping
 * b->gpu_index. Returns 0 even degraded (b->note says why), -1 on bad arguments. */
int dr_binding_apply(hwloc_topology_t topo, int this_system, const char *pci_bus_id, dr_bind_mode_t mode,
                     hwloc_const_bitmap_t share, dr_binding_t *b);

/* Bytes of the last-level caches (L3, else L2) that serve any CPU of cpus, summed over the caches; 0 where the
 * topology names none. */
uint64_t dr_binding_cache_bytes(hwloc_topology_t topo, hwloc_const_bitmap_t cpus);

/* Append one reason to b->note, "; "-separated (cut where it does not fit). */
void dr_binding_note_add(dr_binding_t *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;


#ifdef __cplusplus
}
#endif

#endif
