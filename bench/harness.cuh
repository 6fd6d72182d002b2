/* The harness of dreduce-bench (bench/dreduce_bench.cu says what each mode measures and how): its command line,
 * the JSON writer, CUB's rows and their names, the device context with the hold kernel and the timing of reps,
 * the inputs with their host references, and one measurement each of ours, CUB and the copy. */
#ifndef DREDUCE_BENCH_HARNESS_CUH
#define DREDUCE_BENCH_HARNESS_CUH

#include <stdint.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <type_traits>
#include <time.h>
#include <unistd.h>
#include <vector>

#include "cub_rows.cuh"
#include "accum.h"
#include "table.h"
#include "generate.h"
#include "launch.h"
#include "dreduce.h" /* before the block below: reference.h includes it, and it includes mpi.h (C++ there) */
extern "C" {
#include "parallel.h"
#include "reference.h"
#include "stats.h"
}

#define CK(call)                                                                                               \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "CUDA error: %s: %s (%s) at %s:%d\n", #call, cudaGetErrorString(e_),               \
                    cudaGetErrorName(e_), __FILE__, __LINE__);                                                 \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)

namespace {

constexpr size_t kMiB = (size_t)1 << 20;
constexpr size_t kRotateBelow = 120 * kMiB; /* inputs up to this size rotate over several buffers */
constexpr size_t kRotateTotal = 240 * kMiB; /* ... that together hold at least this many bytes */
constexpr int kChunk = 32;                  /* reps enqueued behind one hold kernel */
constexpr unsigned long long kHoldTimeoutNs = 2000000000ull;
constexpr int kSlotBytes = 1024; /* one result slot: a dr_partial_t (an exact stats partial's is 608 bytes) */

/* ---------------------------------------------------------------------------------------------------------- */
/* Options */

struct Options {
    int device = 0;
    const char *json = nullptr;
    bool quick = false;
    bool levels = false;
    bool small = false;
    int min_exp = 10, max_exp = 31;
    bool exp_given = false; /* --min-exp/--max-exp: a sweep instead of the default sizes */
    std::vector<size_t> sizes; /* --sizes (overrides the exponents) */
    std::vector<int> blocks{0}; /* 0: dreduce's default for the op and size (dr_gpu_default_block_op) */
    std::vector<std::string> cases; /* --cases filter; empty: all */
    size_t levels_n = (size_t)1 << 24;
    int warmup = -1, reps = -1; /* -1: mode defaults */
    bool have_seed = false;
    uint64_t seed = 0;
    dr_pattern_t data = DR_DATA_RANDOM; /* --data */
    std::string cmdline;
};

void usage(FILE *f)
{
    fprintf(f,
            "usage: dreduce-bench [options]\n"
            "  (default)          performance table: ours (multipass) vs CUB vs copy ceiling, every case and size\n"
            "  --levels           tutorial comparison: every kernel level on 16M int32 sum, vs the tutorial's numbers\n"
            "  --small            small-n latency: us per reduction (batches of 1000; stream and CUDA graph)\n"
            "options:\n"
            "  --device N         CUDA device (default 0)\n"
            "  --json FILE        write every number as JSON to FILE\n"
            "  --quick            few sizes and reps: a smoke test\n"
            "  (sizes: 2^16, 2^20, 2^24, 2^28, 2^30, 2^31 unless --sizes or --min/max-exp give others)\n"
            "  --min-exp E        a sweep from 2^E (default 10); sizes step by 2 in the exponent\n"
            "  --max-exp E        ... up to 2^E (default 31; always included)\n"
            "  --sizes LIST       explicit sizes, comma-separated: 1048576, 16M, 2^24 (overrides --min/max-exp)\n"
            "  --blocks LIST      block sizes for ours, e.g. 128,256,512,1024 (default: dreduce's default for the size; best one is the row)\n"
            "  --cases LIST       only these rows, e.g. int32-sum,float16-min,float32-sum-native,float32-stats,\n"
            "                     int32-argmax,float64-stats-exact (default: every (type, op, accumulator) row\n"
            "                     dreduce offers; --list-cases prints them)\n"
            "  --list-cases       print every case id and the CUB call it is compared with, then exit\n"
            "  --levels-n N       n for --levels (default 16M = 2^24)\n"
            "  --warmup N         untimed reps before timing (default 5)\n"
            "  --reps N           timed reps per measurement (default 200 for n <= 2^20, 50 above; --small: batches)\n"
            "  --seed S           data seed (default: fresh per run, printed)\n"
            "  --data D           random (default) or spread: floats of random sign and binade over the type's range\n"
            "                     (datagen.h), where an exact sum's fast path rarely applies; integers, products: random\n"
            "  -h, --help         this help\n"
            "exit status: 0 ok, 1 CUDA error or wrong result, 2 bad usage, 77 no GPU visible\n");
}

[[noreturn]] void bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "dreduce-bench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(try --help)\n");
    exit(2);
}

bool parse_u64(const char *s, unsigned long long *out)
{
    if (!s || !*s) return false;
    char *end = nullptr;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || s[0] == '-') return false;
    *out = v;
    return true;
}

bool parse_int(const char *s, int lo, int hi, int *out)
{
    unsigned long long v;
    if (!parse_u64(s, &v) || v < (unsigned long long)lo || v > (unsigned long long)hi) return false;
    *out = (int)v;
    return true;
}

/* "1048576", "16M", "4K", "2G", "2^24" */
bool parse_size(const std::string &s, size_t *out)
{
    if (s.size() > 2 && s[0] == '2' && s[1] == '^') {
        int e;
        if (!parse_int(s.c_str() + 2, 0, 40, &e)) return false;
        *out = (size_t)1 << e;
        return true;
    }
    std::string digits = s;
    int shift = 0;
    if (!digits.empty()) {
        char c = digits.back();
        if (c == 'K' || c == 'k') shift = 10;
        if (c == 'M' || c == 'm') shift = 20;
        if (c == 'G' || c == 'g') shift = 30;
        if (shift) digits.pop_back();
    }
    unsigned long long v;
    if (!parse_u64(digits.c_str(), &v) || v == 0 || v > (1ull << 40) >> shift) return false;
    *out = (size_t)(v << shift);
    return true;
}

