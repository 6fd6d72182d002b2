/* Unit test of src/cli/options.c: dr_parse_count, dr_options_parse (every option, every spelling, every error),
 * dr_parse_const's bit patterns (against an independent round-to-nearest-even search over every 16-bit pattern)
 * and dr_options_canonical. Prints one line per failure and a summary; returns 0 only if every check passed. */
#include <math.h>
#include <stdarg.h>

#include "check.h"
#include "options.h"

#define MAXARGS 64

/* Parse a NULL-terminated list of arguments (argv[0] is added) into *o, starting from the defaults. */
static dr_parse_result_t parse_list(dr_options_t *o, char *err, size_t errlen, const char *const *args)
{
    char *argv[MAXARGS + 1];
    int argc = 0;
    argv[argc++] = (char *)"dreduce";
    for (; *args && argc < MAXARGS; ++args) argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    dr_options_default(o);
    return dr_options_parse(argc, argv, o, err, errlen);
}

static dr_parse_result_t parse_v(dr_options_t *o, char *err, size_t errlen, ...)
{
    const char *args[MAXARGS + 1];
    int n = 0;
    va_list ap;
    va_start(ap, errlen);
    for (const char *a; n < MAXARGS && (a = va_arg(ap, const char *)) != NULL;) args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    return parse_list(o, err, errlen, args);
}
#define PARSE(o, err, ...) parse_v((o), (err), sizeof(err), __VA_ARGS__, (const char *)NULL)

/* The command line as one string, for failure messages. */
static const char *joined(const char *const *args)
{
    static char buf[1024];
    buf[0] = '\0';
    for (; *args; ++args) {
        strncat(buf, buf[0] ? " " : "", sizeof buf - strlen(buf) - 1);
        strncat(buf, "'", sizeof buf - strlen(buf) - 1);
        strncat(buf, *args, sizeof buf - strlen(buf) - 1);
        strncat(buf, "'", sizeof buf - strlen(buf) - 1);
    }
    return buf;
}

/* ------------------------------------------------------------------------------------------------------------ */
static void test_parse_count(uint64_t *rng)
{
    static const struct {
        const char *s;
        uint64_t want;
    } good[] = {
        {"0", 0},
        {"1", 1},
        {"00012", 12},
        {"16777216", 16777216},
        {"18446744073709551615", UINT64_MAX},
        {"0K", 0},
        {"1K", 1000ull},
        {"1M", 1000000ull},
        {"1G", 1000000000ull},
        {"1T", 1000000000000ull},
        {"1Ki", 1024ull},
        {"1Mi", 1048576ull},
        {"1Gi", 1073741824ull},
        {"1Ti", 1099511627776ull},
        {"3K", 3000ull},
        {"7M", 7000000ull},
        {"12G", 12000000000ull},
        {"5T", 5000000000000ull},
        {"3Ki", 3072ull},
        {"16Mi", 16777216ull},
        {"4Gi", 4294967296ull},
        {"2Ti", 2199023255552ull},
        {"18446744073709551K", 18446744073709551000ull},
        {"18446744073709M", 18446744073709000000ull},
        {"17179869183Gi", 17179869183ull << 30},
        {"16777215Ti", 16777215ull << 40},
        {"18446744T", 18446744000000000000ull},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        char err[256] = "";
        uint64_t v = 12345;
        int rc = dr_parse_count(good[i].s, &v, err, sizeof err);
        CHECK(rc == 0 && v == good[i].want, "dr_parse_count(\"%s\"): expected 0 and %" PRIu64 ", got %d and %" PRIu64
              " (err \"%s\")", good[i].s, good[i].want, rc, v, err);
    }
    /* Random values with every suffix, checked against our own multiplication. */
    static const char *const suffixes[] = {"", "K", "M", "G", "T", "Ki", "Mi", "Gi", "Ti"};
    static const uint64_t scales[] = {1, 1000ull, 1000000ull, 1000000000ull, 1000000000000ull, 1ull << 10, 1ull << 20,
                                      1ull << 30, 1ull << 40};
    for (int rep = 0; rep < 2000; ++rep) {
        const int k = (int)(check_rand(rng) % 9);
        const uint64_t v = check_rand(rng) >> (check_rand(rng) % 64);
        char s[64], err[256] = "";
        snprintf(s, sizeof s, "%" PRIu64 "%s", v, suffixes[k]);
        uint64_t got = 0;
        int rc = dr_parse_count(s, &got, err, sizeof err);
        const int overflows = v != 0 && v > UINT64_MAX / scales[k];
        if (overflows) {
            CHECK(rc == -1 && strstr(err, s) != NULL, "dr_parse_count(\"%s\"): overflows 2^64-1, expected an error "
                  "naming it, got %d, %" PRIu64 ", err \"%s\"", s, rc, got, err);
        } else {
            CHECK(rc == 0 && got == v * scales[k], "dr_parse_count(\"%s\"): expected %" PRIu64 ", got %d, %" PRIu64
                  " (err \"%s\")", s, v * scales[k], rc, got, err);
        }
    }
    static const char *const bad[] = {
        /* past 2^64 - 1 */
        "18446744073709551616", "99999999999999999999", "17179869184Gi", "20000000000000T", "16777216Ti",
        "18446744073709552K", "18446744073709551615Ki", "100000000000000000000000000000",
        /* garbage, signs, spaces, hex, fractions, bad suffixes */
        "", "abc", "12x", "1.5M", "-5", "+5", " 5", "5 ", "0x10", "Mi", "5MiB", "5k", "5ki", "5KiB", "5Kx", "5ii",
        "K", "5i", "5 K", "1e6", "--5", "5-", "5\n", "\t5",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        char err[256] = "";
        uint64_t v = 777;
        int rc = dr_parse_count(bad[i], &v, err, sizeof err);
        CHECK(rc == -1, "dr_parse_count(\"%s\"): expected an error, got %d and %" PRIu64, bad[i], rc, v);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        for (char *q = quoted; *q; ++q) /* messages print control characters as '?': one printable line */
            if ((unsigned char)*q < 0x20) *q = '?';
        CHECK(err[0] != '\0' && strstr(err, quoted) != NULL, "dr_parse_count(\"%s\"): message should quote the bad "
              "text, got \"%s\"", bad[i], err);
        CHECK(strchr(err, '\n') == NULL, "dr_parse_count(\"%s\"): message is not one "
              "line: \"%s\"", bad[i], err);
    }
    /* A small error buffer is truncated, not overrun. */
    char tiny[8];
    memset(tiny, 'Z', sizeof tiny);
    uint64_t v;
    CHECK(dr_parse_count("garbage", &v, tiny, 4) == -1 && tiny[3] == '\0' && tiny[4] == 'Z',
          "dr_parse_count with errlen 4 must write at most 4 bytes");
}

