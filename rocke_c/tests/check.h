/* check.h: the C unit tests' one assertion macro; a test program returns check_failures != 0. */
#ifndef ROCKE_CHECK_H
#define ROCKE_CHECK_H
#include <stdio.h>

static int check_failures;

#define CHECK(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            check_failures++; \
        } \
    } while (0)

#endif
