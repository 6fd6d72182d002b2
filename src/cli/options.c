/* Command-line parsing. Hand-written rather than getopt_long so that it keeps no global state (it is fuzzed) and
 * every message says which value was wrong and what is allowed. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <fenv.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char usage_text[] =
    "usage: dreduce [options]         (or: mpirun -np P dreduce [options])\n"
    "Reduce an array generated on each rank's GPU (or CPU) and combine the partial results across ranks.\n"
    "\n"
    "What to reduce:\n"
    "  -n, --count N        elements (default 16Mi); suffixes K M G T (x1000) or Ki Mi Gi Ti (x1024)\n"
    "  -t, --type T         int8 uint8 int16 uint16 int32 int64 uint32 uint64 float32 float64 float16 bfloat16\n"
    "                       (default float32)\n"
    "      --op OP          sum min max prod band bor bxor (default sum; band/bor/bxor: integer types);\n"
    "                       stats: count, sum, mean, variance, min, max in one pass; argmin argmax: the extreme\n"
    "                       value and the global index of its first occurrence (the first NaN if there is one);\n"
    "                       histogram: np.histogram of the whole array (--bins, --range); quantile: np.quantile\n"
    "                       of it as float64, method linear (--q); median: the quantile 0.5\n"
    "      --bins B         histogram: bins, 1..16777216 (default 10)\n"
    "      --range LO,HI    histogram: two finite numbers LO <= HI (default: the array's min and max; LO == HI\n"
    "                       is widened by 0.5 each side, as NumPy does)\n"
    "      --q Q1,Q2,...    quantile: 1..64 quantiles in [0, 1], e.g. 0.25,0.5,0.75\n"
    "      --acc MODE       wide (default): float sums/products accumulate in float64;\n"
    "                       native: in the input type (float32 for the 16-bit types; not for stats, argmin,\n"
    "                       argmax); exact: float sums without rounding, the exact sum rounded once to float64\n"
    "                       (the same bits for any ranks, GPUs, threads or chunks; sums and stats' sum and mean:\n"
    "                       not with --op prod)\n"
    "      --data D         random (default) | iota | ones | const:V | spread (floats: random signs and binades\n"
    "                       over the type's range; integers and products: as random)\n"
    "      --seed S         seed of the random data (default 1)\n"
    "      --nans F         floats: make about this fraction of the elements NaN (0..1, e.g. 0.01; default 0),\n"
    "                       the same elements at any rank count, with random signs and payloads\n"
    "      --nan P          propagate (default): a NaN is a value, as NumPy's plain functions take it;\n"
    "                       omit: a NaN is missing, as NumPy's nan* functions (nansum, nanmin, nanargmin,\n"
    "                       nanmean, nanvar, nanquantile, ...): every op answers for the other elements and\n"
    "                       the report says how many NaN it left out\n"
    "      --input PATH     reduce the array in PATH instead: NumPy .npy (its header gives the type and count;\n"
    "                       --type, if given, must agree), an HDF5 dataset (parallel HDF5, when compiled in),\n"
    "                       or raw binary (--type required); each rank reads only its own part, with MPI-IO\n"
    "      --dataset NAME   HDF5 --input: the dataset to reduce, e.g. /group/data (default: the file's only one)\n"
    "      --offset BYTES   raw --input: bytes to skip before the first element (default 0; suffixes as -n)\n"
    "\n"
    "How:\n"
    "  -k, --kernel K       neighbored interleaved smem smem2 unroll shuffle multipass (default multipass)\n"
    "  -b, --block B        threads per block: a power of two in 32..1024 (default: by size for multipass,\n"
    "                       256 to 1024; 256 for the teaching levels, as the tutorial)\n"
    "      --device D       auto (default: GPU if one is visible, else CPU) | gpu | cpu\n"
    "      --threads T      CPU backend threads (default: one per CPU of the rank's share of the node, see\n"
    "                       --bind; with --bind none one per CPU it may use, divided among the node's ranks\n"
    "                       when each may use them all)\n"
    "      --iters I        timed repetitions (default 10)\n"
    "      --warmup W       untimed repetitions first (default 2)\n"
    "      --verify on|off  check the result against a host reference (default on)\n"
    "      --misalign K     start the input K elements past an aligned address (0..15; default 0)\n"
    "      --memory M       where each rank's generated array lives: auto (default: GPU memory on a GPU, host\n"
    "                       memory on the CPU backend) | gpu | pinned (page-locked host memory) | pageable\n"
    "      --host-path P    how a GPU rank reduces a host array (--memory pinned or pageable): auto (default:\n"
    "                       the fastest path, measured once for the memory's kind and the row) | cpu: the\n"
    "                       rank's CPU threads, in place | gpu: copied to the GPU in chunks | split: both at\n"
    "                       once, the array cut in proportion to their measured rates\n"
    "\n"
    "Across ranks:\n"
    "      --scaling S      strong (default): N elements in total; weak: N elements per rank\n"
    "      --combine C      hier (default): node level, then node leaders; flat: one MPI_Reduce over all ranks\n"
    "      --staging S      auto (default): device buffers if MPI is CUDA-aware, else mapped | device |\n"
    "                       host: copy the partial to pinned host memory | mapped: the kernel writes the\n"
    "                       partial into mapped pinned host memory (no copy)\n"
    "      --allreduce      every rank receives the result (MPI_Allreduce semantics)\n"
    "      --ranks-per-node K  emulate nodes of K ranks each (to test the two-level combine on one host)\n"
    "      --bind B         each rank's share of the node: the cores near its GPU (all cores on the CPU\n"
    "                       backend) divided among the ranks wanting them. auto (default): bind the rank's\n"
    "                       CPUs to its share (widening a launcher's narrower binding) and its memory near its\n"
    "                       GPU | none: keep the launcher's binding | workers: keep it, and run the CPU\n"
    "                       backend's threads on the share\n"
    "      --share-gpus     allow more ranks on a node than GPUs (ranks share GPUs round-robin)\n"
    "      --timeout S      seconds a rank may wait in one collective before it names the level and ends the\n"
    "                       job, and in MPI_Finalize before it exits (default 300; 0: wait forever)\n"
    "\n"
    "Output:\n"
    "      --format F       table (default) | json | csv\n"
    "  -o, --output FILE    write the report to FILE instead of standard output\n"
    "  -h, --help           this text\n"
    "      --version        version\n"
    "\n"
    "Exit status: 0 verified, 2 bad usage, 3 runtime failure, 4 verification failed.\n";

/* The usage text spells the library's limits out. */
_Static_assert(DREDUCE_MAX_BINS == 16777216 && DREDUCE_MAX_Q == 64 && DR_DEFAULT_BINS == 10,
               "--help names DREDUCE_MAX_BINS, DREDUCE_MAX_Q and the default bins: change its text with them");

