// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup-exporter's options and the order of a run (exporter.h): open the
 * counters, open the listeners, drop what it no longer needs of root, then
 * serve or write the text file.  Uses libcgcount (lib/cgcount/cgcount.h).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter.h"

#define DEFAULT_EVENTS "cpu-clock,context-switches"

enum {
	OPT_LISTEN = CGTOOL_OPT_FIRST_PRIVATE,
	OPT_PATH,
	OPT_TEXTFILE,
	OPT_TEXTFILE_INTERVAL,
	OPT_TEXTFILE_WRITES,
	OPT_WEB_CONFIG,
};

static const char *usage_text =
	"usage: " PROG " [OPTION]...\n"
	"Count perf events per cgroup and serve them to Prometheus.\n"
	"\n"
	"      --web.listen-address=[HOST]:PORT\n"
	"                       where to listen (default: loopback only,\n"
	"                       127.0.0.1:" DEFAULT_PORT " and [::1]:" DEFAULT_PORT ";\n"
	"                       :" DEFAULT_PORT " for every address, IPv6 and IPv4);\n"
	"                       repeat it to listen on several (up to 8).\n"
	"                       Port " DEFAULT_PORT ": the Prometheus wiki's default port\n"
	"                       allocations fill 9100-9999 and OpenTelemetry's\n"
	"                       exporter takes 9464\n"
	"      --web.telemetry-path=PATH\n"
	"                       the path of the metrics (default /metrics)\n"
	"      --web.config.file=FILE\n"
	"                       TLS, basic authentication and headers: the\n"
	"                       Prometheus exporters' web configuration (YAML)\n"
	"      --textfile=FILE  instead of serving, write the metrics to FILE\n"
	"                       (atomically; - for stdout) every --textfile.interval\n"
	"                       seconds, totals since the start: for node_exporter's\n"
	"                       textfile collector\n"
	"      --textfile.interval=SECONDS\n"
	"                       how often --textfile writes (default 1)\n"
	"      --textfile.writes=N\n"
	"                       exit after N writes (default: run until stopped;\n"
	"                       each start is a counter reset)\n"
	CGTOOL_USAGE_OPTIONS(DEFAULT_EVENTS)
	COLLECTOR_USAGE
	"\n"
	"Metrics: perf_cgroup_events_total{cgroup,event} (raw counts),\n"
	"perf_cgroup_event_seconds_total{cgroup,event} (cpu-clock, task-clock),\n"
	"perf_cgroup_events_scaling_ratio{cgroup,event} (running / enabled time),\n"
	"perf_cgroup_exporter_errors_total{kind}, perf_cgroup_exporter_build_info,\n"
	"perf_cgroup_exporter_cgroups, perf_cgroup_exporter_scrape_duration_seconds,\n"
	"process_* (its own, as client_golang's).\n"
	"Once counting, it keeps only the capabilities its backend needs and runs\n"
	"under a seccomp allowlist.  See cgroup-exporter(1).\n";

static int add_listen_address(struct options *o, const char *address)
{
	const char *port;
	char host[256];

	if (split_address(address, host, sizeof(host), &port))
		return cli_usage_error(PROG, "--web.listen-address: expected [HOST]:PORT, [IPV6]:PORT or :PORT, not '%s'",
				       address);
	if (o->nr_listen == MAX_LISTENERS)
		return cli_usage_error(PROG, "--web.listen-address: at most %d", MAX_LISTENERS);
	o->listen[o->nr_listen++] = address;
	return 0;
}

/* One option of the exporter's own; 0 or the exit status of a usage error */
static int parse_own_option(struct options *o, int c, const char *arg)
{
	switch (c) {
	case 'h':
		fputs(usage_text, stdout);
		exit(0);
	case CGTOOL_OPT_VERSION:
		exit(cli_version(PROG));
	case OPT_LISTEN:
		return add_listen_address(o, arg);
	case OPT_PATH:
		if (arg[0] != '/')
			return cli_usage_error(PROG, "--web.telemetry-path must start with /");
		o->path = arg;
		return 0;
	case OPT_WEB_CONFIG:
		o->web_config = arg;
		return 0;
	case OPT_TEXTFILE:
		o->textfile = arg;
		return 0;
	case OPT_TEXTFILE_INTERVAL:
		if (cgtool_parse_seconds(arg, 0, &o->textfile_interval))
			return cli_usage_error(PROG, "--textfile.interval: not a number of seconds: '%s'",
					       arg);
		return 0;
	case OPT_TEXTFILE_WRITES:
		if (cgtool_parse_long(arg, 1, 1L << 40, &o->textfile_writes))
			return cli_usage_error(PROG, "--textfile.writes: not a positive number: '%s'",
					       arg);
		return 0;
	}
	return cli_usage_hint(PROG);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		CGTOOL_LONG_OPTIONS,
		COLLECTOR_LONG_OPTIONS,
		{ "web.listen-address", required_argument, NULL, OPT_LISTEN },
		{ "web.telemetry-path", required_argument, NULL, OPT_PATH },
		{ "web.config.file", required_argument, NULL, OPT_WEB_CONFIG },
		{ "textfile", required_argument, NULL, OPT_TEXTFILE },
		{ "textfile.interval", required_argument, NULL, OPT_TEXTFILE_INTERVAL },
		{ "textfile.writes", required_argument, NULL, OPT_TEXTFILE_WRITES },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	*o = (struct options){ .path = "/metrics", .textfile_interval = 1 };
	cgtool_init(&o->tool, PROG, DEFAULT_EVENTS);
	collector_init(&o->collector);
	while ((c = getopt_long(argc, argv, "e:r:h", longopts, NULL)) != -1) {
		r = cgtool_parse_option(&o->tool, c, optarg);
		if (!r)
			r = collector_parse_option(&o->collector, PROG, c, optarg);
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (!r && (r = parse_own_option(o, c, optarg)))
			return r;
	}
	if (optind < argc)
		return cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
	if (cgtool_check_options(&o->tool))
		return CLI_EXIT_USAGE;
	if (!o->nr_listen) {
		o->listen[o->nr_listen++] = "127.0.0.1:" DEFAULT_PORT;
		o->listen[o->nr_listen++] = "[::1]:" DEFAULT_PORT;
		o->listen_default = 1;
	}
	return 0;
}

static int serve(struct cgcount *s, const struct options *o)
{
	struct server *srv = server_open(s, o);
	int ret = 1;

	if (!srv)
		return 1;
	if (!drop_privileges(s))
		ret = server_run(srv);
	server_close(srv);
	return ret;
}

int main(int argc, char **argv)
{
	struct options o;
	struct cgcount *s;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret) {
		collector_free(&o.collector);
		return ret;
	}
	s = cgtool_open(&o.tool);
	if (!s) {
		collector_free(&o.collector);
		return cgtool_open_failure_status();
	}
	cgtool_handle_signals();
	if (o.textfile)
		ret = drop_privileges(s) ? 1 : write_textfiles(s, &o);
	else
		ret = serve(s, &o);
	cgcount_close(s);
	collector_free(&o.collector);
	return ret;
}
