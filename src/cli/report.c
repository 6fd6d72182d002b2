#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "timing.h"

static const char *const level_names[DR_LEVEL_COUNT] = {
    [DR_LEVEL_LOCAL] = "local", [DR_LEVEL_STAGE] = "stage", [DR_LEVEL_NODE] = "node",
    [DR_LEVEL_GLOBAL] = "global", [DR_LEVEL_BCAST] = "bcast", [DR_LEVEL_TOTAL] = "total",
    [DR_LEVEL_READ] = "read",   [DR_LEVEL_LOAD] = "load",   [DR_LEVEL_LAUNCH] = "launch",
    [DR_LEVEL_WAIT] = "wait",   [DR_LEVEL_COMBINE] = "combine", [DR_LEVEL_LOAD_CPU] = "load cpu",
    [DR_LEVEL_LOAD_GPU] = "load gpu",
};

const char *dr_level_name(dr_level_t l) { return l < DR_LEVEL_COUNT ? level_names[l] : "?"; }

/* The most rows of a node's table: generate, the levels, the kernel passes, a distribution's passes twice. */
#define DR_REPORT_MAX_ROWS (DREDUCE_MAX_PASSES + DR_LEVEL_COUNT + 1 + 2 * DREDUCE_DIST_MAX_PASSES)

/* A row of the per-node table: one level (or kernel pass, or generate) over one node's ranks. */
typedef struct {
    char name[24];
    int ranks;                   /* ranks that took part */
    double min, median, max;
    int slowest_rank;
    double gbs;                  /* local, read, load: the node's bytes over its slowest rank's time; else NaN */
} level_stats_t;

/* Which value of a record a row is about: a level, kernel pass p (level = -1 - p), generate (level = -100), a
 * distribution's pass p, its local time (ROW_DIST_LOCAL - p) or its combine's (ROW_DIST_COMBINE - p). */
enum { ROW_GENERATE = -100, ROW_DIST_LOCAL = -200, ROW_DIST_COMBINE = -300 };

static double record_value(const dr_rank_record_t *rec, int which)
{
    if (which == ROW_GENERATE) return rec->generate_ms;
    if (which <= ROW_DIST_LOCAL) {
        const int combine = which <= ROW_DIST_COMBINE, p = (combine ? ROW_DIST_COMBINE : ROW_DIST_LOCAL) - which;
        return p < rec->dist_passes ? (combine ? rec->dist_combine_ms[p] : rec->dist_local_ms[p]) : NAN;
    }
    if (which < 0) return -1 - which < rec->passes ? rec->pass_ms[-1 - which] : NAN;
    return rec->level_ms[which];
}

static void stats_for(const dr_report_t *r, int node, int which, level_stats_t *s)
{
    double *v = calloc((size_t)r->nranks, sizeof *v);
    int m = 0;
    s->ranks = 0;
    s->min = s->median = s->max = s->gbs = NAN;
    s->slowest_rank = -1;
    if (!v) return;
    uint64_t bytes = 0;
    for (int i = 0; i < r->nranks; ++i) {
        const dr_rank_record_t *rec = &r->ranks[i];
        if (node >= 0 && rec->node != node) continue;
        /* a host array's two sides each moved their own part */
        const uint64_t elems = which == DR_LEVEL_LOAD_CPU   ? rec->host_cpu_elems
                               : which == DR_LEVEL_LOAD_GPU ? rec->count - rec->host_cpu_elems
                                                            : rec->count;
        double x = record_value(rec, which);
        if (isnan(x)) continue; /* a rank without the level moved none of its bytes there */
        bytes += elems * dr_dtype_size(r->opt->dtype);
        v[m++] = x;
        if (isnan(s->max) || x > s->max) {
            s->max = x;
            s->slowest_rank = rec->rank;
        }
        if (isnan(s->min) || x < s->min) s->min = x;
    }
    s->ranks = m;
    s->median = dr_median(v, m);
    /* A distribution's local level reads the data once per pass: its passes' rows have the bandwidth. */
    const int moves_bytes = r->opt->dist.on ? which <= ROW_DIST_LOCAL && which > ROW_DIST_COMBINE
                                            : which == DR_LEVEL_LOCAL || which == DR_LEVEL_READ ||
                                                  which == DR_LEVEL_LOAD || which == DR_LEVEL_LOAD_CPU ||
                                                  which == DR_LEVEL_LOAD_GPU;
    if (moves_bytes && m > 0 && s->max > 0) s->gbs = (double)bytes / (s->max * 1e6);
    free(v);
}

/* The rows order[0..k) of a node's table that some rank of it has; returns how many. */
static int rows_of(const dr_report_t *r, int node, const int *order, int k, level_stats_t *rows, int max_rows)
{
    int n = 0;
    for (int j = 0; j < k && n < max_rows; ++j) {
        level_stats_t *s = &rows[n];
        stats_for(r, node, order[j], s);
        if (s->ranks == 0) continue;
        if (order[j] == ROW_GENERATE) snprintf(s->name, sizeof s->name, "generate");
        else if (order[j] <= ROW_DIST_COMBINE) snprintf(s->name, sizeof s->name, "combine %d", ROW_DIST_COMBINE - order[j] + 1);
        else if (order[j] <= ROW_DIST_LOCAL) snprintf(s->name, sizeof s->name, "local %d", ROW_DIST_LOCAL - order[j] + 1);
        else if (order[j] < 0) snprintf(s->name, sizeof s->name, "  pass %d", -order[j]);
        else snprintf(s->name, sizeof s->name, "%s", dr_level_name((dr_level_t)order[j]));
        ++n;
    }
    return n;
}

