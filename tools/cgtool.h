/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What cgtop and cgroup-exporter share: the options that choose what to
 * count (-e/--events, -r/--regex, --subtree, --backend,
 * --rstat.max-cgroups) and how much they say (--log.level), opening the
 * libcgcount session, keeping its cgroups in step with the cgroup tree, and
 * the signals that stop them.
 */
#ifndef TOOLS_CGTOOL_H
#define TOOLS_CGTOOL_H

#include <signal.h>
#include <stddef.h>

#include "cgcount.h"
#include "cgroupfs.h"
#include "cli.h"

/* getopt_long codes of the long-only options the tools share */
enum {
	CGTOOL_OPT_BACKEND = 0x100,
	CGTOOL_OPT_VERSION,
	CGTOOL_OPT_SUBTREE,
	CGTOOL_OPT_RSTAT_MAX_CGROUPS,
	CGTOOL_OPT_CGROUPFS,
	CGTOOL_OPT_LOG_LEVEL,
	CGTOOL_OPT_FIRST_PRIVATE,	/* a tool's own long-only options start here */
};

/* The shared entries of a getopt_long table (help: 'h', events 'e', regex 'r') */
#define CGTOOL_LONG_OPTIONS						\
	{ "events", required_argument, NULL, 'e' },			\
	{ "regex", required_argument, NULL, 'r' },			\
	{ "subtree", required_argument, NULL, CGTOOL_OPT_SUBTREE },	\
	{ "backend", required_argument, NULL, CGTOOL_OPT_BACKEND },	\
	{ "rstat.max-cgroups", required_argument, NULL, CGTOOL_OPT_RSTAT_MAX_CGROUPS }, \
	{ "log.level", required_argument, NULL, CGTOOL_OPT_LOG_LEVEL },	\
	{ CGROUPFS_OPTION, required_argument, NULL, CGTOOL_OPT_CGROUPFS },	\
	{ "help", no_argument, NULL, 'h' },				\
	{ "version", no_argument, NULL, CGTOOL_OPT_VERSION }

/* Usage lines of the shared options, for each tool's --help (a literal) */
#define CGTOOL_USAGE_OPTIONS(default_events)				\
	"  -e, --events=LIST    comma-separated perf events (default\n"	\
	"                       " default_events ")\n"			\
	"  -r, --regex=REGEX    count the cgroups whose path (\"/a/b\") matches\n" \
	"                       (POSIX extended, unanchored; default: every cgroup)\n" \
	"      --subtree=PATH   count PATH and every cgroup below it, including\n" \
	"                       those created later (counted from their creation\n" \
	"                       with shared and rstat); instead of -r\n"	\
	"      --backend=NAME   auto (default), events, shared or rstat\n"	\
	"      --rstat.max-cgroups=N\n"					\
	"                       rstat: the cgroups its BPF maps hold at once\n" \
	"                       (default 32768); the counts of those that find\n" \
	"                       no room go to their nearest ancestor that has one\n" \
	"      --log.level=LEVEL\n"					\
	"                       the least severe messages written to stderr:\n" \
	"                       debug, info (default), warn or error\n"	\
	CGROUPFS_USAGE							\
	"                       (auto then takes events where only paths reach\n" \
	"                       its cgroups: cgroup-exporter(1), KUBERNETES)\n" \
	"  -h, --help           this text\n"				\
	"      --version        the version\n"

struct cgtool {
	const char *prog;
	const char *events;
	const char *regex;
	const char *subtree;		/* --subtree, else NULL */
	const char *cgroupfs;		/* --path.cgroupfs, else NULL */
	int regex_given;
	struct cgcount_opts opts;
};

/*
 * Messages on stderr, "PROG: message", those below --log.level left out
 * (node_exporter's levels): error (a failure, and libcgcount's reason for
 * it), warn, info (what the tool does: its backend and why), debug
 * (libcgcount's details).
 */
enum cgtool_log_level {
	CGTOOL_LOG_DEBUG,
	CGTOOL_LOG_INFO,
	CGTOOL_LOG_WARN,
	CGTOOL_LOG_ERROR,
};

void cgtool_log(enum cgtool_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The tool's defaults: every cgroup, backend auto, --log.level=info. */
void cgtool_init(struct cgtool *t, const char *prog, const char *default_events);

/*
 * Handle one option of the shared set.  Returns 1 when handled, 0 when the
 * option is not a shared one, -1 after printing a usage error.  --help and
 * --version are left to the tool (its usage text), as is '?'.
 */
int cgtool_parse_option(struct cgtool *t, int opt, const char *arg);

/* "1.5" -> 1.5 seconds, at least @min; -1 on a malformed or smaller value */
int cgtool_parse_seconds(const char *arg, double min, double *seconds);
/* a whole number in [min, max]; -1 otherwise */
int cgtool_parse_long(const char *arg, long min, long max, long *value);

/*
 * After the options: -1 after a usage error (-r with --subtree), else 0.
 */
int cgtool_check_options(const struct cgtool *t);

/*
 * Open the session and add the cgroups that match; NULL after a message.
 * With --path.cgroupfs it first checks DIR and may enter the host's cgroup
 * namespace (cgroupfs.h): call it before any thread is created.  Where only
 * paths reach DIR's cgroups, auto becomes events.
 */
struct cgcount *cgtool_open(struct cgtool *t);
/*
 * The exit status after cgtool_open() failed: CLI_EXIT_USAGE (2) when
 * libcgcount refused what the command line gave it (EINVAL: an unknown or
 * malformed event, a bad regex), else 1 (no permission, no such kernel
 * support, out of file descriptors, ...).
 */
int cgtool_open_failure_status(void);

/*
 * Keep the session in step with the tree: stop counting the cgroups of
 * @last that were removed, including those removed and made again under
 * the same name (another cgroup: another id), add those that appeared and
 * match (a subtree's new cgroups are added by the library's reads).
 */
int cgtool_sync_cgroups(struct cgcount *s, const struct cgtool *t,
			const struct cgcount_reading *last, size_t nr);

/*
 * A cgroup path as the tools show it, in a new string (NULL without memory):
 * names are chosen by whoever may create cgroups, so every byte that is not
 * printable UTF-8 (invalid sequences, C0 and C1 controls, DEL) is written
 * \xHH, and a backslash as \\, which keeps the text unambiguous
 * (systemd-escape's notation). Valid UTF-8 is kept as it is.
 */
char *cgtool_printable_path(const char *path);

/* An event that counts nanoseconds (cpu-clock, task-clock, with modifiers) */
int cgtool_is_time_event(const char *event);

/* Set by SIGINT and SIGTERM (installed without SA_RESTART); SIGPIPE ignored */
extern volatile sig_atomic_t cgtool_stop;
void cgtool_handle_signals(void);

#endif /* TOOLS_CGTOOL_H */
