/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kubelet's cgroup names -> a pod's uid, a container's id and the
 * pod's QoS class, for both of its cgroup drivers:
 *
 *   systemd   /kubepods.slice/kubepods-burstable.slice/
 *               kubepods-burstable-pod<uid, '_' for '-'>.slice/
 *               cri-containerd-<id>.scope   (or crio-<id>.scope, docker-<id>.scope)
 *             a guaranteed pod: /kubepods.slice/kubepods-pod<uid>.slice/...
 *   cgroupfs  /kubepods/burstable/pod<uid>/<id>
 *             a guaranteed pod: /kubepods/pod<uid>/<id>
 *
 * (besteffort as burstable; the kubelet's --cgroup-root may put all of it
 * below another cgroup).  A uid is 32 hex digits (a static pod's) or a UUID;
 * an id is 64 hex digits.  The cgroups below a container's take its labels.
 * The outermost pod on the path wins: what a container names its own
 * cgroups cannot relabel it.  Pure: reads @path up to its NUL, no further,
 * allocates nothing.
 */
#ifndef TOOLS_EXPORTER_KUBELET_H
#define TOOLS_EXPORTER_KUBELET_H

#define KUBELET_UID_LEN 36		/* a UUID's; a static pod's is 32 */
#define KUBELET_ID_LEN 64

struct kubelet_labels {
	char pod_uid[KUBELET_UID_LEN + 1];	/* with '-', "" if none */
	char container_id[KUBELET_ID_LEN + 1];	/* "" if none */
	const char *qos_class;			/* guaranteed, burstable, besteffort; NULL */
};

/*
 * The labels of the cgroup @path ("/a/b", relative to the cgroup2 root):
 * 1 when it is a pod's cgroup or below one, else 0 with every label empty.
 */
int kubelet_parse(const char *path, struct kubelet_labels *l);

#endif /* TOOLS_EXPORTER_KUBELET_H */
