// SPDX-License-Identifier: GPL-2.0
/*
 * The exposition text (Prometheus text format 0.0.4) of one reading:
 *
 *   perf_cgroup_events_total{cgroup="/a/b",event="context-switches"}
 *   perf_cgroup_event_seconds_total{cgroup="/a/b",event="cpu-clock"}
 *   perf_cgroup_events_scaling_ratio{cgroup="/a/b",event="..."}
 *   perf_cgroup_exporter_errors_total{kind="walk_skipped"}
 *
 * Counts are raw (not scaled for multiplexing: a scaled estimate can fall
 * between two scrapes, which rate() would take for a counter reset); the
 * ratio gauge (running / enabled time) lets a query scale them.  A pod's
 * cgroups also carry pod_uid, container_id and qos_class (kubelet.h); the
 * cgroups and families exported are the collector's (collector.h).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exporter.h"
#include "kubelet.h"

/* A growing text buffer for one response body. */
struct text {
	char *buf;
	size_t len, cap;
	int failed;
};

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	char *grown;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0,
			      fmt, ap);
		va_end(ap);
		if (n < 0 || t->failed) {
			t->failed = 1;
			return;
		}
		if (t->buf && t->len + n < t->cap) {
			t->len += n;
			return;
		}
		grown = realloc(t->buf, 2 * (t->len + n + 1024));
		if (!grown) {
			t->failed = 1;
			return;
		}
		t->buf = grown;
		t->cap = 2 * (t->len + n + 1024);
	}
}

/* A label value with \\, \" and \n escaped. */
static void add_label_value(struct text *t, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			text_add(t, "\\%c", *s);
		else if (*s == '\n')
			text_add(t, "\\n");
		else
			text_add(t, "%c", *s);
	}
}

/* ,name="value", left out when the value is empty */
static void add_label(struct text *t, const char *name, const char *value)
{
	if (!value || !*value)
		return;
	text_add(t, ",%s=\"", name);
	add_label_value(t, value);
	text_add(t, "\"");
}

/* The cgroup label is the printable path (cgtool_printable_path(): always
 * valid UTF-8, as Prometheus requires of a label value). */
static void add_labels(struct text *t, const char *cgroup, const char *event,
		       const struct kubelet_labels *k)
{
	char *printable = cgtool_printable_path(cgroup);

	if (!printable) {
		t->failed = 1;
		return;
	}
	text_add(t, "{cgroup=\"");
	add_label_value(t, printable);
	free(printable);
	text_add(t, "\"");
	add_label(t, "event", event);
	add_label(t, "pod_uid", k->pod_uid);
	add_label(t, "container_id", k->container_id);
	add_label(t, "qos_class", k->qos_class);
	text_add(t, "}");
}

static double scaling_ratio(const struct cgcount_value *v)
{
	return v->enabled ? (double)v->running / v->enabled : 1;
}

enum family { EVENTS_TOTAL, EVENT_SECONDS_TOTAL, SCALING_RATIO, NR_FAMILIES };

static const struct {
	const char *name, *type, *help;
} families[] = {
	[EVENTS_TOTAL] = { "perf_cgroup_events_total", "counter",
		"Perf events counted while tasks of the cgroup or its descendants ran "
		"(raw count, not scaled for multiplexing)." },
	[EVENT_SECONDS_TOTAL] = { "perf_cgroup_event_seconds_total", "counter",
		"Time events (cpu-clock, task-clock) counted while tasks of the cgroup "
		"or its descendants ran, in seconds (not scaled for multiplexing)." },
	[SCALING_RATIO] = { "perf_cgroup_events_scaling_ratio", "gauge",
		"Time the event was counting over the time it was enabled: 1 unless the "
		"PMU multiplexed it; divide a count's rate by it to estimate the full count." },
};

int metrics_family(const char *name)
{
	int f;

	for (f = 0; f < NR_FAMILIES; f++)
		if (!strcmp(name, families[f].name))
			return f;
	return -1;
}

const char *metrics_family_names(void)
{
	static char names[256];
	int f;

	names[0] = '\0';
	for (f = 0; f < NR_FAMILIES; f++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 f ? ", " : "", families[f].name);
	return names;
}

/* Is event @e part of family @f? */
static int in_family(struct cgcount *s, enum family f, int e)
{
	int is_time = cgtool_is_time_event(cgcount_event_name(s, e));

	return f == SCALING_RATIO || (f == EVENT_SECONDS_TOTAL) == is_time;
}

