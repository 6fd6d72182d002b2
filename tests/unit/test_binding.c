/* Unit test of src/lib/binding.c without a GPU: argv[1] is the fixtures directory (tests/unit/topologies).
 *   2socket-8gpu.xml  2 packages of 16 cores x 2 PUs (package 0 = PUs 0-15,32-47, package 1 = 16-31,48-63), one NUMA
 *                     node each; GPUs 1a,1c,3d,3f:00.0 on package 0 and 9a,9c,bd,bf:00.0 on package 1, each behind
 *                     a host bridge and a PCIe switch port.
 *   nonuma-4gpu.xml   the same CPUs with the single whole-machine NUMA node hwloc makes when the OS reports none;
 *                     GPUs 1a,1c:00.0 on package 0 and 9a,9c:00.0 on package 1.
 *   cpuonly-6core.xml one package of 6 cores x 2 PUs (core i = PUs i and i+6), no GPU, core 0 not allowed (a cgroup
 *                     cpuset as a Slurm allocation makes): 5 cores, PUs 1-5,7-11.
 * Optional argv[2..]: PCI bus ids of this machine's GPUs (nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader),
 * which are then located and bound for real. Returns 0 when every check passes, 1 otherwise. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "report.h" /* dr_report_mark_shared: which ranks share a GPU */

static int failures, checks;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        checks++;                                                                                                      \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                                    \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

#define CHECK_STR(got, want) CHECK(strcmp((got), (want)) == 0, "got \"%s\", want \"%s\"", (got), (want))
#define CHECK_INT(got, want) CHECK((got) == (want), "got %d, want %d", (int)(got), (int)(want))
#define CHECK_HAS(s, sub) CHECK(strstr((s), (sub)) != NULL, "\"%s\" lacks \"%s\"", (s), (sub))

static const char *const rank_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                                        "PMI_LOCAL_RANK"};

static void clear_rank_vars(void)
{
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++)
        unsetenv(rank_vars[i]);
}

static void test_env_local_rank(void)
{
    const char *src = "stale";
    clear_rank_vars();
    CHECK_INT(dr_binding_env_local_rank(&src), -1);
    CHECK(src == NULL, "source should be NULL when nothing is set, got %s", src);
    CHECK_INT(dr_binding_env_local_rank(NULL), -1);

    setenv("PMI_LOCAL_RANK", "3", 1);
    CHECK_INT(dr_binding_env_local_rank(&src), 3);
    CHECK(src && strcmp(src, "PMI_LOCAL_RANK") == 0, "source %s", src ? src : "(null)");

    static const char *const garbage[] = {"abc", "-1", "", " 2", "2x", "+2", "1.5", "99999999999999999999"};
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        setenv("OMPI_COMM_WORLD_LOCAL_RANK", garbage[i], 1);
        int r = dr_binding_env_local_rank(&src);
        CHECK(r == 3 && src && strcmp(src, "PMI_LOCAL_RANK") == 0,
              "OMPI_COMM_WORLD_LOCAL_RANK=\"%s\" should be skipped: got %d from %s", garbage[i], r,
              src ? src : "(null)");
    }
    setenv("SLURM_LOCALID", "0", 1);
    CHECK_INT(dr_binding_env_local_rank(&src), 0);
    CHECK(src && strcmp(src, "SLURM_LOCALID") == 0, "source %s", src ? src : "(null)");
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "7", 1);
    CHECK_INT(dr_binding_env_local_rank(&src), 7);
    CHECK(src && strcmp(src, "OMPI_COMM_WORLD_LOCAL_RANK") == 0, "source %s", src ? src : "(null)");
    clear_rank_vars();
    setenv("MPI_LOCALRANKID", "12", 1);
    CHECK_INT(dr_binding_env_local_rank(&src), 12);
    clear_rank_vars();
}

static void test_choose_gpu(void)
{
    char err[256];
    CHECK_INT(dr_binding_choose_gpu(0, 4, 4, 0, 0, err, sizeof err), 0);
    CHECK_STR(err, "");
    CHECK_INT(dr_binding_choose_gpu(3, 4, 4, 0, 0, err, sizeof err), 3);
    CHECK_INT(dr_binding_choose_gpu(1, 2, 8, 0, 0, err, sizeof err), 1);
    CHECK_INT(dr_binding_choose_gpu(0, 1, 1, 0, 0, err, sizeof err), 0);

    CHECK_INT(dr_binding_choose_gpu(0, 4, 2, 0, 0, err, sizeof err), -1);
    CHECK_HAS(err, "4 ranks");
    CHECK_HAS(err, "2 GPUs");
    CHECK_HAS(err, "cfg.share_gpus = 1");
    CHECK(strchr(err, '\n') == NULL, "message should be one line: %s", err);
    CHECK_INT(dr_binding_choose_gpu(0, 3, 1, 0, 0, err, sizeof err), -1);
    CHECK_HAS(err, "3 ranks");
    CHECK_HAS(err, "1 GPU ");

    CHECK_INT(dr_binding_choose_gpu(3, 4, 2, 0, 1, err, sizeof err), 1);
    CHECK_INT(dr_binding_choose_gpu(2, 4, 2, 0, 1, err, sizeof err), 0);
    CHECK_INT(dr_binding_choose_gpu(5, 8, 3, 0, 1, err, sizeof err), 2);

    CHECK_INT(dr_binding_choose_gpu(3, 4, 1, 1, 0, err, sizeof err), 0);
    CHECK_INT(dr_binding_choose_gpu(3, 4, 1, 0, 0, err, sizeof err), -1);

    CHECK_INT(dr_binding_choose_gpu(0, 2, 0, 0, 1, err, sizeof err), -1);
    CHECK_HAS(err, "no GPU visible");
    CHECK_INT(dr_binding_choose_gpu(0, 2, 0, 1, 0, err, sizeof err), -1);
    CHECK_INT(dr_binding_choose_gpu(-1, 2, 2, 0, 0, err, sizeof err), -1);
    CHECK_INT(dr_binding_choose_gpu(2, 2, 2, 0, 0, err, sizeof err), -1);
    CHECK_INT(dr_binding_choose_gpu(0, 4, 2, 0, 0, NULL, 0), -1);
    char tiny[8];
    CHECK_INT(dr_binding_choose_gpu(0, 4, 2, 0, 0, tiny, sizeof tiny), -1);
    CHECK(strlen(tiny) == sizeof tiny - 1, "message cut to the buffer: \"%s\"", tiny);
}

