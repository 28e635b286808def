/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * cgutil: the one implementation of what every piece of this project needs
 * about cgroups and perf events: where cgroup2 is mounted, a cgroup's id,
 * the walk of a cgroup tree, what an event string means, the online cpus.
 * An internal static library
 * (build/cgutil/libcgutil.a, hidden symbols): libcgcount, libcgrstat, the
 * tools and the bench link it; it is never installed and has no stable ABI.
 *
 * Functions return 0 (or a count) on success and a negative errno on
 * failure; they print nothing, the caller words the message.
 */
#ifndef CGUTIL_H
#define CGUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define CGUTIL_DEFAULT_ROOT "/sys/fs/cgroup"

/*
 * The first cgroup2 mount of this mount namespace, from /proc/self/mounts
 * read with getmntent(3), which undoes the kernel's octal escapes (a space
 * in a mount point is "\040" there).  Without /proc: /sys/fs/cgroup if it
 * is cgroup2.  -ENOENT if there is none, -ENAMETOOLONG if @len is short.
 */
int cgutil_cgroup2_root(char *root, size_t len);

/* true if @path is a directory of a cgroup2 file system (statfs) */
bool cgutil_is_cgroup2(const char *path);

/*
 * The cgroup v2 id of the cgroup directory @path: its file handle
 * (name_to_handle_at(2)), which cgroup2 (kernfs) encodes as the 64-bit
 * kernfs node id, the id the kernel uses everywhere (cgroup_id(),
 * bpf_get_current_cgroup_id(), PERF_SAMPLE_CGROUP, the READ_CGROUP ioctls).
 * stat()'s st_ino equals it only where ino_t has 64 bits; perf
 * (util/cgroup.c) and libbpf's selftests read the handle too.
 */
int cgutil_cgroup_id(const char *path, uint64_t *id);
/* The same for @path relative to the directory @dirfd ("" for @dirfd itself) */
int cgutil_cgroup_id_at(int dirfd, const char *path, uint64_t *id);

/*
 * Whether the cgroup directory @path is inside the caller's cgroup
 * namespace: 1 yes, 0 no, -errno.  "No" when its mount's root lies above
 * the namespace's root (/proc/self/mountinfo shows it as "/..": a host's
 * cgroup2 tree mounted into a container), the one case that matters: the
 * kernel then finds none of its cgroups by id (cgroup_get_from_id(), so
 * neither PERF_EVENT_IOC_ATTACH_CGROUP nor bpf_cgroup_from_id()), only by
 * an open directory.  A directory below such a root reads as "no" even
 * where its path leads back into the namespace (no names are compared):
 * entering the host's namespace or opening cgroups by path is right for it
 * too.
 */
int cgutil_cgroup_in_ns(const char *path);
/* setns(2) into the cgroup namespace @ns_file ("/proc/1/ns/cgroup"): 0 or -errno
 * (-EPERM without CAP_SYS_ADMIN).  Only the calling thread moves: call it
 * before any thread is created. */
int cgutil_enter_cgroup_ns(const char *ns_file);

/*
 * The cgroup tree walk: the one walk of the project.
 */

/* One cgroup met by cgutil_walk(). Valid during the callback only. */
struct cgutil_walk_entry {
	int dirfd;		/* the cgroup's directory (O_RDONLY|O_DIRECTORY|O_NOFOLLOW) */
	const char *path;	/* relative to the walk's root: "" for the root, "a/b" below;
				 * any length (not limited to PATH_MAX) */
	size_t path_len;
	unsigned int depth;	/* 0 for the root */
	uint64_t id;		/* the cgroup id (file handle); 0 where the file system
				 * has no 64-bit handle (a directory tree that is not cgroup2) */
};

/* Return 0 to go on, CGUTIL_WALK_PRUNE to skip this cgroup's descendants, or a
 * negative errno to stop the walk (cgutil_walk() returns it). */
#define CGUTIL_WALK_PRUNE 1
typedef int (*cgutil_walk_fn)(const struct cgutil_walk_entry *e, void *ctx);

/* Walk the cgroup2 tree rooted at root_dirfd (which stays the caller's), parents before
 * children, iteratively: no recursion, no limit of its own on depth or path length, a bounded
 * number of open fds. max_depth 0 means no limit. Symlinks and non-directories are never
 * followed. A child that vanishes or cannot be opened or read is skipped and counted in
 * *skipped (may be NULL); the walk goes on. Returns 0, or the callback's negative
 * value, or -errno (-ENOMEM). */
