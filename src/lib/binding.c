/* Rank placement next to its GPU: see binding.h. */
#include "binding.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#ifdef HWLOC_HAVE_32BITS_PCI_DOMAIN
#define DR_PCI_DOMAIN_MAX 0xffffffffu
#else
#define DR_PCI_DOMAIN_MAX 0xffffu /* hwloc's default ABI stores 16-bit domains (and truncates wider ones) */
#endif

#if defined(__GNUC__)
#define DR_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DR_PRINTF(f, a)
#endif

static void set_msg(char *dst, size_t n, const char *fmt, ...) DR_PRINTF(3, 4);
static void set_msg(char *dst, size_t n, const char *fmt, ...)
{
    if (!dst || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vsnprintf(dst, n, fmt, ap) < 0)
        dst[0] = '\0';
    va_end(ap);
}

/* Append one reason to b->note, "; "-separated; a note that does not fit is cut. */
static void note_vadd(dr_binding_t *b, const char *fmt, va_list ap)
{
    size_t used = strlen(b->note);
    if (used > 0) {
        if (used + 3 >= sizeof b->note)
            return;
        memcpy(b->note + used, "; ", 3);
        used += 2;
    }
    if (vsnprintf(b->note + used, sizeof b->note - used, fmt, ap) < 0)
        b->note[used] = '\0';
}

static void note_add(dr_binding_t *b, const char *fmt, ...) DR_PRINTF(2, 3);
static void note_add(dr_binding_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_vadd(b, fmt, ap);
    va_end(ap);
}

void dr_binding_note_add(dr_binding_t *b, const char *fmt, ...)
{
    if (!b || !fmt)
        return;
    va_list ap;
    va_start(ap, fmt);
    note_vadd(b, fmt, ap);
    va_end(ap);
}

/* A non-empty string of decimal digits that fits an int; no sign, no spaces. */
static int parse_rank(const char *s)
{
    if (!s || !*s)
        return -1;
    long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > INT_MAX)
            return -1;
    }
    return (int)v;
}

int dr_binding_env_local_rank(const char **source)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                                       "PMI_LOCAL_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        int r = parse_rank(getenv(vars[i]));
        if (r >= 0) {
            if (source)
                *source = vars[i];
            return r;
        }
    }
    if (source)
        *source = NULL;
    return -1;
}

const char *dr_binding_env_xml(void)
{
    const char *p = getenv("DREDUCE_HWLOC_XML");
    return (p && *p) ? p : NULL;
}

int dr_binding_env_task_cpus(void)
{
    return parse_rank(getenv("SLURM_CPUS_PER_TASK")) >= 1;
}

int dr_binding_choose_gpu(int local_rank, int local_size, int ngpus, int one_gpu_per_task, int allow_share, char *err,
                          size_t errlen)
{
    set_msg(err, errlen, "%s", "");
    if (local_size < 1 || local_rank < 0 || local_rank >= local_size) {
        set_msg(err, errlen, "invalid local rank %d of %d ranks on this node", local_rank, local_size);
        return -1;
    }
    if (ngpus < 1) {
        set_msg(err, errlen,
                "no GPU visible to local rank %d (check CUDA_VISIBLE_DEVICES and the launcher's GPU options)",
                local_rank);
        return -1;
    }
    if (one_gpu_per_task)
        return 0;
    if (local_size > ngpus && !allow_share) {
        set_msg(err, errlen,
                "%d ranks on this node but only %d GPU%s visible: use %s to put several ranks on one GPU, or "
                "launch fewer ranks",
                local_size, ngpus, ngpus == 1 ? "" : "s", DR_NAME("cfg.share_gpus = 1", "--share-gpus"));
        return -1;
    }
    return local_rank % ngpus;
}

/* Up to maxdigits hex digits at *p (at least one); advances *p. */
static int parse_hex(const char **p, int maxdigits, unsigned long *out)
{
    unsigned long v = 0;
    int n = 0;
    for (;;) {
        char c = **p;
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            break;
        if (++n > maxdigits)
            return -1;
        v = v * 16 + (unsigned long)d;
        (*p)++;
    }
    if (n == 0)
        return -1;
    *out = v;
    return 0;
}