const char *dr_options_usage(void) { return usage_text; }

void dr_options_default(dr_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->n = 16u << 20;
    o->dtype = DR_FLOAT32;
    o->op = DR_SUM;
    o->acc_mode = DR_ACC_WIDE;
    o->kernel = DR_KERNEL_MULTIPASS;
    o->block = 0; /* auto: dr_gpu_default_block() picks by kernel and size */
    o->iters = 10;
    o->warmup = 2;
    o->gen.pattern = DR_DATA_RANDOM;
    o->gen.seed = 1;
    o->verify = 1;
    o->timeout = 300;
    o->dist.op = DR_DIST_HISTOGRAM;
    o->dist.bins = DR_DEFAULT_BINS;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* The message quotes user text: keep it one line of printable characters. */
    for (char *p = err; *p; ++p)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return -1;
}

int dr_parse_count(const char *s, uint64_t *out, char *err, size_t errlen)
{
    const char *p = s;
    uint64_t v = 0;
    if (*p < '0' || *p > '9')
        return fail(err, errlen, "invalid count '%s': expected a non-negative integer with an optional suffix "
                                 "K M G T or Ki Mi Gi Ti", s);
    for (; *p >= '0' && *p <= '9'; ++p) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
            return fail(err, errlen, "invalid count '%s': larger than 2^64 - 1", s);
    }
    uint64_t scale = 1;
    if (*p) {
        static const char units[] = "KMGT";
        const char *u = strchr(units, *p);
        if (!u || !*p)
            return fail(err, errlen, "invalid count '%s': unknown suffix '%s' (allowed: K M G T, Ki Mi Gi Ti)", s, p);
        int power = (int)(u - units) + 1;
        int binary = p[1] == 'i';
        if (p[1 + binary] != '\0')
            return fail(err, errlen, "invalid count '%s': unknown suffix '%s' (allowed: K M G T, Ki Mi Gi Ti)", s, p);
        for (int i = 0; i < power; ++i) scale *= binary ? 1024u : 1000u;
    }
    if (__builtin_mul_overflow(v, scale, &v)) return fail(err, errlen, "invalid count '%s': larger than 2^64 - 1", s);
    *out = v;
    return 0;
}

/* The base of an integer text: 10 for decimal digits, 16 for 0x and hex digits, each with an optional leading '-'
 * when allowed; 0 for anything else. strtol alone would also take leading blanks, '+', and octal. */
static int integer_base(const char *s, int allow_minus, int allow_hex)
{
    if (allow_minus && *s == '-') ++s;
    int base = 10;
    if (allow_hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (*s == '\0') return 0;
    for (; *s; ++s)
        if (!(base == 16 ? isxdigit((unsigned char)*s) : isdigit((unsigned char)*s))) return 0;
    return base;
}

static int is_decimal(const char *s, int allow_minus) { return integer_base(s, allow_minus, 0) == 10; }

static int parse_int(const char *name, const char *s, long lo, long hi, int *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!is_decimal(s, lo < 0) || *end != '\0' || errno != 0 || v < lo || v > hi)
        return fail(err, errlen, "invalid %s '%s': expected an integer in %ld..%ld", name, s, lo, hi);
    *out = (int)v;
    return 0;
}

/* Round a finite double to a binary format with `man` stored significand bits and exponent bias `bias` (IEEE
 * round-to-nearest-even, subnormals included). Returns -1 if it rounds past the largest finite value. */
static int round_to_small_float(double v, int man, int bias, uint32_t *bits)
{
    uint32_t sign = signbit(v) ? 1u : 0u;
    double a = fabs(v);
    uint32_t out;
    if (a == 0) {
        out = 0;
    } else {
        int ex;
        frexp(a, &ex); /* a = m * 2^ex, m in [0.5, 1) */
        int e = ex - 1;
        if (e < 1 - bias) { /* subnormal: units of 2^(1 - bias - man) */
            double q = nearbyint(ldexp(a, bias - 1 + man));
            out = (uint32_t)q; /* q == 2^man lands exactly on the smallest normal */
        } else {
            double q = nearbyint(ldexp(a, man - e)); /* in [2^man, 2^(man+1)] */
            if (q >= ldexp(1.0, man + 1)) {
                q /= 2;
                ++e;
            }
            if (e + bias > 2 * bias) return -1; /* past the largest finite exponent field (all ones is inf) */
            out = ((uint32_t)(e + bias) << man) | ((uint32_t)q - (1u << man));
        }
    }
    *bits = (sign << 15) | out; /* both 16-bit formats keep the sign in bit 15 */
    return 0;
}

/* Round the decimal text s to float16 (man 10) or bfloat16 (man 7) correctly, i.e. once. strtod rounds the text
 * to a double first, which could land exactly on a midpoint between two small-format values that the text itself
 * is not on. Parsing with the rounding directed down and up brackets the text between adjacent doubles lo <= v <=
 * hi. If they round to different values, a midpoint m (itself a double) is lo or hi; the text lies strictly past
 * it, so: m == lo means round up (hi's value), else down (lo's value). */
static int round_decimal_to_small_float(const char *s, int man, int bias, uint32_t *bits)
{
    const int saved = fegetround();
    fesetround(FE_DOWNWARD);
    const double lo = strtod(s, NULL);
    fesetround(FE_UPWARD);
    const double hi = strtod(s, NULL);
    fesetround(saved);
    if (!isfinite(lo) || !isfinite(hi)) return -1; /* past the double range, so far past the small format's */
    uint32_t blo, bhi;
    if (round_to_small_float(lo, man, bias, &blo) != 0 || round_to_small_float(hi, man, bias, &bhi) != 0) return -1;
    if (blo == bhi) {
        *bits = blo;
        return 0;
    }
    const double vlo = man == 10 ? dr_f16_to_f32((uint16_t)blo) : dr_bf16_to_f32((uint16_t)blo);
    const double vhi = man == 10 ? dr_f16_to_f32((uint16_t)bhi) : dr_bf16_to_f32((uint16_t)bhi);
    *bits = lo == 0.5 * (vlo + vhi) ? bhi : blo;
    return 0;
}