int cgutil_walk(int root_dirfd, unsigned int max_depth, cgutil_walk_fn fn, void *ctx,
		uint64_t *skipped);
/* (max_depth N: the cgroups of depth 0 to N are met.) */

/*
 * Open the directory @path below @dirfd, of any length ("a/b", leading,
 * doubled and trailing '/' ignored, "" for @dirfd itself), one name at a time
 * with O_NOFOLLOW, as cgutil_walk() opens its cgroups: no PATH_MAX limit, no
 * symlink followed.  Names above the last need search permission only (O_PATH).
 * The new fd (O_RDONLY|O_DIRECTORY|O_CLOEXEC), or -errno.
 */
int cgutil_open_dir_at(int dirfd, const char *path);

/*
 * Event strings.  @str (@len bytes, not necessarily terminated) is one
 * event as perf stat -e takes it, tried in this order:
 *   - perf's generic software and hardware names (cpu-clock,
 *     context-switches, cgroup-switches, cycles, ...);
 *   - a PMU and its terms from sysfs: "cpu/event=0x3c,umask=0x0/",
 *     "cpu/cycles/" (an alias of events/), "software/config=0/",
 *     config/config1/config2=, format terms placed as format/ says;
 *   - a raw config: "r1a8";
 *   - anything libpfm4 encodes (pfm_get_os_event_encoding,
 *     PFM_OS_PERF_EVENT_EXT): native names "INST_RETIRED:ANY_P",
 *     "perf::page-faults", "perf_raw::r3c".
 * Modifiers as perf's: ":u", ":k", ":h" (or after a PMU's closing '/')
 * count only in user, kernel, hypervisor mode; libpfm4 takes its own.
 * On success *attr is ready for perf_event_open(2) but for read_format,
 * which the caller sets.  -ENOENT: no parser knows it; -EINVAL: malformed
 * (a bad modifier or term); -ERANGE: a value wider than its format.
 */
int cgutil_parse_event(const char *str, size_t len, struct perf_event_attr *attr);
/* The same with @pmus instead of /sys/bus/event_source/devices (tests). */
int cgutil_parse_event_at(const char *pmus, const char *str, size_t len,
			  struct perf_event_attr *attr);

/* The generic event names, separated by ", ", into @buf (for messages). */
void cgutil_event_names(char *buf, size_t len);

/*
 * The length of the first event of the comma-separated @list, as perf stat
 * -e splits it: a comma inside a PMU's /terms/ does not end the event
 * ("cpu/event=0x3c,umask=0/,cycles" gives 23).  The next event starts
 * after the comma at list[len], if there is one.
 */
size_t cgutil_event_len(const char *list);

/*
 * An event list with perf's groups, "cpu-clock,{cycles,instructions}":
 * cgutil_event_next() gives its events one by one, from it.pos (set it to
 * the list, in_group false): 1 and the next event (@ev, @len, its
 * CGUTIL_EV_* @flags), 0 at the end of the list, -EINVAL for a group
 * opened inside a group, a '}' without '{', a group not closed, or
 * anything but ',' after a '}' (perf's group modifiers are not taken).
 */
struct cgutil_event_iter {
	const char *pos;
	bool in_group;
};
#define CGUTIL_EV_GROUPED	1u	/* inside {...} */
#define CGUTIL_EV_LEADER	2u	/* the first of its group */
#define CGUTIL_EV_LAST		4u	/* the last of its group */
int cgutil_event_next(struct cgutil_event_iter *it, const char **ev, size_t *len,
		      unsigned int *flags);

/*
 * perf_event_open(2) of @attr (its size set here) with PERF_FLAG_FD_CLOEXEC
 * added to @flags: an fd, or -errno.  cgutil_perf_open_advice(-ret) says
 * what to do about a failure, for the caller's message.
 */
int cgutil_perf_open(const struct perf_event_attr *attr, int pid, int cpu, int group_fd,
		     unsigned long flags);
const char *cgutil_perf_open_advice(int err);

/*
 * The online cpus (/sys/devices/system/cpu/online), ascending, in a new
 * array *cpus the caller frees: their number, or -errno.
 */
int cgutil_online_cpus(int **cpus);
/* The same from the kernel's cpu list @list ("0-3,8,10-11", a newline
 * allowed at the end): -EINVAL if malformed, empty or not ascending. */
int cgutil_parse_cpu_list(const char *list, int **cpus);

#endif