static int parse_busid(const char *in, unsigned long *dom, unsigned long *bus, unsigned long *dev, unsigned long *fn)
{
    if (!in)
        return -1;
    const char *p = in;
    unsigned long a, b;
    if (parse_hex(&p, 8, &a) < 0 || *p++ != ':' || parse_hex(&p, 8, &b) < 0)
        return -1;
    if (*p == ':') { /* domain:bus:dev.fn */
        p++;
        *dom = a;
        *bus = b;
        if (parse_hex(&p, 2, dev) < 0)
            return -1;
    } else { /* bus:dev.fn */
        *dom = 0;
        *bus = a;
        *dev = b;
    }
    if (*p++ != '.' || parse_hex(&p, 1, fn) < 0 || *p != '\0')
        return -1;
    if (*bus > 0xff || *dev > 0x1f || *fn > 7)
        return -1;
    return 0;
}

int dr_binding_busid_normalize(const char *in, char *out, size_t outlen)
{
    unsigned long dom, bus, dev, fn;
    if (!out || outlen == 0)
        return -1;
    out[0] = '\0';
    if (parse_busid(in, &dom, &bus, &dev, &fn) < 0)
        return -1;
    int n = snprintf(out, outlen, "%04lx:%02lx:%02lx.%lx", dom, bus, dev, fn);
    if (n < 0 || (size_t)n >= outlen) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

int dr_binding_format_set(char *dst, size_t dstlen, hwloc_const_bitmap_t set)
{
    if (!dst || dstlen == 0)
        return -1;
    dst[0] = '\0';
    if (!set)
        return -1;
    int n = hwloc_bitmap_list_snprintf(dst, dstlen, set);
    if (n >= 0 && (size_t)n < dstlen)
        return 0;
    /* Interleaved numberings (socket 0 = even CPUs) make long lists; the mask is bounded by the CPU count. */
    n = hwloc_bitmap_snprintf(dst, dstlen, set);
    if (n < 0) {
        dst[0] = '\0';
        return -1;
    }
    if ((size_t)n < dstlen)
        return 1;
    if (dstlen >= 4)
        memcpy(dst + dstlen - 4, "...", 4);
    return 2;
}

int dr_binding_topology_load(hwloc_topology_t *topo, const char *xml_path, char *err, size_t errlen)
{
    set_msg(err, errlen, "%s", "");
    if (!topo) {
        set_msg(err, errlen, "no topology handle given");
        return -1;
    }
    *topo = NULL;
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) < 0) {
        set_msg(err, errlen, "hwloc_topology_init failed: %s", strerror(errno));
        return -1;
    }
    if (xml_path && hwloc_topology_set_xml(t, xml_path) < 0) {
        set_msg(err, errlen, "cannot read hwloc XML topology '%s': %s", xml_path, strerror(errno));
        goto fail;
    }
    if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) < 0) {
        set_msg(err, errlen, "hwloc cannot keep PCI devices in the topology: %s", strerror(errno));
        goto fail;
    }
    /* Of the caches only the last levels are used (dr_binding_cache_bytes); the others only cost discovery time. If
     * they cannot be filtered out they are merely kept. */
    (void)hwloc_topology_set_cache_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    (void)hwloc_topology_set_icache_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    (void)hwloc_topology_set_type_filter(t, HWLOC_OBJ_L2CACHE, HWLOC_TYPE_FILTER_KEEP_ALL);
    (void)hwloc_topology_set_type_filter(t, HWLOC_OBJ_L3CACHE, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_load(t) < 0) {
        if (xml_path)
            set_msg(err, errlen, "cannot load hwloc XML topology '%s': %s", xml_path, strerror(errno));
        else
            set_msg(err, errlen, "hwloc cannot discover this machine's topology: %s", strerror(errno));
        goto fail;
    }
    *topo = t;
    return 0;
fail:
    hwloc_topology_destroy(t);
    return -1;
}