/* ------------------------------------------------------------------------------------------------------------ */
static void test_defaults(void)
{
    dr_options_t o;
    char err[512];
    const char *none[] = {NULL};
    dr_parse_result_t r = parse_list(&o, err, sizeof err, none);
    CHECK(r == DR_PARSE_OK, "no arguments: expected DR_PARSE_OK, got %d (%s)", r, err);
    CHECK(o.n == 16ull << 20, "default n: expected 16777216, got %" PRIu64, o.n);
    CHECK(o.dtype == DR_FLOAT32, "default type: got %d", o.dtype);
    CHECK(o.op == DR_SUM, "default op: got %d", o.op);
    CHECK(o.acc_mode == DR_ACC_WIDE, "default acc: got %d", o.acc_mode);
    CHECK(o.kernel == DR_KERNEL_MULTIPASS, "default kernel: got %d", o.kernel);
    CHECK(o.block == 0, "default block: 0 (by kernel and size): got %d", o.block);
    CHECK(o.iters == 10, "default iters: got %d", o.iters);
    CHECK(o.warmup == 2, "default warmup: got %d", o.warmup);
    CHECK(o.gen.pattern == DR_DATA_RANDOM, "default data: got %d", o.gen.pattern);
    CHECK(o.gen.seed == 1, "default seed: got %" PRIu64, o.gen.seed);
    CHECK(o.gen.dtype == DR_FLOAT32 && o.gen.op == DR_SUM, "gen.dtype/op must follow type/op: got %d/%d",
          o.gen.dtype, o.gen.op);
    CHECK(o.verify == 1, "default verify: got %d", o.verify);
    CHECK(o.device == DR_DEVICE_AUTO, "default device: got %d", o.device);
    CHECK(o.threads == 0, "default threads: got %d", o.threads);
    CHECK(o.misalign == 0, "default misalign: got %d", o.misalign);
    CHECK(o.format == DR_FORMAT_TABLE, "default format: got %d", o.format);
    CHECK(o.output[0] == '\0', "default output: got \"%s\"", o.output);
    CHECK(o.scaling == DR_SCALING_STRONG, "default scaling: got %d", o.scaling);
    CHECK(o.combine == DR_COMBINE_HIER, "default combine: got %d", o.combine);
    CHECK(o.staging == DR_STAGING_AUTO, "default staging: got %d", o.staging);
    {
        char *argv[] = {"dreduce", "--device", "cpu", "--staging", "mapped", NULL};
        dr_options_t x;
        char err[512] = "";
        dr_options_default(&x);
        CHECK(dr_options_parse(5, argv, &x, err, sizeof err) == DR_PARSE_ERROR &&
                  strstr(err, "--staging mapped cannot be used with --device cpu"),
              "--device cpu --staging mapped: got '%s'", err);
    }
    CHECK(o.allreduce == 0, "default allreduce: got %d", o.allreduce);
    CHECK(o.ranks_per_node == 0, "default ranks-per-node: got %d", o.ranks_per_node);
    CHECK(o.bind == DR_BINDOPT_AUTO, "default bind: got %d", o.bind);
    CHECK(o.share_gpus == 0, "default share-gpus: got %d", o.share_gpus);
    CHECK(o.input[0] == '\0' && o.input_offset == 0 && o.offset_given == 0 && o.type_given == 0,
          "default input: expected none, got \"%s\" offset %" PRIu64 " (given %d), type given %d", o.input,
          o.input_offset, o.offset_given, o.type_given);
    CHECK(err[0] == '\0', "no error text expected on success, got \"%s\"", err);
}

/* Every option set away from its default, checked field by field. `style`: 0 long "--opt v", 1 "--opt=v",
 * 2 short where there is one ("-n 5"), 3 short glued ("-n5"). */
static void check_all_options(const dr_options_t *o, const char *how)
{
    CHECK(o->n == 5000, "%s: n expected 5000, got %" PRIu64, how, o->n);
    CHECK(o->dtype == DR_INT64, "%s: type expected int64, got %d", how, o->dtype);
    CHECK(o->op == DR_MIN, "%s: op expected min, got %d", how, o->op);
    CHECK(o->acc_mode == DR_ACC_NATIVE, "%s: acc expected native, got %d", how, o->acc_mode);
    CHECK(o->gen.pattern == DR_DATA_IOTA, "%s: data expected iota, got %d", how, o->gen.pattern);
    CHECK(o->gen.seed == 42, "%s: seed expected 42, got %" PRIu64, how, o->gen.seed);
    CHECK(o->gen.dtype == DR_INT64 && o->gen.op == DR_MIN, "%s: gen.dtype/op expected int64/min, got %d/%d", how,
          o->gen.dtype, o->gen.op);
    CHECK(o->kernel == DR_KERNEL_SMEM, "%s: kernel expected smem, got %d", how, o->kernel);
    CHECK(o->block == 64, "%s: block expected 64, got %d", how, o->block);
    CHECK(o->device == DR_DEVICE_GPU, "%s: device expected gpu, got %d", how, o->device);
    CHECK(o->threads == 3, "%s: threads expected 3, got %d", how, o->threads);
    CHECK(o->iters == 7, "%s: iters expected 7, got %d", how, o->iters);
    CHECK(o->warmup == 0, "%s: warmup expected 0, got %d", how, o->warmup);
    CHECK(o->verify == 0, "%s: verify expected off (0), got %d", how, o->verify);
    CHECK(o->misalign == 3, "%s: misalign expected 3, got %d", how, o->misalign);
    CHECK(o->scaling == DR_SCALING_WEAK, "%s: scaling expected weak, got %d", how, o->scaling);
    CHECK(o->combine == DR_COMBINE_FLAT, "%s: combine expected flat, got %d", how, o->combine);
    CHECK(o->staging == DR_STAGING_HOST, "%s: staging expected host, got %d", how, o->staging);
    CHECK(o->allreduce == 1, "%s: allreduce expected 1, got %d", how, o->allreduce);
    CHECK(o->ranks_per_node == 4, "%s: ranks-per-node expected 4, got %d", how, o->ranks_per_node);
    CHECK(o->bind == DR_BINDOPT_NONE, "%s: bind expected none, got %d", how, o->bind);
    CHECK(o->share_gpus == 1, "%s: share-gpus expected 1, got %d", how, o->share_gpus);
    CHECK(o->format == DR_FORMAT_JSON, "%s: format expected json, got %d", how, o->format);
    CHECK(strcmp(o->output, "out.json") == 0, "%s: output expected out.json, got \"%s\"", how, o->output);
}

