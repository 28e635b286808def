// SPDX-License-Identifier: GPL-2.0
/*
 * cgrstat.h is valid C++ (libbpf's test_cpp.cpp): this file is built with
 * g++ -Wall -Wextra -Werror, declares options with CGRSTAT_OPTS and links
 * the library.  TAP: the macro sets sz and the fields given, zeroes the
 * others, and the library runs (its version is the header's, and a bad
 * event list is refused before any BPF).
 */
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cgrstat.h"

static int nr, failed;

static void check(bool ok, const char *what)
{
	std::printf("%sok %d %s\n", ok ? "" : "not ", ++nr, what);
	failed |= !ok;
}

static int quiet(enum cgrstat_print_level, const char *, va_list)
{
	return 0;
}

int main()
{
	CGRSTAT_OPTS(cgrstat_opts, given, .max_cgroups = 64);
	CGRSTAT_OPTS(cgrstat_opts, none);
	char version[32];

	std::printf("TAP version 13\n1..5\n");
	check(given.sz == sizeof(given) && none.sz == sizeof(none),
	      "CGRSTAT_OPTS sets sz to the struct's size");
	check(given.max_cgroups == 64 && given.max_records == 0 && !given.cgroup_root,
	      "the fields given are set, the others zero");
	check(none.max_cgroups == 0 && !none.flush_hook, "without fields all are zero");
	std::snprintf(version, sizeof(version), "v%d.%d.%d", CGRSTAT_MAJOR_VERSION,
		      CGRSTAT_MINOR_VERSION, CGRSTAT_PATCH_VERSION);
	check(!std::strcmp(version, cgrstat_version_string()),
	      "a C++ program links the library: its version is the header's");
	cgrstat_set_print(quiet);
	check(!cgrstat_open("no-such-event", &given) && errno == EINVAL,
	      "an unknown event is refused with EINVAL");
	return failed;
}