/* The rows of a node's table, in pipeline order; returns how many. */
static int node_rows(const dr_report_t *r, int node, level_stats_t *rows, int max_rows)
{
    int max_passes = 0;
    for (int i = 0; i < r->nranks; ++i)
        if (r->ranks[i].passes > max_passes) max_passes = r->ranks[i].passes;
    int order[DR_REPORT_MAX_ROWS], k = 0;
    order[k++] = ROW_GENERATE;
    if (r->opt->dist.on) { /* each pass's local and combine, then their sums and the whole call */
        int dist_passes = 0;
        for (int i = 0; i < r->nranks; ++i)
            if (r->ranks[i].dist_passes > dist_passes) dist_passes = r->ranks[i].dist_passes;
        for (int p = 0; p < dist_passes; ++p) {
            order[k++] = ROW_DIST_LOCAL - p;
            order[k++] = ROW_DIST_COMBINE - p;
        }
        order[k++] = DR_LEVEL_LOCAL;
        order[k++] = DR_LEVEL_COMBINE;
        order[k++] = DR_LEVEL_TOTAL;
        return rows_of(r, node, order, k, rows, max_rows);
    }
    order[k++] = DR_LEVEL_READ;
    order[k++] = DR_LEVEL_LOAD;
    order[k++] = DR_LEVEL_LOAD_CPU;
    order[k++] = DR_LEVEL_LOAD_GPU;
    order[k++] = DR_LEVEL_LOCAL;
    for (int p = 0; p < max_passes && max_passes > 1; ++p) order[k++] = -1 - p;
    const int after_local[] = {DR_LEVEL_LAUNCH, DR_LEVEL_STAGE, DR_LEVEL_WAIT,  DR_LEVEL_NODE,
                               DR_LEVEL_GLOBAL, DR_LEVEL_BCAST, DR_LEVEL_TOTAL};
    for (size_t i = 0; i < sizeof after_local / sizeof after_local[0]; ++i) order[k++] = after_local[i];
    return rows_of(r, node, order, k, rows, max_rows);
}

/* ---- the result as text: one value ("none" where it has none: dreduce_result_t.no_value); argmin/argmax "VALUE at
 * INDEX"; stats field by field ---- */
typedef struct {
    char count[24], sum[48], mean[32], var_pop[32], var_sample[32], m2[32], min[32], max[32];
} stats_text_t;

static void f64_text(double x, char *buf, size_t len)
{
    dr_value_t v;
    memset(&v, 0, sizeof v);
    v.f64 = x;
    dr_value_format(DR_ACC_F64, &v, buf, len);
}

static void stats_text(const dr_report_t *r, stats_text_t *t)
{
    const dr_stats_result_t *st = &r->stats;
    snprintf(t->count, sizeof t->count, "%" PRIu64, st->count);
    if (st->sum_is_int) dr_int128_format(st->sum_int, st->kind == DR_ACC_I64, t->sum, sizeof t->sum);
    else f64_text(st->sum, t->sum, sizeof t->sum);
    f64_text(st->mean, t->mean, sizeof t->mean);
    f64_text(st->var_pop, t->var_pop, sizeof t->var_pop);
    f64_text(st->var_sample, t->var_sample, sizeof t->var_sample);
    f64_text(st->m2, t->m2, sizeof t->m2);
    if (st->count == 0) { /* the min and max of nothing: their identities are not data */
        snprintf(t->min, sizeof t->min, "none");
        snprintf(t->max, sizeof t->max, "none");
        return;
    }
    dr_value_t v;
    memset(&v, 0, sizeof v);
    memcpy(&v, &st->min, sizeof st->min);
    dr_value_format(st->kind, &v, t->min, sizeof t->min);
    memcpy(&v, &st->max, sizeof st->max);
    dr_value_format(st->kind, &v, t->max, sizeof t->max);
}

/* ---- a distribution's result (--op histogram, quantile, median) ---- */

#define DR_RESULT_TEXT 2048 /* a result's one line: up to DREDUCE_MAX_Q quantiles of 24 characters */

static int is_hist(const dr_report_t *r) { return r->opt->dist.op == DR_DIST_HISTOGRAM; }

/* An order statistic's value as text, in its kind (integers exactly). */
static void order_text(dr_acc_kind_t kind, dr_scalar_t v, char *buf, size_t len)
{
    if (kind == DR_ACC_I64) snprintf(buf, len, "%" PRId64, v.i64);
    else if (kind == DR_ACC_U64) snprintf(buf, len, "%" PRIu64, v.u64);
    else f64_text(v.f64, buf, len);
}

/* JSON's result.value and CSV's result: "count=N bins=B lo=L hi=H below=X above=Y nan=Z", or the quantiles'
 * values separated by spaces (the median's one value). */
static void dist_text(const dr_report_t *r, char *buf, size_t len)
{
    const dreduce_dist_info_t *in = &r->dist_info;
    if (is_hist(r)) {
        char lo[32], hi[32];
        f64_text(in->lo, lo, sizeof lo);
        f64_text(in->hi, hi, sizeof hi);
        snprintf(buf, len, "count=%" PRIu64 " bins=%u lo=%s hi=%s below=%" PRIu64 " above=%" PRIu64 " nan=%" PRIu64,
                 in->count, r->opt->dist.bins, lo, hi, in->below, in->above, in->nan_count);
        return;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->opt->dist.nq && used < len; ++i) {
        char v[32];
        f64_text(r->values[i], v, sizeof v);
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", v);
    }
}

/* The histogram's edges as text: the fewest digits (6, 9, 12, else 17) that tell each printed row's two edges apart
 * where they differ. */
static int edge_digits(const double *edges, uint32_t bins, uint32_t step)
{
    static const int digits[] = {6, 9, 12};
    for (size_t d = 0; d < sizeof digits / sizeof digits[0]; ++d) {
        int ok = 1;
        for (uint32_t a = 0; a < bins && ok; a += step) {
            const uint32_t b = a + step < bins ? a + step : bins;
            char x[40], y[40];
            snprintf(x, sizeof x, "%.*g", digits[d], edges[a]);
            snprintf(y, sizeof y, "%.*g", digits[d], edges[b]);
            ok = edges[a] == edges[b] || strcmp(x, y) != 0;
        }
        if (ok) return digits[d];
    }
    return 17;
}

/* At most this many rows of a histogram in the table; more bins are summed in groups. */
#define DR_HIST_ROWS 40
#define DR_HIST_BAR 40

