// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* cgutil: event strings -> struct perf_event_attr. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgutil.h"
#include "cgutil_pfm.h"

struct generic_event {
	const char *name;
	uint32_t type;
	uint64_t config;
};

/* perf's names (tools/perf/util/parse-events.c: event_symbols_{hw,sw}) */
static const struct generic_event generic_events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

#define NR_GENERIC (sizeof(generic_events) / sizeof(generic_events[0]))

#define SYSFS_PMUS "/sys/bus/event_source/devices"
#define TERM_MAX 256

/* perf's u, k, h: count only in the modes named (tools/perf: parse-events) */
static int apply_modifiers(const char *m, size_t n, struct perf_event_attr *attr)
{
	int u = 0, k = 0, h = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		switch (m[i]) {
		case 'u': u = 1; break;
		case 'k': k = 1; break;
		case 'h': h = 1; break;
		default: return -EINVAL;
		}
	}
	if (u || k || h) {
		attr->exclude_user = !u;
		attr->exclude_kernel = !k;
		attr->exclude_hv = !h;
	}
	return 0;
}

static void attr_init(struct perf_event_attr *attr, uint32_t type, uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
}

/* "cpu-clock" or "cpu-clock:u" */
static int parse_generic(const char *str, size_t len, struct perf_event_attr *attr)
{
	const char *colon = memchr(str, ':', len);
	size_t name_len = colon ? (size_t)(colon - str) : len;
	size_t i;

	for (i = 0; i < NR_GENERIC; i++) {
		if (strlen(generic_events[i].name) == name_len &&
		    !strncmp(generic_events[i].name, str, name_len)) {
			attr_init(attr, generic_events[i].type, generic_events[i].config);
			return colon ? apply_modifiers(colon + 1, len - name_len - 1, attr) : 0;
		}
	}
	return -ENOENT;
}

/* "r1a8" or "r1a8:u": a raw PMU config, as perf takes it */
static int parse_raw(const char *str, size_t len, struct perf_event_attr *attr)
{
	const char *colon = memchr(str, ':', len);
	size_t n = colon ? (size_t)(colon - str) : len, i;
	uint64_t config = 0;

	if (n < 2 || n > 17 || str[0] != 'r')
		return -ENOENT;
	for (i = 1; i < n; i++) {
		if (!isxdigit((unsigned char)str[i]))
			return -ENOENT;
		config = config << 4 | (isdigit((unsigned char)str[i]) ? str[i] - '0' :
					(tolower((unsigned char)str[i]) - 'a' + 10));
	}
	attr_init(attr, PERF_TYPE_RAW, config);
	return colon ? apply_modifiers(colon + 1, len - n - 1, attr) : 0;
}

