/* Test-only fault injection, so the fault tests can make one rank misbehave for real. The environment variable
 * DREDUCE_FAULT holds comma-separated KIND@RANK items:
 *   exit@R     rank R exits (status 9) right after its local reduction, as a crashed rank would
 *   hang@R     rank R stops before the combine and never returns (the others' watchdog must end the job)
 *   corrupt@R  rank R's partial gets a high bit flipped after its local reduction (verification must name R)
 *   alloc@R    rank R's shard allocation fails (the error must name rank, host and bytes)
 * Unset in normal use; documented in docs/reliability.md. */
#ifndef DREDUCE_FAULT_H
#define DREDUCE_FAULT_H

/* 1 if DREDUCE_FAULT asks for `kind` on `rank`. */
int dr_fault(const char *kind, int rank);

#endif