static void table_histogram(const dr_report_t *r, FILE *f)
{
    const dreduce_dist_info_t *in = &r->dist_info;
    const uint32_t bins = r->opt->dist.bins;
    const uint32_t step = (bins + DR_HIST_ROWS - 1) / DR_HIST_ROWS, rows = (bins + step - 1) / step;
    fprintf(f, "\nresult: histogram of %" PRIu64 " elements in %u bins over [%.9g, %.9g] (%s): below %" PRIu64
               ", above %" PRIu64 ", NaN %" PRIu64 " (counts uint64)\n", in->count, bins, in->lo, in->hi,
            r->opt->dist.has_range ? "--range" : "the automatic range: the data's min and max", in->below, in->above,
            in->nan_count);
    if (step > 1)
        fprintf(f, "  %u bins in %u rows of %u (each row the sum of its bins; JSON and CSV carry every bin)\n", bins,
                rows, step);
    uint64_t top = 0;
    for (uint32_t g = 0; g < rows; ++g) {
        uint64_t c = 0;
        for (uint32_t i = g * step; i < bins && i < (g + 1) * step; ++i) c += r->counts[i];
        if (c > top) top = c;
    }
    const int digits = edge_digits(r->edges, bins, step);
    fprintf(f, "  %-17s %-*s %14s\n", step > 1 ? "bins" : "bin", 2 * digits + 12, "range", "count");
    for (uint32_t g = 0; g < rows; ++g) {
        const uint32_t a = g * step, b = (g + 1) * step < bins ? (g + 1) * step : bins; /* bins a..b-1 */
        uint64_t c = 0;
        for (uint32_t i = a; i < b; ++i) c += r->counts[i];
        char label[32], range[96], bar[DR_HIST_BAR + 1];
        if (step > 1) snprintf(label, sizeof label, "%u-%u", a, b - 1);
        else snprintf(label, sizeof label, "%u", a);
        snprintf(range, sizeof range, "[%.*g, %.*g%c", digits, r->edges[a], digits, r->edges[b], b == bins ? ']' : ')');
        const int len = top ? (int)((c * DR_HIST_BAR + top - 1) / top) : 0;
        memset(bar, '#', (size_t)len);
        bar[len] = '\0';
        fprintf(f, "  %-17s %-*s %14" PRIu64 " %s\n", label, 2 * digits + 12, range, c, bar);
    }
}

static void table_quantiles(const dr_report_t *r, FILE *f)
{
    const dreduce_dist_info_t *in = &r->dist_info;
    const dr_dist_options_t *d = &r->opt->dist;
    if (d->median) {
        char v[32];
        f64_text(r->values[0], v, sizeof v);
        fprintf(f, "\nresult: median of %" PRIu64 " elements: %s (float64), NaN %" PRIu64 "\n", in->count, v,
                in->nan_count);
    } else {
        fprintf(f, "\nresult: %zu quantile%s of %" PRIu64 " elements (float64), NaN %" PRIu64 "\n", d->nq,
                d->nq == 1 ? "" : "s", in->count, in->nan_count);
    }
    fprintf(f, "  %-12s %-24s %-32s %-32s %s\n", "q", "value", "lower order statistic (rank)",
            "upper order statistic (rank)", "gamma");
    for (size_t i = 0; i < d->nq; ++i) {
        const dreduce_order_stat_t *o = &r->order[i];
        char v[32], a[32], b[32], lo[64], up[64];
        f64_text(r->values[i], v, sizeof v);
        order_text(o->kind, o->lower, a, sizeof a);
        order_text(o->kind, o->upper, b, sizeof b);
        snprintf(lo, sizeof lo, "%s (%" PRIu64 ")", a, o->lower_rank);
        snprintf(up, sizeof up, "%s (%" PRIu64 ")", b, o->upper_rank);
        fprintf(f, "  %-12.10g %-24s %-32s %-32s %.17g\n", d->q[i], v, lo, up, o->gamma);
    }
}

/* --nan omit: how many NaN were left out, in all and by rank; and NumPy's warning where every element was NaN. */
static void table_nan(const dr_report_t *r, FILE *f)
{
    const dr_options_t *o = r->opt;
    if (o->nan != DR_NAN_OMIT) return;
    fprintf(f, "NaN omitted (--nan omit, as NumPy's nan* functions): %" PRIu64 " of %" PRIu64 " elements", r->nan_omitted,
            r->n_total);
    if (r->nranks > 1 && r->nranks <= 16) {
        fprintf(f, " (");
        for (int i = 0; i < r->nranks; ++i)
            fprintf(f, "%srank %d: %" PRIu64, i ? ", " : "", i, r->ranks[i].nan_omitted);
        fprintf(f, ")");
    }
    fprintf(f, "\n");
    if (r->n_total > 0 && r->nan_omitted == r->n_total && !o->dist.on &&
        (o->op == DR_MIN || o->op == DR_MAX || o->op == DR_STATS || dr_op_is_arg(o->op)))
        fprintf(f, "warning: every element is NaN: %s (NumPy: \"All-NaN slice encountered\")\n",
                dr_op_is_arg(o->op) ? "no index to give (np.nanargmin/np.nanargmax raise)"
                : o->op == DR_STATS ? "the count is 0, the mean and variances NaN"
                                    : "the result is NaN");
}

/* A host array on a GPU rank: the path each rank took, and what it measured to choose it. */
static void table_host(const dr_report_t *r, FILE *f)
{
    static const char *const paths[] = {"auto", "its CPU threads", "the GPU (chunked copies)",
                                        "its CPU threads and the GPU at once"};
    int shown = 0;
    for (int i = 0; i < r->nranks && shown < 16; ++i) {
        const dr_rank_record_t *rec = &r->ranks[i];
        if (rec->host_path < 0 || rec->host_path >= DR_HOST_PATH_COUNT) continue;
        ++shown;
        fprintf(f, "host array, rank %d (%s memory): reduced by %s", rec->rank,
                rec->host_pinned ? "pinned" : "pageable", paths[rec->host_path]);
        if (rec->host_path == DR_HOST_PATH_SPLIT)
            fprintf(f, ", %" PRIu64 " of %" PRIu64 " elements on the CPU", rec->host_cpu_elems, rec->count);
        fprintf(f, " (--host-path %s)", dr_host_path_name(r->opt->host_path));
        const dreduce_host_rates_t *q = &rec->rates;
        if (q->measured)
            fprintf(f, "; measured over %.0f MiB: cpu %.1f, gpu %.1f, split %.1f GB/s",
                    (double)q->probe_bytes / (1 << 20), q->cpu_gbs, q->gpu_gbs, q->split_gbs);
        if (rec->measure_ms > 0) fprintf(f, ", in %.1f ms (once: the run's first call)", rec->measure_ms);
        fprintf(f, "\n");
    }
}

/* The passes, after the result: what each read of the rank's part did (their times are the node table's rows). */
static void table_passes(const dr_report_t *r, FILE *f)
{
    const int p = r->dist_info.passes;
    if (is_hist(r))
        fprintf(f, "passes: %d read%s of each rank's part: %s\n", p, p == 1 ? "" : "s",
                r->opt->dist.has_range ? "the histogram's counts"
                                       : "the automatic range's min and max, then the histogram's counts");
    else if (r->dist_info.pilot == 1)
        fprintf(f, "passes: %d: the pilot (pass 1: an exact select of a sample of each rank's part, bracketing each "
                   "order statistic; pass 2: one read of the part, counting the elements below and in each bracket "
                   "and keeping those in one), then a radix select over the kept elements alone, a digit a pass%s\n",
                p, r->dist_info.nan_count && r->opt->nan != DR_NAN_OMIT ? " (NaN found: no more passes)" : "");
    else
        fprintf(f, "passes: %d%s: a radix select over the elements' keys, each pass a read of each rank's part, the "
                   "first counting their leading digit (and the elements and NaN), each later one the next digit of "
                   "the keys still in play%s\n", p,
                r->dist_info.pilot == 2 ? " (the pilot's sample and read first, a bracket missed: then)" : "",
                r->dist_info.nan_count && r->opt->nan != DR_NAN_OMIT ? " (NaN found: no more passes)" : "");
    fprintf(f, "(local N, combine N: pass N's reading and counting on each rank, and its combine across ranks)\n");
}

