/* Unit test of src/lib/binding.c without a GPU: argv[1] is the fixtures directory (tests/unit/topologies).
 *   2socket-8gpu.xml  2 packages of 16 cores x 2 PUs (package 0 = PUs 0-15,32-47, package 1 = 16-31,48-63), one NUMA
 *                     node each; GPUs 1a,1c,3d,3f:00.0 on package 0 and 9a,9c,bd,bf:00.0 on package 1, each behind
 *                     a host bridge and a PCIe switch port.
 *   nonuma-4gpu.xml   the same CPUs with the single whole-machine NUMA node hwloc makes when the OS reports none;
 *                     GPUs 1a,1c:00.0 on package 0 and 9a,9c:00.0 on package 1.
 * Optional argv[2..]: PCI bus ids of this machine's GPUs (nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader),
 * which are then located and bound for real. Returns 0 when every check passes, 1 otherwise. */
#define _POSIX_C_SOURCE 200809L

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

    /* GPU on package 1, as CUDA spells it (uppercase, 8-digit domain). */
    dr_binding_init(&b);
    b.gpu_index = 5;
    CHECK_INT(dr_binding_apply(t, 0, "00000000:9C:00.0", DR_BIND_AUTO, &b), 0);
    CHECK_INT(b.gpu_index, 5);
    CHECK_STR(b.pci_bus_id, "0000:9c:00.0");
    CHECK_INT(b.numa_node, 1);
    CHECK_STR(b.gpu_cpuset, "16-31,48-63");
    CHECK_INT(b.dry_run, 1);
    CHECK_INT(b.bound_cpu, 1);
    CHECK_INT(b.bound_mem, 1);
    CHECK_STR(b.affinity, "16-31,48-63");
    CHECK_INT(b.affinity_outside_gpu, 0);
    CHECK_STR(b.note, "");

    /* Every GPU maps to its package. */
    static const char *const pkg0[] = {"0000:1a:00.0", "0000:1C:00.0", "0000:3d:00.0", "3f:00.0"};
    static const char *const pkg1[] = {"0000:9a:00.0", "0000:9c:00.0", "0000:BD:00.0", "00000000:bf:00.0"};
    for (int i = 0; i < 4; i++) {
        CHECK_INT(dr_binding_apply(t, 0, pkg0[i], DR_BIND_AUTO, &b), 0);
        CHECK(b.numa_node == 0 && strcmp(b.gpu_cpuset, "0-15,32-47") == 0 && b.note[0] == '\0',
              "%s: numa %d cpuset \"%s\" note \"%s\"", pkg0[i], b.numa_node, b.gpu_cpuset, b.note);
        CHECK_INT(dr_binding_apply(t, 0, pkg1[i], DR_BIND_AUTO, &b), 0);
        CHECK(b.numa_node == 1 && strcmp(b.gpu_cpuset, "16-31,48-63") == 0 && b.note[0] == '\0',
              "%s: numa %d cpuset \"%s\" note \"%s\"", pkg1[i], b.numa_node, b.gpu_cpuset, b.note);
    }

    /* Mode NONE: locality reported, nothing (would be) bound; a foreign XML's binding is its whole machine. */
    CHECK_INT(dr_binding_apply(t, 0, "0000:1a:00.0", DR_BIND_NONE, &b), 0);
    CHECK_INT(b.numa_node, 0);
    CHECK_STR(b.gpu_cpuset, "0-15,32-47");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(b.bound_mem, 0);
    CHECK_STR(b.affinity, "0-63");
    CHECK_INT(b.affinity_outside_gpu, 1);
    CHECK_STR(b.note, "");

    /* A bus id that is not there, and one that does not parse: degrade with a note. */
    CHECK_INT(dr_binding_apply(t, 0, "0000:af:00.0", DR_BIND_AUTO, &b), 0);
    CHECK_HAS(b.note, "not found");
    CHECK_HAS(b.note, "0000:af:00.0");
    CHECK_STR(b.pci_bus_id, "0000:af:00.0");
    CHECK_INT(b.numa_node, -1);
    CHECK_STR(b.gpu_cpuset, "");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(b.bound_mem, 0);
    CHECK_INT(b.affinity_outside_gpu, 0);
    CHECK_STR(b.affinity, "0-63");
    CHECK_INT(dr_binding_apply(t, 0, "GPU-0", DR_BIND_AUTO, &b), 0);
    CHECK_HAS(b.note, "PCI bus id 'gpu-0'");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(dr_binding_apply(t, 0, "00010000:9c:00.0", DR_BIND_AUTO, &b), 0);
    CHECK_HAS(b.note, "domain");
    CHECK_INT(b.numa_node, -1);

    /* No GPU (CPU backend): only the affinity. */
    dr_binding_init(&b);
    CHECK_INT(dr_binding_apply(t, 0, NULL, DR_BIND_AUTO, &b), 0);
    CHECK_INT(b.gpu_index, -1);
    CHECK_STR(b.pci_bus_id, "");
    CHECK_STR(b.note, "");
    CHECK_STR(b.affinity, "0-63");
    CHECK_INT(b.affinity_outside_gpu, 0);

    /* Claiming a foreign XML is this machine must not bind anything (hwloc would silently accept it). */
    CHECK_INT(dr_binding_apply(t, 1, "0000:bd:00.0", DR_BIND_AUTO, &b), 0);
    CHECK_INT(b.dry_run, 1);
    CHECK_HAS(b.note, "HWLOC_THISSYSTEM");
    CHECK_INT(b.numa_node, 1);

    /* Invalid arguments. */
    CHECK_INT(dr_binding_apply(NULL, 0, "0000:1a:00.0", DR_BIND_AUTO, &b), -1);
    CHECK_INT(dr_binding_apply(t, 0, "0000:1a:00.0", DR_BIND_AUTO, NULL), -1);
    CHECK_INT(dr_binding_apply(t, 0, "0000:1a:00.0", (dr_bind_mode_t)7, &b), -1);
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
    CHECK_INT(dr_binding_apply(t, 0, "0000:9A:00.0", DR_BIND_AUTO, &b), 0);
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

