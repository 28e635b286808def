// SPDX-License-Identifier: GPL-2.0
/*
 * cgtop: the busiest cgroups by perf events, refreshed every interval, with
 * top's and systemd-cgtop's conventions:
 *
 *   cgtop [-b] [-n ITERATIONS] [-d SECONDS] [-e EVENTS] [-s KEY] [-r REGEX]
 *         [--backend NAME] [--rows N]
 *
 * Each event is a column: time events (cpu-clock, task-clock) as the share
 * of one cpu, the others per second; with cycles and instructions an IPC
 * column.  Interactive (a terminal, no -b): the table fits the terminal;
 * q quits, < and > move the sort column, p sorts by path, r reverses, space
 * refreshes, h or ? shows the keys.  As systemd-cgtop, without a terminal on
 * stdout it prints one table (or -n N) and exits, and it stops quietly when
 * its reader goes away (EPIPE).  `cgtop --help` and cgtop(1) say more.  Uses libcgcount
 * (lib/cgcount/cgcount.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cgtool.h"

#define PROG "cgtop"
#define DEFAULT_EVENTS "cpu-clock"
#define VALUE_WIDTH 11	/* at least; a column is as wide as its name */
#define PATH_MIN_WIDTH 12

enum { OPT_ROWS = CGTOOL_OPT_FIRST_PRIVATE };

/* A column: an event, or IPC derived from two of them. */
struct column {
	const char *name;	/* the event's, or "ipc" */
	int width;
	int event;		/* index, or -1 for IPC */
	int is_time;
};

struct options {
	struct cgtool tool;
	const char *sort;	/* column name or "path" */
	long rows;		/* 0: fit the terminal (interactive), all (batch) */
	double delay;
	long iterations;	/* 0: until q or a signal (on a terminal) */
	int batch;
};

/* One cgroup's counts over the interval, per column. */
struct row {
	const char *path;
	double *values;
};

struct snapshot {
	struct cgcount_reading *r;
	size_t nr;
	double when;		/* CLOCK_MONOTONIC seconds */
};

/* Everything one screen shows; kept to redraw after a key. */
struct screen {
	const struct options *o;
	struct cgcount *s;
	struct column *cols;
	int nr_cols;
	int values_width;	/* the columns before the path, with their spaces */
	int sort_col;		/* -1: by path */
	int reverse;
	struct row *rows;
	double *values;		/* nr_rows x nr_cols */
	size_t nr_rows;
	double secs;
	long iteration;
	int keys;		/* read keys from stdin (a terminal) */
	int help;		/* the keys' help is shown instead of the table */
	int write_errno;	/* writing stdout failed (EPIPE: the reader left) */
};

/* The keys of the interactive view, for its help screen */
static const char *const key_help[] = {
	"q          quit",
	"< >        sort by the column left or right of the current one",
	"p          sort by path",
	"r          reverse the order",
	"space      refresh now",
	"h ?        this help",
};

static const char *usage_text =
	"usage: " PROG " [OPTION]...\n"
	"Show the cgroups that counted the most perf events, every interval.\n"
	"\n"
	"  -b, --batch          plain tables one after the other (no terminal control,\n"
	"                       no keys), for scripts and logs; also when stdout is\n"
	"                       not a terminal\n"
	"  -n, --iterations=N   stop after N refreshes (default: until q or SIGINT;\n"
	"                       1 when stdout is not a terminal)\n"
	"  -d, --delay=SECONDS  the refresh interval (default 1)\n"
	"  -s, --sort=KEY       sort by the column KEY: an event name, ipc, or path\n"
	"                       (default: the first event)\n"
	"      --rows=N         show at most N cgroups (default: what fits the\n"
	"                       terminal; every cgroup in batch mode)\n"
	CGTOOL_USAGE_OPTIONS(DEFAULT_EVENTS)
	"\n"
	"Columns: time events (cpu-clock, task-clock) in % of one cpu, other events\n"
	"per second, IPC when cycles and instructions are both counted.  Counts are\n"
	"hierarchical: a cgroup includes its descendants (-r '^/a/.+' for the ones\n"
	"below /a).  Keys: q quit, < > move the sort column, p sort by path,\n"
	"r reverse the order, space refresh now, h or ? this help.\n";

static volatile sig_atomic_t resized;

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