int dr_parse_const(const char *s, dr_dtype_t t, uint64_t *bits, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    if (!dr_dtype_is_float(t)) {
        if (*s == '\0') return fail(err, errlen, "invalid constant '': expected an integer for --type %s", dr_dtype_name(t));
        const unsigned bits_n = (unsigned)dr_dtype_size(t) * 8;
        if (t == DR_UINT8 || t == DR_UINT16 || t == DR_UINT32 || t == DR_UINT64) {
            const unsigned long long max = bits_n == 64 ? ULLONG_MAX : (1ull << bits_n) - 1;
            const int base = integer_base(s, 0, 1);
            unsigned long long v = base ? strtoull(s, &end, base) : 0;
            if (!base || *end != '\0' || errno == ERANGE || v > max)
                return fail(err, errlen, "invalid constant '%s': --type %s holds the integers 0..%llu (decimal or 0x "
                                         "hex)", s, dr_dtype_name(t), max);
            *bits = (uint64_t)v;
        } else {
            const long long max = bits_n == 64 ? LLONG_MAX : (long long)((1ull << (bits_n - 1)) - 1), min = -max - 1;
            const int base = integer_base(s, 1, 1);
            long long v = base ? strtoll(s, &end, base) : 0;
            if (!base || *end != '\0' || errno == ERANGE || v < min || v > max)
                return fail(err, errlen, "invalid constant '%s': --type %s holds %lld..%lld", s, dr_dtype_name(t), min,
                            max);
            *bits = bits_n == 64 ? (uint64_t)v : (uint64_t)v & ((1ull << bits_n) - 1);
        }
        return 0;
    }
    double v = strtod(s, &end);
    if (*s == '\0' || isspace((unsigned char)*s) || *end != '\0')
        return fail(err, errlen, "invalid constant '%s': expected a number (or nan, inf) for --type %s", s,
                    dr_dtype_name(t));
    /* strtod saturates to +-HUGE_VAL on overflow: a finite spelling that overflowed is out of range. */
    const char *digits = (*s == '-' || *s == '+') ? s + 1 : s;
    const int spelled_inf = strncasecmp(digits, "inf", 3) == 0;
    if (isinf(v) && !spelled_inf) errno = ERANGE;
    if (errno == ERANGE && isinf(v))
        return fail(err, errlen, "invalid constant '%s': out of range for --type %s", s, dr_dtype_name(t));
    uint32_t b32;
    switch (t) {
    case DR_FLOAT64:
        memcpy(bits, &v, 8);
        return 0;
    case DR_FLOAT32: {
        float f = strtof(s, NULL); /* straight from the decimal text: rounding through double could round twice */
        if (isinf(f) && !isinf(v))
            return fail(err, errlen, "invalid constant '%s': out of range for --type float32 (|V| <= 3.4028235e38)", s);
        memcpy(&b32, &f, 4);
        *bits = b32;
        return 0;
    }
    default: {
        const int man = t == DR_FLOAT16 ? 10 : 7, bias = t == DR_FLOAT16 ? 15 : 127;
        uint16_t sign = signbit(v) ? 0x8000u : 0u;
        if (isnan(v)) {
            *bits = sign | (t == DR_FLOAT16 ? 0x7e00u : 0x7fc0u);
        } else if (isinf(v)) {
            *bits = sign | (t == DR_FLOAT16 ? 0x7c00u : 0x7f80u);
        } else if (round_decimal_to_small_float(s, man, bias, &b32) != 0) {
            return fail(err, errlen, "invalid constant '%s': out of range for --type %s (|V| <= %s)", s,
                        dr_dtype_name(t), t == DR_FLOAT16 ? "65504" : "3.3895314e38");
        } else {
            *bits = b32;
        }
        return 0;
    }
    }
}

/* ---- Lists of numbers: --range LO,HI and --q Q1,Q2,... ---- */

/* Item i (0-based) of the comma-separated list s: where it starts and how long it is. */
static const char *list_item(const char *s, size_t i, int *len)
{
    for (; i > 0; --i) s = strchr(s, ',') + 1;
    const char *comma = strchr(s, ',');
    *len = comma ? (int)(comma - s) : (int)strlen(s);
    return s;
}

/* The items of a comma-separated list s, each one whole finite number: strtod must read all of it (so no trailing
 * characters), it may not start with a blank (which strtod would skip), and an empty item or list is refused; at
 * most max items, into out[0..*count). A number past float64's range is refused; one below the smallest subnormal
 * rounds to zero, as any decimal text does. In the C locale (the program sets none) a comma is never part of a
 * number, so each item is read where it stands. name: the option; what: what the list must be, for the messages. */
static int parse_numbers(const char *name, const char *what, const char *s, size_t max, double *out, size_t *count,
                         char *err, size_t errlen)
{
    if (*s == '\0') return fail(err, errlen, "invalid %s '': expected %s", name, what);
    size_t items = 1;
    for (const char *p = s; (p = strchr(p, ',')) != NULL; ++p) ++items;
    if (items > max)
        return fail(err, errlen, "invalid %s '%s': %zu items, at most %zu (expected %s)", name, s, items, max, what);
    for (size_t i = 0; i < items; ++i) {
        int len;
        const char *at = list_item(s, i, &len);
        if (len == 0) return fail(err, errlen, "invalid %s '%s': item %zu is empty (expected %s)", name, s, i + 1, what);
        char *end;
        errno = 0;
        const double v = strtod(at, &end);
        if (isspace((unsigned char)*at) || end != at + len)
            return fail(err, errlen, "invalid %s '%s': '%.*s' is not a number (expected %s)", name, s, len, at, what);
        const char *digits = *at == '-' || *at == '+' ? at + 1 : at;
        if (isinf(v) && errno == ERANGE && strncasecmp(digits, "inf", 3) != 0)
            return fail(err, errlen, "invalid %s '%s': '%.*s' is past float64's range (expected %s)", name, s, len, at,
                        what);
        if (!isfinite(v))
            return fail(err, errlen, "invalid %s '%s': '%.*s' is not finite (expected %s)", name, s, len, at, what);
        out[i] = v;
    }
    *count = items;
    return 0;
}