static void test_every_option(void)
{
    dr_options_t o;
    char err[512];
    const char *long_form[] = {"--count", "5K", "--type", "int64", "--op", "min", "--acc", "native", "--data", "iota",
                               "--seed", "42", "--kernel", "smem", "--block", "64", "--device", "gpu", "--threads",
                               "3", "--iters", "7", "--warmup", "0", "--verify", "off", "--misalign", "3",
                               "--scaling", "weak", "--combine", "flat", "--staging", "host", "--allreduce",
                               "--ranks-per-node", "4", "--bind", "none", "--share-gpus", "--format", "json",
                               "--output", "out.json", NULL};
    dr_parse_result_t r = parse_list(&o, err, sizeof err, long_form);
    CHECK(r == DR_PARSE_OK, "%s: expected OK, got %d (%s)", joined(long_form), r, err);
    check_all_options(&o, "long form");

    const char *eq_form[] = {"--count=5000", "--type=int64", "--op=min", "--acc=native", "--data=iota", "--seed=42",
                             "--kernel=smem", "--block=64", "--device=gpu", "--threads=3", "--iters=7", "--warmup=0",
                             "--verify=off", "--misalign=3", "--scaling=weak", "--combine=flat", "--staging=host",
                             "--allreduce", "--ranks-per-node=4", "--bind=none", "--share-gpus", "--format=json",
                             "--output=out.json", NULL};
    r = parse_list(&o, err, sizeof err, eq_form);
    CHECK(r == DR_PARSE_OK, "%s: expected OK, got %d (%s)", joined(eq_form), r, err);
    check_all_options(&o, "--opt=value form");

    const char *short_form[] = {"-n", "5000", "-t", "int64", "--op", "min", "--acc", "native", "--data", "iota",
                                "--seed", "42", "-k", "smem", "-b", "64", "--device", "gpu", "--threads", "3",
                                "--iters", "7", "--warmup", "0", "--verify", "off", "--misalign", "3", "--scaling",
                                "weak", "--combine", "flat", "--staging", "host", "--allreduce", "--ranks-per-node",
                                "4", "--bind", "none", "--share-gpus", "--format", "json", "-o", "out.json", NULL};
    r = parse_list(&o, err, sizeof err, short_form);
    CHECK(r == DR_PARSE_OK, "%s: expected OK, got %d (%s)", joined(short_form), r, err);
    check_all_options(&o, "short form");

    const char *glued[] = {"-n5000", "-tint64", "--op", "min", "--acc", "native", "--data", "iota", "--seed", "42",
                           "-ksmem", "-b64", "--device", "gpu", "--threads", "3", "--iters", "7", "--warmup", "0",
                           "--verify", "off", "--misalign", "3", "--scaling", "weak", "--combine", "flat",
                           "--staging", "host", "--allreduce", "--ranks-per-node", "4", "--bind", "none",
                           "--share-gpus", "--format", "json", "-oout.json", NULL};
    r = parse_list(&o, err, sizeof err, glued);
    CHECK(r == DR_PARSE_OK, "%s: expected OK, got %d (%s)", joined(glued), r, err);
    check_all_options(&o, "short glued form");

    /* The brief's short forms one by one. */
    r = PARSE(&o, err, "-n", "5");
    CHECK(r == DR_PARSE_OK && o.n == 5, "-n 5: expected n=5, got r=%d n=%" PRIu64 " (%s)", r, o.n, err);
    r = PARSE(&o, err, "-n5");
    CHECK(r == DR_PARSE_OK && o.n == 5, "-n5: expected n=5, got r=%d n=%" PRIu64 " (%s)", r, o.n, err);
    r = PARSE(&o, err, "-t", "int32");
    CHECK(r == DR_PARSE_OK && o.dtype == DR_INT32, "-t int32: got r=%d type=%d (%s)", r, o.dtype, err);
    r = PARSE(&o, err, "-k", "smem");
    CHECK(r == DR_PARSE_OK && o.kernel == DR_KERNEL_SMEM, "-k smem: got r=%d kernel=%d (%s)", r, o.kernel, err);
    r = PARSE(&o, err, "-b", "64");
    CHECK(r == DR_PARSE_OK && o.block == 64, "-b 64: got r=%d block=%d (%s)", r, o.block, err);
    r = PARSE(&o, err, "-o", "f");
    CHECK(r == DR_PARSE_OK && strcmp(o.output, "f") == 0, "-o f: got r=%d output=\"%s\" (%s)", r, o.output, err);
    r = PARSE(&o, err, "--output", "-");
    CHECK(r == DR_PARSE_OK && strcmp(o.output, "-") == 0, "--output -: got r=%d output=\"%s\" (%s)", r, o.output, err);

    /* Every name of every choice is accepted. */
    for (int t = 0; t < DR_DTYPE_COUNT; ++t) {
        r = PARSE(&o, err, "--type", dr_dtype_name((dr_dtype_t)t));
        CHECK(r == DR_PARSE_OK && o.dtype == (dr_dtype_t)t && o.gen.dtype == (dr_dtype_t)t,
              "--type %s: got r=%d type=%d gen.dtype=%d (%s)", dr_dtype_name((dr_dtype_t)t), r, o.dtype,
              o.gen.dtype, err);
    }
    for (int p = 0; p < DR_OP_COUNT; ++p) {
        r = PARSE(&o, err, "--type", "uint32", "--op", dr_op_name((dr_op_t)p));
        CHECK(r == DR_PARSE_OK && o.op == (dr_op_t)p && o.gen.op == (dr_op_t)p, "--op %s: got r=%d op=%d (%s)",
              dr_op_name((dr_op_t)p), r, o.op, err);
    }
    for (int k = 0; k < DR_KERNEL_COUNT; ++k) {
        r = PARSE(&o, err, "--kernel", dr_kernel_name((dr_kernel_t)k));
        CHECK(r == DR_PARSE_OK && o.kernel == (dr_kernel_t)k, "--kernel %s: got r=%d kernel=%d (%s)",
              dr_kernel_name((dr_kernel_t)k), r, o.kernel, err);
    }
    static const struct {
        const char *opt, *val;
        size_t off;
        int want;
    } choices[] = {
        {"--acc", "wide", offsetof(dr_options_t, acc_mode), DR_ACC_WIDE},
        {"--acc", "native", offsetof(dr_options_t, acc_mode), DR_ACC_NATIVE},
        {"--acc", "exact", offsetof(dr_options_t, acc_mode), DR_ACC_MODE_EXACT},
        {"--device", "auto", offsetof(dr_options_t, device), DR_DEVICE_AUTO},
        {"--device", "gpu", offsetof(dr_options_t, device), DR_DEVICE_GPU},
        {"--device", "cpu", offsetof(dr_options_t, device), DR_DEVICE_CPU},
        {"--format", "table", offsetof(dr_options_t, format), DR_FORMAT_TABLE},
        {"--format", "json", offsetof(dr_options_t, format), DR_FORMAT_JSON},
        {"--format", "csv", offsetof(dr_options_t, format), DR_FORMAT_CSV},
        {"--scaling", "strong", offsetof(dr_options_t, scaling), DR_SCALING_STRONG},
        {"--scaling", "weak", offsetof(dr_options_t, scaling), DR_SCALING_WEAK},
        {"--combine", "hier", offsetof(dr_options_t, combine), DR_COMBINE_HIER},
        {"--combine", "flat", offsetof(dr_options_t, combine), DR_COMBINE_FLAT},
        {"--staging", "auto", offsetof(dr_options_t, staging), DR_STAGING_AUTO},
        {"--staging", "device", offsetof(dr_options_t, staging), DR_STAGING_DEVICE},
        {"--staging", "host", offsetof(dr_options_t, staging), DR_STAGING_HOST},
        {"--bind", "auto", offsetof(dr_options_t, bind), DR_BINDOPT_AUTO},
        {"--bind", "none", offsetof(dr_options_t, bind), DR_BINDOPT_NONE},
        {"--bind", "workers", offsetof(dr_options_t, bind), DR_BINDOPT_WORKERS},
        {"--verify", "on", offsetof(dr_options_t, verify), 1},
        {"--verify", "off", offsetof(dr_options_t, verify), 0},
    };
    for (size_t i = 0; i < sizeof choices / sizeof choices[0]; ++i) {
        r = PARSE(&o, err, choices[i].opt, choices[i].val);
        int got;
        memcpy(&got, (const char *)&o + choices[i].off, sizeof got);
        CHECK(r == DR_PARSE_OK && got == choices[i].want, "%s %s: expected %d, got r=%d value=%d (%s)",
              choices[i].opt, choices[i].val, choices[i].want, r, got, err);
    }
    /* The last occurrence wins. */
    r = PARSE(&o, err, "--type", "int32", "--type", "float64", "-n", "3", "-n", "9");
    CHECK(r == DR_PARSE_OK && o.dtype == DR_FLOAT64 && o.n == 9, "repeated options: expected float64, n=9; got r=%d "
          "type=%d n=%" PRIu64, r, o.dtype, o.n);
    /* Seeds: the full 64-bit range. */
    r = PARSE(&o, err, "--seed", "18446744073709551615");
    CHECK(r == DR_PARSE_OK && o.gen.seed == UINT64_MAX, "--seed 2^64-1: got r=%d seed=%" PRIu64 " (%s)", r,
          o.gen.seed, err);
    r = PARSE(&o, err, "--seed", "0");
    CHECK(r == DR_PARSE_OK && o.gen.seed == 0, "--seed 0: got r=%d seed=%" PRIu64 " (%s)", r, o.gen.seed, err);
    /* Iteration and thread bounds. */
    r = PARSE(&o, err, "--iters", "1");
    CHECK(r == DR_PARSE_OK && o.iters == 1, "--iters 1: got r=%d iters=%d (%s)", r, o.iters, err);
    r = PARSE(&o, err, "--misalign", "15");
    CHECK(r == DR_PARSE_OK && o.misalign == 15, "--misalign 15: got r=%d misalign=%d (%s)", r, o.misalign, err);
    r = PARSE(&o, err, "--misalign", "0");
    CHECK(r == DR_PARSE_OK && o.misalign == 0, "--misalign 0: got r=%d misalign=%d (%s)", r, o.misalign, err);
    r = PARSE(&o, err, "--threads", "0");
    CHECK(r == DR_PARSE_OK && o.threads == 0, "--threads 0: got r=%d threads=%d (%s)", r, o.threads, err);
    r = PARSE(&o, err, "--warmup", "0");
    CHECK(r == DR_PARSE_OK && o.warmup == 0, "--warmup 0: got r=%d warmup=%d (%s)", r, o.warmup, err);
    /* Help and version, in every spelling, also after other options. */
    r = PARSE(&o, err, "--help");
    CHECK(r == DR_PARSE_HELP, "--help: expected DR_PARSE_HELP, got %d", r);
    r = PARSE(&o, err, "-h");
    CHECK(r == DR_PARSE_HELP, "-h: expected DR_PARSE_HELP, got %d", r);
    r = PARSE(&o, err, "-n", "5", "--help");
    CHECK(r == DR_PARSE_HELP, "-n 5 --help: expected DR_PARSE_HELP, got %d", r);
    r = PARSE(&o, err, "--version");
    CHECK(r == DR_PARSE_VERSION, "--version: expected DR_PARSE_VERSION, got %d", r);
    r = PARSE(&o, err, "--type", "int32", "--version");
    CHECK(r == DR_PARSE_VERSION, "--type int32 --version: expected DR_PARSE_VERSION, got %d", r);
    const char *usage = dr_options_usage();
    static const char *const documented[] = {"--count", "--type", "--op", "--acc", "--data", "--seed", "--kernel",
                                             "--block", "--device", "--threads", "--iters", "--warmup", "--verify",
                                             "--misalign", "--scaling", "--combine", "--staging", "--allreduce",
                                             "--ranks-per-node", "--bind", "--share-gpus", "--format", "--output",
                                             "--help", "--version", "--input", "--offset"};
    for (size_t i = 0; i < sizeof documented / sizeof documented[0]; ++i) {
        CHECK(usage && strstr(usage, documented[i]) != NULL, "--help text does not mention %s", documented[i]);
        /* ...and the parser knows every documented option. */
        char buf[64];
        snprintf(buf, sizeof buf, "%s", documented[i]);
        const char *args[] = {buf, NULL};
        r = parse_list(&o, err, sizeof err, args);
        CHECK(!strstr(err, "unknown option"), "documented option %s is unknown to the parser: %s", documented[i], err);
    }
}