static void test_busid(void)
{
    static const struct {
        const char *in, *want;
    } ok[] = {
        {"0000:1a:00.0", "0000:1a:00.0"},      {"0000:1A:00.0", "0000:1a:00.0"},
        {"00000000:1A:00.0", "0000:1a:00.0"},  {"00000000:BF:00.0", "0000:bf:00.0"},
        {"1a:00.0", "0000:1a:00.0"},           {"0001:9C:1f.7", "0001:9c:1f.7"},
        {"00010000:01:00.0", "10000:01:00.0"}, {"0:3:0.1", "0000:03:00.1"},
    };
    char out[32];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int r = dr_binding_busid_normalize(ok[i].in, out, sizeof out);
        CHECK(r == 0 && strcmp(out, ok[i].want) == 0, "normalize(\"%s\") = %d \"%s\", want \"%s\"", ok[i].in, r, out,
              ok[i].want);
    }
    static const char *const bad[] = {"",           "zz",           "0000:1a:00",        "0000:1a:00.0x",
                                      "0000:1a:00.8", "0000:1a:20.0", "000000000:1a:00.0", "0000:100:00.0",
                                      " 0000:1a:00.0", "0000-1a-00.0", "0x00:1a:00.0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strcpy(out, "junk");
        int r = dr_binding_busid_normalize(bad[i], out, sizeof out);
        CHECK(r == -1 && out[0] == '\0', "normalize(\"%s\") should fail, got %d \"%s\"", bad[i], r, out);
    }
    CHECK_INT(dr_binding_busid_normalize(NULL, out, sizeof out), -1);
    char small[12]; /* one short of "0000:1a:00.0" */
    CHECK_INT(dr_binding_busid_normalize("0000:1a:00.0", small, sizeof small), -1);
    CHECK_STR(small, "");
}

static void test_format_set(void)
{
    hwloc_bitmap_t s = hwloc_bitmap_alloc();
    char buf[DR_BINDING_STR];
    CHECK(s != NULL, "hwloc_bitmap_alloc");
    if (!s)
        return;
    CHECK(hwloc_bitmap_set_range(s, 0, 15) == 0 && hwloc_bitmap_set_range(s, 32, 47) == 0, "set_range");
    CHECK_INT(dr_binding_format_set(buf, sizeof buf, s), 0);
    CHECK_STR(buf, "0-15,32-47");

    hwloc_bitmap_zero(s); /* socket 0 = even CPUs of 256: the list is ~460 characters, the mask 88 */
    for (unsigned i = 0; i < 256; i += 2)
        hwloc_bitmap_set(s, i);
    CHECK_INT(dr_binding_format_set(buf, sizeof buf, s), 1);
    CHECK(strncmp(buf, "0x55555555,", 11) == 0, "hex mask expected, got \"%s\"", buf);

    for (unsigned i = 0; i < 8192; i += 2)
        hwloc_bitmap_set(s, i);
    CHECK_INT(dr_binding_format_set(buf, sizeof buf, s), 2);
    CHECK(strlen(buf) == sizeof buf - 1 && strcmp(buf + sizeof buf - 4, "...") == 0, "cut string, got \"%s\"", buf);

    CHECK_INT(dr_binding_format_set(buf, sizeof buf, NULL), -1);
    CHECK_STR(buf, "");
    hwloc_bitmap_free(s);
}

static int load_fixture(hwloc_topology_t *t, const char *dir, const char *name)
{
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int r = dr_binding_topology_load(t, path, err, sizeof err);
    CHECK(r == 0 && *t != NULL, "loading %s: %s", path, err);
    return r == 0 ? 0 : -1;
}

static void test_load_errors(const char *dir)
{
    char path[1024], err[256];
    hwloc_topology_t t = (hwloc_topology_t)&t; /* must be reset to NULL */
    snprintf(path, sizeof path, "%s/no-such-topology.xml", dir);
    CHECK_INT(dr_binding_topology_load(&t, path, err, sizeof err), -1);
    CHECK(t == NULL, "topology handle not reset on failure");
    CHECK_HAS(err, "no-such-topology.xml");
    CHECK_INT(dr_binding_topology_load(NULL, path, err, sizeof err), -1);
}