void dr_binding_init(dr_binding_t *b)
{
    if (!b)
        return;
    memset(b, 0, sizeof *b);
    b->gpu_index = -1;
    b->numa_node = -1;
}

/* Fill b's GPU locality fields from the PCI device; gpu/nodeset get the GPU's cpuset and its NUMA nodes.
 * Returns 1 when the GPU was found (its cpuset may still be empty), 0 otherwise (noted). */
static int locate_gpu(hwloc_topology_t topo, const char *pci_bus_id, dr_binding_t *b, hwloc_bitmap_t gpu,
                      hwloc_bitmap_t nodeset)
{
    unsigned long dom, bus, dev, fn;
    if (parse_busid(pci_bus_id, &dom, &bus, &dev, &fn) < 0) {
        size_t i;
        for (i = 0; pci_bus_id[i] && i + 1 < sizeof b->pci_bus_id; i++)
            b->pci_bus_id[i] = (char)((pci_bus_id[i] >= 'A' && pci_bus_id[i] <= 'Z') ? pci_bus_id[i] - 'A' + 'a'
                                                                                       : pci_bus_id[i]);
        b->pci_bus_id[i] = '\0';
        note_add(b, "cannot parse PCI bus id '%s': its locality is unknown, memory not bound", b->pci_bus_id);
        return 0;
    }
    if (dr_binding_busid_normalize(pci_bus_id, b->pci_bus_id, sizeof b->pci_bus_id) < 0)
        b->pci_bus_id[0] = '\0'; /* cannot happen: it parsed and fits */
    if (dom > DR_PCI_DOMAIN_MAX) {
        note_add(b, "PCI domain of GPU %s is wider than this hwloc build supports: its locality is unknown, memory "
                 "not bound", b->pci_bus_id);
        return 0;
    }
    hwloc_obj_t pci = hwloc_get_pcidev_by_busid(topo, (unsigned)dom, (unsigned)bus, (unsigned)dev, (unsigned)fn);
    if (!pci) {
        note_add(b, "GPU %s not found in the topology: its locality is unknown, memory not bound", b->pci_bus_id);
        return 0;
    }
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, pci);
    if (!anc || !anc->cpuset || !anc->nodeset) {
        note_add(b, "GPU %s has no CPU locality in the topology: memory not bound", b->pci_bus_id);
        return 0;
    }
    if (hwloc_bitmap_and(gpu, anc->cpuset, hwloc_topology_get_allowed_cpuset(topo)) < 0 ||
        hwloc_bitmap_copy(nodeset, anc->nodeset) < 0) {
        note_add(b, "out of memory reading the locality of GPU %s", b->pci_bus_id);
        return 0;
    }
    if (hwloc_bitmap_iszero(gpu))
        note_add(b, "none of the CPUs near GPU %s are available to this process: its share is taken from those that "
                 "are", b->pci_bus_id);
    else
        (void)dr_binding_format_set(b->gpu_cpuset, sizeof b->gpu_cpuset, gpu);

    int total = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    int local = hwloc_bitmap_weight(nodeset);
    if (total <= 1) {
        note_add(b, "no NUMA information in topology (a single NUMA node): memory not bound");
    } else if (local == 1) {
        b->numa_node = hwloc_bitmap_first(nodeset);
    } else if (anc == hwloc_get_root_obj(topo)) {
        note_add(b, "GPU %s has no locality finer than the whole machine: memory not bound", b->pci_bus_id);
    } else {
        char list[64];
        (void)dr_binding_format_set(list, sizeof list, nodeset);
        note_add(b, "GPU %s is near %d NUMA nodes (%s): memory not bound", b->pci_bus_id, local, list);
    }
    return 1;
}