/* --input and --offset: the file decides the count (and a .npy file the type), so the options that describe
 * generated data are errors with it; --type is recorded as given or not. */
static void test_input(void)
{
    dr_options_t o;
    char err[512];
    dr_parse_result_t r = PARSE(&o, err, "--input", "data.npy");
    CHECK(r == DR_PARSE_OK && strcmp(o.input, "data.npy") == 0 && o.offset_given == 0 && o.type_given == 0 &&
              o.input_offset == 0,
          "--input data.npy: got r=%d input \"%s\" offset_given %d type_given %d (%s)", r, o.input, o.offset_given,
          o.type_given, err);
    r = PARSE(&o, err, "--input=x.bin", "--type", "uint64", "--offset", "16", "--op", "bxor", "--device", "cpu");
    CHECK(r == DR_PARSE_OK && strcmp(o.input, "x.bin") == 0 && o.input_offset == 16 && o.offset_given == 1 &&
              o.type_given == 1 && o.dtype == DR_UINT64 && o.op == DR_BXOR,
          "--input=x.bin --type uint64 --offset 16 --op bxor: got r=%d input \"%s\" offset %" PRIu64 " given %d, "
          "type %s given %d (%s)", r, o.input, o.input_offset, o.offset_given, dr_dtype_name(o.dtype), o.type_given,
          err);
    r = PARSE(&o, err, "--offset=1Ki", "--input", "x.bin", "-t", "int32");
    CHECK(r == DR_PARSE_OK && o.input_offset == 1024 && o.type_given == 1, "--offset=1Ki before --input: got r=%d "
          "offset %" PRIu64 " (%s)", r, o.input_offset, err);
    r = PARSE(&o, err, "--input", "x.bin", "-t", "int32", "--offset", "0");
    CHECK(r == DR_PARSE_OK && o.input_offset == 0 && o.offset_given == 1, "--offset 0: got r=%d given %d (%s)", r,
          o.offset_given, err);
    /* Without --type, the op waits for the file's type: bxor is not refused here (a float file refuses it). */
    r = PARSE(&o, err, "--input", "ints.npy", "--op", "bxor");
    CHECK(r == DR_PARSE_OK && o.op == DR_BXOR && o.type_given == 0, "--input ints.npy --op bxor: got r=%d (%s)", r,
          err);
    /* The options that stay allowed. */
    r = PARSE(&o, err, "--input", "a.npy", "--scaling", "strong", "--misalign", "3", "--acc", "native", "--verify",
              "off", "--allreduce", "--combine", "flat", "--ranks-per-node", "2", "-k", "smem", "--iters", "3");
    CHECK(r == DR_PARSE_OK, "--input with the reduction's own options: got r=%d (%s)", r, err);
    r = PARSE(&o, err, "-t", "float16");
    CHECK(r == DR_PARSE_OK && o.type_given == 1, "-t float16: type_given %d", o.type_given);
    r = PARSE(&o, err, "-n", "5");
    CHECK(r == DR_PARSE_OK && o.type_given == 0, "-n 5: type_given %d", o.type_given);
    /* The last --input wins. */
    r = PARSE(&o, err, "--input", "a.npy", "--input", "b.npy");
    CHECK(r == DR_PARSE_OK && strcmp(o.input, "b.npy") == 0, "two --input: got r=%d \"%s\"", r, o.input);
}

/* An error whose message must contain every string of `need` (NULL-terminated). */
static void expect_error(const char *const *args, const char *const *need)
{
    dr_options_t o;
    char err[512] = "";
    dr_parse_result_t r = parse_list(&o, err, sizeof err, args);
    CHECK(r == DR_PARSE_ERROR, "%s: expected DR_PARSE_ERROR, got %d", joined(args), r);
    CHECK(err[0] != '\0' && strchr(err, '\n') == NULL, "%s: expected a one-line message, got \"%s\"", joined(args),
          err);
    for (; need && *need; ++need)
        CHECK(strstr(err, *need) != NULL, "%s: message \"%s\" should contain \"%s\"", joined(args), err, *need);
}
#define ERR(args_init, need_init)                                                                              \
    do {                                                                                                       \
        const char *a_[] = args_init;                                                                          \
        const char *n_[] = need_init;                                                                          \
        expect_error(a_, n_);                                                                                  \
    } while (0)
#define L(...) {__VA_ARGS__, NULL}