int dr_parse_range(const char *s, double range[2], char *err, size_t errlen)
{
    static const char what[] = "LO,HI: two finite numbers with LO <= HI";
    double v[2];
    size_t n = 0;
    if (parse_numbers("--range", what, s, 2, v, &n, err, errlen) != 0) return -1;
    if (n != 2) return fail(err, errlen, "invalid --range '%s': one number, expected %s", s, what);
    if (v[0] > v[1]) {
        int l0, l1;
        const char *a = list_item(s, 0, &l0), *b = list_item(s, 1, &l1);
        return fail(err, errlen, "invalid --range '%s': LO '%.*s' is above HI '%.*s' (expected LO <= HI; LO == HI is "
                    "widened by 0.5 each side, as NumPy does)", s, l0, a, l1, b);
    }
    range[0] = v[0];
    range[1] = v[1];
    return 0;
}

int dr_parse_q(const char *s, double *q, size_t *nq, char *err, size_t errlen)
{
    static const char what[] = "a comma-separated list of 1..64 quantiles in [0, 1]";
    double v[DREDUCE_MAX_Q];
    size_t n = 0;
    if (parse_numbers("--q", what, s, DREDUCE_MAX_Q, v, &n, err, errlen) != 0) return -1;
    for (size_t i = 0; i < n; ++i)
        if (!(v[i] >= 0.0 && v[i] <= 1.0)) {
            int len;
            const char *at = list_item(s, i, &len);
            return fail(err, errlen, "invalid --q '%s': '%.*s' is not a quantile in [0, 1]", s, len, at);
        }
    memcpy(q, v, n * sizeof *q);
    *nq = n;
    return 0;
}

/* The names --op takes beyond dr_op_t's, in dr_dist_op_t's terms (median: the quantile 0.5). */
static const struct {
    const char *name;
    dr_dist_op_t op;
    int median;
} dist_ops[] = {{"histogram", DR_DIST_HISTOGRAM, 0}, {"quantile", DR_DIST_QUANTILE, 0}, {"median", DR_DIST_QUANTILE, 1}};

const char *dr_options_op_name(const dr_options_t *o)
{
    if (!o->dist.on) return dr_op_name(o->op);
    return o->dist.op == DR_DIST_HISTOGRAM ? "histogram" : o->dist.median ? "median" : "quantile";
}

enum opt_id {
    OPT_COUNT, OPT_TYPE, OPT_OP, OPT_ACC, OPT_DATA, OPT_SEED, OPT_KERNEL, OPT_BLOCK, OPT_DEVICE, OPT_THREADS,
    OPT_ITERS, OPT_WARMUP, OPT_VERIFY, OPT_MISALIGN, OPT_SCALING, OPT_COMBINE, OPT_STAGING, OPT_ALLREDUCE,
    OPT_RANKS_PER_NODE, OPT_BIND, OPT_SHARE_GPUS, OPT_TIMEOUT, OPT_FORMAT, OPT_OUTPUT, OPT_HELP, OPT_VERSION,
    OPT_INPUT, OPT_OFFSET, OPT_DATASET, OPT_BINS, OPT_RANGE, OPT_Q, OPT_NAN, OPT_NANS, OPT_MEMORY, OPT_HOST_PATH
};

static const struct {
    const char *name;
    char short_name;
    int takes_arg;
    enum opt_id id;
} opt_table[] = {
    {"count", 'n', 1, OPT_COUNT},     {"type", 't', 1, OPT_TYPE},        {"op", 0, 1, OPT_OP},
    {"acc", 0, 1, OPT_ACC},           {"data", 0, 1, OPT_DATA},          {"seed", 0, 1, OPT_SEED},
    {"kernel", 'k', 1, OPT_KERNEL},   {"block", 'b', 1, OPT_BLOCK},      {"device", 0, 1, OPT_DEVICE},
    {"threads", 0, 1, OPT_THREADS},   {"iters", 0, 1, OPT_ITERS},        {"warmup", 0, 1, OPT_WARMUP},
    {"verify", 0, 1, OPT_VERIFY},     {"misalign", 0, 1, OPT_MISALIGN},  {"scaling", 0, 1, OPT_SCALING},
    {"combine", 0, 1, OPT_COMBINE},   {"staging", 0, 1, OPT_STAGING},    {"allreduce", 0, 0, OPT_ALLREDUCE},
    {"ranks-per-node", 0, 1, OPT_RANKS_PER_NODE}, {"bind", 0, 1, OPT_BIND}, {"share-gpus", 0, 0, OPT_SHARE_GPUS},
    {"timeout", 0, 1, OPT_TIMEOUT},
    {"format", 0, 1, OPT_FORMAT},     {"output", 'o', 1, OPT_OUTPUT},    {"help", 'h', 0, OPT_HELP},
    {"version", 0, 0, OPT_VERSION},   {"input", 0, 1, OPT_INPUT},        {"offset", 0, 1, OPT_OFFSET},
    {"dataset", 0, 1, OPT_DATASET},   {"bins", 0, 1, OPT_BINS},          {"range", 0, 1, OPT_RANGE},
    {"q", 0, 1, OPT_Q},               {"nan", 0, 1, OPT_NAN},            {"nans", 0, 1, OPT_NANS},
    {"memory", 0, 1, OPT_MEMORY},     {"host-path", 0, 1, OPT_HOST_PATH},
};

static const char *const memory_names[DR_MEMORY_COUNT] = {"auto", "gpu", "pinned", "pageable"};

const char *dr_memory_name(dr_memory_t m) { return (unsigned)m < DR_MEMORY_COUNT ? memory_names[m] : "?"; }

