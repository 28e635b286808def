// SPDX-License-Identifier: GPL-2.0
/*
 * A client of lib/memcg/memcg_stat.h, one source for C and C++: built as
 * C99 and GNU11 with -pedantic and as C++11 and C++17, and linked against
 * the built libmemcgstat.so, by tests/hygiene/public-headers.sh. Exits 0
 * when the options macro and the library agree with the header.
 */
#include <stdio.h>
#include <string.h>

#include <memcg_stat.h>

int main(void)
{
	MEMCG_STAT_OPTS(memcg_stat_opts, opts, .flags = MEMCG_STAT_FORCE_TEXT);
	char version[32];
	int failed = 0;

	if (opts.sz != sizeof(opts) || opts.flags != MEMCG_STAT_FORCE_TEXT || opts.max_cgroups) {
		fprintf(stderr, "MEMCG_STAT_OPTS: sz %zu, not the fields given and zeroes\n", opts.sz);
		failed = 1;
	}
	snprintf(version, sizeof(version), "v%d.%d.%d", MEMCG_STAT_MAJOR_VERSION,
		 MEMCG_STAT_MINOR_VERSION, MEMCG_STAT_PATCH_VERSION);
	if (strcmp(version, memcg_stat_version_string())) {
		fprintf(stderr, "the library is %s, the header %s\n", memcg_stat_version_string(),
			version);
		failed = 1;
	}
	if (strcmp(memcg_stat_backend_name(MEMCG_STAT_BACKEND_TEXT), "text")) {
		fprintf(stderr, "the text backend is named %s\n",
			memcg_stat_backend_name(MEMCG_STAT_BACKEND_TEXT));
		failed = 1;
	}
	return failed;
}
