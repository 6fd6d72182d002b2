/* Fault injection, for the fault tests alone, so they can make one rank misbehave for real. Compiled in only where
 * DR_FAULT_INJECTION is defined: the test build of the program and library (tests/fault/, target dreduce-faults);
 * in libdreduce and the dreduce program every dr_fault() is the constant 0. There the environment variable
 * DREDUCE_FAULT holds comma-separated KIND@RANK items:
 *   exit@R     rank R exits (status 9) right after its local reduction, as a crashed rank would
 *   hang@R     rank R stops before the combine and never returns (the others' watchdog must end the job)
 *   corrupt@R  rank R's partial gets a high bit flipped after its local reduction (verification must name R)
 *   alloc@R    rank R's shard allocation fails (the error must name rank, host and bytes)
 * Documented in docs/reliability.md. */
#ifndef DREDUCE_FAULT_H
#define DREDUCE_FAULT_H

#ifdef DR_FAULT_INJECTION
/* 1 if DREDUCE_FAULT asks for `kind` on `rank` (tests/fault/fault.c). */
int dr_fault(const char *kind, int rank);
#else
#define dr_fault(kind, rank) ((void)(rank), 0)
#endif

#endif