static void test_two_sockets(const char *dir)
{
    hwloc_topology_t t;
    if (load_fixture(&t, dir, "2socket-8gpu.xml") < 0)
        return;
    dr_binding_t b;
    CHECK_INT(hwloc_topology_is_thissystem(t), 0);
    CHECK(dr_binding_cache_bytes(t, hwloc_topology_get_topology_cpuset(t)) == 0, "a fixture names no cache");

    /* GPU on package 1, as CUDA spells it (uppercase, 8-digit domain). */
    dr_binding_init(&b);
    b.gpu_index = 5;
    CHECK_INT(dr_binding_apply(t, 0, "00000000:9C:00.0", DR_BIND_AUTO, NULL, &b), 0);
    CHECK_INT(b.gpu_index, 5);
    CHECK_STR(b.pci_bus_id, "0000:9c:00.0");
    CHECK_INT(b.numa_node, 1);
    CHECK_STR(b.gpu_cpuset, "16-31,48-63");
    CHECK_INT(b.dry_run, 1);
    CHECK_INT(b.bound_cpu, 1);
    CHECK_INT(b.bound_mem, 1);
    CHECK_STR(b.affinity, "16-31,48-63");
    CHECK_STR(b.share, "16-31,48-63"); /* alone on the node: all of its GPU's CPUs */
    CHECK_INT(b.widened, 0);           /* a foreign XML's binding is its whole machine: narrowed */
    CHECK_INT(b.affinity_outside_gpu, 0);
    CHECK_STR(b.note, "");

    /* Every GPU maps to its package. */
    static const char *const pkg0[] = {"0000:1a:00.0", "0000:1C:00.0", "0000:3d:00.0", "3f:00.0"};
    static const char *const pkg1[] = {"0000:9a:00.0", "0000:9c:00.0", "0000:BD:00.0", "00000000:bf:00.0"};
    for (int i = 0; i < 4; i++) {
        CHECK_INT(dr_binding_apply(t, 0, pkg0[i], DR_BIND_AUTO, NULL, &b), 0);
        CHECK(b.numa_node == 0 && strcmp(b.gpu_cpuset, "0-15,32-47") == 0 && b.note[0] == '\0',
              "%s: numa %d cpuset \"%s\" note \"%s\"", pkg0[i], b.numa_node, b.gpu_cpuset, b.note);
        CHECK_INT(dr_binding_apply(t, 0, pkg1[i], DR_BIND_AUTO, NULL, &b), 0);
        CHECK(b.numa_node == 1 && strcmp(b.gpu_cpuset, "16-31,48-63") == 0 && b.note[0] == '\0',
              "%s: numa %d cpuset \"%s\" note \"%s\"", pkg1[i], b.numa_node, b.gpu_cpuset, b.note);
    }

    /* Mode NONE: locality reported, nothing (would be) bound; a foreign XML's binding is its whole machine. */
    CHECK_INT(dr_binding_apply(t, 0, "0000:1a:00.0", DR_BIND_NONE, NULL, &b), 0);
    CHECK_INT(b.numa_node, 0);
    CHECK_STR(b.gpu_cpuset, "0-15,32-47");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(b.bound_mem, 0);
    CHECK_STR(b.affinity, "0-63");
    CHECK_STR(b.share, "");
    CHECK_INT(b.affinity_outside_gpu, 1);
    CHECK_STR(b.note, "");

    /* Mode WORKERS: the share is recorded, the process's binding is not touched. */
    CHECK_INT(dr_binding_apply(t, 0, "0000:1a:00.0", DR_BIND_WORKERS, NULL, &b), 0);
    CHECK_STR(b.share, "0-15,32-47");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(b.bound_mem, 0);
    CHECK_INT(b.widened, 0);
    CHECK_STR(b.affinity, "0-63");

    /* A bus id that is not there, and one that does not parse: degrade with a note. */
    CHECK_INT(dr_binding_apply(t, 0, "0000:af:00.0", DR_BIND_AUTO, NULL, &b), 0);
    CHECK_HAS(b.note, "not found");
    CHECK_HAS(b.note, "0000:af:00.0");
    CHECK_STR(b.pci_bus_id, "0000:af:00.0");
    CHECK_INT(b.numa_node, -1);
    CHECK_STR(b.gpu_cpuset, "");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(b.bound_mem, 0);
    CHECK_INT(b.affinity_outside_gpu, 0);
    CHECK_STR(b.affinity, "0-63");
    CHECK_INT(dr_binding_apply(t, 0, "GPU-0", DR_BIND_AUTO, NULL, &b), 0);
    CHECK_HAS(b.note, "PCI bus id 'gpu-0'");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(dr_binding_apply(t, 0, "00010000:9c:00.0", DR_BIND_AUTO, NULL, &b), 0);
    CHECK_HAS(b.note, "domain");
    CHECK_INT(b.numa_node, -1);

    /* No GPU (CPU backend), alone: its share is the whole machine, which spans both NUMA nodes (memory not bound). */
    dr_binding_init(&b);
    CHECK_INT(dr_binding_apply(t, 0, NULL, DR_BIND_AUTO, NULL, &b), 0);
    CHECK_INT(b.gpu_index, -1);
    CHECK_STR(b.pci_bus_id, "");
    CHECK_STR(b.note, "");
    CHECK_STR(b.affinity, "0-63");
    CHECK_STR(b.share, "0-63");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(b.numa_node, -1);
    CHECK_INT(b.bound_mem, 0);
    CHECK_INT(b.affinity_outside_gpu, 0);

    /* The CPU backend given a share within package 1: bound there, memory on its NUMA node. */
    hwloc_bitmap_t share = hwloc_bitmap_alloc();
    CHECK(share && hwloc_bitmap_list_sscanf(share, "24-31,56-63") == 0, "parsing a share");
    CHECK_INT(dr_binding_apply(t, 0, NULL, DR_BIND_AUTO, share, &b), 0);
    CHECK_STR(b.share, "24-31,56-63");
    CHECK_STR(b.affinity, "24-31,56-63");
    CHECK_INT(b.bound_cpu, 1);
    CHECK_INT(b.numa_node, 1);
    CHECK_INT(b.bound_mem, 1);
    /* ... across both packages: no NUMA node of its own. */
    CHECK(hwloc_bitmap_list_sscanf(share, "12-19,44-51") == 0, "parsing a share");
    CHECK_INT(dr_binding_apply(t, 0, NULL, DR_BIND_AUTO, share, &b), 0);
    CHECK_INT(b.numa_node, -1);
    CHECK_INT(b.bound_mem, 0);
    /* ... in mode WORKERS: recorded, nothing bound. */
    CHECK_INT(dr_binding_apply(t, 0, NULL, DR_BIND_WORKERS, share, &b), 0);
    CHECK_STR(b.share, "12-19,44-51");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(b.bound_mem, 0);
    CHECK_STR(b.affinity, "0-63");
    hwloc_bitmap_free(share);

    /* Claiming a foreign XML is this machine must not bind anything (hwloc would silently accept it). */
    CHECK_INT(dr_binding_apply(t, 1, "0000:bd:00.0", DR_BIND_AUTO, NULL, &b), 0);
    CHECK_INT(b.dry_run, 1);
    CHECK_HAS(b.note, "HWLOC_THISSYSTEM");
    CHECK_INT(b.numa_node, 1);

    /* Invalid arguments. */
    CHECK_INT(dr_binding_apply(NULL, 0, "0000:1a:00.0", DR_BIND_AUTO, NULL, &b), -1);
    CHECK_INT(dr_binding_apply(t, 0, "0000:1a:00.0", DR_BIND_AUTO, NULL, NULL), -1);
    CHECK_INT(dr_binding_apply(t, 0, "0000:1a:00.0", (dr_bind_mode_t)7, NULL, &b), -1);
    CHECK_INT(dr_binding_apply(t, 0, "0000:1a:00.0", (dr_bind_mode_t)-1, NULL, &b), -1);
    hwloc_topology_destroy(t);
}