static int is_nvidia_gpu(hwloc_obj_t o)
{
    unsigned cls = o->attr->pcidev.class_id >> 8;
    return o->attr->pcidev.vendor_id == 0x10de && cls == 0x03;
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

    dr_binding_init(&b);
    CHECK_INT(dr_binding_apply(t, 1, NULL, DR_BIND_AUTO, &b), 0);
    CHECK_INT(b.dry_run, 0);
    CHECK_STR(b.affinity, orig_str);
    CHECK_STR(b.note, "");

    CHECK_INT(dr_binding_apply(t, 1, "0000:fe:1f.7", DR_BIND_AUTO, &b), 0);
    CHECK_HAS(b.note, "not found");
    CHECK_INT(b.bound_cpu, 0);
    CHECK_INT(b.bound_mem, 0);
    CHECK_STR(b.affinity, orig_str);

    /* A binding already inside the device's locality (here: one PU) is kept, not widened. */
    hwloc_obj_t pci = hwloc_get_next_pcidev(t, NULL);
    hwloc_obj_t pu = pci ? hwloc_get_obj_inside_cpuset_by_type(t, hwloc_get_non_io_ancestor_obj(t, pci)->cpuset,
                                                               HWLOC_OBJ_PU, 0)
                         : NULL;
    if (pu && hwloc_set_cpubind(t, pu->cpuset, HWLOC_CPUBIND_PROCESS) == 0) {
        char id[32], one[DR_BINDING_STR];
        snprintf(id, sizeof id, "%04x:%02x:%02x.%x", (unsigned)pci->attr->pcidev.domain, pci->attr->pcidev.bus,
                 pci->attr->pcidev.dev, pci->attr->pcidev.func);
        dr_binding_format_set(one, sizeof one, pu->cpuset);
        CHECK_INT(dr_binding_apply(t, 1, id, DR_BIND_AUTO, &b), 0);
        CHECK(b.bound_cpu == 0 && strcmp(b.affinity, one) == 0 && !b.affinity_outside_gpu,
              "%s: bound_cpu %d affinity \"%s\" (want kept \"%s\") outside %d note \"%s\"", id, b.bound_cpu,
              b.affinity, one, b.affinity_outside_gpu, b.note);
        CHECK(hwloc_set_cpubind(t, orig, HWLOC_CPUBIND_PROCESS) == 0, "restoring the binding");
    } else {
        printf("skip: no PCI device or cannot bind to one PU here (keep-binding check)\n");
    }

    /* GPUs, as the caller will pass them: found, bound next to them, memory on their node when there are several. */
    int multi_numa = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) > 1, ngpu = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(t, o)) != NULL;)
        ngpu += is_nvidia_gpu(o);
    for (int i = 0; i < nbusids; i++) {
        dr_binding_init(&b);
        b.gpu_index = i;
        CHECK_INT(dr_binding_apply(t, 1, busids[i], DR_BIND_AUTO, &b), 0);
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
    test_env_local_rank();
    test_choose_gpu();
    test_busid();
    test_format_set();
    test_load_errors(argv[1]);
    test_two_sockets(argv[1]);
    test_no_numa(argv[1]);
    test_mark_shared();
    test_this_machine(argc - 2, argv + 2);
    printf("%s: %d of %d checks failed\n", failures ? "FAIL" : "PASS", failures, checks);
    return failures ? 1 : 0;
}