int dr_binding_want(hwloc_topology_t topo, const char *pci_bus_id, int task_allocation, hwloc_bitmap_t want)
{
    if (!want)
        return -1;
    hwloc_bitmap_zero(want);
    if (!topo)
        return -1;
    hwloc_bitmap_t cur = hwloc_bitmap_alloc(), gpu = hwloc_bitmap_alloc(), nodeset = hwloc_bitmap_alloc(),
                   narrower = hwloc_bitmap_alloc();
    int rc = -1;
    if (!cur || !gpu || !nodeset || !narrower || hwloc_bitmap_copy(want, hwloc_topology_get_allowed_cpuset(topo)) < 0)
        goto done;
    /* The allocation bounds everything after it: a GPU's CPUs outside it are not this task's to take. One that
     * cannot be read gives no want at all (no share, nothing bound) rather than the whole node. */
    if (task_allocation && (hwloc_get_cpubind(topo, cur, HWLOC_CPUBIND_PROCESS) != 0 ||
                            hwloc_bitmap_and(narrower, cur, want) < 0 || hwloc_bitmap_iszero(narrower) ||
                            hwloc_bitmap_copy(want, narrower) < 0))
        goto done;
    if (pci_bus_id && *pci_bus_id) {
        dr_binding_t scratch; /* its notes are dr_binding_apply's to give */
        dr_binding_init(&scratch);
        if (locate_gpu(topo, pci_bus_id, &scratch, gpu, nodeset) && hwloc_bitmap_and(narrower, gpu, want) == 0 &&
            !hwloc_bitmap_iszero(narrower) && hwloc_bitmap_copy(want, narrower) < 0)
            goto done;
    }
    rc = 0;
done:
    if (rc != 0)
        hwloc_bitmap_zero(want);
    hwloc_bitmap_free(cur);
    hwloc_bitmap_free(gpu);
    hwloc_bitmap_free(nodeset);
    hwloc_bitmap_free(narrower);
    return rc;
}

static int takes_part(hwloc_const_bitmap_t want)
{
    return want && !hwloc_bitmap_iszero(want);
}

/* Cores of topo meeting set, or -1 when some CPU of set lies in no core (a topology without cores). */
static int cores_meeting(hwloc_topology_t topo, hwloc_const_bitmap_t set, hwloc_bitmap_t covered)
{
    int n = 0;
    hwloc_bitmap_zero(covered);
    for (hwloc_obj_t core = NULL; (core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core)) != NULL;) {
        if (!core->cpuset || !hwloc_bitmap_intersects(core->cpuset, set))
            continue;
        n++;
        if (hwloc_bitmap_or(covered, covered, core->cpuset) < 0)
            return -1;
    }
    return hwloc_bitmap_isincluded(set, covered) ? n : -1;
}

/* Hardware threads (PUs) of topo in set. */
static int pus_in(hwloc_topology_t topo, hwloc_const_bitmap_t set)
{
    int n = 0;
    for (hwloc_obj_t pu = NULL; (pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu)) != NULL;)
        n += hwloc_bitmap_isset(set, pu->os_index);
    return n;
}

/* The k-th of m contiguous runs of n items: [*begin, *end), sizes differing by at most one. */
static void run_of(int n, int k, int m, int *begin, int *end)
{
    const int q = n / m, r = n % m;
    *begin = k * q + (k < r ? k : r);
    *end = *begin + q + (k < r ? 1 : 0);
}

/* Rank k of m dividing pool: see dr_binding_share. */
static int split_pool(hwloc_topology_t topo, hwloc_const_bitmap_t pool, int m, int k, hwloc_bitmap_t share,
                      char *note, size_t notelen)
{
    hwloc_bitmap_t covered = hwloc_bitmap_alloc(), part = hwloc_bitmap_alloc();
    int rc = -1;
    if (!covered || !part)
        goto done;
    char where[DR_BINDING_STR];
    (void)dr_binding_format_set(where, sizeof where, pool);
    const int ncores = cores_meeting(topo, pool, covered), npus = pus_in(topo, pool);
    int begin, end, i = 0;
    if (ncores >= m) {
        /* Consecutive cores in topology order: a share stays within one package or NUMA node where it can. */
        run_of(ncores, k, m, &begin, &end);
        for (hwloc_obj_t core = NULL; (core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core)) != NULL;) {
            if (!core->cpuset || !hwloc_bitmap_intersects(core->cpuset, pool))
                continue;
            if (i >= begin && i < end &&
                (hwloc_bitmap_and(part, core->cpuset, pool) < 0 || hwloc_bitmap_or(share, share, part) < 0))
                goto done;
            i++;
        }
    } else if (npus > 0) {
        if (npus >= m) {
            run_of(npus, k, m, &begin, &end);
            if (ncores > 0)
                set_msg(note, notelen, "%d ranks for the %d cores of %s: ranks share cores, split by hardware thread",
                        m, ncores, where);
        } else {
            begin = k % npus;
            end = begin + 1;
            set_msg(note, notelen, "%d ranks for the %d CPU%s of %s: ranks share CPUs", m, npus, npus == 1 ? "" : "s",
                    where);
        }
        for (hwloc_obj_t pu = NULL; (pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu)) != NULL;) {
            if (!hwloc_bitmap_isset(pool, pu->os_index))
                continue;
            if (i >= begin && i < end && hwloc_bitmap_set(share, pu->os_index) < 0)
                goto done;
            i++;
        }
    }
    rc = hwloc_bitmap_iszero(share) ? -1 : 0;
