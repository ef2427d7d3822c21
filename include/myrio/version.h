/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's version: the one place it is written (CMakeLists.txt reads it from here).
 *
 * ABI policy: the shared library's SONAME is libmyrio.so.MAJOR. Within one MAJOR, a newer
 * library runs every program built against an older one: functions and flags are only
 * added, public structs only grow at their end where the library allocates them, and
 * struct myrio_pkt and the *_conf structs keep their layout. Anything else (a removed or
 * changed function, a changed layout of a struct the application allocates or reads in
 * place) raises MAJOR. Before 1.0, MINOR counts as MAJOR for this rule. */
#ifndef MYRIO_VERSION_H
#define MYRIO_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define MYRIO_VERSION_MAJOR 0
#define MYRIO_VERSION_MINOR 6
#define MYRIO_VERSION_PATCH 0
/* One number that compares: MYRIO_VERSION >= MYRIO_VERSION_NUM(0, 2, 0). */
#define MYRIO_VERSION_NUM(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define MYRIO_VERSION                                                                      \
	MYRIO_VERSION_NUM(MYRIO_VERSION_MAJOR, MYRIO_VERSION_MINOR, MYRIO_VERSION_PATCH)

/* The version of the library the program runs with, as "MAJOR.MINOR.PATCH"; compare with
 * the macros above, which give the version it was built against. */
const char *myrio_version(void);

#ifdef __cplusplus
}
#endif
#endif