static void test_no_numa(const char *dir)
{
    hwloc_topology_t t;
    if (load_fixture(&t, dir, "nonuma-4gpu.xml") < 0)
        return;
    dr_binding_t b;
    dr_binding_init(&b);
    b.gpu_index = 2;
    CHECK_INT(dr_binding_apply(t, 0, "0000:9A:00.0", DR_BIND_AUTO, NULL, &b), 0);
    CHECK_INT(b.numa_node, -1);
    CHECK_HAS(b.note, "NUMA");
    CHECK_STR(b.gpu_cpuset, "16-31,48-63");
    CHECK_INT(b.bound_cpu, 1);
    CHECK_INT(b.bound_mem, 0);
    CHECK_STR(b.affinity, "16-31,48-63");
    CHECK_INT(b.affinity_outside_gpu, 0);
    hwloc_topology_destroy(t);
}

static void test_mark_shared(void)
{
    enum { N = 10 };
    static const char hosts[N][64] = {"a", "a", "a", "b", "b", "b", "a", "a", "b", "b"};
    static const struct {
        int gpu;
        const char *bus;
        int want;
    } r[N] = {
        {0, "0000:1a:00.0", 1}, /* a: same bus as rank 2 */
        {1, "0000:1c:00.0", 0},
        {0, "0000:1a:00.0", 1},
        {0, "0000:1a:00.0", 0}, /* b: same bus as on host a, other host */
        {0, "", 1},             /* b: no bus ids, same ordinal as rank 5 */
        {0, "", 1},
        {-1, "", 0},            /* a: CPU backend ranks never share */
        {-1, "", 0},
        {1, "", 0},             /* b: ordinal 1 without bus id vs ... */
        {1, "0000:9a:00.0", 0}, /* ... ordinal 1 with one: cannot tell, not flagged */
    };
    dreduce_context_info_t b[N]; /* what the report gathers from each rank */
    int shared[N];
    for (int i = 0; i < N; i++) {
        memset(&b[i], 0, sizeof b[i]);
        strcpy(b[i].host, hosts[i]);
        b[i].gpu = r[i].gpu;
        strcpy(b[i].pci_bus_id, r[i].bus);
        shared[i] = -1;
    }
    dr_report_mark_shared(b, N, shared);
    for (int i = 0; i < N; i++)
        CHECK(shared[i] == r[i].want, "rank %d: shared %d, want %d", i, shared[i], r[i].want);
    /* One GPU per task (every ordinal 0) with distinct bus ids: nothing shared. */
    for (int i = 0; i < N; i++) {
        b[i].gpu = 0;
        snprintf(b[i].pci_bus_id, sizeof b[i].pci_bus_id, "0000:%02x:00.0", 0x10 + i);
    }
    dr_report_mark_shared(b, N, shared);
    for (int i = 0; i < N; i++)
        CHECK(shared[i] == 0, "rank %d: shared %d, want 0", i, shared[i]);
    dr_report_mark_shared(NULL, N, shared);
    for (int i = 0; i < N; i++)
        CHECK(shared[i] == 0, "NULL table: rank %d shared %d", i, shared[i]);
    dr_report_mark_shared(b, 0, shared); /* must not touch anything */
}

/* ---- Dividing a node among its ranks (dr_binding_share) ---------------------------------------------------------- */

#define MAX_RANKS 16

/* Cores of t meeting set. */
static int cores_meeting(hwloc_topology_t t, hwloc_const_bitmap_t set)
{
    int n = 0;
    for (hwloc_obj_t c = NULL; (c = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_CORE, c)) != NULL;)
        n += hwloc_bitmap_intersects(c->cpuset, set);
    return n;
}

/* Every rank's share of n ranks wanting wants[0..n): each must succeed, lie within its want, and be the same when
 * computed again. shares[i] are allocated here (free_shares). */
static void compute_shares(hwloc_topology_t t, const char *what, hwloc_bitmap_t *wants, int n, hwloc_bitmap_t *shares,
                           char notes[][DR_BINDING_STR])
{
    hwloc_bitmap_t again = hwloc_bitmap_alloc();
    for (int i = 0; i < n; i++) {
        shares[i] = hwloc_bitmap_alloc();
        int rc = dr_binding_share(t, (hwloc_const_bitmap_t const *)wants, n, i, shares[i], notes[i], DR_BINDING_STR);
        char got[DR_BINDING_STR], want[DR_BINDING_STR];
        dr_binding_format_set(got, sizeof got, shares[i]);
        dr_binding_format_set(want, sizeof want, wants[i]);
        CHECK(rc == 0 && !hwloc_bitmap_iszero(shares[i]), "%s: rank %d of %d: rc %d share \"%s\"", what, i, n, rc, got);
        CHECK(hwloc_bitmap_isincluded(shares[i], wants[i]), "%s: rank %d of %d: share %s outside its want %s", what,
              i, n, got, want);
        dr_binding_share(t, (hwloc_const_bitmap_t const *)wants, n, i, again, NULL, 0);
        CHECK(hwloc_bitmap_isequal(again, shares[i]), "%s: rank %d of %d: a second division differs", what, i, n);
    }
    hwloc_bitmap_free(again);
}

static void free_shares(hwloc_bitmap_t *shares, int n)
{
    for (int i = 0; i < n; i++)
        hwloc_bitmap_free(shares[i]);
}

/* n ranks wanting wants[0..n), whose distinct sets do not overlap, with at least as many cores in each set as ranks
 * want it: shares pairwise disjoint, each group's shares cover its set, each share whole cores of the set, and the
 * shares of a group within one core of each other in size. */