/* Match `s` against a list of names; on failure, name the allowed ones. */
static int parse_choice(const char *opt, const char *s, const char *const *names, int count, int *out, char *err,
                        size_t errlen)
{
    char allowed[256] = "";
    for (int i = 0; i < count; ++i) {
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
        strncat(allowed, i ? ", " : "", sizeof allowed - strlen(allowed) - 1);
        strncat(allowed, names[i], sizeof allowed - strlen(allowed) - 1);
    }
    return fail(err, errlen, "invalid --%s '%s': allowed: %s", opt, s, allowed);
}

static int apply(enum opt_id id, const char *name, const char *v, dr_options_t *o, const char **const_text,
                 char *err, size_t errlen)
{
    static const char *const devices[] = {"auto", "gpu", "cpu"};
    static const char *const formats[] = {"table", "json", "csv"};
    static const char *const scalings[] = {"strong", "weak"};
    static const char *const combines[] = {"hier", "flat"};
    static const char *const stagings[] = {"auto", "device", "host", "mapped"};
    static const char *const binds[] = {"auto", "none", "workers"}; /* in dr_bind_choice_t's order */
    static const char *const onoff[] = {"off", "on"};
    int choice = 0;
    switch (id) {
    case OPT_COUNT: return dr_parse_count(v, &o->n, err, errlen);
    case OPT_TYPE:
        if (dr_dtype_parse(v, &o->dtype) != 0)
            return fail(err, errlen, "invalid --type '%s': allowed: %s", v, dr_dtype_names());
        o->type_given = 1;
        return 0;
    case OPT_OP:
        for (size_t i = 0; i < sizeof dist_ops / sizeof dist_ops[0]; ++i)
            if (strcmp(v, dist_ops[i].name) == 0) {
                o->op = DR_SUM; /* unused: not a reduction */
                o->dist.on = 1;
                o->dist.op = dist_ops[i].op;
                o->dist.median = dist_ops[i].median;
                return 0;
            }
        if (dr_op_parse(v, &o->op) != 0)
            return fail(err, errlen, "invalid --op '%s': allowed: %s, histogram, quantile, median", v, dr_op_names());
        o->dist.on = o->dist.median = 0;
        o->dist.op = DR_DIST_HISTOGRAM;
        return 0;
    case OPT_BINS: {
        int bins = 0;
        if (parse_int("--bins", v, 1, DREDUCE_MAX_BINS, &bins, err, errlen)) return -1;
        o->dist.bins = (uint32_t)bins;
        o->dist.bins_given = 1;
        return 0;
    }
    case OPT_RANGE:
        if (dr_parse_range(v, o->dist.range, err, errlen)) return -1;
        o->dist.has_range = 1;
        return 0;
    case OPT_Q:
        memset(o->dist.q, 0, sizeof o->dist.q); /* a second --q replaces the first, its tail too */
        if (dr_parse_q(v, o->dist.q, &o->dist.nq, err, errlen)) return -1;
        o->dist.q_given = 1;
        return 0;
    case OPT_ACC:
        if (dr_acc_mode_parse(v, &o->acc_mode) != 0)
            return fail(err, errlen, "invalid --acc '%s': allowed: wide, native, exact", v);
        return 0;
    case OPT_MEMORY:
        if (parse_choice(name, v, memory_names, DR_MEMORY_COUNT, &choice, err, errlen)) return -1;
        o->memory = (dr_memory_t)choice;
        return 0;
    case OPT_HOST_PATH:
        if (dr_host_path_parse(v, &o->host_path) != 0)
            return fail(err, errlen, "invalid --host-path '%s': allowed: auto, cpu, gpu, split", v);
        return 0;
    case OPT_NAN:
        if (dr_nan_policy_parse(v, &o->nan) != 0)
            return fail(err, errlen, "invalid --nan '%s': allowed: propagate, omit", v);
        return 0;
    case OPT_NANS: {
        char *end;
        const double f = strtod(v, &end);
        if (*v == '\0' || isspace((unsigned char)*v) || *end != '\0' || !(f >= 0.0 && f <= 1.0))
            return fail(err, errlen, "invalid --nans '%s': expected a fraction in 0..1 (e.g. 0.01)", v);
        o->gen.nan_threshold = (uint64_t)llround(f * 4294967296.0);
        o->nans = f;
        return 0;
    }
    case OPT_DATA:
        if (strcmp(v, "random") == 0) o->gen.pattern = DR_DATA_RANDOM;
        else if (strcmp(v, "iota") == 0) o->gen.pattern = DR_DATA_IOTA;
        else if (strcmp(v, "ones") == 0) o->gen.pattern = DR_DATA_ONES;
        else if (strcmp(v, "spread") == 0) o->gen.pattern = DR_DATA_SPREAD;
        else if (strncmp(v, "const:", 6) == 0) {
            o->gen.pattern = DR_DATA_CONST;
            *const_text = v + 6;
        } else
            return fail(err, errlen, "invalid --data '%s': allowed: random, iota, ones, const:V, spread", v);
        return 0;
    case OPT_SEED: {
        uint64_t seed;
        char *end;
        errno = 0;
        const int base = integer_base(v, 0, 1);
        if (!base) return fail(err, errlen, "invalid --seed '%s': expected an integer in 0..2^64-1", v);
        seed = strtoull(v, &end, base);
        if (*end != '\0' || errno == ERANGE)
            return fail(err, errlen, "invalid --seed '%s': expected an integer in 0..2^64-1", v);
        o->gen.seed = seed;
        return 0;
    }
    case OPT_KERNEL:
        if (dr_kernel_parse(v, &o->kernel) != 0)
            return fail(err, errlen, "invalid --kernel '%s': allowed: %s", v, dr_kernel_names());
        return 0;
    case OPT_BLOCK: {
        char *end;
        errno = 0;
        long b = strtol(v, &end, 10);
        if (*v == '\0' || *end != '\0' || errno != 0 || b < 32 || b > 1024 || (b & (b - 1)) != 0)
            return fail(err, errlen, "invalid --block '%s': allowed: 32, 64, 128, 256, 512, 1024", v);
        o->block = (int)b;
        return 0;
    }
    case OPT_DEVICE:
        if (parse_choice(name, v, devices, 3, &choice, err, errlen)) return -1;
        o->device = (dr_device_choice_t)choice;
        return 0;
    case OPT_THREADS: return parse_int("--threads", v, 0, 4096, &o->threads, err, errlen);
    case OPT_ITERS: return parse_int("--iters", v, 1, 1000000, &o->iters, err, errlen);
    case OPT_WARMUP: return parse_int("--warmup", v, 0, 1000000, &o->warmup, err, errlen);
    case OPT_VERIFY:
        if (parse_choice(name, v, onoff, 2, &o->verify, err, errlen)) return -1;
        return 0;
    case OPT_MISALIGN: return parse_int("--misalign", v, 0, 15, &o->misalign, err, errlen);
    case OPT_SCALING:
        if (parse_choice(name, v, scalings, 2, &choice, err, errlen)) return -1;
        o->scaling = (dr_scaling_t)choice;
        return 0;
    case OPT_COMBINE:
        if (parse_choice(name, v, combines, 2, &choice, err, errlen)) return -1;
        o->combine = (dr_combine_mode_t)choice;
        return 0;
    case OPT_STAGING:
        if (parse_choice(name, v, stagings, 4, &choice, err, errlen)) return -1;
        o->staging = (dr_staging_t)choice;
        return 0;
    case OPT_ALLREDUCE: o->allreduce = 1; return 0;
    case OPT_RANKS_PER_NODE: return parse_int("--ranks-per-node", v, 1, 1 << 20, &o->ranks_per_node, err, errlen);
    case OPT_BIND:
        if (parse_choice(name, v, binds, 3, &choice, err, errlen)) return -1;
        o->bind = (dr_bind_choice_t)choice;
        return 0;
    case OPT_SHARE_GPUS: o->share_gpus = 1; return 0;
    case OPT_TIMEOUT: {
        char *end;
        errno = 0;
        double t = strtod(v, &end);
        if (*v == '\0' || isspace((unsigned char)*v) || *end != '\0' || errno != 0 || !(t >= 0) || t > 1e6)
            return fail(err, errlen, "invalid --timeout '%s': expected seconds in 0..1000000 (0: no timeout)", v);
        o->timeout = t;
        return 0;
    }
    case OPT_FORMAT:
        if (parse_choice(name, v, formats, 3, &choice, err, errlen)) return -1;
        o->format = (dr_format_t)choice;
        return 0;
    case OPT_OUTPUT:
        if (*v == '\0') return fail(err, errlen, "invalid --output '': expected a file name");
        if (strlen(v) >= sizeof o->output) return fail(err, errlen, "invalid --output: path longer than %zu bytes", sizeof o->output - 1);
        snprintf(o->output, sizeof o->output, "%s", v);
        return 0;
    case OPT_INPUT:
        if (*v == '\0') return fail(err, errlen, "invalid --input '': expected a file name");
        if (strlen(v) >= sizeof o->input)
            return fail(err, errlen, "invalid --input: path longer than %zu bytes", sizeof o->input - 1);
        snprintf(o->input, sizeof o->input, "%s", v);
        return 0;
    case OPT_DATASET:
        if (*v == '\0') return fail(err, errlen, "invalid --dataset '': expected a dataset's path in the file");
        if (strlen(v) >= sizeof o->dataset)
            return fail(err, errlen, "invalid --dataset: longer than %zu bytes", sizeof o->dataset - 1);
        snprintf(o->dataset, sizeof o->dataset, "%s", v);
        return 0;
    case OPT_OFFSET: {
        char unused[8];
        if (dr_parse_count(v, &o->input_offset, unused, sizeof unused) != 0)
            return fail(err, errlen, "invalid --offset '%s': expected bytes, a non-negative integer below 2^64 with an "
                                     "optional suffix K M G T or Ki Mi Gi Ti", v);
        o->offset_given = 1;
        return 0;
    }
    default: return 0;
    }
}