static void test_errors(void)
{
    /* Unknown options and stray arguments. */
    ERR(L("--frobnicate"), L("--frobnicate"));
    ERR(L("--frobnicate=3"), L("--frobnicate"));
    ERR(L("--coun", "5"), L("--coun"));
    ERR(L("--counts", "5"), L("--counts"));
    ERR(L("-x"), L("-x"));
    ERR(L("-N", "5"), L("-N"));
    ERR(L("stray"), L("stray"));
    ERR(L("-n", "5", "stray"), L("stray"));
    ERR(L("-"), L("'-'"));
    ERR(L("--"), L("--"));
    ERR(L("-hx"), L("-hx"));
    /* Missing values at the end. */
    ERR(L("--type"), L("--type"));
    ERR(L("-n"), L("count"));
    ERR(L("-n", "5", "--op"), L("--op"));
    ERR(L("-o"), L("output"));
    ERR(L("--data"), L("--data"));
    /* Options that take no value. */
    ERR(L("--allreduce=1"), L("--allreduce"));
    ERR(L("--share-gpus=yes"), L("--share-gpus"));
    ERR(L("--help=1"), L("--help"));
    ERR(L("--version=1"), L("--version"));
    /* Counts. */
    ERR(L("-n", "-5"), L("'-5'"));
    ERR(L("-n", "abc"), L("'abc'"));
    ERR(L("--count=99999999999999999999"), L("'99999999999999999999'"));
    ERR(L("--count="), L("count"));
    /* Bad names: the message names the bad value and every allowed one. */
    ERR(L("--type", "float128"), L("'float128'", "int32", "int64", "uint32", "uint64", "float32", "float64", "float16",
                                   "bfloat16"));
    ERR(L("-t", "Float32"), L("'Float32'", "float32"));
    ERR(L("--op", "mean"), L("'mean'", "sum", "min", "max", "prod", "band", "bor", "bxor", "stats", "argmin",
                             "argmax"));
    /* stats, argmin, argmax (issue #37): no native mode (for any type, --input of an unknown type too), no teaching
     * kernel; wide and exact are fine, and a bool (uint8) array is too. */
    ERR(L("--op", "argmax", "--acc", "native"), L("--acc native", "--op argmax", "--acc wide"));
    ERR(L("--op", "argmin", "--acc", "native", "--type", "int32"), L("--acc native", "--op argmin"));
    ERR(L("--op", "stats", "--acc", "native"), L("--acc native", "--op stats", "wide", "exact"));
    ERR(L("--op", "stats", "--acc", "native", "--input", "x.npy"), L("--acc native", "--op stats"));
    ERR(L("--op", "stats", "-k", "smem"), L("--op stats", "--kernel smem", "multipass"));
    ERR(L("--op", "argmax", "-k", "shuffle"), L("--op argmax", "--kernel shuffle"));
    {
        static const char *const ok[][8] = {{"--op", "stats", NULL},
                                            {"--op", "stats", "--acc", "exact", "--type", "float16", NULL},
                                            {"--op", "argmax", "--acc", "exact", "--type", "int8", NULL},
                                            {"--op", "argmin", "--type", "uint8", NULL},
                                            {"--op", "stats", "--type", "bfloat16", "--acc", "wide", NULL}};
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i) {
            dr_options_t o;
            char err[512];
            int argc = 1;
            char *argv[10] = {"dreduce"};
            for (int k = 0; ok[i][k]; ++k) argv[argc++] = (char *)ok[i][k];
            dr_options_default(&o);
            const dr_parse_result_t r = dr_options_parse(argc, argv, &o, err, sizeof err);
            CHECK(r == DR_PARSE_OK, "%s %s ...: not accepted: %s", ok[i][0], ok[i][1], err);
        }
    }
    ERR(L("--kernel", "warp"), L("'warp'", "neighbored", "interleaved", "smem", "smem2", "unroll", "shuffle",
                                 "multipass"));
    ERR(L("-k", "smem3"), L("'smem3'", "smem2"));
    ERR(L("--acc", "double"), L("'double'", "wide", "native"));
    ERR(L("--data", "zeros"), L("'zeros'", "random", "iota", "ones", "const", "spread"));
    ERR(L("--data", "const"), L("'const'", "const:"));
    ERR(L("--device", "tpu"), L("'tpu'", "auto", "gpu", "cpu"));
    ERR(L("--format", "xml"), L("'xml'", "table", "json", "csv"));
    ERR(L("--scaling", "medium"), L("'medium'", "strong", "weak"));
    ERR(L("--combine", "tree"), L("'tree'", "hier", "flat"));
    ERR(L("--staging", "gpu"), L("'gpu'", "auto", "device", "host"));
    ERR(L("--bind", "close"), L("'close'", "auto", "none", "workers"));
    ERR(L("--verify", "maybe"), L("'maybe'", "on", "off"));
    ERR(L("--type", ""), L("''", "int32"));
    /* Blocks: powers of two in 32..1024 only. */
    static const char *const bad_blocks[] = {"0", "16", "31", "48", "2048", "100", "abc", "", "-64", "33", "1023",
                                             "4096", "64x", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad_blocks / sizeof bad_blocks[0]; ++i) {
        char q[64];
        snprintf(q, sizeof q, "'%s'", bad_blocks[i]);
        const char *a[] = {"--block", bad_blocks[i], NULL};
        const char *n[] = {q, "32", "64", "128", "256", "512", "1024", NULL};
        expect_error(a, n);
    }
    for (int b = 32; b <= 1024; b *= 2) {
        dr_options_t o;
        char err[512], s[16];
        snprintf(s, sizeof s, "%d", b);
        dr_parse_result_t r = PARSE(&o, err, "-b", s);
        CHECK(r == DR_PARSE_OK && o.block == b, "-b %d: expected OK and block %d, got r=%d block=%d (%s)", b, b, r,
              o.block, err);
    }
    /* Bitwise ops are for integers only, whichever order the options come in. */
    static const char *const bitwise[] = {"band", "bor", "bxor"};
    static const char *const floats[] = {"float32", "float64", "float16", "bfloat16"};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) {
            const char *a1[] = {"--op", bitwise[i], "--type", floats[j], NULL};
            const char *a2[] = {"--type", floats[j], "--op", bitwise[i], NULL};
            const char *n[] = {bitwise[i], floats[j], NULL};
            expect_error(a1, n);
            expect_error(a2, n);
        }
    {
        const char *a[] = {"--op", "band", NULL}; /* the default type is float32 */
        const char *n[] = {"band", "float32", NULL};
        expect_error(a, n);
    }
    static const char *const ints[] = {"int32", "int64", "uint32", "uint64"};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) {
            dr_options_t o;
            char err[512];
            dr_parse_result_t r = PARSE(&o, err, "--op", bitwise[i], "--type", ints[j]);
            CHECK(r == DR_PARSE_OK, "--op %s --type %s: expected OK, got %d (%s)", bitwise[i], ints[j], r, err);
        }
    /* Integer bounds. */
    ERR(L("--iters", "0"), L("--iters", "'0'"));
    ERR(L("--iters", "-1"), L("'-1'"));
    ERR(L("--iters", "ten"), L("'ten'"));
    ERR(L("--iters", "1000001"), L("'1000001'"));
    ERR(L("--iters", "99999999999999999999"), L("'99999999999999999999'"));
    ERR(L("--misalign", "16"), L("--misalign", "'16'", "15"));
    ERR(L("--misalign", "-1"), L("'-1'"));
    ERR(L("--warmup", "-1"), L("'-1'"));
    ERR(L("--threads", "-1"), L("'-1'"));
    ERR(L("--threads", "4097"), L("'4097'"));
    ERR(L("--ranks-per-node", "0"), L("'0'"));
    ERR(L("--seed", "-1"), L("'-1'"));
    ERR(L("--seed", "abc"), L("'abc'"));
    ERR(L("--seed", "18446744073709551616"), L("'18446744073709551616'"));
    ERR(L("--output", ""), L("output"));
    ERR(L("--output="), L("output"));
    /* --input and --offset. */
    ERR(L("--input", ""), L("invalid --input ''", "file name"));
    ERR(L("--input="), L("invalid --input ''"));
    ERR(L("--input"), L("--input", "needs a value"));
    ERR(L("--offset", "16"), L("--offset needs --input"));
    ERR(L("--offset", "0", "-n", "5"), L("--offset needs --input"));
    ERR(L("--input", "x.bin", "--offset", "-1"), L("invalid --offset '-1'", "bytes"));
    ERR(L("--input", "x.bin", "--offset", "abc"), L("invalid --offset 'abc'"));
    ERR(L("--input", "x.bin", "--offset", "18446744073709551616"), L("invalid --offset '18446744073709551616'"));
    ERR(L("--input", "x.bin", "--offset", "16Q"), L("invalid --offset '16Q'"));
    ERR(L("--input", "x.bin", "--offset="), L("invalid --offset ''"));
    ERR(L("--input", "a.npy", "-n", "5"), L("-n/--count cannot be used with --input", "the file decides the count"));
    ERR(L("-n", "5", "--input", "a.npy"), L("-n/--count cannot be used with --input"));
    ERR(L("--count=16Mi", "--input", "a.npy"), L("-n/--count cannot be used with --input"));
    ERR(L("--input", "a.npy", "--data", "iota"), L("--data cannot be used with --input"));
    ERR(L("--data", "random", "--input", "a.npy"), L("--data cannot be used with --input"));
    ERR(L("--input", "a.npy", "--seed", "3"), L("--seed cannot be used with --input"));
    ERR(L("--input", "a.npy", "--scaling", "weak"), L("--scaling weak cannot be used with --input"));
    ERR(L("--input", "a.npy", "--type", "float32", "--op", "bxor"), L("--op bxor is not defined for --type float32"));
    {
        static char longpath[2100];
        memset(longpath, 'b', sizeof longpath - 1);
        longpath[sizeof longpath - 1] = '\0';
        const char *a[] = {"--input", longpath, NULL};
        const char *n[] = {"invalid --input: path longer than 1023 bytes", NULL};
        expect_error(a, n);
    }
    {
        static char longpath[2100];
        memset(longpath, 'a', sizeof longpath - 1);
        longpath[sizeof longpath - 1] = '\0';
        const char *a[] = {"--output", longpath, NULL};
        const char *n[] = {"output", NULL};
        expect_error(a, n);
    }
}

