// SPDX-License-Identifier: GPL-2.0
/*
 * A client of lib/cgcount/cgcount.h, one source for C and C++: built as C99
 * and GNU11 with -pedantic and as C++11 and C++17, and linked against the
 * built libcgcount.so, by tests/hygiene/public-headers.sh. Exits 0 when the
 * options macro and the library agree with the header.
 */
#include <stdio.h>
#include <string.h>

#include <cgcount.h>

int main(void)
{
	CGCOUNT_OPTS(cgcount_opts, opts, .backend = CGCOUNT_EVENTS, .max_cgroups = 64);
	enum cgcount_backend backend = CGCOUNT_AUTO;
	char version[32];
	int failed = 0;

	if (opts.sz != sizeof(opts) || opts.backend != CGCOUNT_EVENTS || opts.cgroup_root ||
	    opts.max_cgroups != 64) {
		fprintf(stderr, "CGCOUNT_OPTS: sz %zu, not the fields given and zeroes\n", opts.sz);
		failed = 1;
	}
	snprintf(version, sizeof(version), "v%d.%d.%d", CGCOUNT_MAJOR_VERSION,
		 CGCOUNT_MINOR_VERSION, CGCOUNT_PATCH_VERSION);
	if (strcmp(version, cgcount_version_string())) {
		fprintf(stderr, "the library is %s, the header %s\n", cgcount_version_string(),
			version);
		failed = 1;
	}
	if (cgcount_parse_backend("rstat", &backend) || backend != CGCOUNT_RSTAT) {
		fprintf(stderr, "cgcount_parse_backend(\"rstat\") gave %d\n", (int)backend);
		failed = 1;
	}
	return failed;
}