static int parse_private(struct options *o, int c, const char *arg)
{
	switch (c) {
	case 'b':
		o->batch = 1;
		return 0;
	case 'n':
		if (cgtool_parse_long(arg, 1, 1000000000, &o->iterations))
			return cli_usage_error(PROG, "-n: not a positive number: '%s'", arg);
		return 0;
	case 'd':
		if (cgtool_parse_seconds(arg, 0.01, &o->delay))
			return cli_usage_error(PROG, "-d: not a number of seconds >= 0.01: '%s'",
					       arg);
		return 0;
	case 's':
		o->sort = arg;
		return 0;
	case OPT_ROWS:
		if (cgtool_parse_long(arg, 1, 1000000000, &o->rows))
			return cli_usage_error(PROG, "--rows: not a positive number: '%s'", arg);
		return 0;
	case 'h':
		fputs(usage_text, stdout);
		exit(0);
	case CGTOOL_OPT_VERSION:
		exit(cli_version(PROG));
	}
	return cli_usage_hint(PROG);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		CGTOOL_LONG_OPTIONS,
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "delay", required_argument, NULL, 'd' },
		{ "sort", required_argument, NULL, 's' },
		{ "rows", required_argument, NULL, OPT_ROWS },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	*o = (struct options){ .delay = 1 };
	cgtool_init(&o->tool, PROG, DEFAULT_EVENTS);
	while ((c = getopt_long(argc, argv, "bn:d:s:e:r:h", longopts, NULL)) != -1) {
		r = cgtool_parse_option(&o->tool, c, optarg);
		if (!r)
			r = parse_private(o, c, optarg) ? -1 : 1;
		if (r < 0)
			return CLI_EXIT_USAGE;
	}
	if (optind < argc)
		return cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
	if (cgtool_check_options(&o->tool))
		return CLI_EXIT_USAGE;
	if (!isatty(STDOUT_FILENO)) {	/* systemd-cgtop's: one table for a pipe or file */
		o->batch = 1;
		if (!o->iterations)
			o->iterations = 1;
	}
	return 0;
}

static int event_index(struct cgcount *s, const char *name)
{
	size_t len = strlen(name);
	int e;

	for (e = 0; e < cgcount_nr_events(s); e++) {
		const char *ev = cgcount_event_name(s, e);

		if (!strncmp(ev, name, len) && (ev[len] == '\0' || ev[len] == ':'))
			return e;
	}
	return -1;
}

/* One column per event, and IPC when both cycles and instructions count. */
static int make_columns(struct screen *sc)
{
	int n = cgcount_nr_events(sc->s), e;

	sc->cols = calloc(n + 1, sizeof(*sc->cols));
	if (!sc->cols)
		return -1;
	for (e = 0; e < n; e++) {
		const char *ev = cgcount_event_name(sc->s, e);

		sc->cols[e].event = e;
		sc->cols[e].is_time = cgtool_is_time_event(ev);
		sc->cols[e].name = ev;
	}
	sc->nr_cols = n;
	if (event_index(sc->s, "cycles") >= 0 && event_index(sc->s, "instructions") >= 0) {
		sc->cols[n].event = -1;
		sc->cols[n].name = "ipc";
		sc->nr_cols++;
	}
	for (e = 0; e < sc->nr_cols; e++) {
		sc->cols[e].width = strlen(sc->cols[e].name);
		if (sc->cols[e].width < VALUE_WIDTH)
			sc->cols[e].width = VALUE_WIDTH;
		sc->values_width += sc->cols[e].width + 1;
	}
	return 0;
}

static int find_sort_column(struct screen *sc, const char *key)
{
	int c;

	if (!key)
		return 0;
	if (!strcmp(key, "path") || !strcmp(key, "cgroup"))
		return -1;
	for (c = 0; c < sc->nr_cols; c++)
		if (!strcmp(sc->cols[c].name, key))
			return c;
	fprintf(stderr, PROG ": --sort: no column '%s' (the events, ipc when cycles and "
		"instructions are counted, or path)\n", key);
	return -2;
}