static void check_division(hwloc_topology_t t, const char *what, hwloc_bitmap_t *wants, int n)
{
    hwloc_bitmap_t shares[MAX_RANKS], covered = hwloc_bitmap_alloc(), part = hwloc_bitmap_alloc();
    char notes[MAX_RANKS][DR_BINDING_STR];
    compute_shares(t, what, wants, n, shares, notes);
    for (int i = 0; i < n; i++) {
        CHECK_STR(notes[i], "");
        for (int j = i + 1; j < n; j++)
            CHECK(!hwloc_bitmap_intersects(shares[i], shares[j]), "%s: ranks %d and %d of %d share CPUs", what, i, j,
                  n);
        /* Whole cores: a core the share meets is in it as far as the want has it. */
        for (hwloc_obj_t c = NULL; (c = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_CORE, c)) != NULL;) {
            hwloc_bitmap_and(part, c->cpuset, wants[i]);
            CHECK(!hwloc_bitmap_intersects(c->cpuset, shares[i]) || hwloc_bitmap_isincluded(part, shares[i]),
                  "%s: rank %d of %d has part of core %u", what, i, n, c->os_index);
        }
        hwloc_bitmap_zero(covered);
        int lo = 1 << 30, hi = 0;
        for (int j = 0; j < n; j++) {
            if (!hwloc_bitmap_isequal(wants[j], wants[i]))
                continue;
            hwloc_bitmap_or(covered, covered, shares[j]);
            const int c = cores_meeting(t, shares[j]);
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
        char got[DR_BINDING_STR], want[DR_BINDING_STR];
        dr_binding_format_set(got, sizeof got, covered);
        dr_binding_format_set(want, sizeof want, wants[i]);
        CHECK(hwloc_bitmap_isequal(covered, wants[i]), "%s: the shares of rank %d's group cover %s, not %s", what, i,
              got, want);
        CHECK(hi - lo <= 1, "%s: rank %d's group has shares of %d to %d cores", what, i, lo, hi);
    }
    free_shares(shares, n);
    hwloc_bitmap_free(covered);
    hwloc_bitmap_free(part);
}

/* CPU backend ranks: every one wants every allowed CPU. */
static void check_cpu_ranks(hwloc_topology_t t, const char *fixture)
{
    static const int counts[] = {1, 2, 4, 8};
    hwloc_bitmap_t wants[MAX_RANKS];
    for (int i = 0; i < MAX_RANKS; i++) {
        wants[i] = hwloc_bitmap_alloc();
        CHECK_INT(dr_binding_want(t, NULL, 0, wants[i]), 0);
        CHECK(hwloc_bitmap_isequal(wants[i], hwloc_topology_get_allowed_cpuset(t)), "%s: CPU rank wants all", fixture);
    }
    const int cores = cores_meeting(t, wants[0]);
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        char what[128];
        snprintf(what, sizeof what, "%s, %d CPU backend ranks", fixture, counts[k]);
        if (counts[k] <= cores) {
            check_division(t, what, wants, counts[k]);
            continue;
        }
        /* More ranks than cores: hardware threads, disjoint, covering, noted; more ranks than those: one each,
         * shared round-robin. */
        const int pus = hwloc_bitmap_weight(wants[0]);
        hwloc_bitmap_t shares[MAX_RANKS], covered = hwloc_bitmap_alloc();
        char notes[MAX_RANKS][DR_BINDING_STR];
        compute_shares(t, what, wants, counts[k], shares, notes);
        for (int i = 0; i < counts[k]; i++) {
            CHECK_HAS(notes[i], counts[k] <= pus ? "share cores" : "share CPUs");
            hwloc_bitmap_or(covered, covered, shares[i]);
            for (int j = i + 1; j < counts[k]; j++)
                CHECK(counts[k] > pus || !hwloc_bitmap_intersects(shares[i], shares[j]),
                      "%s: ranks %d and %d share CPUs", what, i, j);
            if (counts[k] > pus)
                CHECK(hwloc_bitmap_weight(shares[i]) == 1 && hwloc_bitmap_isequal(shares[i], shares[i % pus]),
                      "%s: rank %d shares the CPU of rank %d", what, i, i % pus);
        }
        CHECK(hwloc_bitmap_isequal(covered, wants[0]), "%s: the shares do not cover the node", what);
        free_shares(shares, counts[k]);
        hwloc_bitmap_free(covered);
    }
    for (int i = 0; i < MAX_RANKS; i++)
        hwloc_bitmap_free(wants[i]);
}

/* GPU ranks: rank i drives GPU busids[i % ngpus] and wants its locality. */
static void check_gpu_ranks(hwloc_topology_t t, const char *fixture, const char *const *busids, int ngpus)
{
    static const int counts[] = {1, 2, 4, 8};
    hwloc_bitmap_t wants[MAX_RANKS];
    for (int i = 0; i < MAX_RANKS; i++) {
        wants[i] = hwloc_bitmap_alloc();
        CHECK_INT(dr_binding_want(t, busids[i % ngpus], 0, wants[i]), 0);
    }
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        char what[128];
        snprintf(what, sizeof what, "%s, %d GPU ranks", fixture, counts[k]);
        check_division(t, what, wants, counts[k]);
    }
    for (int i = 0; i < MAX_RANKS; i++)
        hwloc_bitmap_free(wants[i]);
}

/* The share of rank me of n ranks wanting the sets listed (hwloc lists), as a list; its note in note. */
static void share_of(hwloc_topology_t t, const char *const *lists, int n, int me, char *out, char *note)
{
    hwloc_bitmap_t wants[MAX_RANKS], share = hwloc_bitmap_alloc();
    for (int i = 0; i < n; i++) {
        wants[i] = hwloc_bitmap_alloc();
        if (lists[i])
            hwloc_bitmap_list_sscanf(wants[i], lists[i]);
    }
    int rc = dr_binding_share(t, (hwloc_const_bitmap_t const *)wants, n, me, share, note, DR_BINDING_STR);
    dr_binding_format_set(out, DR_BINDING_STR, share);
    if (rc != 0)
        snprintf(out, DR_BINDING_STR, "rc %d", rc);
    for (int i = 0; i < n; i++)
        hwloc_bitmap_free(wants[i]);
    hwloc_bitmap_free(share);
}

