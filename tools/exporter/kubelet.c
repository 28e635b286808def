// SPDX-License-Identifier: GPL-2.0
/*
 * The kubelet's cgroup names (kubelet.h).  Every name is a pointer and a
 * length into the path; nothing is read past a name's end.
 */
#include <stddef.h>
#include <string.h>

#include "kubelet.h"

struct name {
	const char *s;
	size_t len;
};

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int has_prefix(struct name n, const char *prefix)
{
	size_t len = strlen(prefix);

	return n.len >= len && !memcmp(n.s, prefix, len);
}

static int has_suffix(struct name n, const char *suffix)
{
	size_t len = strlen(suffix);

	return n.len >= len && !memcmp(n.s + n.len - len, suffix, len);
}

static int equals(struct name n, const char *s)
{
	return n.len == strlen(s) && !memcmp(n.s, s, n.len);
}

static struct name drop(struct name n, size_t front, size_t back)
{
	return (struct name){ n.s + front, n.len - front - back };
}

/* 32 hex digits, or a UUID whose four separators are @sep; into @out with '-' */
static int parse_uid(struct name n, char sep, char out[KUBELET_UID_LEN + 1])
{
	size_t i;

	if (n.len != 32 && n.len != KUBELET_UID_LEN)
		return 0;
	for (i = 0; i < n.len; i++) {
		int dash = n.len == KUBELET_UID_LEN && (i == 8 || i == 13 || i == 18 || i == 23);

		if (dash ? n.s[i] != sep : !is_hex(n.s[i]))
			return 0;
		out[i] = dash ? '-' : n.s[i];
	}
	out[n.len] = '\0';
	return 1;
}

static int parse_id(struct name n, char out[KUBELET_ID_LEN + 1])
{
	size_t i;

	if (n.len != KUBELET_ID_LEN)
		return 0;
	for (i = 0; i < n.len; i++)
		if (!is_hex(n.s[i]))
			return 0;
	memcpy(out, n.s, n.len);
	out[n.len] = '\0';
	return 1;
}

enum driver { NONE, SYSTEMD, CGROUPFS };

/*
 * systemd: "<P>-pod<uid>.slice" in "<P>.slice", where P ends with the
 * kubepods slice's name and its QoS: "kubepods", "kubepods-burstable",
 * "kubepods-besteffort" (or "kubelet-kubepods-..." below another root).
 */
static int systemd_pod(struct name parent, struct name n, struct kubelet_labels *l)
{
	static const struct { const char *slice, *qos; } qos[] = {
		{ "kubepods", "guaranteed" },
		{ "kubepods-burstable", "burstable" },
		{ "kubepods-besteffort", "besteffort" },
	};
	struct name prefix;
	size_t i, len;

	if (!has_suffix(n, ".slice") || !has_suffix(parent, ".slice"))
		return 0;
	prefix = drop(parent, 0, strlen(".slice"));
	/* n == prefix "-pod" uid ".slice" */
	if (n.len <= prefix.len + 4 + 6 || memcmp(n.s, prefix.s, prefix.len) ||
	    memcmp(n.s + prefix.len, "-pod", 4))
		return 0;
	for (i = 0; i < sizeof(qos) / sizeof(qos[0]); i++) {
		len = strlen(qos[i].slice);
		if (has_suffix(prefix, qos[i].slice) &&
		    (prefix.len == len || prefix.s[prefix.len - len - 1] == '-') &&
		    parse_uid(drop(n, prefix.len + 4, 6), '_', l->pod_uid)) {
			l->qos_class = qos[i].qos;
			return 1;
		}
	}
	return 0;
}

/* cgroupfs: "pod<uid>" in "kubepods", or in "burstable"/"besteffort" in "kubepods" */
static int cgroupfs_pod(struct name grandparent, struct name parent, struct name n,
			struct kubelet_labels *l)
{
	const char *qos;

	if (!has_prefix(n, "pod"))
		return 0;
	if (equals(parent, "kubepods"))
		qos = "guaranteed";
	else if (equals(grandparent, "kubepods") &&
		 (equals(parent, "burstable") || equals(parent, "besteffort")))
		qos = parent.s[1] == 'u' ? "burstable" : "besteffort";
	else
		return 0;
	if (!parse_uid(drop(n, 3, 0), '-', l->pod_uid))
		return 0;
	l->qos_class = qos;
	return 1;
}

static void container(enum driver d, struct name n, struct kubelet_labels *l)
{
	static const char *const scopes[] = { "cri-containerd-", "crio-", "docker-" };
	size_t i;

	if (d == CGROUPFS) {
		parse_id(n, l->container_id);
		return;
	}
	if (!has_suffix(n, ".scope"))
		return;
	for (i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++)
		if (has_prefix(n, scopes[i]) &&
		    parse_id(drop(n, strlen(scopes[i]), strlen(".scope")), l->container_id))
			return;
}

/* The name that starts at @p (after its '/'s), or len 0 at the end */
static struct name next_name(const char **p)
{
	struct name n;

	while (**p == '/')
		(*p)++;
	n.s = *p;
	while (**p && **p != '/')
		(*p)++;
	n.len = *p - n.s;
	return n;
}

int kubelet_parse(const char *path, struct kubelet_labels *l)
{
	struct name grandparent = { "", 0 }, parent = { "", 0 }, n;
	enum driver d = NONE;

	*l = (struct kubelet_labels){ .qos_class = NULL };
	while ((n = next_name(&path)).len) {
		if (systemd_pod(parent, n, l))
			d = SYSTEMD;
		else if (cgroupfs_pod(grandparent, parent, n, l))
			d = CGROUPFS;
		if (d != NONE) {
			n = next_name(&path);
			if (n.len)
				container(d, n, l);
			return 1;
		}
		grandparent = parent;
		parent = n;
	}
	*l = (struct kubelet_labels){ .qos_class = NULL };
	return 0;
}