/* The header line's what: "histogram of float32 (10 bins, the automatic range)", "quantile of int32 (q 0.5,
 * 0.9)", "median of float64". */
static void dist_title(const dr_report_t *r, char *buf, size_t len)
{
    const dr_dist_options_t *d = &r->opt->dist;
    const char *type = dr_dtype_name(r->opt->dtype);
    if (d->op == DR_DIST_HISTOGRAM) {
        if (d->has_range) snprintf(buf, len, "histogram of %s (%u bins, --range %.17g,%.17g)", type, d->bins,
                                   d->range[0], d->range[1]);
        else snprintf(buf, len, "histogram of %s (%u bins, the automatic range)", type, d->bins);
    } else if (d->median) {
        snprintf(buf, len, "median of %s", type);
    } else {
        size_t used = (size_t)snprintf(buf, len, "quantile of %s (q", type);
        for (size_t i = 0; i < d->nq && used < len; ++i)
            used += (size_t)snprintf(buf + used, len - used, "%s%.10g", i ? "," : " ", d->q[i]);
        if (used < len) snprintf(buf + used, len - used, ")");
    }
}

/* JSON: the result's fields past value and type (result.count, ... ; docs/report-schema.md). */
static void json_dist(const dr_report_t *r, FILE *f)
{
    const dreduce_dist_info_t *in = &r->dist_info;
    const dr_dist_options_t *d = &r->opt->dist;
    fprintf(f, ", \"count\": %" PRIu64 ", \"nan\": %" PRIu64 ", \"passes\": %d", in->count, in->nan_count, in->passes);
    if (is_hist(r)) {
        fprintf(f, ", \"bins\": %u, \"lo\": %.17g, \"hi\": %.17g, \"below\": %" PRIu64 ", \"above\": %" PRIu64,
                d->bins, in->lo, in->hi, in->below, in->above);
        fprintf(f, ",\n    \"counts\": [");
        for (uint32_t i = 0; i < d->bins; ++i) fprintf(f, "%s%" PRIu64, i ? ", " : "", r->counts[i]);
        fprintf(f, "],\n    \"edges\": [");
        for (uint32_t i = 0; i <= d->bins; ++i) fprintf(f, "%s%.17g", i ? ", " : "", r->edges[i]);
        fprintf(f, "]");
        return;
    }
    fprintf(f, ", \"pilot\": %d, \"quantiles\": [", in->pilot);
    for (size_t i = 0; i < d->nq; ++i) {
        const dreduce_order_stat_t *o = &r->order[i];
        char v[32], a[32], b[32];
        f64_text(r->values[i], v, sizeof v);
        order_text(o->kind, o->lower, a, sizeof a);
        order_text(o->kind, o->upper, b, sizeof b);
        fprintf(f, "%s\n      {\"q\": %.17g, \"value\": \"%s\", \"lower\": \"%s\", \"upper\": \"%s\", \"lower_rank\": %"
                   PRIu64 ", \"upper_rank\": %" PRIu64 ", \"gamma\": %.17g}", i ? "," : "", d->q[i], v, a, b,
                o->lower_rank, o->upper_rank, o->gamma);
    }
    fprintf(f, "]");
}

/* CSV: the columns nan..gamma. The scalar ones on every row; the lists (every count and edge, every quantile's
 * fields, space-separated) once per run, on node 0's `total` row, so that a histogram of many bins is not
 * repeated on each row (lists: true there). Empty for a reduction. */
static void csv_dist(const dr_report_t *r, FILE *f, int lists)
{
    if (!r->opt->dist.on) {
        fprintf(f, ",,,,,,,,,,,,,,,,"); /* 16 columns */
        return;
    }
    const dreduce_dist_info_t *in = &r->dist_info;
    const dr_dist_options_t *d = &r->opt->dist;
    fprintf(f, ",%" PRIu64 ",%d", in->nan_count, in->passes);
    if (is_hist(r)) fprintf(f, ",%u,%.17g,%.17g,%" PRIu64 ",%" PRIu64, d->bins, in->lo, in->hi, in->below, in->above);
    else fprintf(f, ",,,,,");
    fprintf(f, ",");
    if (lists && is_hist(r))
        for (uint32_t i = 0; i < d->bins; ++i) fprintf(f, "%s%" PRIu64, i ? " " : "", r->counts[i]);
    fprintf(f, ",");
    if (lists && is_hist(r))
        for (uint32_t i = 0; i <= d->bins; ++i) fprintf(f, "%s%.17g", i ? " " : "", r->edges[i]);
    for (int col = 0; col < 7; ++col) { /* q values lower upper lower_rank upper_rank gamma */
        fprintf(f, ",");
        for (size_t i = 0; lists && !is_hist(r) && i < d->nq; ++i) {
            const dreduce_order_stat_t *o = &r->order[i];
            char t[32];
            switch (col) {
            case 0: snprintf(t, sizeof t, "%.17g", d->q[i]); break;
            case 1: f64_text(r->values[i], t, sizeof t); break;
            case 2: order_text(o->kind, o->lower, t, sizeof t); break;
            case 3: order_text(o->kind, o->upper, t, sizeof t); break;
            case 4: snprintf(t, sizeof t, "%" PRIu64, o->lower_rank); break;
            case 5: snprintf(t, sizeof t, "%" PRIu64, o->upper_rank); break;
            default: snprintf(t, sizeof t, "%.17g", o->gamma); break;
            }
            fprintf(f, "%s%s", i ? " " : "", t);
        }
    }
}

static int has_index(const dr_report_t *r) { return dr_acc_kind_is_arg(r->acc) && r->result.arg.index != DR_ARG_NONE; }

/* The result's one-line text: the table's (with_index 1: argmin/argmax "VALUE at INDEX"), JSON's result.value and
 * CSV's result column (with_index 0: the value alone, the index has a field of its own). */