static void test_share(const char *dir)
{
    static const char *const gpus8[] = {"0000:1a:00.0", "0000:1c:00.0", "0000:3d:00.0", "0000:3f:00.0",
                                        "0000:9a:00.0", "0000:9c:00.0", "0000:bd:00.0", "0000:bf:00.0"};
    static const char *const gpus4[] = {"0000:1a:00.0", "0000:1c:00.0", "0000:9a:00.0", "0000:9c:00.0"};
    char got[DR_BINDING_STR], note[DR_BINDING_STR];
    hwloc_topology_t t;
    if (load_fixture(&t, dir, "2socket-8gpu.xml") == 0) {
        check_cpu_ranks(t, "2socket-8gpu");
        check_gpu_ranks(t, "2socket-8gpu", gpus8, 8);
        /* Two CPU backend ranks: a package each (consecutive cores in topology order). */
        const char *all2[] = {"0-63", "0-63"};
        share_of(t, all2, 2, 0, got, note);
        CHECK_STR(got, "0-15,32-47");
        share_of(t, all2, 2, 1, got, note);
        CHECK_STR(got, "16-31,48-63");
        /* Eight ranks on the 8 GPUs: 4 cores each, next to their GPU. */
        const char *pkgs[] = {"0-15,32-47", "0-15,32-47", "0-15,32-47", "0-15,32-47",
                              "16-31,48-63", "16-31,48-63", "16-31,48-63", "16-31,48-63"};
        share_of(t, pkgs, 8, 1, got, note);
        CHECK_STR(got, "4-7,36-39");
        share_of(t, pkgs, 8, 7, got, note);
        CHECK_STR(got, "28-31,60-63");
        /* A narrower want (a Slurm task's binding) is never exceeded; the later group divides the rest. */
        const char *narrow[] = {"2,34", "0-63", "0-63"};
        share_of(t, narrow, 3, 0, got, note);
        CHECK_STR(got, "2,34");
        CHECK_STR(note, "");
        share_of(t, narrow, 3, 1, got, note);
        CHECK_STR(got, "0-1,3-16,32-33,35-48");
        share_of(t, narrow, 3, 2, got, note);
        CHECK_STR(got, "17-31,49-63");
        /* ... and where the wider group's first rank is lower: the narrower group still divides first, and the
         * wider one takes the rest. */
        const char *narrow_last[] = {"0-63", "2,34"};
        share_of(t, narrow_last, 2, 1, got, note);
        CHECK_STR(got, "2,34");
        CHECK_STR(note, "");
        share_of(t, narrow_last, 2, 0, got, note);
        CHECK_STR(got, "0-1,3-33,35-63");
        /* A narrow group inside a wide one that comes first: its cores stay its own, whole (the wide group gets no
         * hardware thread of them: 32-35 are 0-3's siblings). */
        const char *inside[] = {"0-63", "0-3", "0-3"};
        share_of(t, inside, 3, 1, got, note);
        CHECK_STR(got, "0-1");
        share_of(t, inside, 3, 2, got, note);
        CHECK_STR(got, "2-3");
        share_of(t, inside, 3, 0, got, note);
        CHECK_STR(got, "4-31,36-63");
        CHECK_STR(note, "");
        /* Fewer cores than ranks: hardware threads; fewer of those: shared round-robin. */
        const char *core[] = {"4,36", "4,36", "4,36"};
        share_of(t, core, 2, 1, got, note);
        CHECK_STR(got, "36");
        CHECK_HAS(note, "share cores");
        share_of(t, core, 3, 2, got, note);
        CHECK_STR(got, "4");
        CHECK_HAS(note, "share CPUs");
        /* A want taken whole by narrower groups: shared, and said. */
        const char *crowded[] = {"0-1", "2-3", "0-3"};
        share_of(t, crowded, 3, 2, got, note);
        CHECK_STR(got, "0-3");
        CHECK_HAS(note, "other ranks' shares");
        share_of(t, crowded, 3, 0, got, note);
        CHECK_STR(got, "0-1");
        CHECK_STR(note, "");
        /* Ranks without a want (their setup failed) take no part; such a rank gets nothing. */
        const char *gaps[] = {NULL, "0-63", NULL, "0-63"};
        share_of(t, gaps, 4, 1, got, note);
        CHECK_STR(got, "0-15,32-47");
        share_of(t, gaps, 4, 0, got, note);
        CHECK_STR(got, "rc -1");
        /* Bad arguments. */
        hwloc_bitmap_t s = hwloc_bitmap_alloc();
        hwloc_const_bitmap_t w[1] = {hwloc_topology_get_allowed_cpuset(t)};
        CHECK_INT(dr_binding_share(NULL, w, 1, 0, s, NULL, 0), -1);
        CHECK_INT(dr_binding_share(t, NULL, 1, 0, s, NULL, 0), -1);
        CHECK_INT(dr_binding_share(t, w, 1, 1, s, NULL, 0), -1);
        CHECK_INT(dr_binding_share(t, w, 0, 0, s, NULL, 0), -1);
        CHECK_INT(dr_binding_share(t, w, 1, 0, NULL, NULL, 0), -1);
        CHECK_INT(dr_binding_share(t, w, 1, 0, s, NULL, 0), 0);
        CHECK(hwloc_bitmap_isequal(s, w[0]), "one rank: the whole node");
        CHECK_INT(dr_binding_want(NULL, NULL, 0, s), -1);
        CHECK(hwloc_bitmap_iszero(s), "dr_binding_want with no topology leaves want empty");
        /* A GPU that is not there wants the whole node. */
        CHECK_INT(dr_binding_want(t, "0000:af:00.0", 0, s), 0);
        CHECK(hwloc_bitmap_isequal(s, w[0]), "a GPU not found: the whole node");
        hwloc_bitmap_free(s);
        hwloc_topology_destroy(t);
    }
    if (load_fixture(&t, dir, "nonuma-4gpu.xml") == 0) {
        check_cpu_ranks(t, "nonuma-4gpu");
        check_gpu_ranks(t, "nonuma-4gpu", gpus4, 4);
        hwloc_topology_destroy(t);
    }
    if (load_fixture(&t, dir, "cpuonly-6core.xml") == 0) {
        check_cpu_ranks(t, "cpuonly-6core");
        /* The cgroup's cores only, split 3 + 2; a third rank would get 2 + 2 + 1. */
        const char *two[] = {"1-5,7-11", "1-5,7-11"};
        share_of(t, two, 2, 0, got, note);
        CHECK_STR(got, "1-3,7-9");
        share_of(t, two, 2, 1, got, note);
        CHECK_STR(got, "4-5,10-11");
        const char *three[] = {"1-5,7-11", "1-5,7-11", "1-5,7-11"};
        share_of(t, three, 3, 2, got, note);
        CHECK_STR(got, "5,11");
        /* The CPU backend alone there, bound by the launcher to nothing in particular: the allowed CPUs. */
        dr_binding_t b;
        dr_binding_init(&b);
        CHECK_INT(dr_binding_apply(t, 0, NULL, DR_BIND_AUTO, NULL, &b), 0);
        CHECK_STR(b.share, "1-5,7-11");
        CHECK_INT(b.numa_node, -1);
        CHECK_INT(b.bound_mem, 0);
        hwloc_topology_destroy(t);
    }
}