/* ---- --data const:V ---------------------------------------------------------------------------------------- */

/* Our own decoding of a 16-bit float: `man` stored significand bits, exponent bias `bias`. */
static double decode_small(uint32_t h, int man, int bias)
{
    const int ebits = 15 - man;
    const uint32_t e = (h >> man) & ((1u << ebits) - 1), m = h & ((1u << man) - 1);
    const double s = (h & 0x8000u) ? -1.0 : 1.0;
    if (e == (1u << ebits) - 1) return m ? NAN : s * INFINITY;
    if (e == 0) return s * ldexp((double)m, 1 - bias - man);
    return s * ldexp((double)((1u << man) | m), (int)e - bias - man);
}

/* The expected encoding of a finite v: the nearest finite 16-bit value, ties to the even significand, by search
 * over every positive finite pattern. Returns -1 if v rounds past the largest finite value (to infinity). */
static int nearest_small(double v, int man, int bias, uint32_t *out)
{
    const uint32_t sign = signbit(v) ? 0x8000u : 0u;
    const double a = fabs(v);
    const uint32_t inf = ((1u << (15 - man)) - 1) << man; /* the first non-finite pattern */
    /* The patterns of the positive finite values are ordered like the values: binary search for the last <= a. */
    uint32_t lo = 0, hi = inf - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (decode_small(mid, man, bias) <= a) lo = mid;
        else hi = mid - 1;
    }
    const double below = decode_small(lo, man, bias);
    if (below == a) {
        *out = sign | lo;
        return 0;
    }
    /* Above the largest finite value: the next "value" would be 2^(emax+1). */
    const double above = lo + 1 == inf ? ldexp(1.0, (int)(inf >> man) - bias) : decode_small(lo + 1, man, bias);
    uint32_t pick;
    if (a - below < above - a) pick = lo;
    else if (a - below > above - a) pick = lo + 1;
    else pick = (lo & 1) ? lo + 1 : lo;
    if (pick == inf) return -1;
    *out = sign | pick;
    return 0;
}

static void expect_const(dr_dtype_t t, const char *text, uint64_t want)
{
    char err[256] = "";
    uint64_t bits = 0xdeadbeefull;
    int rc = dr_parse_const(text, t, &bits, err, sizeof err);
    CHECK(rc == 0 && bits == want, "dr_parse_const(\"%s\", %s): expected 0x%" PRIx64 ", got rc=%d 0x%" PRIx64
          " (%s)", text, dr_dtype_name(t), want, rc, bits, err);
    /* ...and the same through the command line, with the type given after the data. */
    dr_options_t o;
    char cerr[512] = "", data[128];
    snprintf(data, sizeof data, "const:%s", text);
    dr_parse_result_t r = PARSE(&o, cerr, "--data", data, "--type", dr_dtype_name(t));
    CHECK(r == DR_PARSE_OK && o.gen.pattern == DR_DATA_CONST && o.gen.const_bits == want && o.gen.dtype == t,
          "--data %s --type %s: expected const 0x%" PRIx64 ", got r=%d pattern=%d bits=0x%" PRIx64 " (%s)", data,
          dr_dtype_name(t), want, r, o.gen.pattern, o.gen.const_bits, cerr);
}