done:
    hwloc_bitmap_free(covered);
    hwloc_bitmap_free(part);
    return rc;
}

int dr_binding_share(hwloc_topology_t topo, hwloc_const_bitmap_t const *wants, int nranks, int me, hwloc_bitmap_t share,
                     char *note, size_t notelen)
{
    set_msg(note, notelen, "%s", "");
    if (!share)
        return -1;
    hwloc_bitmap_zero(share);
    if (!topo || !wants || nranks < 1 || me < 0 || me >= nranks || !takes_part(wants[me]))
        return -1;
    hwloc_bitmap_t taken = hwloc_bitmap_alloc(), pool = hwloc_bitmap_alloc(), whole = hwloc_bitmap_alloc();
    int *order = malloc((size_t)nranks * sizeof *order);
    int rc = -1, ngroups = 0;
    if (!taken || !pool || !whole || !order)
        goto done;
    /* The groups, each by its first rank, narrowest set first (ties: by first rank): a narrow set inside a wide one
     * (a GPU's CPUs inside a rank's that wants every CPU) keeps its CPUs, the wide one takes the rest. */
    for (int first = 0; first < nranks; first++) {
        if (!takes_part(wants[first]))
            continue;
        int earlier = 0; /* a group is met at its first rank only */
        for (int j = 0; j < first && !earlier; j++)
            earlier = takes_part(wants[j]) && hwloc_bitmap_isequal(wants[j], wants[first]);
        if (earlier)
            continue;
        const int w = hwloc_bitmap_weight(wants[first]);
        int at = ngroups++;
        for (; at > 0 && hwloc_bitmap_weight(wants[order[at - 1]]) > w; at--)
            order[at] = order[at - 1];
        order[at] = first;
    }
    for (int gi = 0; gi < ngroups; gi++) {
        const int first = order[gi];
        if (hwloc_bitmap_andnot(pool, wants[first], taken) < 0)
            goto done;
        /* Whole cores only: a core one of whose hardware threads is taken is left out, where that leaves any. */
        if (hwloc_bitmap_copy(whole, pool) < 0)
            goto done;
        for (hwloc_obj_t core = NULL; (core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core)) != NULL;)
            if (core->cpuset && hwloc_bitmap_intersects(core->cpuset, taken) &&
                hwloc_bitmap_andnot(whole, whole, core->cpuset) < 0)
                goto done;
        if (!hwloc_bitmap_iszero(whole) && hwloc_bitmap_copy(pool, whole) < 0)
            goto done;
        const int crowded = hwloc_bitmap_iszero(pool);
        if (crowded && hwloc_bitmap_copy(pool, wants[first]) < 0)
            goto done;
        if (!hwloc_bitmap_isequal(wants[first], wants[me])) {
            if (hwloc_bitmap_or(taken, taken, pool) < 0)
                goto done;
            continue;
        }
        int m = 0, k = 0;
        for (int j = first; j < nranks; j++) {
            if (!takes_part(wants[j]) || !hwloc_bitmap_isequal(wants[j], wants[me]))
                continue;
            if (j == me)
                k = m;
            m++;
        }
        char split_note[DR_BINDING_STR] = "";
        rc = split_pool(topo, pool, m, k, share, split_note, sizeof split_note);
        if (crowded) {
            char where[DR_BINDING_STR];
            (void)dr_binding_format_set(where, sizeof where, pool);
            set_msg(note, notelen, "the CPUs it wants (%s) are all in other ranks' shares (another GPU's, or "
                    "another binding's): it shares them%s%s", where, split_note[0] ? "; " : "", split_note);
        } else {
            set_msg(note, notelen, "%s", split_note);
        }
        break;
    }