std::vector<std::string> split(const char *s)
{
    std::vector<std::string> out;
    std::string cur;
    for (const char *p = s;; ++p) {
        if (*p == ',' || *p == 0) {
            out.push_back(cur);
            cur.clear();
            if (!*p) break;
        } else {
            cur += *p;
        }
    }
    return out;
}

void list_cases(); /* with the cases, below */

Options parse_options(int argc, char **argv)
{
    Options o;
    for (int i = 0; i < argc; ++i) {
        if (i) o.cmdline += ' ';
        o.cmdline += argv[i];
    }
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char * {
            if (i + 1 >= argc) bad_usage("%s needs a value", argv[i]);
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            usage(stdout);
            exit(0);
        } else if (a == "--device") {
            if (!parse_int(value(), 0, 1023, &o.device)) bad_usage("bad --device: %s", argv[i]);
        } else if (a == "--json") {
            o.json = value();
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--levels") {
            o.levels = true;
        } else if (a == "--small") {
            o.small = true;
        } else if (a == "--min-exp") {
            if (!parse_int(value(), 0, 40, &o.min_exp)) bad_usage("bad --min-exp: %s (0..40)", argv[i]);
            o.exp_given = true;
        } else if (a == "--max-exp") {
            if (!parse_int(value(), 0, 40, &o.max_exp)) bad_usage("bad --max-exp: %s (0..40)", argv[i]);
            o.exp_given = true;
        } else if (a == "--sizes") {
            const char *v = value();
            o.sizes.clear();
            for (const std::string &s : split(v)) {
                size_t n;
                if (!parse_size(s, &n)) bad_usage("bad size in --sizes: %s", s.c_str());
                o.sizes.push_back(n);
            }
        } else if (a == "--blocks") {
            const char *v = value();
            o.blocks.clear();
            for (const std::string &s : split(v)) {
                int b;
                if (!parse_int(s.c_str(), 32, 1024, &b) || (b & (b - 1)))
                    bad_usage("bad block in --blocks: %s (a power of two in 32..1024)", s.c_str());
                o.blocks.push_back(b);
            }
        } else if (a == "--cases") {
            o.cases = split(value());
        } else if (a == "--list-cases") {
            list_cases();
            exit(0);
        } else if (a == "--levels-n") {
            const char *v = value();
            if (!parse_size(v, &o.levels_n)) bad_usage("bad --levels-n: %s", v);
        } else if (a == "--warmup") {
            if (!parse_int(value(), 0, 100000, &o.warmup)) bad_usage("bad --warmup: %s", argv[i]);
        } else if (a == "--reps") {
            if (!parse_int(value(), 1, 100000, &o.reps)) bad_usage("bad --reps: %s", argv[i]);
        } else if (a == "--seed") {
            unsigned long long s;
            if (!parse_u64(value(), &s)) bad_usage("bad --seed: %s", argv[i]);
            o.seed = s;
            o.have_seed = true;
        } else if (a == "--data") {
            const char *v = value();
            if (!strcmp(v, "random")) o.data = DR_DATA_RANDOM;
            else if (!strcmp(v, "spread")) o.data = DR_DATA_SPREAD;
            else bad_usage("bad --data: %s (allowed: random, spread)", v);
        } else {
            bad_usage("unknown option: %s", argv[i]);
        }
    }
    if (o.levels && o.small) bad_usage("%s", "--levels and --small are separate runs; give one");
    if (o.min_exp > o.max_exp) bad_usage("%s", "--min-exp is larger than --max-exp");
    return o;
}

/* ---------------------------------------------------------------------------------------------------------- */
/* JSON writer: values are appended in order; commas are placed automatically. */

struct Json {
    std::string out;
    std::vector<int> count;
    bool after_key = false;

    void pre()
    {
        if (after_key) {
            after_key = false;
            return;
        }
        if (!count.empty() && count.back()++ > 0) out += ',';
    }
    void quote(const char *s)
    {
        out += '"';
        for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
            if (*p == '"' || *p == '\\') {
                out += '\\';
                out += (char)*p;
            } else if (*p < 0x20) {
                char buf[8];
                snprintf(buf, sizeof buf, "\\u%04x", *p);
                out += buf;
            } else {
                out += (char)*p;
            }
        }
        out += '"';
    }
    Json &key(const char *k)
    {
        pre();
        quote(k);
        out += ':';
        after_key = true;
        return *this;
    }
    Json &obj()
    {
        pre();
        out += '{';
        count.push_back(0);
        return *this;
    }
    Json &end_obj()
    {
        out += '}';
        count.pop_back();
        return *this;
    }
    Json &arr()
    {
        pre();
        out += '[';
        count.push_back(0);
        return *this;
    }
    Json &end_arr()
    {
        out += ']';
        count.pop_back();
        return *this;
    }
    Json &str(const char *s)
    {
        pre();
        quote(s);
        return *this;
    }
    Json &num(double v)
    {
        pre();
        if (std::isfinite(v)) {
            char buf[40];
            snprintf(buf, sizeof buf, "%.10g", v);
            out += buf;
        } else {
            out += "null";
        }
        return *this;
    }
    Json &u64(unsigned long long v)
    {
        pre();
        out += std::to_string(v);
        return *this;
    }
    Json &i64(long long v)
    {
        pre();
        out += std::to_string(v);
        return *this;
    }
    Json &boolean(bool v)
    {
        pre();
        out += v ? "true" : "false";
        return *this;
    }
};

