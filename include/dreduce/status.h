/* Status codes of every dreduce call, and the exit codes of the program (the same numbers). */
#ifndef DREDUCE_STATUS_CODES_H
#define DREDUCE_STATUS_CODES_H

typedef enum {
    DR_OK = 0,
    DR_ERR_USAGE = 2,   /* bad option, argument or value: nothing ran */
    DR_ERR_RUNTIME = 3, /* CUDA, MPI, allocation, I/O or system failure */
    DR_ERR_VERIFY = 4,  /* the result did not match the reference */
    DR_SKIP = 77        /* cannot run here (no GPU): the CTest skip code */
} dr_status_t;

#endif
