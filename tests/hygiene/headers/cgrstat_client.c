// SPDX-License-Identifier: GPL-2.0
/*
 * A client of lib/cgrstat/cgrstat.h, one source for C and C++: built as C99
 * and GNU11 with -pedantic and as C++11 and C++17, and linked against the
 * built libcgrstat.so, by tests/hygiene/public-headers.sh. Exits 0 when the
 * options macro and the library agree with the header.
 */
#include <stdio.h>
#include <string.h>

#include <cgrstat.h>

int main(void)
{
	CGRSTAT_OPTS(cgrstat_opts, opts, .max_cgroups = 64, .cgroup_root = "/sys/fs/cgroup");
	char version[32];
	int failed = 0;

	if (opts.sz != sizeof(opts) || opts.max_cgroups != 64 || opts.max_records ||
	    opts.flush_hook || strcmp(opts.cgroup_root, "/sys/fs/cgroup")) {
		fprintf(stderr, "CGRSTAT_OPTS: sz %zu, not the fields given and zeroes\n", opts.sz);
		failed = 1;
	}
	snprintf(version, sizeof(version), "v%d.%d.%d", CGRSTAT_MAJOR_VERSION,
		 CGRSTAT_MINOR_VERSION, CGRSTAT_PATCH_VERSION);
	if (strcmp(version, cgrstat_version_string()) ||
	    cgrstat_major_version() != CGRSTAT_MAJOR_VERSION) {
		fprintf(stderr, "the library is %s, the header %s\n", cgrstat_version_string(),
			version);
		failed = 1;
	}
	return failed;
}