/* A small sysfs file into @buf, trailing newline removed. */
static int read_sysfs(const char *pmus, const char *pmu, const char *file, char *buf,
		      size_t len)
{
	char path[512];
	FILE *f;
	size_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", pmus, pmu, file) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static __u64 *config_field(struct perf_event_attr *attr, const char *name, size_t len)
{
	if (len == 6 && !strncmp(name, "config", 6))
		return &attr->config;
	if (len == 7 && !strncmp(name, "config1", 7))
		return &attr->config1;
	if (len == 7 && !strncmp(name, "config2", 7))
		return &attr->config2;
	return NULL;
}

/*
 * Put @value into the bits a format file names ("config:0-7,21",
 * "config1:0-63"): its low bits into the first range, the next into the next.
 */
static int apply_format(struct perf_event_attr *attr, const char *format, uint64_t value)
{
	const char *colon = strchr(format, ':'), *p;
	__u64 *field = colon ? config_field(attr, format, colon - format) : NULL;
	unsigned long lo, hi, bit;
	char *end;

	if (!field)
		return -EINVAL;
	for (p = colon + 1; *p; p = *end ? end + 1 : end) {
		lo = strtoul(p, &end, 10);
		hi = *end == '-' ? strtoul(end + 1, &end, 10) : lo;
		if (end == p || hi < lo || hi > 63 || (*end && *end != ','))
			return -EINVAL;
		for (bit = lo; bit <= hi; bit++, value >>= 1)
			*field = (*field & ~(1ULL << bit)) | (value & 1) << bit;
	}
	return value ? -ERANGE : 0;
}

static int apply_terms(const char *pmus, const char *pmu, const char *terms, size_t len,
		       struct perf_event_attr *attr, int depth);

/* One term of pmu/term,term/: "name=value", "name" (= 1) or an event alias. */
static int apply_term(const char *pmus, const char *pmu, const char *term,
		      struct perf_event_attr *attr, int depth)
{
	const char *eq = strchr(term, '=');
	size_t name_len = eq ? (size_t)(eq - term) : strlen(term);
	char name[TERM_MAX], file[TERM_MAX + 16], content[TERM_MAX];
	uint64_t value = 1;
	__u64 *field;
	char *end;

	if (!name_len || name_len >= sizeof(name) || memchr(term, '/', name_len) ||
	    memchr(term, '.', name_len))
		return -EINVAL;
	memcpy(name, term, name_len);
	name[name_len] = '\0';
	if (eq) {
		value = strtoull(eq + 1, &end, 0);
		if (end == eq + 1 || *end)
			return -EINVAL;
	}
	field = config_field(attr, name, name_len);
	if (field && eq) {
		*field = value;
		return 0;
	}
	snprintf(file, sizeof(file), "format/%s", name);
	if (!read_sysfs(pmus, pmu, file, content, sizeof(content)))
		return apply_format(attr, content, value);
	snprintf(file, sizeof(file), "events/%s", name);
	if (!eq && depth == 0 && !read_sysfs(pmus, pmu, file, content, sizeof(content)))
		return apply_terms(pmus, pmu, content, strlen(content), attr, depth + 1);
	return -EINVAL;
}

static int apply_terms(const char *pmus, const char *pmu, const char *terms, size_t len,
		       struct perf_event_attr *attr, int depth)
{
	char term[TERM_MAX];
	const char *p = terms, *end = terms + len, *comma;
	int ret = 0;

	while (!ret && p < end) {
		comma = memchr(p, ',', end - p);
		if (!comma)
			comma = end;
		if ((size_t)(comma - p) >= sizeof(term))
			return -EINVAL;
		memcpy(term, p, comma - p);
		term[comma - p] = '\0';
		ret = term[0] ? apply_term(pmus, pmu, term, attr, depth) : 0;
		p = comma + 1;
	}
	return ret;
}

/* "cpu/event=0x3c,umask=0x0/u", "cpu/cycles/", as perf takes them */
static int parse_pmu(const char *pmus, const char *str, size_t len,
		     struct perf_event_attr *attr)
{
	const char *slash = memchr(str, '/', len), *last = str + len;
	char pmu[TERM_MAX], type[32];
	const char *mods;
	size_t pmu_len;
	int ret;

	if (!slash)
		return -ENOENT;
	while (last > slash + 1 && last[-1] != '/')
		last--;
	pmu_len = slash - str;
	if (last == slash + 1 || !pmu_len || pmu_len >= sizeof(pmu))
		return -EINVAL;
	memcpy(pmu, str, pmu_len);
	pmu[pmu_len] = '\0';
	if (strchr(pmu, '.') || read_sysfs(pmus, pmu, "type", type, sizeof(type)))
		return -ENOENT;
	attr_init(attr, strtoul(type, NULL, 10), 0);
	ret = apply_terms(pmus, pmu, slash + 1, last - 1 - (slash + 1), attr, 0);
	mods = last;
	if (!ret && mods < str + len)
		ret = apply_modifiers(mods + (*mods == ':'), str + len - mods - (*mods == ':'),
				      attr);
	return ret;
}

int cgutil_parse_event_at(const char *pmus, const char *str, size_t len,
			  struct perf_event_attr *attr)
{
	int ret;

	if (!len)
		return -EINVAL;
	ret = parse_generic(str, len, attr);
	if (ret == -ENOENT)
		ret = memchr(str, '/', len) ? parse_pmu(pmus, str, len, attr) :
		      parse_raw(str, len, attr);
	if (ret == -ENOENT)
		ret = cgutil_pfm_encode(str, len, attr, sizeof(*attr));
	if (!ret)
		attr->size = sizeof(*attr);
	return ret;
}

int cgutil_parse_event(const char *str, size_t len, struct perf_event_attr *attr)
{
	return cgutil_parse_event_at(SYSFS_PMUS, str, len, attr);
}

void cgutil_event_names(char *buf, size_t len)
{
	size_t i, used = 0;
	int n;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < NR_GENERIC && used < len; i++) {
		n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
			     generic_events[i].name);
		if (n < 0)
			break;
		used += n;
	}
}

size_t cgutil_event_len(const char *list)
{
	const char *p = list;
	bool in_terms = false;

	for (; *p && (in_terms || (*p != ',' && *p != '}')); p++)
		in_terms ^= *p == '/';
	return p - list;
}

int cgutil_event_next(struct cgutil_event_iter *it, const char **ev, size_t *len,
		      unsigned int *flags)
{
	const char *p = it->pos;

	*flags = 0;
	if (!*p)
		return it->in_group ? -EINVAL : 0;
	if (*p == '{') {
		if (it->in_group)
			return -EINVAL;
		it->in_group = true;
		*flags |= CGUTIL_EV_LEADER;
		p++;
	}
	*ev = p;
	*len = cgutil_event_len(p);
	p += *len;
	if (it->in_group)
		*flags |= CGUTIL_EV_GROUPED;
	if (*p == '}') {
		if (!it->in_group)
			return -EINVAL;
		it->in_group = false;
		*flags |= CGUTIL_EV_LAST;
		p++;
		if (*p && *p != ',')
			return -EINVAL;	/* group modifiers ("{a,b}:u") are not taken */
	}
	/* a trailing comma, as ",,", is an empty event next, unless the list ends */
	it->pos = p + (*p == ',');
	return 1;
}