static void result_text(const dr_report_t *r, int with_index, char *buf, size_t len)
{
    if (r->opt->dist.on) {
        dist_text(r, buf, len);
    } else if (dr_acc_kind_is_stats(r->acc)) {
        stats_text_t t;
        stats_text(r, &t);
        snprintf(buf, len, "count=%s sum=%s mean=%s var_pop=%s var_sample=%s min=%s max=%s", t.count, t.sum, t.mean,
                 t.var_pop, t.var_sample, t.min, t.max);
    } else if (dr_acc_kind_is_arg(r->acc)) {
        char v[64];
        dr_value_format(r->acc, &r->result, v, sizeof v);
        if (!has_index(r)) snprintf(buf, len, "none");
        else if (with_index) snprintf(buf, len, "%s at %" PRIu64, v, r->result.arg.index);
        else snprintf(buf, len, "%s", v);
    } else if (r->no_value) {
        snprintf(buf, len, "none");
    } else {
        dr_value_format(r->acc, &r->result, buf, len);
    }
}

static const char *data_name(const dr_options_t *o)
{
    return o->input[0] ? "file" : dr_pattern_name(o->gen.pattern);
}

static const char *node_name_of(const dr_report_t *r, int node)
{
    for (int i = 0; i < r->nranks; ++i)
        if (r->ranks[i].node == node) return r->ranks[i].node_name;
    return "?";
}

static double total_ms(const dr_report_t *r) { return r->ranks[0].level_ms[DR_LEVEL_TOTAL]; }

static double aggregate_gbs(const dr_report_t *r)
{
    double t = total_ms(r);
    return t > 0 ? (double)r->n_total * (double)dr_dtype_size(r->opt->dtype) / (t * 1e6) : NAN;
}

static void format_ms(char *buf, size_t len, double ms)
{
    if (isnan(ms)) snprintf(buf, len, "-");
    else snprintf(buf, len, "%.4f", ms);
}

static void write_table(const dr_report_t *r, FILE *f)
{
    const dr_options_t *o = r->opt;
    char result[DR_RESULT_TEXT], what[DR_RESULT_TEXT];
    result_text(r, 1, result, sizeof result);
    if (o->dist.on) dist_title(r, what, sizeof what);
    else
        snprintf(what, sizeof what, "%s of %s accumulating %s%s", dr_op_name(o->op), dr_dtype_name(o->dtype),
                 r->acc == DR_ACC_EXACT ? "" : "in ",
                 r->acc == DR_ACC_EXACT ? "exactly (rounded once to float64)" : dr_acc_kind_name(r->acc));
    fprintf(f, "dreduce %s: %s, n = %" PRIu64 " (%s scaling), %d rank%s on %d node%s%s\n", DR_VERSION, what,
            r->n_total, o->scaling == DR_SCALING_WEAK ? "weak" : "strong", r->nranks, r->nranks == 1 ? "" : "s",
            r->nnodes, r->nnodes == 1 ? "" : "s", r->emulated ? " (emulated)" : "");
    int gpus = 0;
    for (int i = 0; i < r->nranks; ++i) gpus += r->ranks[i].is_gpu;
    if (gpus) fprintf(f, "kernel %s, block %d, ", dr_kernel_name(o->kernel), r->ranks[0].block);
    else fprintf(f, "CPU backend, ");
    if (o->input[0]) fprintf(f, "%d repetitions after %d warm-up, data from %s\n", o->iters, o->warmup, o->input);
    else
        fprintf(f, "%d repetitions after %d warm-up, data %s (seed %" PRIu64 ")\n", o->iters, o->warmup,
                data_name(o), o->gen.seed);
    fprintf(f, "backend: %s%s%s | combine: %s, %s | MPI: %s\n",
            gpus == r->nranks ? "gpu" : gpus == 0 ? "cpu" : "mixed gpu/cpu", gpus ? " " : "",
            gpus ? r->ranks[0].device_name : "", o->combine == DR_COMBINE_FLAT ? "flat" : "hierarchical",
            r->path_text, r->mpi_library);
    fprintf(f, "\n%-24s %-10s %5s %11s %11s %11s %8s %10s\n", "node", "level", "ranks", "min ms", "median ms",
            "max ms", "slowest", "GB/s");
    level_stats_t rows[DR_REPORT_MAX_ROWS];
    for (int node = 0; node < r->nnodes; ++node) {
        int n = node_rows(r, node, rows, (int)(sizeof rows / sizeof rows[0]));
        for (int j = 0; j < n; ++j) {
            char mn[24], md[24], mx[24], gbs[24] = "";
            format_ms(mn, sizeof mn, rows[j].min);
            format_ms(md, sizeof md, rows[j].median);
            format_ms(mx, sizeof mx, rows[j].max);
            if (!isnan(rows[j].gbs)) snprintf(gbs, sizeof gbs, "%.1f", rows[j].gbs);
            fprintf(f, "%-24.24s %-10s %5d %11s %11s %11s %8d %10s\n", j == 0 ? node_name_of(r, node) : "",
                    rows[j].name, rows[j].ranks, mn, md, mx, rows[j].slowest_rank, gbs);
        }
    }
    if (r->nnodes > 1) {
        fprintf(f, "\nstragglers (slowest rank of each level, all nodes):\n");
        for (int l = 0; l < DR_LEVEL_COUNT; ++l) {
            level_stats_t s;
            stats_for(r, -1, l, &s);
            if (s.ranks == 0) continue;
            fprintf(f, "  %-8s rank %d on %s: %.4f ms (median over ranks %.4f ms)\n", dr_level_name((dr_level_t)l),
                    s.slowest_rank, r->ranks[s.slowest_rank].node_name, s.max, s.median);
        }
    }
    if (!o->dist.on) {
        fprintf(f, "\nresult: %s (%s)\n", result, dr_acc_kind_name(dr_acc_result_kind(r->acc)));
        table_nan(r, f);
        table_host(r, f);
    } else {
        table_nan(r, f);
        if (is_hist(r)) table_histogram(r, f);
        else table_quantiles(r, f);
        table_passes(r, f);
    }
    if (o->verify) fprintf(f, "verification: %s: %s\n", r->check.pass ? "passed" : "FAILED", r->check.detail);
    else fprintf(f, "verification: off\n");
    if (!r->deterministic) fprintf(f, "determinism: FAILED: repetitions gave different results\n");
    fprintf(f, "total: %.4f ms per repetition (median), %.1f GB/s aggregate over %" PRIu64 " elements x %zu B\n",
            total_ms(r), aggregate_gbs(r), r->n_total, dr_dtype_size(o->dtype));
}