done:
    if (rc != 0)
        hwloc_bitmap_zero(share);
    hwloc_bitmap_free(taken);
    hwloc_bitmap_free(pool);
    hwloc_bitmap_free(whole);
    free(order);
    return rc;
}

/* Cores of topo meeting set (its PUs where the topology has no cores). */
static int count_cores(hwloc_topology_t topo, hwloc_const_bitmap_t set)
{
    hwloc_bitmap_t covered = hwloc_bitmap_alloc();
    int n = covered ? cores_meeting(topo, set, covered) : -1;
    hwloc_bitmap_free(covered);
    return n >= 0 ? n : pus_in(topo, set);
}

/* The CPU backend's memory: the NUMA node of its share, when the share lies within exactly one of several. */
static int share_numa_node(hwloc_topology_t topo, hwloc_const_bitmap_t share, hwloc_bitmap_t nodeset)
{
    if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE) <= 1 || hwloc_cpuset_to_nodeset(topo, share, nodeset) < 0 ||
        hwloc_bitmap_weight(nodeset) != 1)
        return -1;
    return hwloc_bitmap_first(nodeset);
}

uint64_t dr_binding_cache_bytes(hwloc_topology_t topo, hwloc_const_bitmap_t cpus)
{
    static const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE};
    for (size_t l = 0; topo && cpus && l < sizeof levels / sizeof levels[0]; ++l) {
        uint64_t bytes = 0;
        for (hwloc_obj_t c = NULL; (c = hwloc_get_next_obj_by_type(topo, levels[l], c)) != NULL;)
            if (c->cpuset && hwloc_bitmap_intersects(c->cpuset, cpus)) bytes += c->attr->cache.size;
        if (bytes) return bytes;
    }
    return 0;
}

