/* Shared by the libFuzzer targets of tests/fuzz: invariant checks that abort (libFuzzer then saves the input as a
 * crash artifact) and the checks every parser's error message must pass. */
#ifndef DREDUCE_FUZZ_COMMON_H
#define DREDUCE_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Not assert(): the fuzz tree may be built with NDEBUG. */
#define FUZZ_CHECK(cond, ...)                                                                                  \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d): ", #cond, __FILE__, __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                                                      \
            fputc('\n', stderr);                                                                               \
            abort();                                                                                           \
        }                                                                                                      \
    } while (0)

/* The input as a NUL-terminated string in a block of its own size, so that ASan sees any read past its end.
 * Bytes after an embedded NUL are dropped, as they would be in argv. Free with free(). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t n = nul ? (size_t)(nul - data) : size;
    char *s = malloc(n + 1);
    if (!s) abort();
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

/* strdup (not in C11). */
static inline char *fuzz_strdup(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (!d) abort();
    return memcpy(d, s, n);
}

/* An error message from a parser: NUL-terminated within its buffer, not empty, and one line (dreduce prints it as
 * the one line "dreduce: error: <message>"; the cli tests require exactly one line on stderr). `what` and `input`
 * name the call in the report. */
static inline void fuzz_check_message(const char *err, size_t errlen, const char *what, const char *input)
{
    FUZZ_CHECK(memchr(err, '\0', errlen) != NULL, "%s('%s'): error message not NUL-terminated in %zu bytes", what,
               input, errlen);
    FUZZ_CHECK(err[0] != '\0', "%s('%s') failed with an empty message", what, input);
    FUZZ_CHECK(strchr(err, '\n') == NULL,
               "%s('%s'): error message is not one line: '%s'", what, input, err);
}

/* The same message written into a buffer of `small` bytes (1 <= small): NUL-terminated, the full message cut to
 * small - 1 bytes (snprintf semantics). */
static inline void fuzz_check_truncated(const char *full, const char *cut, size_t small, const char *what,
                                        const char *input)
{
    FUZZ_CHECK(memchr(cut, '\0', small) != NULL, "%s('%s'): message not NUL-terminated in a %zu-byte buffer", what,
               input, small);
    size_t want = strlen(full) < small - 1 ? strlen(full) : small - 1;
    FUZZ_CHECK(strlen(cut) == want && memcmp(cut, full, want) == 0,
               "%s('%s'): %zu-byte buffer holds '%s', expected the first %zu bytes of '%s'", what, input, small, cut,
               want, full);
}

#endif
