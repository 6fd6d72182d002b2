/* libFuzzer target: dr_options_parse (src/cli/options.c), the whole command line. Input: the arguments, separated by
 * NUL or newline bytes (argv[0] is "dreduce"; at most 64 arguments). Each argument is a heap block of its own size,
 * so ASan sees a read past any of them.
 *
 * Invariants, beyond no crash / no UB / no leak:
 *   - parsing is a pure function of argv: the same argv gives the same result, message and options again, and argv
 *     is left as it was;
 *   - DR_PARSE_OK only with options the program can run: every enum in range, an op defined for the type
 *     (dr_op_valid), a block that is 0 (auto: by kernel and size) or a power of two in 32..1024, misalign 0..15,
 *     threads 0..4096, iters 1..10^6, warmup 0..10^6, ranks-per-node 0 (unset) or 1..2^20, flags 0 or 1, a
 *     NUL-terminated output path, the data generator agreeing with the type and op, a constant that fits the type's
 *     width;
 *   - the parsed values are stable: appending --count=N --type=T --op=O --kernel=K --block=B ... (the parsed values
 *     printed back; --input and --offset when given, and then no --count) to the same argv parses OK to identical
 *     options;
 *   - with --input: the options for generated data keep their defaults, --offset only with it, the op checked
 *     against the type only when --type was given;
 *   - DR_PARSE_ERROR with a non-empty, one-line message, NUL-terminated within the buffer (and the same message cut
 *     short in a smaller buffer); dr_options_canonical always NUL-terminates, whatever the buffer size. */
#include <inttypes.h>

#include "fuzz_common.h"
#include "options.h"

#define MAX_ARGS 64

static dr_parse_result_t parse(int argc, char **argv, dr_options_t *o, char *err, size_t errlen)
{
    dr_options_default(o);
    return dr_options_parse(argc, argv, o, err, errlen);
}

static void check_ok(const dr_options_t *o, const char *input)
{
#define OK_CHECK(cond) FUZZ_CHECK(cond, "DR_PARSE_OK for argv '%s' with invalid options", input)
    OK_CHECK((unsigned)o->dtype < DR_DTYPE_COUNT);
    OK_CHECK((unsigned)o->op < DR_OP_COUNT);
    /* With --input and no --type the file's type is not known yet: the op is checked once it is opened. */
    OK_CHECK(dr_op_valid(o->dtype, o->op) || (o->input[0] && !o->type_given));
    OK_CHECK(memchr(o->input, '\0', sizeof o->input) != NULL);
    OK_CHECK(o->type_given == 0 || o->type_given == 1);
    OK_CHECK(o->offset_given == 0 || o->offset_given == 1);
    OK_CHECK(o->offset_given || o->input_offset == 0);
    OK_CHECK(!o->offset_given || o->input[0]);
    /* The file decides the count: the options for generated data keep their defaults. */
    OK_CHECK(!o->input[0] || (o->n == 16u << 20 && o->gen.pattern == DR_DATA_RANDOM && o->gen.seed == 1 &&
                              o->scaling == DR_SCALING_STRONG));
    OK_CHECK((unsigned)o->acc_mode < DR_ACC_MODE_COUNT);
    OK_CHECK((unsigned)o->kernel < DR_KERNEL_COUNT);
    OK_CHECK(o->block == 0 /* auto */ || (o->block >= 32 && o->block <= 1024 && (o->block & (o->block - 1)) == 0));
    OK_CHECK(o->iters >= 1 && o->iters <= 1000000);
    OK_CHECK(o->warmup >= 0 && o->warmup <= 1000000);
    OK_CHECK(o->threads >= 0 && o->threads <= 4096);
    OK_CHECK(o->misalign >= 0 && o->misalign <= 15);
    OK_CHECK(o->ranks_per_node == 0 || (o->ranks_per_node >= 1 && o->ranks_per_node <= (1 << 20)));
    OK_CHECK(o->verify == 0 || o->verify == 1);
    OK_CHECK(o->allreduce == 0 || o->allreduce == 1);
    OK_CHECK(o->share_gpus == 0 || o->share_gpus == 1);
    OK_CHECK((unsigned)o->device <= DR_DEVICE_CPU);
    OK_CHECK((unsigned)o->format <= DR_FORMAT_CSV);
    OK_CHECK((unsigned)o->scaling <= DR_SCALING_WEAK);
    OK_CHECK((unsigned)o->combine <= DR_COMBINE_FLAT);
    OK_CHECK((unsigned)o->staging < 16); /* the set of staging modes grows; a wild value is still caught */
    OK_CHECK((unsigned)o->bind <= DR_BINDOPT_WORKERS);
    OK_CHECK((unsigned)o->memory < DR_MEMORY_COUNT);
    OK_CHECK((unsigned)o->host_path < DR_HOST_PATH_COUNT);
    OK_CHECK(memchr(o->output, '\0', sizeof o->output) != NULL);
    OK_CHECK((unsigned)o->gen.pattern < DR_DATA_COUNT);
    OK_CHECK(o->gen.dtype == o->dtype && o->gen.op == o->op);
    const size_t width = dr_dtype_size(o->dtype) * 8;
    OK_CHECK(o->gen.pattern != DR_DATA_CONST || width == 64 || o->gen.const_bits >> width == 0);
#undef OK_CHECK
}