/* --op histogram, quantile, median against the rest of the command line: --bins and --range belong to a histogram,
 * --q to a quantile (and is required there; the median is q 0.5 by definition), and nothing accumulates (the counts
 * are exact, a quantile interpolates two elements of the data in float64), so --acc is wide; the counting kernel is
 * the library's own, so no teaching --kernel. */
static int dist_check(dr_options_t *o, char *err, size_t errlen)
{
    dr_dist_options_t *d = &o->dist;
    const int hist = d->on && d->op == DR_DIST_HISTOGRAM, quant = d->on && d->op == DR_DIST_QUANTILE;
    if (d->bins_given && !hist)
        return fail(err, errlen, "--bins needs --op histogram (it is the histogram's number of bins)");
    if (d->has_range && !hist) return fail(err, errlen, "--range needs --op histogram (it is the histogram's range)");
    if (d->q_given && d->median)
        return fail(err, errlen, "--q cannot be used with --op median (the median is the quantile 0.5): use --op "
                    "quantile --q 0.5,...");
    if (d->q_given && !quant) return fail(err, errlen, "--q needs --op quantile (it lists the quantiles to find)");
    if (quant && !d->median && !d->q_given)
        return fail(err, errlen, "--op quantile needs --q Q1,Q2,... (quantiles in [0, 1]; --op median is --q 0.5)");
    if (!d->on) return 0;
    if (o->acc_mode != DR_ACC_WIDE)
        return fail(err, errlen, "--acc %s cannot be used with --op %s (nothing accumulates: a histogram's counts are "
                    "exact, a quantile interpolates two elements in float64)", dr_acc_mode_name(o->acc_mode),
                    dr_options_op_name(o));
    if (o->kernel != DR_KERNEL_MULTIPASS)
        return fail(err, errlen, "--op %s cannot be used with --kernel %s (it runs on the library's counting kernel, "
                    "not on a reduction's)", dr_options_op_name(o), dr_kernel_name(o->kernel));
    if (d->median) {
        d->nq = 1;
        d->q[0] = 0.5;
    }
    return 0;
}