static const struct cgcount_reading *find_reading(const struct snapshot *snap, uint64_t id)
{
	size_t lo = 0, hi = snap->nr;

	while (lo < hi) {	/* readings are sorted by id */
		size_t mid = lo + (hi - lo) / 2;

		if (snap->r[mid].cgroup_id == id)
			return &snap->r[mid];
		if (snap->r[mid].cgroup_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static double event_delta(const struct cgcount_reading *now,
			  const struct cgcount_reading *before, int e)
{
	double d = cgcount_scaled(&now->values[e]) -
		   (before ? cgcount_scaled(&before->values[e]) : 0);

	return d > 0 ? d : 0;
}

static void fill_row(struct screen *sc, struct row *row, const struct cgcount_reading *now,
		     const struct cgcount_reading *before)
{
	int c, cyc, ins;

	row->path = now->path;
	for (c = 0; c < sc->nr_cols; c++) {
		if (sc->cols[c].event >= 0) {
			row->values[c] = event_delta(now, before, sc->cols[c].event);
			continue;
		}
		cyc = event_index(sc->s, "cycles");
		ins = event_index(sc->s, "instructions");
		row->values[c] = event_delta(now, before, cyc) > 0 ?
			event_delta(now, before, ins) / event_delta(now, before, cyc) : 0;
	}
}

/* The rows of the interval between two snapshots. */
static int make_rows(struct screen *sc, const struct snapshot *prev,
		     const struct snapshot *now)
{
	size_t i;

	free(sc->rows);
	free(sc->values);
	sc->nr_rows = now->nr;
	sc->rows = calloc(now->nr + 1, sizeof(*sc->rows));
	sc->values = calloc((now->nr + 1) * sc->nr_cols, sizeof(*sc->values));
	if (!sc->rows || !sc->values)
		return -1;
	for (i = 0; i < now->nr; i++) {
		sc->rows[i].values = sc->values + i * sc->nr_cols;
		fill_row(sc, &sc->rows[i], &now->r[i], find_reading(prev, now->r[i].cgroup_id));
	}
	sc->secs = now->when - prev->when;
	return 0;
}

static int compare_rows(const void *a, const void *b, void *screen)
{
	const struct screen *sc = screen;
	const struct row *x = a, *y = b;
	int c = sc->sort_col, r;

	if (c < 0 || x->values[c] == y->values[c])
		r = strcmp(x->path, y->path);
	else
		r = x->values[c] < y->values[c] ? 1 : -1;	/* the largest first */
	return sc->reverse ? -r : r;
}

static void sort_rows(struct screen *sc)
{
	qsort_r(sc->rows, sc->nr_rows, sizeof(*sc->rows), compare_rows, sc);
}

/* 1234567 -> "1.23M" */
static void format_si(double v, char *buf, size_t len)
{
	static const char units[] = " kMGTPE";
	int u = 0;

	while (fabs(v) >= 1000 && u < 6) {
		v /= 1000;
		u++;
	}
	if (!u)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.*f%c", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

static void format_value(const struct screen *sc, int c, double v, char *buf, size_t len)
{
	if (sc->cols[c].event < 0)
		snprintf(buf, len, "%.2f", v);
	else if (sc->cols[c].is_time)
		snprintf(buf, len, "%.1f", sc->secs > 0 ? v / (sc->secs * 1e9) * 100 : 0);
	else
		format_si(sc->secs > 0 ? v / sc->secs : 0, buf, len);
}

/* The terminal's size, or 0 x 0 in batch mode. */
static void terminal_size(const struct screen *sc, int *rows, int *cols)
{
	struct winsize ws;

	*rows = *cols = 0;
	if (!sc->o->batch && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws)) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* One line of the screen, built up and then cut to the terminal's width. */
struct line {
	char buf[4096];
	size_t len;
};

static void line_add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line_add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len = l->len + n < sizeof(l->buf) ? l->len + n : sizeof(l->buf) - 1;
}

/*
 * Print @l and start a new one.  On a terminal @width is its width less one
 * column: a line never wraps, which would push the header off the screen.
 */
static void line_put(struct line *l, int width)
{
	int len = l->len;

	if (width > 0 && len > width)
		len = width;
	printf("%.*s\n", len, l->buf);
	l->len = 0;
	l->buf[0] = '\0';
}

/* The first character that starts at or after @s (no lone continuation byte) */
static const char *utf8_boundary(const char *s)
{
	while ((*s & 0xc0) == 0x80)
		s++;
	return s;
}

/* A path in @width columns: its end, which names the cgroup, is kept.
 * Names reach the terminal printable (cgtool_printable_path()). */
static void add_path(struct line *l, const char *path, int width)
{
	char *printable = cgtool_printable_path(path);
	int len;

	if (!printable) {
		line_add(l, "(out of memory)");
		return;
	}
	len = strlen(printable);
	if (width <= 0 || len <= width)
		line_add(l, "%s", printable);
	else
		line_add(l, "...%s", utf8_boundary(printable + len - (width - 3)));
	free(printable);
}

/* The most telling first: a narrow terminal cuts the end off. */
static void print_header(const struct screen *sc, size_t shown, int width)
{
	const char *sort = sc->sort_col < 0 ? "path" : sc->cols[sc->sort_col].name;
	struct line l = { .len = 0 };
	int c;

	line_add(&l, "cgtop: %zu of %zu cgroups, sorted by %s%s, iteration %ld, interval %.2f s, "
		 "%s backend", shown, sc->nr_rows, sort, sc->reverse ? " (reversed)" : "",
		 sc->iteration, sc->secs, cgcount_backend_name(cgcount_backend(sc->s)));
	line_put(&l, width);
	for (c = 0; c < sc->nr_cols; c++)
		line_add(&l, "%*s ", sc->cols[c].width, sc->cols[c].name);
	line_add(&l, "CGROUP");
	line_put(&l, width);
	for (c = 0; c < sc->nr_cols; c++)
		line_add(&l, "%*s ", sc->cols[c].width, sc->cols[c].event < 0 ? "insn/cycle" :
			 sc->cols[c].is_time ? "% of a cpu" : "per second");
	line_put(&l, width);
}

/* The keys, in place of the table until the next key. */
static void draw_help(int width)
{
	struct line l = { .len = 0 };
	size_t i;

	line_add(&l, "cgtop: keys (any key returns to the table)");
	line_put(&l, width);
	line_put(&l, width);
	for (i = 0; i < sizeof(key_help) / sizeof(key_help[0]); i++) {
		line_add(&l, "  %s", key_help[i]);
		line_put(&l, width);
	}
}

/* stdout's error once flushed: 0, or an errno kept in @sc */
static int flush_output(struct screen *sc)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	sc->write_errno = errno ? errno : EIO;
	return -1;
}

static int draw(struct screen *sc)
{
	int term_rows, term_cols, c, width = 0, path_width = 0;
	size_t i, shown = sc->nr_rows;
	struct line l = { .len = 0 };
	char buf[32];

	terminal_size(sc, &term_rows, &term_cols);
	if (term_rows > 4 && shown > (size_t)term_rows - 4)
		shown = term_rows - 4;
	if (sc->o->rows && shown > (size_t)sc->o->rows)
		shown = sc->o->rows;
	if (term_cols > 1) {
		width = term_cols - 1;
		path_width = width - sc->values_width > PATH_MIN_WIDTH ?
			     width - sc->values_width : PATH_MIN_WIDTH;
	}
	if (!sc->o->batch)
		printf("\033[H\033[2J");
	if (sc->help) {
		draw_help(width);
		return flush_output(sc);
	}
	print_header(sc, shown, width);
	for (i = 0; i < shown; i++) {
		for (c = 0; c < sc->nr_cols; c++) {
			format_value(sc, c, sc->rows[i].values[c], buf, sizeof(buf));
			line_add(&l, "%*s ", sc->cols[c].width, buf);
		}
		add_path(&l, sc->rows[i].path, path_width);
		line_put(&l, width);
	}
	if (sc->o->batch)
		printf("\n");
	return flush_output(sc);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int take_snapshot(struct cgcount *s, struct snapshot *snap)
{
	*snap = (struct snapshot){ .when = now_seconds() };
	return cgcount_read_all(s, &snap->r, &snap->nr) ? -1 : 0;	/* libcgcount said why */
}

/* A key pressed: 1 to refresh now, 0 to go on waiting, -1 to quit. */
static int handle_key(struct screen *sc, int key)
{
	if (sc->help && key != 'q' && key != 'Q') {
		sc->help = 0;	/* any other key leaves the help */
		return draw(sc);
	}
	switch (key) {
	case 'q':
	case 'Q':
		return -1;
	case '<':
		sc->sort_col = sc->sort_col < 0 ? sc->nr_cols - 1 :
			       sc->sort_col > 0 ? sc->sort_col - 1 : 0;
		break;
	case '>':
		sc->sort_col = sc->sort_col < 0 ? 0 : sc->sort_col + 1 < sc->nr_cols ?
			       sc->sort_col + 1 : sc->sort_col;
		break;
	case 'p':
	case 'P':
		sc->sort_col = -1;
		break;
	case 'r':
	case 'R':
		sc->reverse = !sc->reverse;
		break;
	case 'h':
	case '?':
		sc->help = 1;
		break;
	case ' ':
		return 1;
	default:
		return 0;
	}
	sort_rows(sc);
	return draw(sc);
}

/*
 * Wait for the interval; in interactive mode read keys meanwhile.
 * Returns 0 when the interval is over (or space asked for a refresh), -1 to quit.
 */
static int wait_interval(struct screen *sc, double until)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	double left;
	char key;
	int r;

	while (!cgtool_stop && (left = until - now_seconds()) > 0) {
		r = poll(&pfd, sc->keys ? 1 : 0, (int)(left * 1000) + 1);
		if (resized && sc->rows && !sc->o->batch) {
			resized = 0;
			if (draw(sc))
				return -1;
		}
		if (r <= 0)
			continue;
		if (read(STDIN_FILENO, &key, 1) != 1) {
			sc->keys = 0;	/* end of input: no more keys */
			continue;
		}
		r = handle_key(sc, key);
		if (r)
			return r > 0 ? 0 : -1;
	}
	return cgtool_stop ? -1 : 0;
}

/*
 * The exit status for what writing stdout met: none, or its reader gone
 * (EPIPE: `cgtop | head` ends quietly, as a filter does), else a message
 * and 1.
 */
static int output_status(const struct screen *sc)
{
	if (!sc->write_errno || sc->write_errno == EPIPE)
		return 0;
	fprintf(stderr, PROG ": writing the table: %s\n", strerror(sc->write_errno));
	return 1;
}

static int run(struct screen *sc, struct cgtool *tool)
{
	struct snapshot prev, now;
	int ret = 0;

	if (take_snapshot(sc->s, &prev))
		return 1;
	for (sc->iteration = 1; !sc->o->iterations || sc->iteration <= sc->o->iterations;
	     sc->iteration++) {
		if (wait_interval(sc, prev.when + sc->o->delay))
			break;
		if (take_snapshot(sc->s, &now) || make_rows(sc, &prev, &now)) {
			ret = 1;
			break;
		}
		sort_rows(sc);
		if (draw(sc)) {
			cgcount_readings_free(now.r, now.nr);
			break;
		}
		cgcount_readings_free(prev.r, prev.nr);
		prev = now;
		if (cgtool_sync_cgroups(sc->s, tool, prev.r, prev.nr)) {
			ret = 1;
			break;
		}
	}
	cgcount_readings_free(prev.r, prev.nr);
	return ret ? ret : output_status(sc);
}

/* Keys without Enter, no echo, the alternate screen (restored at exit). */
static int enter_terminal(struct termios *saved)
{
	struct sigaction sa = { .sa_handler = on_winch };
	struct termios raw;

	sigaction(SIGWINCH, &sa, NULL);
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, saved))
		return 0;
	raw = *saved;
	raw.c_lflag &= ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	printf("\033[?1049h");
	return 1;
}

static void leave_terminal(const struct termios *saved)
{
	printf("\033[?1049l");
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSANOW, saved);
}

int main(int argc, char **argv)
{
	struct options o;
	struct screen sc = { .o = &o };
	struct termios saved;
	int ret, raw = 0;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	sc.s = cgtool_open(&o.tool);
	if (!sc.s)
		return cgtool_open_failure_status();
	if (make_columns(&sc)) {
		cgcount_close(sc.s);
		return 1;
	}
	sc.sort_col = find_sort_column(&sc, o.sort);
	if (sc.sort_col < -1) {
		free(sc.cols);
		cgcount_close(sc.s);
		return CLI_EXIT_USAGE;
	}
	cgtool_handle_signals();
	if (!o.batch)
		raw = sc.keys = enter_terminal(&saved);
	ret = run(&sc, &o.tool);
	if (raw)
		leave_terminal(&saved);
	free(sc.rows);
	free(sc.values);
	free(sc.cols);
	cgcount_close(sc.s);
	return ret;
}