/* argv + explicit forms of the parsed values must parse to the same options. */
static void check_stable(int argc, char **argv, const dr_options_t *o, const char *input)
{
    char vals[12][1100];
    char *extra[MAX_ARGS + 1 + 12];
    memcpy(extra, argv, (size_t)argc * sizeof *argv);
    int k = 0;
    /* -n is an error with --input, and printing --type back would mark it as given. */
    if (!o->input[0]) snprintf(vals[k++], 64, "--count=%" PRIu64, o->n);
    if (o->type_given) snprintf(vals[k++], 64, "--type=%s", dr_dtype_name(o->dtype));
    if (o->input[0]) snprintf(vals[k++], sizeof vals[0], "--input=%s", o->input);
    if (o->offset_given) snprintf(vals[k++], 64, "--offset=%" PRIu64, o->input_offset);
    snprintf(vals[k++], 64, "--op=%s", dr_options_op_name(o)); /* histogram, quantile, median: not o->op (sum) */
    snprintf(vals[k++], 64, "--acc=%s", dr_acc_mode_name(o->acc_mode));
    snprintf(vals[k++], 64, "--kernel=%s", dr_kernel_name(o->kernel));
    if (o->block != 0) snprintf(vals[k++], 64, "-b%d", o->block); /* 0 (auto) has no spelling */
    snprintf(vals[k++], 64, "--iters=%d", o->iters);
    snprintf(vals[k++], 64, "--warmup=%d", o->warmup);
    snprintf(vals[k++], 64, "--threads=%d", o->threads);
    snprintf(vals[k++], 64, "--misalign=%d", o->misalign);
    for (int i = 0; i < k; ++i) extra[argc + i] = vals[i];
    dr_options_t again;
    char err[512];
    const dr_parse_result_t r = parse(argc + k, extra, &again, err, sizeof err);
    FUZZ_CHECK(r == DR_PARSE_OK, "argv '%s' parses OK, but not with its values printed back: %s", input, err);
    FUZZ_CHECK(memcmp(&again, o, sizeof again) == 0, "argv '%s': printing the parsed values back changes them", input);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Split into arguments; `input` is the argv for messages, arguments joined by ' '. */
    char *argv[MAX_ARGS + 1], *copy[MAX_ARGS + 1];
    int argc = 0;
    argv[argc++] = fuzz_strdup("dreduce");
    size_t start = 0;
    for (size_t i = 0; i <= size && argc < MAX_ARGS; ++i) {
        if (i == size || data[i] == '\0' || data[i] == '\n') {
            if (i == size && start == size && size > 0 && argc > 1) break; /* trailing separator: no empty arg */
            char *a = malloc(i - start + 1);
            if (!a) abort();
            memcpy(a, data + start, i - start);
            a[i - start] = '\0';
            argv[argc++] = a;
            start = i + 1;
        }
    }
    if (size == 0) { /* no arguments at all: argv = {"dreduce"} */
        free(argv[--argc]);
    }
    argv[argc] = NULL;
    char *input = malloc(size + 1);
    if (!input) abort();
    memcpy(input, data, size);
    for (size_t i = 0; i < size; ++i)
        if (input[i] == '\0' || input[i] == '\n') input[i] = ' ';
    input[size] = '\0';
    for (int i = 0; i < argc; ++i) {
        copy[i] = fuzz_strdup(argv[i]);
    }

    dr_options_t o, o2;
    char err[512], err2[512];
    const dr_parse_result_t r = parse(argc, argv, &o, err, sizeof err);
    FUZZ_CHECK(r == DR_PARSE_OK || r == DR_PARSE_HELP || r == DR_PARSE_VERSION || r == DR_PARSE_ERROR,
               "argv '%s': result %d", input, (int)r);
    for (int i = 0; i < argc; ++i)
        FUZZ_CHECK(strcmp(argv[i], copy[i]) == 0, "argv '%s': dr_options_parse changed argv[%d]", input, i);

    /* Pure: again from defaults, same everything. */
    const dr_parse_result_t r2 = parse(argc, argv, &o2, err2, sizeof err2);
    FUZZ_CHECK(r2 == r && strcmp(err, err2) == 0, "argv '%s': a second parse gave %d '%s' after %d '%s'", input,
               (int)r2, err2, (int)r, err);
    FUZZ_CHECK(r != DR_PARSE_OK || memcmp(&o, &o2, sizeof o) == 0, "argv '%s': a second parse gave other options",
               input);

    if (r == DR_PARSE_OK) {
        check_ok(&o, input);
        check_stable(argc, argv, &o, input);
    } else if (r == DR_PARSE_ERROR) {
        fuzz_check_message(err, sizeof err, "dr_options_parse", input);
        const size_t small = 1 + size % 64;
        char *cut = malloc(small);
        if (!cut) abort();
        FUZZ_CHECK(parse(argc, argv, &o2, cut, small) == DR_PARSE_ERROR, "argv '%s' depends on the buffer size", input);
        fuzz_check_truncated(err, cut, small, "dr_options_parse", input);
        free(cut);
    }

    /* The canonical line (the cross-rank agreement hash): NUL-terminated in any buffer, a prefix of the full one. */
    char full[4096];
    dr_options_canonical(&o, full, sizeof full);
    FUZZ_CHECK(memchr(full, '\0', sizeof full) != NULL && strchr(full, '\n') == NULL, "argv '%s': canonical line",
               input);
    const size_t small = 1 + size % 97;
    char *cut = malloc(small);
    if (!cut) abort();
    dr_options_canonical(&o, cut, small);
    fuzz_check_truncated(full, cut, small, "dr_options_canonical", input);
    free(cut);

    for (int i = 0; i < argc; ++i) {
        free(argv[i]);
        free(copy[i]);
    }
    free(input);
    return 0;
}