void dr_report_binding_table(const dr_report_t *r, FILE *f)
{
    fprintf(f, "%-5s %-20s %5s %4s %-22s %-13s %4s %-16s %-16s %7s %-16s\n", "rank", "host", "local", "gpu", "device",
            "pci bus id", "numa", "gpu cpuset", "share", "threads", "affinity");
    for (int i = 0; i < r->nranks; ++i) {
        const dr_rank_record_t *rec = &r->ranks[i];
        const dreduce_context_info_t *b = &rec->binding;
        char gpu[16] = "-", numa[16] = "-";
        if (rec->is_gpu) snprintf(gpu, sizeof gpu, "%d", b->gpu);
        if (b->numa_node >= 0) snprintf(numa, sizeof numa, "%d", b->numa_node);
        fprintf(f, "%-5d %-20.20s %5d %4s %-22.22s %-13s %4s %-16s %-16s %7d %-16s\n", rec->rank, rec->host,
                rec->local_rank, gpu, rec->is_gpu ? rec->device_name : "cpu backend",
                b->pci_bus_id[0] ? b->pci_bus_id : "-", numa, b->gpu_cpuset[0] ? b->gpu_cpuset : "-",
                b->share[0] ? b->share : "-", b->threads, b->affinity[0] ? b->affinity : "-");
    }
    for (int i = 0; i < r->nranks; ++i) {
        const dr_rank_record_t *rec = &r->ranks[i];
        if (rec->shared_gpu)
            fprintf(f, "warning: rank %d shares GPU %s with another rank on %s\n", rec->rank,
                    rec->binding.pci_bus_id, rec->host);
        if (rec->binding.affinity_outside_gpu)
            fprintf(f, "warning: rank %d runs on CPUs %s, outside its GPU's locality %s\n", rec->rank,
                    rec->binding.affinity, rec->binding.gpu_cpuset);
        if (rec->binding.note[0]) fprintf(f, "note: rank %d: %s\n", rec->rank, rec->binding.note);
    }
    fprintf(f, "\n");
}

/* ---- JSON ---- */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double x)
{
    if (isnan(x) || isinf(x)) fprintf(f, "null");
    else fprintf(f, "%.9g", x);
}

/* All the digits, for values a reader compares exactly (the reference). */
static void json_number_exact(FILE *f, double x)
{
    if (isnan(x) || isinf(x)) fprintf(f, "null");
    else fprintf(f, "%.17g", x);
}

static void json_levels(FILE *f, const dr_report_t *r, int node)
{
    level_stats_t rows[DR_REPORT_MAX_ROWS];
    int n = node_rows(r, node, rows, (int)(sizeof rows / sizeof rows[0]));
    fprintf(f, "[");
    for (int j = 0; j < n; ++j) {
        const char *name = rows[j].name;
        while (*name == ' ') ++name;
        fprintf(f, "%s{\"level\": ", j ? ", " : "");
        json_string(f, name);
        fprintf(f, ", \"ranks\": %d, \"min_ms\": ", rows[j].ranks);
        json_number(f, rows[j].min);
        fprintf(f, ", \"median_ms\": ");
        json_number(f, rows[j].median);
        fprintf(f, ", \"max_ms\": ");
        json_number(f, rows[j].max);
        fprintf(f, ", \"slowest_rank\": %d, \"gbs\": ", rows[j].slowest_rank);
        json_number(f, rows[j].gbs);
        fprintf(f, "}");
    }
    fprintf(f, "]");
}

/* A rank's host array on its GPU (null where it reduced GPU memory, a file, or ran the CPU backend). */
static void json_host(FILE *f, const dr_rank_record_t *rec)
{
    if (rec->host_path < 0 || rec->host_path >= DR_HOST_PATH_COUNT) {
        fprintf(f, "null");
        return;
    }
    const dreduce_host_rates_t *q = &rec->rates;
    fprintf(f, "{\"memory\": \"%s\", \"path\": \"%s\", \"cpu_elements\": %" PRIu64 ", \"measure_ms\": ",
            rec->host_pinned ? "pinned" : "pageable", dr_host_path_name((dr_host_path_t)rec->host_path),
            rec->host_cpu_elems);
    json_number(f, rec->measure_ms);
    fprintf(f, ", \"measured\": ");
    if (!q->measured) {
        fprintf(f, "null}");
        return;
    }
    fprintf(f, "{\"probe_bytes\": %" PRIu64 ", \"cpu_gbs\": ", q->probe_bytes);
    json_number(f, q->cpu_gbs);
    fprintf(f, ", \"gpu_gbs\": ");
    json_number(f, q->gpu_gbs);
    fprintf(f, ", \"split_gbs\": ");
    json_number(f, q->split_gbs);
    fprintf(f, ", \"split_cpu_fraction\": ");
    json_number(f, q->split_cpu_fraction);
    fprintf(f, ", \"choice\": \"%s\"}}", dr_host_path_name(q->choice));
}