static void expect_const_nan(dr_dtype_t t, const char *text, int negative)
{
    char err[256] = "";
    uint64_t bits = 0;
    int rc = dr_parse_const(text, t, &bits, err, sizeof err);
    int isnan_bits = 0, neg = 0;
    switch (t) {
    case DR_FLOAT64: {
        double d;
        memcpy(&d, &bits, 8);
        isnan_bits = isnan(d);
        neg = (bits >> 63) != 0;
        break;
    }
    case DR_FLOAT32: {
        uint32_t b = (uint32_t)bits;
        float f;
        memcpy(&f, &b, 4);
        isnan_bits = isnan(f) && (bits >> 32) == 0;
        neg = (b >> 31) != 0;
        break;
    }
    case DR_FLOAT16:
        isnan_bits = (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0 && bits < 0x10000u;
        neg = (bits & 0x8000u) != 0;
        break;
    default:
        isnan_bits = (bits & 0x7f80u) == 0x7f80u && (bits & 0x7fu) != 0 && bits < 0x10000u;
        neg = (bits & 0x8000u) != 0;
        break;
    }
    CHECK(rc == 0 && isnan_bits, "dr_parse_const(\"%s\", %s): expected a NaN, got rc=%d bits 0x%" PRIx64 " (%s)", text,
          dr_dtype_name(t), rc, bits, err);
    if (negative >= 0)
        CHECK(neg == negative, "dr_parse_const(\"%s\", %s): NaN sign expected %d, got 0x%" PRIx64, text,
              dr_dtype_name(t), negative, bits);
}

static void expect_const_error(dr_dtype_t t, const char *text)
{
    char err[256] = "";
    uint64_t bits = 0;
    int rc = dr_parse_const(text, t, &bits, err, sizeof err);
    char q[128];
    snprintf(q, sizeof q, "'%s'", text);
    CHECK(rc == -1, "dr_parse_const(\"%s\", %s): expected an error, got rc=%d bits 0x%" PRIx64, text, dr_dtype_name(t),
          rc, bits);
    CHECK(strstr(err, q) != NULL && strstr(err, dr_dtype_name(t)) != NULL,
          "dr_parse_const(\"%s\", %s): message should name the value and the type, got \"%s\"", text,
          dr_dtype_name(t), err);
    /* ...and through the command line: an error that names the value. */
    dr_options_t o;
    char cerr[512] = "", data[128];
    snprintf(data, sizeof data, "const:%s", text);
    dr_parse_result_t r = PARSE(&o, cerr, "--type", dr_dtype_name(t), "--data", data);
    CHECK(r == DR_PARSE_ERROR && strstr(cerr, q) != NULL, "--type %s --data %s: expected an error naming %s, got r=%d "
          "\"%s\"", dr_dtype_name(t), data, q, r, cerr);
}

static uint64_t f64bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

static void test_const(uint64_t *rng)
{
    /* Integers. */
    expect_const(DR_INT32, "7", 7);
    expect_const(DR_INT32, "0", 0);
    expect_const(DR_INT32, "-1", 0xffffffffull);
    expect_const(DR_INT32, "2147483647", 0x7fffffffull);
    expect_const(DR_INT32, "-2147483648", 0x80000000ull);
    expect_const_error(DR_INT32, "2147483648");
    expect_const_error(DR_INT32, "-2147483649");
    expect_const_error(DR_INT32, "99999999999999999999");
    expect_const_error(DR_INT32, "1.5x");
    expect_const_error(DR_INT32, "1.5");
    expect_const_error(DR_INT32, "abc");
    expect_const_error(DR_INT32, "");
    expect_const_error(DR_INT32, "7 ");
    expect_const(DR_INT64, "9223372036854775807", 0x7fffffffffffffffull);
    expect_const(DR_INT64, "-9223372036854775808", 0x8000000000000000ull);
    expect_const(DR_INT64, "-7", (uint64_t)-7);
    expect_const_error(DR_INT64, "9223372036854775808");
    expect_const_error(DR_INT64, "-9223372036854775809");
    expect_const_error(DR_INT64, "1.5x");
    expect_const_error(DR_INT64, "");
    expect_const(DR_UINT32, "4294967295", 0xffffffffull);
    expect_const(DR_UINT32, "0", 0);
    expect_const_error(DR_UINT32, "-1");
    expect_const_error(DR_UINT32, "4294967296");
    expect_const_error(DR_UINT32, "1.5x");
    expect_const_error(DR_UINT32, "");
    expect_const(DR_UINT64, "18446744073709551615", UINT64_MAX);
    expect_const_error(DR_UINT64, "18446744073709551616");
    expect_const_error(DR_UINT64, "-1");
    expect_const_error(DR_UINT64, "1.5x");
    expect_const_error(DR_UINT64, "");
    /* A negative value is not made acceptable by leading blanks (strtoull would negate it). */
    expect_const_error(DR_UINT64, " -1");
    expect_const_error(DR_UINT32, " -1");
    /* Random integers round-trip through their decimal spelling. */
    for (int rep = 0; rep < 500; ++rep) {
        uint64_t r = check_rand(rng);
        char s[32];
        snprintf(s, sizeof s, "%" PRId32, (int32_t)(uint32_t)r);
        expect_const(DR_INT32, s, (uint32_t)r);
        snprintf(s, sizeof s, "%" PRId64, (int64_t)r);
        expect_const(DR_INT64, s, r);
        snprintf(s, sizeof s, "%" PRIu32, (uint32_t)r);
        expect_const(DR_UINT32, s, (uint32_t)r);
        snprintf(s, sizeof s, "%" PRIu64, r);
        expect_const(DR_UINT64, s, r);
    }

    /* float64 and float32. */
    expect_const(DR_FLOAT64, "1", f64bits(1.0));
    expect_const(DR_FLOAT64, "-0", 0x8000000000000000ull);
    expect_const(DR_FLOAT64, "0.1", 0x3fb999999999999aull);
    expect_const(DR_FLOAT64, "1e308", f64bits(1e308));
    expect_const(DR_FLOAT64, "inf", 0x7ff0000000000000ull);
    expect_const(DR_FLOAT64, "-inf", 0xfff0000000000000ull);
    expect_const(DR_FLOAT64, "infinity", 0x7ff0000000000000ull);
    expect_const_nan(DR_FLOAT64, "nan", 0);
    expect_const_error(DR_FLOAT64, "1e309");
    expect_const_error(DR_FLOAT64, "-1e309");
    expect_const_error(DR_FLOAT64, "1.5x");
    expect_const_error(DR_FLOAT64, "");
    expect_const_error(DR_FLOAT64, "abc");
    expect_const(DR_FLOAT32, "1.5", 0x3fc00000ull);
    expect_const(DR_FLOAT32, "-2", 0xc0000000ull);
    expect_const(DR_FLOAT32, "0.1", 0x3dcccccdull);
    expect_const(DR_FLOAT32, "3.4028235e38", 0x7f7fffffull);
    expect_const(DR_FLOAT32, "-0", 0x80000000ull);
    expect_const(DR_FLOAT32, "inf", 0x7f800000ull);
    expect_const(DR_FLOAT32, "-inf", 0xff800000ull);
    expect_const(DR_FLOAT32, "1e-46", 0); /* below half the smallest subnormal: +0 */
    expect_const(DR_FLOAT32, "1.401298464324817e-45", 1);
    expect_const_nan(DR_FLOAT32, "nan", 0);
    expect_const_nan(DR_FLOAT32, "-nan", 1);
    expect_const_error(DR_FLOAT32, "1e39");
    expect_const_error(DR_FLOAT32, "-1e39");
    expect_const_error(DR_FLOAT32, "3.5e38");
    expect_const_error(DR_FLOAT32, "1.5x");
    expect_const_error(DR_FLOAT32, "");
    for (int rep = 0; rep < 2000; ++rep) {
        uint64_t r = check_rand(rng);
        double d;
        memcpy(&d, &r, 8);
        if (!isfinite(d)) continue;
        char s[64];
        snprintf(s, sizeof s, "%.17g", d);
        expect_const(DR_FLOAT64, s, r);
        float f;
        uint32_t r32 = (uint32_t)r;
        memcpy(&f, &r32, 4);
        if (!isfinite(f)) continue;
        snprintf(s, sizeof s, "%.9g", (double)f);
        expect_const(DR_FLOAT32, s, r32);
    }

    /* float16: the brief's bit patterns, then round-to-nearest-even against our own search. */
    expect_const(DR_FLOAT16, "1", 0x3c00);
    expect_const(DR_FLOAT16, "-2", 0xc000);
    expect_const(DR_FLOAT16, "65504", 0x7bff);
    expect_const(DR_FLOAT16, "-65504", 0xfbff);
    expect_const(DR_FLOAT16, "65519", 0x7bff);    /* just below the midpoint to 65536 */
    expect_const(DR_FLOAT16, "0.1", 0x2e66);      /* 0x2e66 is nearer than 0x2e67 */
    expect_const(DR_FLOAT16, "0", 0x0000);
    expect_const(DR_FLOAT16, "-0", 0x8000);
    expect_const(DR_FLOAT16, "0.5", 0x3800);
    expect_const(DR_FLOAT16, "6.103515625e-05", 0x0400); /* 2^-14, the smallest normal */
    expect_const(DR_FLOAT16, "5.9604644775390625e-08", 0x0001); /* 2^-24, the smallest subnormal */
    expect_const(DR_FLOAT16, "2.98023223876953125e-08", 0x0000); /* 2^-25: a tie, to even (0) */
    expect_const(DR_FLOAT16, "8.94069671630859375e-08", 0x0002); /* 1.5 * 2^-24: a tie, to even (2) */
    expect_const(DR_FLOAT16, "6.10053539276123046875e-05", 0x0400); /* 1023.5 * 2^-24: a tie, to even (1024) */
    expect_const(DR_FLOAT16, "6.0975551605224609375e-05", 0x03ff); /* 1023 * 2^-24, the largest subnormal */
    expect_const(DR_FLOAT16, "1.00048828125", 0x3c00);  /* 1 + 2^-11: a tie, to even */
    expect_const(DR_FLOAT16, "1.00146484375", 0x3c02);  /* 1 + 3 * 2^-11: a tie, to even */
    expect_const(DR_FLOAT16, "2049", 0x6800);
    expect_const(DR_FLOAT16, "2051", 0x6802);
    expect_const(DR_FLOAT16, "1e-10", 0x0000);
    expect_const(DR_FLOAT16, "-1e-10", 0x8000);
    expect_const(DR_FLOAT16, "inf", 0x7c00);
    expect_const(DR_FLOAT16, "-inf", 0xfc00);
    expect_const_nan(DR_FLOAT16, "nan", 0);
    expect_const_nan(DR_FLOAT16, "-nan", 1);
    expect_const_error(DR_FLOAT16, "70000");
    expect_const_error(DR_FLOAT16, "-70000");
    expect_const_error(DR_FLOAT16, "65520"); /* the midpoint to 65536 rounds to even: past the largest finite */
    expect_const_error(DR_FLOAT16, "1e39");
    expect_const_error(DR_FLOAT16, "1e309");
    expect_const_error(DR_FLOAT16, "1.5x");
    expect_const_error(DR_FLOAT16, "");
    expect_const(DR_BFLOAT16, "1", 0x3f80);
    expect_const(DR_BFLOAT16, "3.14159", 0x4049);
    expect_const(DR_BFLOAT16, "-2", 0xc000);
    expect_const(DR_BFLOAT16, "0.1", 0x3dcd);
    expect_const(DR_BFLOAT16, "-0", 0x8000);
    expect_const(DR_BFLOAT16, "1.00390625", 0x3f80); /* 1 + 2^-8: a tie, to even */
    expect_const(DR_BFLOAT16, "1.01171875", 0x3f82); /* 1 + 3 * 2^-8: a tie, to even */
    expect_const(DR_BFLOAT16, "3.3895313892515355e38", 0x7f7f);
    expect_const(DR_BFLOAT16, "9.183549615799121e-41", 0x0001); /* 2^-133 */
    expect_const(DR_BFLOAT16, "inf", 0x7f80);
    expect_const(DR_BFLOAT16, "-inf", 0xff80);
    expect_const_nan(DR_BFLOAT16, "nan", 0);
    expect_const_error(DR_BFLOAT16, "3.4e38");
    expect_const_error(DR_BFLOAT16, "1e39");
    expect_const_error(DR_BFLOAT16, "1.5x");
    expect_const_error(DR_BFLOAT16, "");

    /* Random values between neighbouring 16-bit values (exact, quarter points, midpoints, random), both formats. */
    for (int fmt = 0; fmt < 2; ++fmt) {
        const dr_dtype_t t = fmt ? DR_BFLOAT16 : DR_FLOAT16;
        const int man = fmt ? 7 : 10, bias = fmt ? 127 : 15;
        const uint32_t inf = ((1u << (15 - man)) - 1) << man;
        for (int rep = 0; rep < 20000; ++rep) {
            uint64_t r = check_rand(rng);
            uint32_t h = (uint32_t)(r % inf); /* a positive finite pattern */
            double lo = decode_small(h, man, bias);
            double hi = h + 1 == inf ? ldexp(1.0, (int)(inf >> man) - bias) : decode_small(h + 1, man, bias);
            static const double fracs[] = {0.0, 0.25, 0.5, 0.75};
            double f = (r >> 32) % 5 < 4 ? fracs[(r >> 32) % 5] : (double)(r >> 40) / 16777216.0;
            double v = lo + f * (hi - lo);
            if ((r >> 20) & 1) v = -v;
            uint32_t want;
            /* Spell v exactly (every double is a finite decimal; a 16-bit midpoint needs up to ~30 digits):
             * %.17g would only round-trip through double, and could move a midpoint off its tie. */
            char s[160];
            snprintf(s, sizeof s, "%.100g", v);
            if (nearest_small(v, man, bias, &want) == 0) expect_const(t, s, want);
            else expect_const_error(t, s);
        }
    }

    /* Decimal spellings within a hair of a rounding midpoint must round on the correct side: the value is
     * converted once, to the target type (a detour through double rounds twice). */
    expect_const(DR_FLOAT16, "1.000488281250000000000001", 0x3c01); /* 1 + 2^-11 + 1e-24 */
    expect_const(DR_BFLOAT16, "1.003906250000000000000001", 0x3f81); /* 1 + 2^-8 + 1e-24 */
    expect_const(DR_FLOAT32, "1.000000059604644775390625000001", 0x3f800001); /* 1 + 2^-24 + 1e-30 */
}

/* ---- dr_options_canonical ---------------------------------------------------------------------------------- */
static void canonical_of(const char *const *args, char *buf, size_t len)
{
    dr_options_t o;
    char err[512];
    dr_parse_result_t r = parse_list(&o, err, sizeof err, args);
    CHECK(r == DR_PARSE_OK, "%s: expected OK, got %d (%s)", joined(args), r, err);
    dr_options_canonical(&o, buf, len);
}

static void test_canonical(void)
{
    static const char *const base[] = {"-n", "1000", "-t", "int32", "--op", "sum", "-k", "smem", "-b", "128",
                                       "--seed", "5", "--scaling", "strong", "--combine", "hier", "--data", "random",
                                       "--acc", "wide", NULL};
    char c0[2048], c1[2048], c2[2048];
    canonical_of(base, c0, sizeof c0);
    canonical_of(base, c1, sizeof c1);
    CHECK(strcmp(c0, c1) == 0, "the same options gave different canonical lines:\n  %s\n  %s", c0, c1);
    CHECK(strchr(c0, '\n') == NULL && strlen(c0) > 0, "canonical line should be one non-empty line: \"%s\"", c0);
    /* Each variant changes one option that every rank must agree on: the line must change. */
    static const struct {
        const char *opt, *val;
    } variants[] = {
        {"-n", "1001"},           {"-t", "int64"},        {"-t", "uint32"},      {"--op", "max"},
        {"--op", "bxor"},         {"-k", "smem2"},        {"-k", "multipass"},   {"-b", "256"},
        {"--seed", "6"},          {"--scaling", "weak"},  {"--combine", "flat"}, {"--data", "iota"},
        {"--data", "const:3"},    {"--iters", "3"},       {"--warmup", "5"},     {"--verify", "off"},
        {"--misalign", "1"},      {"--staging", "host"},  {"--ranks-per-node", "2"}, {"--device", "cpu"},
        {"--allreduce", NULL},
    };
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; ++i) {
        const char *args[64];
        int n = 0;
        for (const char *const *a = base; *a; ++a) args[n++] = *a;
        args[n++] = variants[i].opt;
        if (variants[i].val) args[n++] = variants[i].val;
        args[n] = NULL;
        canonical_of(args, c2, sizeof c2);
        CHECK(strcmp(c0, c2) != 0, "canonical line did not change with %s %s: \"%s\"", variants[i].opt,
              variants[i].val ? variants[i].val : "", c2);
    }
    /* With --input (which refuses -n, --seed and --data): the file and the offset are part of the line. */
    {
        const char *a[] = {"--input", "a.bin", "-t", "int32", NULL}, *b[] = {"--input", "b.bin", "-t", "int32", NULL};
        const char *c[] = {"--input", "a.bin", "-t", "int32", "--offset", "8", NULL};
        canonical_of(a, c0, sizeof c0);
        canonical_of(b, c1, sizeof c1);
        canonical_of(c, c2, sizeof c2);
        CHECK(strcmp(c0, c1) != 0 && strcmp(c0, c2) != 0 && strstr(c0, "input=a.bin") && strstr(c2, "offset=8"),
              "canonical line does not follow --input and --offset: \"%s\", \"%s\", \"%s\"", c0, c1, c2);
    }
    /* Two constants differing in value. */
    {
        const char *a[] = {"-t", "int32", "--data", "const:3", NULL}, *b[] = {"-t", "int32", "--data", "const:4", NULL};
        canonical_of(a, c1, sizeof c1);
        canonical_of(b, c2, sizeof c2);
        CHECK(strcmp(c1, c2) != 0, "canonical line did not change between const:3 and const:4: \"%s\"", c1);
    }
    /* Float accumulation mode matters for float sums. */
    {
        const char *a[] = {"-t", "float32", "--acc", "wide", NULL}, *b[] = {"-t", "float32", "--acc", "native", NULL};
        canonical_of(a, c1, sizeof c1);
        canonical_of(b, c2, sizeof c2);
        CHECK(strcmp(c1, c2) != 0, "canonical line did not change between --acc wide and native: \"%s\"", c1);
    }
    /* Large counts and seeds are not truncated. */
    {
        const char *a[] = {"-n", "18446744073709551615", "--seed", "18446744073709551615", NULL};
        const char *b[] = {"-n", "18446744073709551614", "--seed", "18446744073709551615", NULL};
        const char *c[] = {"-n", "18446744073709551615", "--seed", "18446744073709551614", NULL};
        canonical_of(a, c0, sizeof c0);
        canonical_of(b, c1, sizeof c1);
        canonical_of(c, c2, sizeof c2);
        CHECK(strcmp(c0, c1) != 0 && strcmp(c0, c2) != 0, "canonical line loses bits of n or seed: \"%s\"", c0);
    }
}

int main(void)
{
    uint64_t rng = check_seed("test_options");
    test_parse_count(&rng);
    test_defaults();
    test_every_option();
    test_errors();
    test_input();
    test_const(&rng);
    test_canonical();
    return check_summary("test_options");
}