static void add_family(struct text *t, struct cgcount *s, enum family f,
		       const struct cgcount_reading *r, size_t nr, const unsigned char *keep)
{
	struct kubelet_labels k;
	int e, any = 0;
	size_t i;

	for (e = 0; e < cgcount_nr_events(s); e++)
		any |= in_family(s, f, e);
	if (!any)
		return;
	text_add(t, "# HELP %s %s\n# TYPE %s %s\n", families[f].name, families[f].help,
		 families[f].name, families[f].type);
	for (i = 0; i < nr; i++) {
		if (!keep[i])
			continue;
		kubelet_parse(r[i].path, &k);
		for (e = 0; e < cgcount_nr_events(s); e++) {
			const struct cgcount_value *v = &r[i].values[e];

			if (!in_family(s, f, e))
				continue;
			text_add(t, "%s", families[f].name);
			add_labels(t, r[i].path, cgcount_event_name(s, e), &k);
			if (f == EVENTS_TOTAL)
				text_add(t, " %llu\n", (unsigned long long)v->value);
			else if (f == EVENT_SECONDS_TOTAL)
				text_add(t, " %.9f\n", v->value / 1e9);
			else
				text_add(t, " %.6f\n", scaling_ratio(v));
		}
	}
}

/* libcgcount's cgcount_errors(), one series per field (cgcount.h says
 * what each counts); all of them, zeros included, so that rate() and
 * increase() see each series from the start */
static void add_errors(struct text *t, struct cgcount *s)
{
	CGCOUNT_OPTS(cgcount_errors, e);

	if (cgcount_errors(s, &e)) {
		t->failed = 1;
		return;
	}
	text_add(t, "# HELP perf_cgroup_exporter_errors_total Cgroups or counts the exporter "
		 "could not count as asked, by kind: walk_skipped (a cgroup directory "
		 "removed during a walk, or one it may not read), vanished (a cgroup removed "
		 "before it was attached), unplaced (rstat: counts of a cgroup that found no "
		 "slot, charged to its nearest counted ancestor).\n"
		 "# TYPE perf_cgroup_exporter_errors_total counter\n");
	text_add(t, "perf_cgroup_exporter_errors_total{kind=\"walk_skipped\"} %llu\n"
		 "perf_cgroup_exporter_errors_total{kind=\"vanished\"} %llu\n"
		 "perf_cgroup_exporter_errors_total{kind=\"unplaced\"} %llu\n",
		 (unsigned long long)e.walk_skipped, (unsigned long long)e.vanished,
		 (unsigned long long)e.unplaced);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void add_exporter_metrics(struct text *t, struct cgcount *s, size_t nr,
				 size_t exported, double secs)
{
	add_errors(t, s);
	text_add(t, "# HELP perf_cgroup_exporter_build_info The exporter's version and "
		 "counting backend.\n# TYPE perf_cgroup_exporter_build_info gauge\n"
		 "perf_cgroup_exporter_build_info{backend=\"%s\",version=\"%s\"} 1\n",
		 cgcount_backend_name(cgcount_backend(s)), CLI_VERSION);
	text_add(t, "# HELP perf_cgroup_exporter_cgroups Cgroups counted.\n"
		 "# TYPE perf_cgroup_exporter_cgroups gauge\n"
		 "perf_cgroup_exporter_cgroups %zu\n", nr);
	text_add(t, "# HELP perf_cgroup_exporter_cgroups_exported Cgroups exported (the "
		 "collector's depth, leaves and regexes).\n"
		 "# TYPE perf_cgroup_exporter_cgroups_exported gauge\n"
		 "perf_cgroup_exporter_cgroups_exported %zu\n", exported);
	text_add(t, "# HELP perf_cgroup_exporter_scrape_duration_seconds Time this scrape "
		 "took to read and format the counts.\n"
		 "# TYPE perf_cgroup_exporter_scrape_duration_seconds gauge\n"
		 "perf_cgroup_exporter_scrape_duration_seconds %.6f\n", now_seconds() - secs);
	char process[2048];	/* process.c */
	text_add(t, "%s", process_metrics(process, sizeof(process)) ? "" : process);
}

/* The families the collector keeps, of the cgroups it keeps */
static void add_families(struct text *t, struct cgcount *s, const struct collector *c,
			 const struct cgcount_reading *r, size_t nr, size_t *exported)
{
	unsigned char *keep = malloc(nr ? nr : 1);
	int f;
	size_t i;

	if (!keep || collector_select(c, r, nr, keep)) {
		free(keep);
		t->failed = 1;
		return;
	}
	for (f = 0; f < NR_FAMILIES; f++)
		if (!(c->disabled & (1u << f)))
			add_family(t, s, f, r, nr, keep);
	for (*exported = i = 0; i < nr; i++)
		*exported += keep[i];
	free(keep);
}

char *render_metrics(struct cgcount *s, const struct options *o, size_t *len)
{
	double start = now_seconds();
	struct text t = { 0 };
	struct cgcount_reading *r;
	size_t nr, exported = 0;

	if (cgcount_read_all(s, &r, &nr))
		return NULL;	/* libcgcount said why */
	add_families(&t, s, &o->collector, r, nr, &exported);
	/* the next scrape sees the cgroups created since, not the removed ones */
	cgtool_sync_cgroups(s, &o->tool, r, nr);
	cgcount_readings_free(r, nr);
	add_exporter_metrics(&t, s, nr, exported, start);
	if (t.failed) {
		free(t.buf);
		return NULL;
	}
	*len = t.len;
	return t.buf;
}
