/* Status codes and the check macros every host file uses. A failed check prints one line naming the call, the
 * error, the host and the source position, and returns a status up the stack; only main() turns a status into the
 * process's exit code (STYLE.md, after nccl-tests). */
#ifndef DREDUCE_STATUS_H
#define DREDUCE_STATUS_H

#include <stdio.h>

#include "dreduce/status.h"

/* Print "dreduce: error: <message>" (prefixed by the rank when known) on stderr. */
void dr_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, "warning:". */
void dr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Set the rank prefix used by dr_error/dr_warn (-1: none) and this host's name. */
void dr_log_set_rank(int rank, int nranks, const char *host);
/* How messages name a setting: as the library's field ("cfg.timeout", the default) or, once the dreduce program
 * has called dr_log_use_option_names(1), as its option ("--timeout"). DR_NAME("cfg.timeout", "--timeout") picks. */
void dr_log_use_option_names(int yes);
const char *dr_log_name(const char *field, const char *option);
#define DR_NAME(field, option) dr_log_name(field, option)

#define DR_CHECK(expr)                                                                                         \
    do {                                                                                                       \
        dr_status_t dr_check_status_ = (expr);                                                                 \
        if (dr_check_status_ != DR_OK) return dr_check_status_;                                                \
    } while (0)

#endif