/* --memory and --host-path against the rest of the line. */
static int host_check(const dr_options_t *o, char *err, size_t errlen)
{
    const int host_mem = o->memory == DR_MEMORY_PINNED || o->memory == DR_MEMORY_PAGEABLE;
    if (o->input[0] && o->memory != DR_MEMORY_AUTO)
        return fail(err, errlen, "--memory cannot be used with --input (a file's share streams through the "
                    "library's own buffers)");
    if (o->device == DR_DEVICE_CPU && (o->memory == DR_MEMORY_GPU || o->memory == DR_MEMORY_PINNED))
        return fail(err, errlen, "--memory %s cannot be used with --device cpu (%s)", dr_memory_name(o->memory),
                    o->memory == DR_MEMORY_GPU ? "the CPU backend reduces host memory"
                                               : "pinned memory is the CUDA driver's: the CPU backend takes pageable");
    if (o->host_path == DR_HOST_PATH_AUTO) return 0;
    if (o->device == DR_DEVICE_CPU && o->host_path != DR_HOST_PATH_CPU)
        return fail(err, errlen, "--host-path %s cannot be used with --device cpu (the CPU backend reduces host "
                    "arrays on its own threads)", dr_host_path_name(o->host_path));
    if (o->input[0])
        return fail(err, errlen, "--host-path cannot be used with --input (a file's share streams through the "
                    "library's own buffers)");
    if (o->dist.on)
        return fail(err, errlen, "--host-path cannot be used with --op %s (it chooses how a reduction reads a host "
                    "array)", dr_options_op_name(o));
    if (!host_mem && o->device != DR_DEVICE_CPU)
        return fail(err, errlen, "--host-path %s needs --memory pinned or pageable (it chooses how a host array is "
                    "reduced; the generated array is in GPU memory otherwise)", dr_host_path_name(o->host_path));
    return 0;
}

dr_parse_result_t dr_options_parse(int argc, char **argv, dr_options_t *o, char *err, size_t errlen)
{
    const char *const_text = NULL;
    int count_given = 0, data_given = 0, seed_given = 0, nans_given = 0; /* options that describe generated data */
    err[0] = '\0';
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i], *value = NULL;
        int k = -1;
        const size_t nopts = sizeof opt_table / sizeof opt_table[0];
        if (arg[0] == '-' && arg[1] == '-' && arg[2] != '\0') {
            const char *eq = strchr(arg + 2, '=');
            size_t len = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
            for (size_t j = 0; j < nopts; ++j)
                if (strlen(opt_table[j].name) == len && strncmp(opt_table[j].name, arg + 2, len) == 0) k = (int)j;
            if (k < 0) {
                fail(err, errlen, "unknown option '%.*s' (see --help)", (int)(len + 2), arg);
                return DR_PARSE_ERROR;
            }
            if (eq) {
                if (!opt_table[k].takes_arg) {
                    fail(err, errlen, "option '--%s' takes no value", opt_table[k].name);
                    return DR_PARSE_ERROR;
                }
                value = eq + 1;
            }
        } else if (arg[0] == '-' && arg[1] != '\0' && arg[1] != '-') {
            for (size_t j = 0; j < nopts; ++j)
                if (opt_table[j].short_name == arg[1]) k = (int)j;
            if (k < 0) {
                /* "-count 5": a long option with one dash is the likely mistake; say so. */
                const size_t name_len = strcspn(arg + 1, "=");
                for (size_t j = 0; j < nopts; ++j)
                    if (strlen(opt_table[j].name) == name_len && strncmp(opt_table[j].name, arg + 1, name_len) == 0) {
                        fail(err, errlen, "unknown option '%s': long options take two dashes (--%s)", arg,
                             opt_table[j].name);
                        return DR_PARSE_ERROR;
                    }
                fail(err, errlen, "unknown option '-%c' (see --help)", arg[1]);
                return DR_PARSE_ERROR;
            }
            if (arg[2] != '\0') {
                if (!opt_table[k].takes_arg) {
                    fail(err, errlen, "unknown option '%s' (see --help)", arg);
                    return DR_PARSE_ERROR;
                }
                value = arg + 2;
            }
        } else {
            fail(err, errlen, "unexpected argument '%s' (options start with - or --; see --help)", arg);
            return DR_PARSE_ERROR;
        }
        if (opt_table[k].takes_arg && !value) {
            if (i + 1 >= argc) {
                fail(err, errlen, "option '--%s' needs a value (see --help)", opt_table[k].name);
                return DR_PARSE_ERROR;
            }
            value = argv[++i];
        }
        if (opt_table[k].id == OPT_HELP) return DR_PARSE_HELP;
        if (opt_table[k].id == OPT_VERSION) return DR_PARSE_VERSION;
        count_given |= opt_table[k].id == OPT_COUNT;
        data_given |= opt_table[k].id == OPT_DATA;
        seed_given |= opt_table[k].id == OPT_SEED;
        nans_given |= opt_table[k].id == OPT_NANS;
        if (apply(opt_table[k].id, opt_table[k].name, value, o, &const_text, err, errlen) != 0) return DR_PARSE_ERROR;
    }
    /* Checks that need the whole command line. With --input the file holds the whole array: its count (and for a
     * .npy file its type) are known once it is opened, where the op is checked against the type when --type was
     * left out (src/lib/input.c). */
    if (o->input[0]) {
        const char *clash = count_given ? "-n/--count cannot be used with --input (the file decides the count)"
                            : data_given ? "--data cannot be used with --input (the data come from the file)"
                            : seed_given ? "--seed cannot be used with --input (the data come from the file)"
                            : nans_given ? "--nans cannot be used with --input (the data come from the file)"
                            : o->scaling == DR_SCALING_WEAK
                                ? "--scaling weak cannot be used with --input (the ranks split the file's array)"
                                : NULL;
        if (clash) {
            fail(err, errlen, "%s", clash);
            return DR_PARSE_ERROR;
        }
    } else if (o->offset_given) {
        fail(err, errlen, "--offset needs --input (it skips the first bytes of a raw input file)");
        return DR_PARSE_ERROR;
    } else if (o->dataset[0]) {
        fail(err, errlen, "--dataset needs --input (it names the dataset of an HDF5 input file)");
        return DR_PARSE_ERROR;
    }
    if (o->device == DR_DEVICE_CPU && o->staging != DR_STAGING_AUTO) {
        static const char *const names[] = {"auto", "device", "host", "mapped"};
        fail(err, errlen, "--staging %s cannot be used with --device cpu (staging is how a GPU's partial reaches MPI; "
             "the CPU backend's partials are host memory already)", names[o->staging]);
        return DR_PARSE_ERROR;
    }
    if (host_check(o, err, errlen) != 0) return DR_PARSE_ERROR;
    if (dist_check(o, err, errlen) != 0) return DR_PARSE_ERROR;
    /* stats, argmin, argmax: no native mode whatever the type (they have no float sum or product to narrow), so
     * this holds for an --input of unknown type too. */
    if ((o->op == DR_STATS || dr_op_is_arg(o->op)) && o->acc_mode == DR_ACC_NATIVE) {
        const char *why = o->op == DR_STATS ? "its moments are float64 and its sum exact or float64 whatever the type"
                                            : "it compares the values themselves and accumulates nothing";
        fail(err, errlen, "--acc native cannot be used with --op %s (%s): use --acc wide (the default) or exact",
             dr_op_name(o->op), why);
        return DR_PARSE_ERROR;
    }
    if ((o->op == DR_STATS || dr_op_is_arg(o->op)) && o->kernel != DR_KERNEL_MULTIPASS) {
        fail(err, errlen, "--op %s cannot be used with --kernel %s (it runs on the multipass kernel; the teaching "
             "levels accumulate one value in one register)", dr_op_name(o->op), dr_kernel_name(o->kernel));
        return DR_PARSE_ERROR;
    }
    if (!dr_op_valid(o->dtype, o->op) && !(o->input[0] && !o->type_given)) {
        fail(err, errlen, "--op %s is not defined for --type %s (band, bor, bxor take the integer types)",
             dr_op_name(o->op), dr_dtype_name(o->dtype));
        return DR_PARSE_ERROR;
    }
    if (!dr_acc_mode_valid(o->dtype, o->op, o->acc_mode) && !(o->input[0] && !o->type_given)) {
        fail(err, errlen, "--acc exact cannot be used with --op %s of --type %s (exact: sums; min and max are exact "
             "anyway): use --acc wide or native", dr_op_name(o->op), dr_dtype_name(o->dtype));
        return DR_PARSE_ERROR;
    }
    if (o->acc_mode == DR_ACC_MODE_EXACT && o->kernel != DR_KERNEL_MULTIPASS) {
        fail(err, errlen, "--acc exact cannot be used with --kernel %s (exact sums run on the multipass kernel; the "
             "teaching levels accumulate in one register)", dr_kernel_name(o->kernel));
        return DR_PARSE_ERROR;
    }
    if (o->gen.nan_threshold && !dr_dtype_is_float(o->dtype) && !o->input[0]) {
        fail(err, errlen, "--nans %g cannot be used with --type %s (an integer type has no NaN)", o->nans,
             dr_dtype_name(o->dtype));
        return DR_PARSE_ERROR;
    }
    if (o->nan == DR_NAN_OMIT && o->kernel != DR_KERNEL_MULTIPASS) {
        fail(err, errlen, "--nan omit cannot be used with --kernel %s (omitting NaN runs on the multipass kernel; "
             "the teaching levels read every element as a value)", dr_kernel_name(o->kernel));
        return DR_PARSE_ERROR;
    }
    o->gen.dtype = o->dtype;
    o->gen.op = o->op;
    if (o->gen.pattern == DR_DATA_CONST && dr_parse_const(const_text, o->dtype, &o->gen.const_bits, err, errlen) != 0)
        return DR_PARSE_ERROR;
    return DR_PARSE_OK;
}

