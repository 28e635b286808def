/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What libcgrstat's own files share and its users do not see: the
 * library's printing, through the function cgrstat_set_print() chose.
 */
#ifndef CGRSTAT_INT_H
#define CGRSTAT_INT_H

#include "cgrstat.h"

void cgrstat__print(enum cgrstat_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* CGRSTAT_INT_H */