void write_json(const Options &o, const Json &j)
{
    if (!o.json) return;
    FILE *f = fopen(o.json, "w");
    if (!f) {
        fprintf(stderr, "dreduce-bench: cannot write %s: %s\n", o.json, strerror(errno));
        exit(1);
    }
    fputs(j.out.c_str(), f);
    fputc('\n', f);
    if (fclose(f) != 0) {
        fprintf(stderr, "dreduce-bench: error writing %s\n", o.json);
        exit(1);
    }
    printf("JSON written to %s\n", o.json);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* CUB's rows (bench/cub_rows.cuh, compiled in shards) and their names */

using namespace dr_bench;

/* The CUB row of (dtype, op, acc), from the shards; every row of the tables has one. */
const CubRow *cub_row(dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc)
{
    static const std::vector<CubRow> rows = all_cub_rows();
    for (const CubRow &r : rows)
        if (r.dtype == dtype && r.op == op && r.acc == acc) return &r;
    return nullptr;
}

/* "DeviceReduce::Sum(float64)", "DeviceReduce::TransformReduce(float16 -> float32, minimum)", ... */
template <class In, class Acc, dr_op_t Op> std::string cub_api(dr_dtype_t dtype, dr_acc_kind_t kind)
{
    std::string in = dr_dtype_name(dtype), acc = dr_acc_kind_name(kind);
    if (std::is_same<In, Acc>::value) {
        if (Op == DR_SUM) return "DeviceReduce::Sum(" + in + ")";
        if (Op == DR_MIN) return "DeviceReduce::Min(" + in + ")";
        if (Op == DR_MAX) return "DeviceReduce::Max(" + in + ")";
        return "DeviceReduce::Reduce(" + in + ", " + CubOp<Op, Acc>::name + ")";
    }
    return "DeviceReduce::TransformReduce(" + in + " -> " + acc + ", " + CubOp<Op, Acc>::name + ")";
}

/* "DeviceReduce::ArgMax(int32: value, int64 index)" */
std::string cub_arg_api(dr_dtype_t dtype, dr_op_t op)
{
    return std::string("DeviceReduce::") + (op == DR_ARGMIN ? "ArgMin(" : "ArgMax(") + dr_dtype_name(dtype) +
           ": value, int64 index)";
}

/* The four calls of a stats row's peer (cub_stats_call), in order. */
template <class In> std::string cub_stats_api(dr_dtype_t dtype)
{
    typedef typename StatsTypes<In>::sum Sum;
    typedef typename StatsTypes<In>::minmax MinMax;
    return cub_api<In, Sum, DR_SUM>(dtype, kind_of<Sum>()) + " + " + cub_api<In, MinMax, DR_MIN>(dtype, kind_of<MinMax>()) +
           " + " + cub_api<In, MinMax, DR_MAX>(dtype, kind_of<MinMax>()) + " + DeviceReduce::TransformReduce(" +
           dr_dtype_name(dtype) + " -> (x - sum/n)^2 in float64, plus)";
}

struct Case {
    std::string id; /* "int32-sum", "float32-sum-native", "float16-min", "float32-sum-exact", "float32-stats",
                       "float64-stats-exact", "int8-argmax", ... */
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_mode_t mode;
    dr_acc_kind_t acc;
    dr_acc_kind_t cub_acc; /* what CUB's result is checked as: acc, but float64 for an exact sum and the float64
                              stats for exact stats (CUB has no exact sum) */
    std::string cub_api;
    CubFn cub;
    int cub_calls;                      /* CUB calls in one rep: 4 for stats, else 1 */
    dr_acc_kind_t cub_sum, cub_minmax;  /* stats: the kinds of the sum and of min/max in CUB's CubStatsSlot */
};

/* One row: a float sum or product accumulating in float32 is the --acc native row, "-native" in its id; an exact
 * sum or exact stats is the --acc exact row, "-exact", beside CUB's float64 sum (or stats with a float64 sum);
 * every other row is what the default mode picks. */
void add_case(std::vector<Case> &v, dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, const std::string &api)
{
    Case c;
    c.dtype = dtype;
    c.op = op;
    c.acc = acc;
    c.cub_acc = acc == DR_ACC_EXACT ? DR_ACC_F64 : acc == DR_ACC_STATS_EXACT ? DR_ACC_STATS_F64 : acc;
    const bool native = dr_dtype_is_float(dtype) && dtype != DR_FLOAT64 && acc == DR_ACC_F32 &&
                        (op == DR_SUM || op == DR_PROD);
    const bool exact = acc == DR_ACC_EXACT || acc == DR_ACC_STATS_EXACT;
    c.mode = native ? DR_ACC_NATIVE : exact ? DR_ACC_MODE_EXACT : DR_ACC_WIDE;
    c.id = std::string(dr_dtype_name(dtype)) + "-" + dr_op_name(op) + (native ? "-native" : exact ? "-exact" : "");
    c.cub_api = api;
    const CubRow *row = cub_row(dtype, op, acc);
    c.cub = row ? row->fn : nullptr;
    c.cub_calls = op == DR_STATS ? 4 : 1;
    c.cub_sum = row ? row->sum_kind : DR_ACC_KIND_COUNT;
    c.cub_minmax = row ? row->minmax_kind : DR_ACC_KIND_COUNT;
    const char *why = !c.cub ? "no CUB row in bench/cub_rows.cuh's shards"
                      : dr_acc_select(dtype, op, c.mode) != acc ? "table row and dr_acc_select disagree"
                      : op == DR_STATS && (c.cub_sum == DR_ACC_KIND_COUNT || c.cub_minmax == DR_ACC_KIND_COUNT)
                          ? "CUB's stats outputs have no accumulator kind"
                          : nullptr;
    for (const Case &o : v)
        if (o.id == c.id) why = "two rows with this id";
    if (why) {
        fprintf(stderr, "internal error: case %s: %s\n", c.id.c_str(), why);
        exit(1);
    }
    v.push_back(c);
}

/* Every row of the reduction and exact tables, in their order (grouped by type), then issue #37's rows grouped by
 * type in the same order of types: stats, exact stats, argmin, argmax. */
std::vector<Case> make_cases()
{
    std::vector<Case> v;
#define X(DT, OP, op, ACC, acc)                                                                                \
    add_case(v, DR_##DT, DR_##OP, DR_ACC_##ACC, cub_api<cub_in_##DT, cub_acc_##ACC, DR_##OP>(DR_##DT, DR_ACC_##ACC));
    DR_REDUCTION_TABLE
#undef X
#define X(DT, OP, op, ACC, acc)                                                                                \
    add_case(v, DR_##DT, DR_##OP, DR_ACC_##ACC, cub_api<cub_in_##DT, double, DR_##OP>(DR_##DT, DR_ACC_F64));
    DR_EXACT_TABLE
#undef X
    const size_t first_new = v.size();
#define X(DT, OP, op, ACC, acc) add_case(v, DR_##DT, DR_##OP, DR_ACC_##ACC, cub_stats_api<cub_in_##DT>(DR_##DT));
    DR_STATS_TABLE DR_STATS_EXACT_TABLE
#undef X
#define X(DT, OP, op, ACC, acc) add_case(v, DR_##DT, DR_##OP, DR_ACC_##ACC, cub_arg_api(DR_##DT, DR_##OP));
    DR_ARG_TABLE
#undef X
    std::vector<dr_dtype_t> type_order; /* as the reduction table has them */
    for (size_t i = 0; i < first_new; ++i)
        if (std::find(type_order.begin(), type_order.end(), v[i].dtype) == type_order.end())
            type_order.push_back(v[i].dtype);
    auto rank = [&](const Case &c) { return std::find(type_order.begin(), type_order.end(), c.dtype) - type_order.begin(); };
    std::stable_sort(v.begin() + (long)first_new, v.end(),
                     [&](const Case &a, const Case &b) { return rank(a) < rank(b); });
    return v;
}

const std::vector<Case> &all_cases()
{
    static const std::vector<Case> cases = make_cases();
    return cases;
}

dr_acc_kind_t case_acc(const Case &c) { return c.acc; }

void list_cases()
{
    for (const Case &c : all_cases())
        printf("%-22s %-8s %-6s %-14s %s\n", c.id.c_str(), dr_dtype_name(c.dtype), dr_op_name(c.op),
               dr_acc_kind_name(c.acc), c.cub_api.c_str());
}

/* Exits 2 on an unknown name (called while parsing, before any CUDA call). */
void validate_cases(const Options &o)
{
    for (const std::string &want : o.cases) {
        bool found = false;
        for (const Case &c : all_cases()) found = found || want == c.id;
        if (!found) bad_usage("unknown case in --cases: %s (see --list-cases)", want.c_str());
    }
}

std::vector<const Case *> selected_cases(const Options &o)
{
    std::vector<const Case *> out;
    for (const Case &c : all_cases()) {
        bool take = o.cases.empty();
        for (const std::string &want : o.cases) take = take || want == c.id;
        if (take) out.push_back(&c);
    }
    return out;
}

const Case *case_by_id(const char *id)
{
    for (const Case &c : all_cases())
        if (c.id == id) return &c;
    fprintf(stderr, "internal error: no case %s\n", id);
    exit(1);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Device, stream, events, the hold kernel. */

__device__ __forceinline__ unsigned long long globaltimer_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Spins until the host sets *release (or the timeout passes, which it reports in *timed_out). */
__global__ void hold_kernel(const volatile int *release, unsigned long long timeout_ns, volatile int *timed_out)
{
    const unsigned long long t0 = globaltimer_ns();
    while (*release == 0) {
        if (globaltimer_ns() - t0 > timeout_ns) {
            *timed_out = 1;
            return;
        }
        __nanosleep(500);
    }
}

struct Stats {
    double median = 0, min = 0, max = 0, mean = 0;
    int reps = 0;
};

Stats stats_of(std::vector<double> v)
{
    Stats s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    const size_t m = v.size();
    s.median = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
    s.min = v.front();
    s.max = v.back();
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / (double)m;
    s.reps = (int)m;
    return s;
}

struct Ctx {
    int device = 0;
    cudaDeviceProp prop{};
    int clock_khz = 0, mem_clock_khz = 0, bus_width = 0;
    int runtime_version = 0, driver_version = 0;
    cudaStream_t s = nullptr;
    std::vector<cudaEvent_t> ev; /* kChunk + 1 */
    int *h_flags = nullptr;      /* [0] release, [1] timed out: mapped pinned memory */
    int *d_flags = nullptr;
    int hold_timeouts = 0;
    int host_threads = 1;
    uint64_t seed = 0;
    dr_pattern_t data = DR_DATA_RANDOM;
    char *d_slots = nullptr; /* result slots */
    std::vector<unsigned char> h_slots;
    int nslots = 0;
};

void ensure_slots(Ctx &c, int n)
{
    if (n <= c.nslots) return;
    if (c.d_slots) CK(cudaFree(c.d_slots));
    CK(cudaMalloc(&c.d_slots, (size_t)n * kSlotBytes));
    c.h_slots.resize((size_t)n * kSlotBytes);
    c.nslots = n;
}

void *slot(Ctx &c, int i) { return c.d_slots + (size_t)i * kSlotBytes; }

void poison_slots(Ctx &c, int n) { CK(cudaMemsetAsync(c.d_slots, 0xA5, (size_t)n * kSlotBytes, c.s)); }

/* Run launch(0..warmup-1) untimed, then launch(warmup..warmup+reps-1) timed one by one; returns ms per timed rep.
 * launch(i) must enqueue rep i on c.s. */
template <class F> std::vector<double> time_reps(Ctx &c, int warmup, int reps, F launch)
{
    for (int i = 0; i < warmup; ++i) launch(i);
    std::vector<double> ms((size_t)reps);
    volatile int *release = c.h_flags;
    volatile int *timed_out = c.h_flags + 1;
    for (int r0 = 0; r0 < reps; r0 += kChunk) {
        const int m = std::min(kChunk, reps - r0);
        *release = 0;
        *timed_out = 0;
        hold_kernel<<<1, 1, 0, c.s>>>(c.d_flags, kHoldTimeoutNs, c.d_flags + 1);
        CK(cudaGetLastError());
        for (int j = 0; j < m; ++j) {
            CK(cudaEventRecord(c.ev[(size_t)j], c.s));
            launch(warmup + r0 + j);
        }
        CK(cudaEventRecord(c.ev[(size_t)m], c.s));
        __sync_synchronize();
        *release = 1;
        CK(cudaStreamSynchronize(c.s));
        if (*timed_out) {
            if (c.hold_timeouts++ == 0)
                fprintf(stderr, "note: the hold kernel timed out before the host enqueued a chunk; some intervals "
                                "may include host launch time\n");
        }
        for (int j = 0; j < m; ++j) {
            float t = 0;
            CK(cudaEventElapsedTime(&t, c.ev[(size_t)j], c.ev[(size_t)j + 1]));
            ms[(size_t)(r0 + j)] = t;
        }
    }
    return ms;
}

uint64_t fresh_seed()
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    x ^= (uint64_t)getpid() << 32;
    return dr_mix64(x);
}

Ctx init_device(const Options &o)
{
    Ctx c;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        printf("no GPU visible (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        exit(77);
    }
    if (o.device >= count) {
        fprintf(stderr, "dreduce-bench: --device %d, but only %d device(s) visible\n", o.device, count);
        exit(2);
    }
    c.device = o.device;
    CK(cudaSetDevice(c.device));
    CK(cudaGetDeviceProperties(&c.prop, c.device));
    /* Peak clocks (kHz) and bus width: not fatal if a driver does not report them. */
    if (cudaDeviceGetAttribute(&c.clock_khz, cudaDevAttrClockRate, c.device) != cudaSuccess) c.clock_khz = 0;
    if (cudaDeviceGetAttribute(&c.mem_clock_khz, cudaDevAttrMemoryClockRate, c.device) != cudaSuccess)
        c.mem_clock_khz = 0;
    if (cudaDeviceGetAttribute(&c.bus_width, cudaDevAttrGlobalMemoryBusWidth, c.device) != cudaSuccess)
        c.bus_width = 0;
    (void)cudaGetLastError();
    CK(cudaRuntimeGetVersion(&c.runtime_version));
    CK(cudaDriverGetVersion(&c.driver_version));
    CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
    c.ev.resize(kChunk + 1);
    for (cudaEvent_t &e2 : c.ev) CK(cudaEventCreate(&e2));
    CK(cudaHostAlloc((void **)&c.h_flags, 2 * sizeof(int), cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&c.d_flags, c.h_flags, 0));
    c.h_flags[0] = c.h_flags[1] = 0;
    c.host_threads = dr_parallel_default_threads();
    c.seed = o.have_seed ? o.seed : fresh_seed();
    c.data = o.data;
    return c;
}

double peak_dram_gbs(const Ctx &c)
{
    /* HBM/GDDR: two transfers per memory clock over bus_width bits. Theoretical; for orientation only. */
    return 2.0 * (double)c.mem_clock_khz * 1e3 * (double)c.bus_width / 8.0 / 1e9;
}

void print_header(const Ctx &c, const char *mode)
{
    printf("dreduce-bench %s\n", mode);
    printf("device %d: %s, sm_%d%d, %d SMs, %.1f GiB, L2 %.1f MiB, SM clock %.0f MHz, memory clock %.0f MHz x %d "
           "bit (theoretical %.0f GB/s)\n",
           c.device, c.prop.name, c.prop.major, c.prop.minor, c.prop.multiProcessorCount,
           (double)c.prop.totalGlobalMem / (1024.0 * 1024 * 1024), (double)c.prop.l2CacheSize / (double)kMiB,
           c.clock_khz / 1e3, c.mem_clock_khz / 1e3, c.bus_width, peak_dram_gbs(c));
    printf("CUDA runtime %d.%d, driver %d.%d, CUB %d.%d.%d, host reference threads %d\n",
           c.runtime_version / 1000, c.runtime_version % 1000 / 10, c.driver_version / 1000,
           c.driver_version % 1000 / 10, CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100,
           c.host_threads);
    printf("data %s, seed %" PRIu64 " (repeat with --seed %" PRIu64 ")\n\n",
           c.data == DR_DATA_SPREAD ? "spread" : "random", c.seed, c.seed);
}

void json_header(Json &j, const Ctx &c, const Options &o, const char *mode)
{
    j.key("tool").str("dreduce-bench");
    j.key("mode").str(mode);
    j.key("command_line").str(o.cmdline.c_str());
    j.key("seed").u64(c.seed);
    j.key("data").str(c.data == DR_DATA_SPREAD ? "spread" : "random");
    j.key("quick").boolean(o.quick);
    j.key("device").obj();
    j.key("ordinal").i64(c.device);
    j.key("name").str(c.prop.name);
    j.key("compute_capability").str((std::to_string(c.prop.major) + "." + std::to_string(c.prop.minor)).c_str());
    j.key("sm_count").i64(c.prop.multiProcessorCount);
    j.key("total_memory_bytes").u64(c.prop.totalGlobalMem);
    j.key("l2_cache_bytes").i64(c.prop.l2CacheSize);
    j.key("sm_clock_khz").i64(c.clock_khz);
    j.key("memory_clock_khz").i64(c.mem_clock_khz);
    j.key("memory_bus_width_bits").i64(c.bus_width);
    j.key("theoretical_dram_gbs").num(peak_dram_gbs(c));
    j.end_obj();
    j.key("cuda").obj();
    j.key("runtime_version").i64(c.runtime_version);
    j.key("driver_version").i64(c.driver_version);
    j.key("compiled_with_cudart").i64(CUDART_VERSION);
    j.key("cub_version").i64(CUB_VERSION);
    j.end_obj();
    j.key("host_reference_threads").i64(c.host_threads);
}

void json_stats(Json &j, const Stats &s, double bytes_read)
{
    j.key("ms_median").num(s.median);
    j.key("ms_min").num(s.min);
    j.key("ms_max").num(s.max);
    j.key("ms_mean").num(s.mean);
    j.key("reps").i64(s.reps);
    j.key("gbs").num(s.median > 0 ? bytes_read / (s.median * 1e6) : 0);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Inputs: nbuf buffers of n elements each, different data, with host references. */

size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

struct Inputs {
    const Case *cs = nullptr;
    dr_acc_kind_t acc = DR_ACC_I32;
    dr_gen_t gen{};
    size_t n = 0, bytes = 0, stride = 0;
    int nbuf = 0;
    char *d = nullptr;
    std::vector<dr_reference_t> ref;
    std::vector<dr_reference_t> cub_ref; /* CUB's, where it accumulates in another kind (exact rows); else empty */
    std::vector<dr_arg_t> ours_arg;      /* argmin/argmax: our element of each buffer (index DR_ARG_NONE: none yet) */

    const void *buf(int i) const { return d + (size_t)(i % nbuf) * stride; }
    /* The global index of rep i's first element: its buffer's elements are [b n, (b + 1) n) of the generator's. */
    uint64_t first_index(int i) const { return (uint64_t)(i % nbuf) * n; }
};

int rotation_buffers(size_t bytes, int slots)
{
    if (bytes > kRotateBelow || bytes == 0) return 1;
    const size_t k = (kRotateTotal + bytes - 1) / bytes;
    return (int)std::min(k, (size_t)std::max(slots, 1));
}

/* Allocates; returns false (after printing why) when it does not fit. Generation and references: see make_data. */
bool alloc_inputs(Inputs &in, const Case &cs, size_t n, int nbuf)
{
    in.cs = &cs;
    in.acc = case_acc(cs);
    in.n = n;
    in.bytes = n * dr_dtype_size(cs.dtype);
    in.stride = align256(in.bytes);
    in.nbuf = nbuf;
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    const size_t need = (size_t)nbuf * in.stride + 256 * kMiB;
    if (need > free_b) {
        printf("note: skipping %s n=%zu: needs %.2f GiB, %.2f GiB free\n", cs.id.c_str(), n,
               (double)need / (1024.0 * 1024 * 1024), (double)free_b / (1024.0 * 1024 * 1024));
        return false;
    }
    cudaError_t e = cudaMalloc(&in.d, (size_t)nbuf * in.stride);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        printf("note: skipping %s n=%zu: cudaMalloc of %.2f GiB failed\n", cs.id.c_str(), n,
               (double)nbuf * (double)in.stride / (1024.0 * 1024 * 1024));
        in.d = nullptr;
        return false;
    }
    CK(e);
    return true;
}

void make_data(Ctx &c, Inputs &in)
{
    in.gen.pattern = c.data;
    in.gen.dtype = in.cs->dtype;
    in.gen.op = in.cs->op;
    in.gen.seed = c.seed;
    in.gen.const_bits = 0;
    for (int b = 0; b < in.nbuf; ++b)
        CK(dr_gpu_generate(&in.gen, (uint64_t)b * in.n, in.d + (size_t)b * in.stride, in.n, c.s));
    in.ref.resize((size_t)in.nbuf);
    const int threads = in.n < ((size_t)1 << 16) ? 1 : c.host_threads;
    /* Buffer b's reference. A stats reference takes a second pass over the buffer's elements, about their mean (each
     * buffer is an array of its own), for m2. */
    auto reference = [&](dr_acc_kind_t acc, int b, dr_reference_t *r) {
        dr_reference_compute(&in.gen, acc, in.first_index(b), in.n, threads, r);
        if (dr_reference_needs_pass2(r)) {
            dr_reference_begin_pass2(r, nullptr);
            dr_reference_generate(&in.gen, in.first_index(b), in.n, threads, r);
        }
    };
    for (int b = 0; b < in.nbuf; ++b) reference(in.acc, b, &in.ref[(size_t)b]);
    in.cub_ref.clear();
    if (in.cs->cub_acc != in.acc) {
        in.cub_ref.resize((size_t)in.nbuf);
        for (int b = 0; b < in.nbuf; ++b) reference(in.cs->cub_acc, b, &in.cub_ref[(size_t)b]);
    }
    dr_arg_t none;
    memset(&none, 0, sizeof none);
    none.index = DR_ARG_NONE;
    in.ours_arg.assign((size_t)in.nbuf, none);
    CK(cudaStreamSynchronize(c.s));
}

void free_inputs(Inputs &in)
{
    if (in.d) CK(cudaFree(in.d));
    in.d = nullptr;
    in.ref.clear();
    in.cub_ref.clear();
    in.ours_arg.clear();
}

/* An element of type t (its bytes at p) as an arg kind's scalar (accum.h, "argmin / argmax"): integers widened to
 * 64 bits of their signedness, floats to float64 (exactly; a NaN the canonical one). */
dr_scalar_t element_scalar(dr_dtype_t t, const unsigned char *p)
{
    dr_scalar_t s;
    s.u64 = 0;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    uint16_t u16;
    uint32_t u32;
    float f32;
    switch (t) {
    case DR_INT8: memcpy(&i8, p, 1), s.i64 = i8; break;
    case DR_INT16: memcpy(&i16, p, 2), s.i64 = i16; break;
    case DR_INT32: memcpy(&i32, p, 4), s.i64 = i32; break;
    case DR_INT64: memcpy(&s.i64, p, 8); break;
    case DR_UINT8: s.u64 = p[0]; break;
    case DR_UINT16: memcpy(&u16, p, 2), s.u64 = u16; break;
    case DR_UINT32: memcpy(&u32, p, 4), s.u64 = u32; break;
    case DR_UINT64: memcpy(&s.u64, p, 8); break;
    case DR_FLOAT16: memcpy(&u16, p, 2), s.f64 = dr_arg_canon_f64(dr_f16_to_f32(u16)); break;
    case DR_BFLOAT16: memcpy(&u16, p, 2), s.f64 = dr_arg_canon_f64(dr_bf16_to_f32(u16)); break;
    case DR_FLOAT32: memcpy(&f32, p, 4), s.f64 = dr_arg_canon_f64((double)f32); break;
    case DR_FLOAT64: memcpy(&s.f64, p, 8), s.f64 = dr_arg_canon_f64(s.f64); break;
    default: break;
    }
    return s;
}

/* A value of accumulator kind k (I32 .. F64; its bytes at p) as the scalar of its class: int64, uint64, float64. */
dr_scalar_t kind_scalar(dr_acc_kind_t k, const unsigned char *p)
{
    dr_value_t v;
    memset(&v, 0, sizeof v);
    memcpy(&v, p, dr_acc_kind_size(k));
    dr_scalar_t s;
    s.u64 = 0;
    switch (k) {
    case DR_ACC_I32: s.i64 = v.i32; break;
    case DR_ACC_U32: s.u64 = v.u32; break;
    case DR_ACC_I64: s.i64 = v.i64; break;
    case DR_ACC_U64: s.u64 = v.u64; break;
    case DR_ACC_F32: s.f64 = (double)v.f32; break;
    case DR_ACC_F64: s.f64 = v.f64; break;
    default: break;
    }
    return s;
}

/* CUB's stats (a CubStatsSlot at raw: its sum, m2, min and max; the count is n) as a caller reads statistics: made
 * into a stats partial of kind cs.cub_acc and read by dr_stats_result, as ours is, so the mean and the variances come
 * from CUB's sum and m2 by the same arithmetic. */
void cub_stats_result(const Case &cs, size_t n, const unsigned char *raw, dr_stats_result_t *out)
{
    CubStatsSlot slot;
    memcpy(&slot, raw, sizeof slot);
    dr_partial_t p;
    memset(&p, 0, sizeof p);
    dr_stats_t &st = p.stats;
    st.count = n;
    st.m2 = slot.m2;
    const dr_scalar_t sum = kind_scalar(cs.cub_sum, slot.sum);
    if (cs.cub_sum == DR_ACC_I64) st.sum.i128 = dr_i128_of_i64(sum.i64);
    else if (cs.cub_sum == DR_ACC_U64) st.sum.i128 = dr_i128_of_u64(sum.u64);
    else st.sum.f64 = sum.f64;
    st.mean = n ? (cs.cub_sum == DR_ACC_F64 ? sum.f64 : cs.cub_sum == DR_ACC_I64 ? (double)sum.i64 : (double)sum.u64) /
                      (double)n
                : 0; /* not read by dr_stats_result, which divides the sum itself */
    st.min = kind_scalar(cs.cub_minmax, slot.min);
    st.max = kind_scalar(cs.cub_minmax, slot.max);
    dr_stats_result(cs.cub_acc, &p, out);
}

/* Whether a 64-bit sum of the reference's signedness holds its exact integer sum (CUB's stats sum is 64 bits; ours
 * 128). Always 1 for float stats. */
bool int_sum_fits_64(const dr_reference_t &ref)
{
    if (ref.acc == DR_ACC_STATS_I64) return ref.int_sum.hi == ((ref.int_sum.lo >> 63) ? UINT64_MAX : 0);
    if (ref.acc == DR_ACC_STATS_U64) return ref.int_sum.hi == 0;
    return true;
}

/* CUB's integer stats where its 64-bit sum wrapped (int_sum_fits_64 is 0): count, min and max exactly, and the sum
 * modulo 2^64, against the reference's own fields; its mean and m2 (taken about the wrapped sum's mean) cannot be. */
void check_wrapped_stats(const dr_reference_t &ref, const dr_stats_result_t &got, dr_check_t *out)
{
    memset(out, 0, sizeof *out);
    out->exact = 1;
    const bool count = got.count == ref.count, min = got.min.u64 == ref.min.u64, max = got.max.u64 == ref.max.u64,
               sum = got.sum_int.lo == ref.int_sum.lo;
    out->pass = count && min && max && sum;
    snprintf(out->detail, sizeof out->detail,
             "CUB's 64-bit sum wraps (the exact sum needs 128 bits): count %s, min %s, max %s, sum mod 2^64 %s; mean "
             "and m2 not comparable",
             count ? "ok" : "WRONG", min ? "ok" : "WRONG", max ? "ok" : "WRONG", sum ? "ok" : "WRONG");
}

/* Copies back slots 0..count-1 and checks slot i against buffer i's reference; aborts on a wrong result. Returns
 * the largest float error seen (0 for exact checks; stats: m2's). `cub`: the slots hold CUB's results (in
 * cs->cub_acc; an arg row's a CubArgSlot, a stats row's a CubStatsSlot). An exact sum's slot holds its dr_exact_t,
 * checked as what a caller reads: its float64 rounding; a stats partial is checked as dr_stats_result reads it.
 * argmin/argmax: ours must give the same element in every rep of a buffer, and CUB ours. *partial counts the reps
 * only partly checked (CUB's wrapped integer stats, check_wrapped_stats). */
double check_slots(Ctx &c, Inputs &in, int count, uint64_t depth, const char *what, bool cub = false,
                   int *partial = nullptr)
{
    static_assert(sizeof(dr_partial_t) <= kSlotBytes, "a result slot holds any partial");
    static_assert(sizeof(CubStatsSlot) <= kSlotBytes && sizeof(CubArgSlot) <= kSlotBytes, "and CUB's results");
    CK(cudaStreamSynchronize(c.s));
    CK(cudaMemcpy(c.h_slots.data(), c.d_slots, (size_t)count * kSlotBytes, cudaMemcpyDeviceToHost));
    const Case &cs = *in.cs;
    const dr_acc_kind_t kind = cub ? cs.cub_acc : in.acc;
    const std::vector<dr_reference_t> &refs = cub && !in.cub_ref.empty() ? in.cub_ref : in.ref;
    double max_err = 0;
    if (partial) *partial = 0;
    for (int i = 0; i < count; ++i) {
        const unsigned char *raw = c.h_slots.data() + (size_t)i * kSlotBytes;
        const int b = i % in.nbuf;
        const dr_reference_t &ref = refs[(size_t)b];
        dr_check_t chk;
        char mismatch[160] = "";
        if (dr_acc_kind_is_stats(kind)) {
            dr_stats_result_t res;
            if (cub) {
                cub_stats_result(cs, in.n, raw, &res);
            } else {
                dr_partial_t p;
                memset(&p, 0, sizeof p);
                memcpy(&p, raw, dr_acc_kind_size(kind));
                dr_stats_result(kind, &p, &res);
            }
            if (cub && !int_sum_fits_64(ref)) {
                check_wrapped_stats(ref, res, &chk);
                if (partial) ++*partial;
            } else {
                dr_reference_check_stats(&ref, &res, depth, &chk);
            }
        } else if (dr_acc_kind_is_arg(kind)) {
            dr_value_t v;
            memset(&v, 0, sizeof v);
            if (cub) {
                CubArgSlot slot;
                memcpy(&slot, raw, sizeof slot);
                v.arg.value = element_scalar(cs.dtype, slot.value);
                v.arg.index = (uint64_t)slot.index + in.first_index(i);
            } else {
                memcpy(&v.arg, raw, sizeof v.arg);
            }
            dr_reference_check(&ref, &v, depth, &chk);
            /* ours: the same element in every rep of the buffer (and every block size); CUB: ours */
            dr_arg_t &seen = in.ours_arg[(size_t)b];
            if (chk.pass && (cub || seen.index != DR_ARG_NONE) &&
                (seen.index != v.arg.index || seen.value.u64 != v.arg.value.u64))
                snprintf(mismatch, sizeof mismatch, "index %" PRIu64 " (value bits %016" PRIx64 "), ours %s %" PRIu64
                         " (%016" PRIx64 ")", v.arg.index, v.arg.value.u64, cub ? "gave" : "gave before",
                         seen.index, seen.value.u64);
            if (chk.pass && !cub) seen = v.arg;
        } else {
            dr_partial_t p;
            memset(&p, 0, sizeof p);
            memcpy(&p, raw, dr_acc_kind_size(kind));
            dr_value_t v;
            dr_partial_result(kind, &p, &v);
            dr_reference_check(&ref, &v, depth, &chk);
        }
        if (!chk.pass || mismatch[0]) {
            fprintf(stderr,
                    "WRONG RESULT: %s, %s %s (acc %s) n=%zu, rep %d (buffer %d), seed %" PRIu64 ": %s\n", what,
                    dr_dtype_name(cs.dtype), dr_op_name(cs.op), dr_acc_kind_name(in.acc), in.n, i, b, c.seed,
                    mismatch[0] ? mismatch : chk.detail);
            exit(1);
        }
        if (!chk.exact && chk.error > max_err) max_err = chk.error;
    }
    return max_err;
}

/* ---------------------------------------------------------------------------------------------------------- */
/* One measurement each: ours (any kernel level), CUB, copy. */

struct OursResult {
    int block = 0;
    dr_gpu_plan_t plan{};
    Stats st;
    double max_err = 0;
};

/* Device scratch: our plan's workspace or CUB's temp storage. Zero-filled when (re)allocated: launch.h asks for a
 * zeroed workspace before its first use (our kernels leave it zeroed after each complete reduction). */
struct Workspace {
    void *d = nullptr;
    size_t bytes = 0;
    void ensure(size_t want, cudaStream_t s)
    {
        if (want <= bytes) return;
        if (d) CK(cudaFree(d));
        CK(cudaMalloc(&d, want));
        CK(cudaMemsetAsync(d, 0, want, s));
        bytes = want;
    }
    ~Workspace()
    {
        if (d) cudaFree(d);
    }
};

dr_gpu_reduce_t make_request(const Ctx &c, const Inputs &in, dr_kernel_t kernel, int block)
{
    dr_gpu_reduce_t r;
    memset(&r, 0, sizeof r);
    r.kernel = kernel;
    r.dtype = in.cs->dtype;
    r.op = in.cs->op;
    r.acc = in.acc;
    r.block = block;
    r.device = c.device;
    r.d_in = in.buf(0);
    r.n = in.n;
    return r;
}

OursResult run_ours(Ctx &c, Inputs &in, dr_kernel_t kernel, int block, int warmup, int reps, Workspace &ws)
{
    OursResult res;
    if (block == 0) /* dreduce's own choice */
        block = dr_gpu_default_block_op(kernel, in.cs->op, in.cs->dtype, in.n, c.device);
    res.block = block;
    dr_gpu_reduce_t r = make_request(c, in, kernel, block);
    CK(dr_gpu_plan(&r, &res.plan));
    ws.ensure(std::max<size_t>(res.plan.work_bytes, 256), c.s);
    CK(cudaMemsetAsync(ws.d, 0, ws.bytes, c.s)); /* zeroed before first use: another level may have left data */
    r.d_work = ws.d;
    ensure_slots(c, warmup + reps);
    poison_slots(c, warmup + reps);
    std::vector<double> ms = time_reps(c, warmup, reps, [&](int i) {
        r.d_in = in.buf(i);
        r.first_index = in.first_index(i);
        r.d_result = slot(c, i);
        CK(dr_gpu_reduce(&r, &res.plan, c.s, nullptr));
    });
    res.st = stats_of(ms);
    char what[64];
    snprintf(what, sizeof what, "ours (%s, block %d)", dr_kernel_name(kernel), block);
    res.max_err = check_slots(c, in, warmup + reps, res.plan.serial_depth, what);
    return res;
}

struct CubResult {
    size_t temp_bytes = 0;
    Stats st;
    double max_err = 0;
    int partial = 0; /* reps whose result was only partly comparable (check_wrapped_stats) */
};

/* A rep of a stats row runs CUB's four calls (cub_stats_call) back to back: its time is all of them. */
CubResult run_cub(Ctx &c, Inputs &in, int warmup, int reps)
{
    CubResult res;
    ensure_slots(c, warmup + reps);
    CK(in.cs->cub(nullptr, &res.temp_bytes, in.buf(0), slot(c, 0), in.n, in.cs->cub_acc, c.s)); /* size query */
    Workspace temp;
    temp.ensure(std::max<size_t>(res.temp_bytes, 256), c.s);
    poison_slots(c, warmup + reps);
    std::vector<double> ms = time_reps(c, warmup, reps, [&](int i) {
        size_t tb = res.temp_bytes;
        CK(in.cs->cub(temp.d, &tb, in.buf(i), slot(c, i), in.n, in.cs->cub_acc, c.s));
    });
    res.st = stats_of(ms);
    res.max_err = check_slots(c, in, warmup + reps, (uint64_t)in.n, "CUB", true, &res.partial);
    return res;
}

struct CopyResult {
    Stats st;
    double gbs = 0;      /* (read + written) / median time */
    size_t copied = 0;   /* bytes read per rep (= written) */
    int nbuf = 0;
    bool half = false;   /* copied half the input onto its other half (no room for a second buffer) */
};

/* Must run before make_data (the half fallback writes into the input buffers). */
CopyResult run_copy(Ctx &c, const Inputs &in, int warmup, int reps)
{
    CopyResult res;
    res.nbuf = in.nbuf;
    char *dst = nullptr;
    cudaError_t e = cudaMalloc(&dst, (size_t)in.nbuf * in.stride);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        dst = nullptr;
    } else {
        CK(e);
    }
    std::vector<double> ms;
    if (dst) {
        res.copied = in.bytes;
        ms = time_reps(c, warmup, reps, [&](int i) {
            const size_t off = (size_t)(i % in.nbuf) * in.stride;
            CK(cudaMemcpyAsync(dst + off, in.d + off, in.bytes, cudaMemcpyDeviceToDevice, c.s));
        });
        CK(cudaFree(dst));
    } else {
        res.half = true;
        res.copied = (in.bytes / 2) & ~(size_t)255;
        ms = time_reps(c, warmup, reps, [&](int) {
            CK(cudaMemcpyAsync(in.d + res.copied, in.d, res.copied, cudaMemcpyDeviceToDevice, c.s));
        });
    }
    res.st = stats_of(ms);
    res.gbs = res.st.median > 0 ? 2.0 * (double)res.copied / (res.st.median * 1e6) : 0;
    return res;
}

double gbs_of(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0; }

void json_ours(Json &j, const OursResult &r, double bytes)
{
    j.obj();
    j.key("block").i64(r.block);
    j.key("passes").i64(r.plan.passes);
    j.key("grid").arr();
    for (int p = 0; p < r.plan.passes; ++p) j.u64(r.plan.grid[p]);
    j.end_arr();
    j.key("work_bytes").u64(r.plan.work_bytes);
    j.key("serial_depth").u64(r.plan.serial_depth);
    json_stats(j, r.st, bytes);
    j.key("max_abs_error").num(r.max_err);
    j.end_obj();
}

} // namespace

#endif