static int is_nvidia_gpu(hwloc_obj_t o)
{
    unsigned cls = o->attr->pcidev.class_id >> 8;
    return o->attr->pcidev.vendor_id == 0x10de && cls == 0x03;
}

static void *wait_at(void *barrier)
{
    pthread_barrier_wait(barrier);
    return NULL;
}

/* The machine we run on: real reads, and real binding where this process can be bound harmlessly. */
static void test_this_machine(int nbusids, char **busids)
{
    hwloc_topology_t t;
    char err[256];
    if (dr_binding_topology_load(&t, NULL, err, sizeof err) < 0) {
        CHECK(0, "loading this machine's topology: %s", err);
        return;
    }
    CHECK_INT(hwloc_topology_is_thissystem(t), 1);
    dr_binding_t b;
    hwloc_bitmap_t orig = hwloc_bitmap_alloc();
    CHECK(orig && hwloc_get_cpubind(t, orig, HWLOC_CPUBIND_PROCESS) == 0, "reading this process's binding");
    char orig_str[DR_BINDING_STR];
    dr_binding_format_set(orig_str, sizeof orig_str, orig);

    /* A share equal to the binding changes nothing. */
    dr_binding_init(&b);
    CHECK_INT(dr_binding_apply(t, 1, NULL, DR_BIND_AUTO, orig, &b), 0);
    CHECK_INT(b.dry_run, 0);
    CHECK_STR(b.affinity, orig_str);
    CHECK_STR(b.share, orig_str);
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(b.widened, 0);
    CHECK_STR(b.note, "");

    CHECK_INT(dr_binding_apply(t, 1, "0000:fe:1f.7", DR_BIND_AUTO, orig, &b), 0);
    CHECK_HAS(b.note, "not found");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(b.bound_mem, 0);
    CHECK_STR(b.affinity, orig_str);

    /* A launcher's binding to one PU (mpirun -np 1 or 2 binds each rank to a core): */
    const hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(t);
    char allowed_str[DR_BINDING_STR], one[DR_BINDING_STR];
    dr_binding_format_set(allowed_str, sizeof allowed_str, allowed);
    hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(t, allowed, HWLOC_OBJ_PU, 0);
    hwloc_bitmap_t now = hwloc_bitmap_alloc();
    if (pu && hwloc_bitmap_weight(allowed) > 1 && hwloc_set_cpubind(t, pu->cpuset, HWLOC_CPUBIND_PROCESS) == 0) {
        dr_binding_format_set(one, sizeof one, pu->cpuset);
        /* AUTO: widened to the rank's share (alone here: every allowed CPU), and said so. */
        CHECK_INT(dr_binding_apply(t, 1, NULL, DR_BIND_AUTO, NULL, &b), 0);
        CHECK_INT(b.bound_cpu, 1);
        CHECK_INT(b.widened, 1);
        CHECK_STR(b.share, allowed_str);
        CHECK_STR(b.affinity, allowed_str);
        CHECK_HAS(b.note, "launcher bound this rank to 1 CPU");
        CHECK_HAS(b.note, "widened to its share");
        CHECK(hwloc_get_cpubind(t, now, HWLOC_CPUBIND_PROCESS) == 0 && hwloc_bitmap_isequal(now, allowed),
              "the process is bound to its share");
        /* The calling thread narrowed again while another thread keeps the widened set (the process's binding, the
         * union of its threads', still reads as the share): AUTO binds again and reads the calling thread back. */
        pthread_t other;
        pthread_barrier_t hold;
        if (pthread_barrier_init(&hold, NULL, 2) == 0 && pthread_create(&other, NULL, wait_at, &hold) == 0) {
            CHECK(hwloc_set_cpubind(t, pu->cpuset, HWLOC_CPUBIND_THREAD) == 0, "binding this thread to one PU");
            CHECK(hwloc_get_cpubind(t, now, HWLOC_CPUBIND_PROCESS) == 0 && hwloc_bitmap_isequal(now, allowed),
                  "the process's binding is the union of its threads'");
            CHECK_INT(dr_binding_apply(t, 1, NULL, DR_BIND_AUTO, NULL, &b), 0);
            CHECK(b.bound_cpu == 1 && b.widened == 1 && strcmp(b.affinity, allowed_str) == 0,
                  "AUTO, a narrowed thread: bound_cpu %d widened %d affinity \"%s\" (want \"%s\")", b.bound_cpu,
                  b.widened, b.affinity, allowed_str);
            CHECK(hwloc_get_cpubind(t, now, HWLOC_CPUBIND_THREAD) == 0 && hwloc_bitmap_isequal(now, allowed),
                  "the calling thread is bound to its share");
            pthread_barrier_wait(&hold);
            pthread_join(other, NULL);
            pthread_barrier_destroy(&hold);
        } else {
            CHECK(0, "starting a second thread");
        }
        /* NONE keeps the launcher's binding exactly; WORKERS too, recording the share. */
        CHECK(hwloc_set_cpubind(t, pu->cpuset, HWLOC_CPUBIND_PROCESS) == 0, "binding to one PU again");
        CHECK_INT(dr_binding_apply(t, 1, NULL, DR_BIND_NONE, NULL, &b), 0);
        CHECK(b.bound_cpu == 0 && b.widened == 0 && strcmp(b.affinity, one) == 0 && b.share[0] == '\0',
              "NONE: bound_cpu %d widened %d affinity \"%s\" (want \"%s\") share \"%s\"", b.bound_cpu, b.widened,
              b.affinity, one, b.share);
        CHECK_INT(dr_binding_apply(t, 1, NULL, DR_BIND_WORKERS, NULL, &b), 0);
        CHECK(b.bound_cpu == 0 && b.widened == 0 && strcmp(b.affinity, one) == 0 && strcmp(b.share, allowed_str) == 0,
              "WORKERS: bound_cpu %d widened %d affinity \"%s\" (want \"%s\") share \"%s\"", b.bound_cpu,
              b.widened, b.affinity, one, b.share);
        CHECK(hwloc_get_cpubind(t, now, HWLOC_CPUBIND_PROCESS) == 0 && hwloc_bitmap_isequal(now, pu->cpuset),
              "NONE and WORKERS leave the process's binding alone");
        /* A Slurm task allocation (--cpus-per-task) bound to that PU: its share is the PU, never wider. */
        setenv("SLURM_CPUS_PER_TASK", "1", 1);
        CHECK_INT(dr_binding_apply(t, 1, NULL, DR_BIND_AUTO, NULL, &b), 0);
        CHECK(b.bound_cpu == 0 && b.widened == 0 && strcmp(b.affinity, one) == 0 && strcmp(b.share, one) == 0,
              "Slurm: bound_cpu %d widened %d affinity \"%s\" share \"%s\" (want both \"%s\")", b.bound_cpu,
              b.widened, b.affinity, b.share, one);
        hwloc_bitmap_t want = hwloc_bitmap_alloc();
        CHECK_INT(dr_binding_want(t, NULL, dr_binding_env_task_cpus(), want), 0);
        CHECK(hwloc_bitmap_isequal(want, pu->cpuset), "Slurm: a rank wants its allocation only");
        hwloc_bitmap_free(want);
        unsetenv("SLURM_CPUS_PER_TASK");
        CHECK(hwloc_set_cpubind(t, orig, HWLOC_CPUBIND_PROCESS) == 0, "restoring the binding");
    } else {
        printf("skip: a single allowed CPU, or cannot bind to one PU here (widening checks)\n");
    }
    hwloc_bitmap_free(now);

    /* The last-level caches: one PU's is the L3 (else L2) above it, and all of them hold at least as much. */
    hwloc_obj_t llc = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_L3CACHE, NULL);
    if (!llc) llc = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_L2CACHE, NULL);
    if (llc && llc->cpuset) {
        hwloc_obj_t pu0 = hwloc_get_obj_inside_cpuset_by_type(t, llc->cpuset, HWLOC_OBJ_PU, 0);
        const uint64_t one = pu0 ? dr_binding_cache_bytes(t, pu0->cpuset) : 0, all = dr_binding_cache_bytes(t, allowed);
        CHECK(pu0 && one == llc->attr->cache.size && all >= one, "cache bytes: one PU %llu (its cache %llu), all %llu",
              (unsigned long long)one, (unsigned long long)llc->attr->cache.size, (unsigned long long)all);
    } else {
        printf("skip: no L3 or L2 in this machine's topology (cache bytes)\n");
    }

    /* This machine divided among 1, 2 and 4 CPU backend ranks. */
    check_cpu_ranks(t, "this machine");

    /* GPUs, as the caller will pass them: found, bound next to them, memory on their node when there are several. */
    int multi_numa = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) > 1, ngpu = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(t, o)) != NULL;)
        ngpu += is_nvidia_gpu(o);
    for (int i = 0; i < nbusids; i++) {
        dr_binding_init(&b);
        b.gpu_index = i;
        CHECK_INT(dr_binding_apply(t, 1, busids[i], DR_BIND_AUTO, NULL, &b), 0);
        printf("gpu %d %s: numa %d cpuset %s affinity %s bound cpu %d mem %d note \"%s\"\n", i, b.pci_bus_id,
               b.numa_node, b.gpu_cpuset, b.affinity, b.bound_cpu, b.bound_mem, b.note);
        CHECK(b.gpu_cpuset[0] != '\0', "%s: locality not found: %s", busids[i], b.note);
        CHECK_INT(b.affinity_outside_gpu, 0);
        if (multi_numa)
            CHECK(b.numa_node >= 0 && b.bound_mem == 1, "%s: numa %d bound_mem %d: %s", busids[i], b.numa_node,
                  b.bound_mem, b.note);
        CHECK(hwloc_set_cpubind(t, orig, HWLOC_CPUBIND_PROCESS) == 0, "restoring the binding");
    }
    printf("this machine: %d PCI GPU(s) in the topology, %d bus id(s) given, binding \"%s\"\n", ngpu, nbusids,
           orig_str);
    hwloc_bitmap_free(orig);
    hwloc_topology_destroy(t);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FIXTURES_DIR [GPU_PCI_BUS_ID...]\n", argv[0]);
        return 1;
    }
    unsetenv("HWLOC_THISSYSTEM"); /* fixtures must load as foreign machines */
    unsetenv("HWLOC_XMLFILE");
    unsetenv("SLURM_CPUS_PER_TASK"); /* set only where a check asks for a task allocation */
    test_env_local_rank();
    test_choose_gpu();
    test_busid();
    test_format_set();
    test_load_errors(argv[1]);
    test_two_sockets(argv[1]);
    test_no_numa(argv[1]);
    test_share(argv[1]);
    test_mark_shared();
    test_this_machine(argc - 2, argv + 2);
    printf("%s: %d of %d checks failed\n", failures ? "FAIL" : "PASS", failures, checks);
    return failures ? 1 : 0;
}
