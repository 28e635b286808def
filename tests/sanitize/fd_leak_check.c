// SPDX-License-Identifier: GPL-2.0
/*
 * Linked into the sanitizer builds of our tools (tests/sanitize/): at exit,
 * fail the program if it leaves open a file descriptor that was not open
 * when it started. AddressSanitizer's leak checker finds leaked memory but
 * not leaked fds, which the libraries (perf events, BPF maps, links) hold.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FD_LEAK_EXIT 98
#define MAX_TRACKED_FD 1024

static bool open_at_start[MAX_TRACKED_FD];

/* Calls @fn for every open fd except the one used to list them. */
static void for_each_open_fd(void (*fn)(int fd, int *nr_leaked), int *nr_leaked)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *ent;

	if (!dir)
		return;
	while ((ent = readdir(dir))) {
		int fd = atoi(ent->d_name);

		if (ent->d_name[0] != '.' && fd != dirfd(dir))
			fn(fd, nr_leaked);
	}
	closedir(dir);
}

static void remember_fd(int fd, int *unused)
{
	(void)unused;
	if (fd < MAX_TRACKED_FD)
		open_at_start[fd] = true;
}

static void report_if_new(int fd, int *nr_leaked)
{
	char link[64], target[256] = "?";
	ssize_t len;

	if (fd < MAX_TRACKED_FD && open_at_start[fd])
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, target, sizeof(target) - 1);
	if (len > 0)
		target[len] = '\0';
	fprintf(stderr, "fd-leak-check: fd %d (%s) still open at exit\n", fd, target);
	(*nr_leaked)++;
}

__attribute__((constructor)) static void fd_leak_check_start(void)
{
	for_each_open_fd(remember_fd, NULL);
}

__attribute__((destructor)) static void fd_leak_check_exit(void)
{
	int nr_leaked = 0;

	for_each_open_fd(report_if_new, &nr_leaked);
	if (nr_leaked)
		_exit(FD_LEAK_EXIT);
}
