/* SPDX-License-Identifier: BSD-3-Clause */
#include "myrio/version.h"

#define STR_(x) #x
#define STR(x) STR_(x)

const char *myrio_version(void)
{
	return STR(MYRIO_VERSION_MAJOR) "." STR(MYRIO_VERSION_MINOR) "." STR(MYRIO_VERSION_PATCH);
}
