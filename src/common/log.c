/* One-line diagnostics with the rank and host, so a message from a 512-rank job says where it came from. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "status.h"

static int log_rank = -1;
static int log_nranks = 1;
static char log_host[64];
static int log_option_names; /* 1 in the dreduce program: settings are its options */

void dr_log_set_rank(int rank, int nranks, const char *host)
{
    log_rank = rank;
    log_nranks = nranks;
    snprintf(log_host, sizeof log_host, "%s", host ? host : "");
}

void dr_log_use_option_names(int yes) { log_option_names = yes; }

const char *dr_log_name(const char *field, const char *option) { return log_option_names ? option : field; }

static void vlog(const char *kind, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (log_rank >= 0 && log_nranks > 1)
        fprintf(stderr, "dreduce: %s: rank %d (%s): %s\n", kind, log_rank, log_host, msg);
    else
        fprintf(stderr, "dreduce: %s: %s\n", kind, msg);
    fflush(stderr);
}

void dr_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("error", fmt, ap);
    va_end(ap);
}

void dr_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("warning", fmt, ap);
    va_end(ap);
}
