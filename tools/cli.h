/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command-line conventions every tool of tools/ follows (GNU coding
 * standards, as coreutils, perf and the Prometheus exporters do):
 *
 *   --help     the usage on stdout, exit status 0
 *   --version  "PROG (linux-multicgroup) VERSION" on stdout, exit status 0
 *   a usage error (unknown option, bad value, missing argument): one line
 *              saying what is wrong and a hint on stderr, exit status 2
 *   a run-time failure: a message on stderr, exit status 1
 */
#ifndef TOOLS_CLI_H
#define TOOLS_CLI_H

#include <stdarg.h>
#include <stdio.h>

#define CLI_VERSION "0.4.0"	/* the project's: debian/changelog's (tests/tools/cli.sh) */
#define CLI_EXIT_USAGE 2

static inline int cli_version(const char *prog)
{
	printf("%s (linux-multicgroup) %s\n", prog, CLI_VERSION);
	return 0;
}

/* After getopt's own message ("invalid option"): just the hint. */
static inline int cli_usage_hint(const char *prog)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return CLI_EXIT_USAGE;
}

static inline int cli_usage_error(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline int cli_usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return cli_usage_hint(prog);
}

#endif /* TOOLS_CLI_H */
