#include "fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dr_fault(const char *kind, int rank)
{
    const char *spec = getenv("DREDUCE_FAULT");
    if (!spec || !*spec) return 0;
    char want[64];
    snprintf(want, sizeof want, "%s@%d", kind, rank);
    const size_t len = strlen(want);
    for (const char *p = spec; (p = strstr(p, want)) != NULL; p += len)
        if ((p == spec || p[-1] == ',') && (p[len] == '\0' || p[len] == ',')) return 1;
    return 0;
}
