// SPDX-License-Identifier: GPL-2.0
/*
 * The sanitizer build's own test (tests/sanitize/selftest.sh): built with
 * -DLEAK_FD it leaves a file descriptor open at exit, with -DLEAK_MEM it
 * leaks an allocation, without either it is clean.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char *buf = malloc(64);
	int fd = open("/dev/null", O_RDONLY);

	if (!buf || fd < 0)
		return 1;
	memset(buf, 0, 64);
#ifndef LEAK_MEM
	free(buf);
#endif
#ifndef LEAK_FD
	close(fd);
#endif
	return 0;
}
