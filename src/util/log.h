/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MYRIO_UTIL_LOG_H
#define MYRIO_UTIL_LOG_H

#include "myrio/log.h"

void myrio_log(enum myrio_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...) myrio_log(MYRIO_LOG_ERR, __VA_ARGS__)
#define log_warn(...) myrio_log(MYRIO_LOG_WARN, __VA_ARGS__)
#define log_info(...) myrio_log(MYRIO_LOG_INFO, __VA_ARGS__)
#define log_debug(...) myrio_log(MYRIO_LOG_DEBUG, __VA_ARGS__)

#endif