int dr_binding_apply(hwloc_topology_t topo, int this_system, const char *pci_bus_id, dr_bind_mode_t mode,
                     hwloc_const_bitmap_t share_in, dr_binding_t *b)
{
    if (!topo || !b || (mode != DR_BIND_AUTO && mode != DR_BIND_NONE && mode != DR_BIND_WORKERS))
        return -1;
    int gpu_index = b->gpu_index;
    dr_binding_init(b);
    b->gpu_index = gpu_index;
    b->dry_run = !this_system;
    if (this_system && !hwloc_topology_is_thissystem(topo)) {
        b->dry_run = 1;
        note_add(b, "topology is not flagged as this machine (XML without HWLOC_THISSYSTEM=1): nothing bound");
    }

    hwloc_bitmap_t cur = hwloc_bitmap_alloc(), gpu = hwloc_bitmap_alloc(), nodeset = hwloc_bitmap_alloc(),
                   share = hwloc_bitmap_alloc(), whole = hwloc_bitmap_alloc();
    if (!cur || !gpu || !nodeset || !share || !whole) {
        note_add(b, "out of memory: nothing bound");
        goto done;
    }
    /* The calling thread's binding is the one that matters: the CPU backend's threads are created from it. A process
     * binding (the union of its threads' on Linux) can be wider: a caller that narrowed its own thread after an
     * earlier AUTO context widened them all (Python's os.sched_setaffinity(0, ...) is the thread's). */
    int have_cur = hwloc_get_cpubind(topo, cur, HWLOC_CPUBIND_THREAD) == 0 && !hwloc_bitmap_iszero(cur);
    if (!have_cur)
        have_cur = hwloc_get_cpubind(topo, cur, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(cur);
    if (!have_cur)
        note_add(b, "cannot read the CPU binding: %s", strerror(errno));
    /* AUTO leaves a binding alone only where every thread of the process is on the calling thread's set: STRICT, since
     * without it the process's binding is the union of its threads' (hwloc on Linux fails with EXDEV where they
     * differ). */
    const int whole_process_cur =
        have_cur && hwloc_get_cpubind(topo, whole, HWLOC_CPUBIND_PROCESS | HWLOC_CPUBIND_STRICT) == 0 &&
        hwloc_bitmap_isequal(whole, cur);
    char launcher[DR_BINDING_STR] = "";
    const int launcher_cpus = have_cur ? hwloc_bitmap_weight(cur) : 0;
    if (have_cur)
        (void)dr_binding_format_set(launcher, sizeof launcher, cur);

    int found = pci_bus_id && *pci_bus_id && locate_gpu(topo, pci_bus_id, b, gpu, nodeset);

    if (mode != DR_BIND_NONE) {
        const int given = share_in && !hwloc_bitmap_iszero(share_in);
        if (given ? hwloc_bitmap_copy(share, share_in) < 0
                  : dr_binding_want(topo, pci_bus_id, dr_binding_env_task_cpus(), share) < 0)
            hwloc_bitmap_zero(share);
        if (!hwloc_bitmap_iszero(share))
            (void)dr_binding_format_set(b->share, sizeof b->share, share);
        else
            note_add(b, "no share of the node's CPUs could be computed: %s",
                     mode == DR_BIND_AUTO ? "CPU binding left as is" : "worker threads not placed");
    }
    if (mode == DR_BIND_AUTO && !hwloc_bitmap_iszero(share) &&
        !(whole_process_cur && hwloc_bitmap_isequal(cur, share))) {
        if (b->dry_run) {
            b->bound_cpu = 1;
        } else if (hwloc_set_cpubind(topo, share, HWLOC_CPUBIND_PROCESS) == 0) {
            b->bound_cpu = 1;
        } else {
            note_add(b, "binding CPUs to its share %s failed (%s): left as is", b->share, strerror(errno));
        }
        if (b->bound_cpu && have_cur && hwloc_bitmap_weight(share) > launcher_cpus) {
            b->widened = 1;
            note_add(b, "launcher bound this rank to %d CPU%s (%s); widened to its share %s of the node's %d cores",
                     launcher_cpus, launcher_cpus == 1 ? "" : "s", launcher, b->share,
                     count_cores(topo, hwloc_topology_get_allowed_cpuset(topo)));
        }
    }
    if (mode == DR_BIND_AUTO && !(pci_bus_id && *pci_bus_id) && !hwloc_bitmap_iszero(share))
        b->numa_node = share_numa_node(topo, share, nodeset);
    if (mode == DR_BIND_AUTO && b->numa_node >= 0) {
        if (b->dry_run) {
            b->bound_mem = 1;
        } else if (hwloc_set_membind(topo, nodeset, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET) == 0) {
            b->bound_mem = 1;
        } else {
            note_add(b, "binding memory to NUMA node %d failed (%s): left as is", b->numa_node, strerror(errno));
        }
    }

    if (!b->dry_run) {
        have_cur = hwloc_get_cpubind(topo, cur, HWLOC_CPUBIND_THREAD) == 0 && !hwloc_bitmap_iszero(cur);
        if (!have_cur)
            have_cur = hwloc_get_cpubind(topo, cur, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(cur);
        if (!have_cur)
            note_add(b, "cannot read the CPU binding back: %s", strerror(errno));
    } else if (b->bound_cpu) {
        have_cur = hwloc_bitmap_copy(cur, share) == 0;
    }
    if (have_cur) {
        (void)dr_binding_format_set(b->affinity, sizeof b->affinity, cur);
        b->affinity_outside_gpu = found && !hwloc_bitmap_isincluded(cur, gpu);
    }

done:
    hwloc_bitmap_free(cur);
    hwloc_bitmap_free(gpu);
    hwloc_bitmap_free(nodeset);
    hwloc_bitmap_free(share);
    hwloc_bitmap_free(whole);
    return 0;
}
