/* The library's version at run time: dreduce/version.h's, generated from CMake's project version. */
#include "dreduce.h"

const char *dreduce_version(void) { return DREDUCE_VERSION_STRING; }
