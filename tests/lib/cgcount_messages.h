/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the tests of libcgcount: the library's last warning, caught by its
 * print callback (installed before main), for a test's failure message and
 * for the tests that check what the library says. Header only: the tests
 * that include it link libcgcount, libcgtest does not.
 */
#ifndef CGCOUNT_MESSAGES_H
#define CGCOUNT_MESSAGES_H

#include <stdarg.h>
#include <stdio.h>

#include "cgcount.h"

static char last_msg[1024];

static int catch_print(enum cgcount_print_level level, const char *fmt, va_list ap)
{
	if (level == CGCOUNT_WARN)
		vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	return 0;
}

__attribute__((constructor)) static void catch_messages(void)
{
	cgcount_set_print(catch_print);
}

#endif
