/* SPDX-License-Identifier: BSD-3-Clause */
/* Where libmyrio's messages go. Errors are returned as negative errno values; the message
 * logged next to them says what went wrong and what to do about it. */
#ifndef MYRIO_LOG_H
#define MYRIO_LOG_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum myrio_log_level { MYRIO_LOG_ERR = 0, MYRIO_LOG_WARN = 1, MYRIO_LOG_INFO = 2, MYRIO_LOG_DEBUG = 3 };

typedef void (*myrio_log_fn)(enum myrio_log_level level, const char *msg, void *arg);

/* Default: levels up to WARN (or $MYRIO_LOG=0..3) to stderr, prefixed "myrio: ". */
void myrio_log_set(myrio_log_fn fn, void *arg, enum myrio_log_level max_level);

#ifdef __cplusplus
}
#endif
#endif