const char *dr_pattern_name(dr_pattern_t p)
{
    static const char *const names[DR_DATA_COUNT] = {"random", "iota", "ones", "const", "spread"};
    return (unsigned)p < DR_DATA_COUNT ? names[p] : "?";
}

/* The distribution's part of the canonical line: "dist=none", or the op with its bins and range, or its q values
 * (%.17g, every bit; a list too long for one word of the line as its count and a hash of the bits). */
static void dist_canonical(const dr_dist_options_t *d, char *buf, size_t len)
{
    if (!d->on) {
        snprintf(buf, len, "dist=none");
    } else if (d->op == DR_DIST_HISTOGRAM) {
        if (d->has_range) snprintf(buf, len, "dist=histogram bins=%u range=%.17g,%.17g", d->bins, d->range[0], d->range[1]);
        else snprintf(buf, len, "dist=histogram bins=%u range=auto", d->bins);
    } else {
        char q[120] = "";
        size_t used = 0;
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i < d->nq; ++i) {
            uint64_t b;
            memcpy(&b, &d->q[i], sizeof b);
            for (int k = 0; k < 8; ++k) h = (h ^ ((b >> (8 * k)) & 0xff)) * 0x100000001b3ull;
            if (used < sizeof q) used += (size_t)snprintf(q + used, sizeof q - used, "%s%.17g", i ? "," : "", d->q[i]);
        }
        if (used < sizeof q) snprintf(buf, len, "dist=%s q=%s", d->median ? "median" : "quantile", q);
        else snprintf(buf, len, "dist=quantile q=%zu:%016" PRIx64, d->nq, h);
    }
}

void dr_options_canonical(const dr_options_t *o, char *buf, size_t len)
{
    static const char *const devices[] = {"auto", "gpu", "cpu"};
    char dist[200];
    dist_canonical(&o->dist, dist, sizeof dist);
    snprintf(buf, len,
             "n=%" PRIu64 " type=%s op=%s acc=%s data=%s seed=%" PRIu64 " const=%" PRIx64
             " kernel=%s block=%d iters=%d warmup=%d verify=%d device=%s misalign=%d scaling=%s combine=%s staging=%d"
             " allreduce=%d ranks_per_node=%d %s offset=%" PRIu64 " input=%s nan=%s nans=%" PRIu64
             " memory=%s host_path=%s",
             o->n, dr_dtype_name(o->dtype), dr_options_op_name(o), dr_acc_mode_name(o->acc_mode),
             dr_pattern_name(o->gen.pattern), o->gen.seed, o->gen.const_bits, dr_kernel_name(o->kernel), o->block, o->iters,
             o->warmup, o->verify, devices[o->device], o->misalign, o->scaling == DR_SCALING_WEAK ? "weak" : "strong",
             o->combine == DR_COMBINE_FLAT ? "flat" : "hier", (int)o->staging, o->allreduce, o->ranks_per_node, dist,
             o->input_offset, o->input, dr_nan_policy_name(o->nan), o->gen.nan_threshold, dr_memory_name(o->memory),
             dr_host_path_name(o->host_path));
}