static void write_json(const dr_report_t *r, FILE *f)
{
    const dr_options_t *o = r->opt;
    char result[DR_RESULT_TEXT];
    result_text(r, 0, result, sizeof result);
    fprintf(f, "{\n  \"schema\": \"dreduce-report\", \"schema_version\": %d, \"version\": \"%s\",\n",
            DR_REPORT_SCHEMA_VERSION, DR_VERSION);
    fprintf(f, "  \"config\": {\"n\": %" PRIu64 ", \"n_total\": %" PRIu64 ", \"type\": \"%s\", \"op\": \"%s\", "
               "\"acc\": \"%s\", \"acc_type\": \"%s\", \"kernel\": \"%s\", \"block\": %d, \"data\": \"%s\", "
               "\"seed\": %" PRIu64 ", \"iters\": %d, \"warmup\": %d, \"scaling\": \"%s\", \"combine\": \"%s\", "
               "\"allreduce\": %s, \"ranks\": %d, \"nodes\": %d, \"emulated_nodes\": %s, \"nan\": \"%s\", "
               "\"nans\": %.17g, \"memory\": \"%s\", \"host_path\": \"%s\"},\n",
            o->n, r->n_total, dr_dtype_name(o->dtype), dr_options_op_name(o), dr_acc_mode_name(o->acc_mode),
            dr_acc_kind_name(r->acc), dr_kernel_name(o->kernel), r->ranks[0].block, data_name(o), o->gen.seed, o->iters,
            o->warmup, o->scaling == DR_SCALING_WEAK ? "weak" : "strong",
            o->combine == DR_COMBINE_FLAT ? "flat" : "hier", o->allreduce ? "true" : "false", r->nranks, r->nnodes,
            r->emulated ? "true" : "false", dr_nan_policy_name(o->nan), o->nans, dr_memory_name(o->memory),
            dr_host_path_name(o->host_path));
    /* a distribution's arguments (null for a reduction, and where not given) */
    const dr_dist_options_t *d = &o->dist;
    fprintf(f, "  \"bins\": ");
    if (d->on && d->op == DR_DIST_HISTOGRAM) fprintf(f, "%u", d->bins);
    else fprintf(f, "null");
    fprintf(f, ", \"range\": ");
    if (d->on && d->has_range) fprintf(f, "[%.17g, %.17g]", d->range[0], d->range[1]);
    else fprintf(f, "null");
    fprintf(f, ", \"q\": ");
    if (d->on && d->op == DR_DIST_QUANTILE) {
        fprintf(f, "[");
        for (size_t i = 0; i < d->nq; ++i) fprintf(f, "%s%.17g", i ? ", " : "", d->q[i]);
        fprintf(f, "]");
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\n  \"input\": ");
    if (o->input[0]) json_string(f, o->input);
    else fprintf(f, "null");
    fprintf(f, ", \"dataset\": ");
    if (o->dataset[0]) json_string(f, o->dataset);
    else fprintf(f, "null");
    fprintf(f, ", \"combine_path\": ");
    json_string(f, r->path_text);
    fprintf(f, ", \"combine_measured_us\": ");
    if (isfinite(r->path_us[0]) && isfinite(r->path_us[1]))
        fprintf(f, "{\"device\": %.3f, \"mapped\": %.3f}", r->path_us[0], r->path_us[1]);
    else
        fprintf(f, "null");
    fprintf(f, ", \"mpi_library\": ");
    json_string(f, r->mpi_library);
    fprintf(f, ",\n  \"result\": {\"value\": ");
    json_string(f, result);
    if (o->dist.on) fprintf(f, ", \"type\": \"%s\"", is_hist(r) ? "histogram(uint64)" : "quantile(float64)");
    else fprintf(f, ", \"type\": \"%s\"", dr_acc_kind_name(dr_acc_result_kind(r->acc)));
    if (o->dist.on) {
        json_dist(r, f);
    } else if (dr_acc_kind_is_arg(r->acc)) { /* the global index of the value */
        if (has_index(r)) fprintf(f, ", \"index\": %" PRIu64, r->result.arg.index);
        else fprintf(f, ", \"index\": null");
    } else if (dr_acc_kind_is_stats(r->acc)) {
        stats_text_t t;
        stats_text(r, &t);
        fprintf(f, ", \"count\": %s, \"sum\": \"%s\", \"mean\": \"%s\", \"var_pop\": \"%s\", \"var_sample\": \"%s\", "
                   "\"m2\": \"%s\", \"min\": \"%s\", \"max\": \"%s\"",
                t.count, t.sum, t.mean, t.var_pop, t.var_sample, t.m2, t.min, t.max);
    }
    fprintf(f, ", \"nan_omitted\": %" PRIu64 "},\n", r->nan_omitted);
    fprintf(f, "  \"verification\": {\"enabled\": %s", o->verify ? "true" : "false");
    if (o->verify) {
        fprintf(f, ", \"pass\": %s, \"exact\": %s, \"expected\": ", r->check.pass ? "true" : "false",
                r->check.exact ? "true" : "false");
        json_number_exact(f, r->check.expected);
        fprintf(f, ", \"error\": ");
        json_number(f, r->check.error);
        fprintf(f, ", \"bound\": ");
        json_number(f, r->check.bound);
        fprintf(f, ", \"detail\": ");
        json_string(f, r->check.detail);
    }
    fprintf(f, ", \"deterministic\": %s},\n", r->deterministic ? "true" : "false");
    fprintf(f, "  \"total_ms\": ");
    json_number(f, total_ms(r));
    fprintf(f, ", \"aggregate_gbs\": ");
    json_number(f, aggregate_gbs(r));
    fprintf(f, ",\n  \"nodes\": [\n");
    for (int node = 0; node < r->nnodes; ++node) {
        fprintf(f, "    {\"node\": %d, \"name\": ", node);
        json_string(f, node_name_of(r, node));
        fprintf(f, ", \"levels\": ");
        json_levels(f, r, node);
        fprintf(f, "}%s\n", node + 1 < r->nnodes ? "," : "");
    }
    fprintf(f, "  ],\n  \"ranks\": [\n");
    for (int i = 0; i < r->nranks; ++i) {
        const dr_rank_record_t *rec = &r->ranks[i];
        const dreduce_context_info_t *b = &rec->binding;
        fprintf(f, "    {\"rank\": %d, \"node\": %d, \"host\": ", rec->rank, rec->node);
        json_string(f, rec->host);
        fprintf(f, ", \"local_rank\": %d, \"backend\": \"%s\", \"device\": ", rec->local_rank,
                rec->is_gpu ? "gpu" : "cpu");
        json_string(f, rec->is_gpu ? rec->device_name : "cpu");
        fprintf(f, ", \"gpu\": %d, \"pci_bus_id\": ", rec->is_gpu ? b->gpu : -1);
        json_string(f, b->pci_bus_id);
        fprintf(f, ", \"numa_node\": %d, \"gpu_cpuset\": ", b->numa_node);
        json_string(f, b->gpu_cpuset);
        fprintf(f, ", \"share\": ");
        json_string(f, b->share);
        fprintf(f, ", \"threads\": %d, \"affinity\": ", b->threads);
        json_string(f, b->affinity);
        fprintf(f, ", \"bound_cpu\": %s, \"widened\": %s, \"bound_mem\": %s, \"shared_gpu\": %s, "
                   "\"affinity_outside_gpu\": %s, \"binding_note\": ",
                b->bound_cpu ? "true" : "false", b->widened ? "true" : "false", b->bound_mem ? "true" : "false",
                rec->shared_gpu ? "true" : "false", b->affinity_outside_gpu ? "true" : "false");
        json_string(f, b->note);
        fprintf(f, ",\n     \"first\": %" PRIu64 ", \"count\": %" PRIu64 ", \"nan_omitted\": %" PRIu64
                   ", \"generate_ms\": ", rec->first, rec->count, rec->nan_omitted);
        json_number(f, rec->generate_ms);
        fprintf(f, ", \"pass_ms\": [");
        for (int p = 0; p < rec->passes; ++p) {
            fprintf(f, "%s", p ? ", " : "");
            json_number(f, rec->pass_ms[p]);
        }
        fprintf(f, "], \"dist_local_ms\": [");
        for (int p = 0; p < rec->dist_passes; ++p) {
            fprintf(f, "%s", p ? ", " : "");
            json_number(f, rec->dist_local_ms[p]);
        }
        fprintf(f, "], \"dist_combine_ms\": [");
        for (int p = 0; p < rec->dist_passes; ++p) {
            fprintf(f, "%s", p ? ", " : "");
            json_number(f, rec->dist_combine_ms[p]);
        }
        fprintf(f, "], \"levels_ms\": {");
        for (int l = 0; l < DR_LEVEL_COUNT; ++l) {
            fprintf(f, "%s\"%s\": ", l ? ", " : "", dr_level_name((dr_level_t)l));
            json_number(f, rec->level_ms[l]);
        }
        fprintf(f, "},\n     \"host_array\": ");
        json_host(f, rec);
        fprintf(f, "}%s\n", i + 1 < r->nranks ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
}

/* ---- CSV: one row per node and level ---- */
static void write_csv(const dr_report_t *r, FILE *f, int header)
{
    const dr_options_t *o = r->opt;
    char result[DR_RESULT_TEXT], extra[320] = ",,,,,,,"; /* index,count,sum,mean,var_pop,var_sample,min,max */
    result_text(r, 0, result, sizeof result);
    if (o->dist.on) {
        snprintf(extra, sizeof extra, ",%" PRIu64 ",,,,,,", r->dist_info.count);
    } else if (dr_acc_kind_is_arg(r->acc) && has_index(r)) {
        snprintf(extra, sizeof extra, "%" PRIu64 ",,,,,,,", r->result.arg.index);
    } else if (dr_acc_kind_is_stats(r->acc)) {
        stats_text_t t;
        stats_text(r, &t);
        snprintf(extra, sizeof extra, ",%s,%s,%s,%s,%s,%s,%s", t.count, t.sum, t.mean, t.var_pop, t.var_sample, t.min,
                 t.max);
    }
    if (header)
        fprintf(f, "schema_version,node,node_name,emulated,level,ranks,min_ms,median_ms,max_ms,slowest_rank,gbs,"
                   "n_total,type,op,acc_type,kernel,block,nranks,nnodes,scaling,combine,path,total_ms,aggregate_gbs,"
                   "result,verified,index,count,sum,mean,var_pop,var_sample,min,max,nan,passes,bins,lo,hi,below,"
                   "above,counts,edges,q,values,lower,upper,lower_rank,upper_rank,gamma,nan_policy,nan_omitted,memory,"
                   "host_path\n");
    level_stats_t rows[DR_REPORT_MAX_ROWS];
    for (int node = 0; node < r->nnodes; ++node) {
        int n = node_rows(r, node, rows, (int)(sizeof rows / sizeof rows[0]));
        for (int j = 0; j < n; ++j) {
            const char *name = rows[j].name;
            while (*name == ' ') ++name;
            fprintf(f, "%d,%d,%s,%d,%s,%d,%.6f,%.6f,%.6f,%d,%.3f,%" PRIu64 ",%s,%s,%s,%s,%d,%d,%d,%s,%s,\"%s\",%.6f,%.3f,"
                       "%s,%s,%s",
                    DR_REPORT_SCHEMA_VERSION, node, node_name_of(r, node), r->emulated, name, rows[j].ranks,
                    rows[j].min, rows[j].median, rows[j].max, rows[j].slowest_rank, rows[j].gbs, r->n_total,
                    dr_dtype_name(o->dtype), dr_options_op_name(o), dr_acc_kind_name(r->acc), dr_kernel_name(o->kernel),
                    r->ranks[0].block, r->nranks, r->nnodes, o->scaling == DR_SCALING_WEAK ? "weak" : "strong",
                    o->combine == DR_COMBINE_FLAT ? "flat" : "hier", r->path_text, total_ms(r), aggregate_gbs(r),
                    result, !o->verify ? "off" : r->check.pass ? "pass" : "fail", extra);
            csv_dist(r, f, node == 0 && strcmp(name, "total") == 0);
            fprintf(f, ",%s,%" PRIu64 ",%s,%s\n", dr_nan_policy_name(o->nan), r->nan_omitted,
                    dr_memory_name(o->memory), dr_host_path_name(o->host_path));
        }
    }
}

int dr_report_write(const dr_report_t *r, FILE *f)
{
    switch (r->opt->format) {
    case DR_FORMAT_JSON: write_json(r, f); break;
    case DR_FORMAT_CSV: {
        long pos = ftell(f); /* appending to an existing CSV file: no second header */
        write_csv(r, f, pos <= 0);
        break;
    }
    default:
        dr_report_binding_table(r, f);
        write_table(r, f);
        break;
    }
    return ferror(f) ? -1 : 0;
}

typedef struct {
    const char *host;
    const char *bus; /* "" when the bus id is unknown */
    int gpu;
    int rank;
} shared_key_t;

static int cmp_key(const void *pa, const void *pb)
{
    const shared_key_t *a = pa, *b = pb;
    int c = strncmp(a->host, b->host, 64);
    if (c)
        return c;
    c = strncmp(a->bus, b->bus, sizeof ((dreduce_context_info_t *)0)->pci_bus_id);
    if (c)
        return c;
    return (a->gpu > b->gpu) - (a->gpu < b->gpu);
}

void dr_report_mark_shared(const dreduce_context_info_t *b, int nranks, int *shared)
{
    if (!shared || nranks <= 0)
        return;
    memset(shared, 0, (size_t)nranks * sizeof *shared);
    if (!b)
        return;
    shared_key_t *k = malloc((size_t)nranks * sizeof *k);
    int n = 0;
    for (int i = 0; i < nranks; i++) {
        if (b[i].gpu < 0 && b[i].pci_bus_id[0] == '\0')
            continue; /* CPU backend */
        shared_key_t key = {b[i].host, b[i].pci_bus_id, b[i].pci_bus_id[0] ? 0 : b[i].gpu, i};
        if (k) {
            k[n++] = key;
            continue;
        }
        for (int j = 0; j < i; j++) { /* no memory for the sort: compare pairwise */
            if (b[j].gpu < 0 && b[j].pci_bus_id[0] == '\0')
                continue;
            shared_key_t other = {b[j].host, b[j].pci_bus_id, b[j].pci_bus_id[0] ? 0 : b[j].gpu, j};
            if (cmp_key(&key, &other) == 0)
                shared[i] = shared[j] = 1;
        }
    }
    if (!k)
        return;
    /* Sorting groups equal (host, GPU) keys so a table of many ranks is not compared pairwise. */
    qsort(k, (size_t)n, sizeof *k, cmp_key);
    for (int i = 1; i < n; i++)
        if (cmp_key(&k[i - 1], &k[i]) == 0)
            shared[k[i - 1].rank] = shared[k[i].rank] = 1;
    free(k);
}
