// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup-exporter's kubelet cgroup names (tools/exporter/kubelet.c), host
 * test under ASan and UBSan: the shapes both of the kubelet's cgroup
 * drivers give pods and containers (systemd: containerd, CRI-O, Docker;
 * cgroupfs), and names that must get no label: other shapes, bad uids,
 * ids too long or short, bytes 0xff, a pod name inside a container's
 * cgroup.  Each path is copied into a buffer of its exact size, so that
 * ASan stops a read past its end.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kubelet.h"

#define UID "0f7c4b1e-2a3d-4c5e-8f90-a1b2c3d4e5f6"
#define UID_ "0f7c4b1e_2a3d_4c5e_8f90_a1b2c3d4e5f6"
#define STATIC_UID "6b0f8a5f5c0b1c3d9e8f7a6b5c4d3e2f"
#define ID "3f1e2d4c5b6a79880f1e2d3c4b5a69788f7e6d5c4b3a29180f1e2d3c4b5a6978"

struct kcase {
	const char *path;
	const char *pod_uid, *container_id, *qos;	/* "" and NULL: none */
};

static const struct kcase cases[] = {
	/* systemd driver: containerd, CRI-O, Docker, each QoS class */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	  UID, ID, "burstable" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" ID ".scope",
	  UID, ID, "besteffort" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID ".scope", UID, ID, "guaranteed" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice", UID, "", "guaranteed" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" STATIC_UID ".slice",
	  STATIC_UID, "", "burstable" },
	/* below another root (kind's nodes: kubelet.slice/kubelet-kubepods...) */
	{ "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	  "kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID ".scope", UID, ID, "besteffort" },
	/* a container's own cgroups take its labels */
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope/init.scope",
	  UID, ID, "guaranteed" },
	/* CRI-O's conmon is no container */
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" ID ".scope", UID, "", "guaranteed" },
	/* cgroupfs driver */
	{ "/kubepods/burstable/pod" UID "/" ID, UID, ID, "burstable" },
	{ "/kubepods/besteffort/pod" UID "/" ID, UID, ID, "besteffort" },
	{ "/kubepods/pod" UID "/" ID, UID, ID, "guaranteed" },
	{ "/kubepods/pod" STATIC_UID, STATIC_UID, "", "guaranteed" },
	{ "/kubepods/burstable/pod" UID "/" ID "/sub", UID, ID, "burstable" },
	{ "//kubepods//burstable/pod" UID "//" ID "/", UID, ID, "burstable" },
	/* the outermost pod wins: a name inside a container relabels nothing */
	{ "/kubepods/pod" UID "/" ID "/kubepods/pod" STATIC_UID "/" ID, UID, ID, "guaranteed" },
	/* no pod */
	{ "/", "", "", NULL },
	{ "", "", "", NULL },
	{ "/kubepods.slice", "", "", NULL },
	{ "/kubepods.slice/kubepods-burstable.slice", "", "", NULL },
	{ "/kubepods/burstable", "", "", NULL },
	{ "/system.slice/containerd.service", "", "", NULL },
	{ "/system.slice/docker-" ID ".scope", "", "", NULL },
	/* the pod slice's parent must be its prefix's slice */
	{ "/kubepods.slice/kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID ".scope", "", "", NULL },
	{ "/kubepods-burstable.slice/kubepods-besteffort-pod" UID_ ".slice", "", "", NULL },
	/* the driver's separator: dashes in a systemd name, '_' in cgroupfs */
	{ "/kubepods.slice/kubepods-pod" UID ".slice", "", "", NULL },
	{ "/kubepods/pod" UID_, "", "", NULL },
	/* a uid's length, digits and separators */
	{ "/kubepods/pod", "", "", NULL },
	{ "/kubepods/pod0f7c4b1e-2a3d-4c5e-8f90-a1b2c3d4e5f", "", "", NULL },
	{ "/kubepods/pod0f7c4b1e-2a3d-4c5e-8f90-a1b2c3d4e5f60", "", "", NULL },
	{ "/kubepods/pod0f7c4b1e-2a3d-4c5e-8f90-a1b2c3d4e5fG", "", "", NULL },
	{ "/kubepods/pod0f7c4b1e-2a3d-4c5e-8f90-A1B2C3D4E5F6", "", "", NULL },
	{ "/kubepods/pod0f7c4b1e2-a3d-4c5e-8f90-a1b2c3d4e5f6", "", "", NULL },
	{ "/kubepods/pod6b0f8a5f5c0b1c3d9e8f7a6b5c4d3e2", "", "", NULL },
	{ "/kubepods/guaranteed/pod" UID, "", "", NULL },
	{ "/x/burstable/pod" UID, "", "", NULL },
	{ "/kubepods.slice/kubepods-pod.slice", "", "", NULL },
	{ "/kubepods.slice/kubepods-pod" UID_, "", "", NULL },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slic", "", "", NULL },
	{ "/kubepods.slice/xkubepods-pod" UID_ ".slice", "", "", NULL },
	{ "/xkubepods.slice/xkubepods-pod" UID_ ".slice", "", "", NULL },
	/* ids: 64 lowercase hex digits, nothing else */
	{ "/kubepods/pod" UID "/" ID "0", UID, "", "guaranteed" },
	{ "/kubepods/pod" UID "/" ID "00000000000000000000000000000000000000000000000000000000000",
	  UID, "", "guaranteed" },
	{ "/kubepods/pod" UID "/3f1e", UID, "", "guaranteed" },
	{ "/kubepods/pod" UID "/3F1E2D4C5B6A79880F1E2D3C4B5A69788F7E6D5C4B3A29180F1E2D3C4B5A6978",
	  UID, "", "guaranteed" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID "0.scope", UID, "", "guaranteed" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID, UID, "", "guaranteed" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-.scope", UID, "", "guaranteed" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/podman-" ID ".scope", UID, "", "guaranteed" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/.scope", UID, "", "guaranteed" },
	/* bytes 0xff and controls where digits should be */
	{ "/kubepods/pod\xff" "f7c4b1e-2a3d-4c5e-8f90-a1b2c3d4e5f6", "", "", NULL },
	{ "/kubepods/pod" UID "/\xff" "f1e2d4c5b6a79880f1e2d3c4b5a69788f7e6d5c4b3a29180f1e2d3c4b5a6978",
	  UID, "", "guaranteed" },
	{ "/kubepods\xff/pod" UID, "", "", NULL },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice\xff", "", "", NULL },
	{ "/kubepods/pod0f7c4b1e-2a3d-4c5e-8f90-a1b2c3d4e5f\n", "", "", NULL },
	/* names cut short at every length: no read past the end */
	{ "/kubepods.slice/kubepods-", "", "", NULL },
	{ "/kubepods.slice/kubepods-p", "", "", NULL },
	{ "/kubepods.slice/k", "", "", NULL },
	{ "/kubepods/p", "", "", NULL },
	{ "/kubepods/burstable/po", "", "", NULL },
};

static void check_case(struct __test_metadata *_metadata, const struct kcase *c)
{
	size_t len = strlen(c->path) + 1;
	char *path = malloc(len);
	struct kubelet_labels l;
	int ret;

	ASSERT_NE(NULL, path);
	memcpy(path, c->path, len);
	ret = kubelet_parse(path, &l);
	free(path);
	EXPECT_EQ(*c->pod_uid != 0, ret) TH_LOG("%s", c->path);
	EXPECT_STREQ(c->pod_uid, l.pod_uid) TH_LOG("%s", c->path);
	EXPECT_STREQ(c->container_id, l.container_id) TH_LOG("%s", c->path);
	EXPECT_STREQ(c->qos ? c->qos : "(none)", l.qos_class ? l.qos_class : "(none)")
		TH_LOG("%s", c->path);
}

TEST(kubelet_names)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(_metadata, &cases[i]);
}

/* Every prefix of the longest name, each in a buffer of its own size */
TEST(every_prefix_stays_in_bounds)
{
	const char *full = cases[5].path;
	struct kubelet_labels l;
	size_t len, whole = strlen(full);
	char *p;

	for (len = 0; len <= whole; len++) {
		p = malloc(len + 1);
		ASSERT_NE(NULL, p);
		memcpy(p, full, len);
		p[len] = '\0';
		kubelet_parse(p, &l);
		EXPECT_EQ(len == whole, strlen(l.container_id) == 64) TH_LOG("%zu", len);
		free(p);
	}
}

/* A path far beyond PATH_MAX of pod-like names */
TEST(long_hostile_path)
{
	static const char unit[] = "/kubepods-pod" UID_ ".slice\xff";
	size_t n = 20000, len = n * (sizeof(unit) - 1);
	struct kubelet_labels l;
	char *p = malloc(len + 1);
	size_t i;

	ASSERT_NE(NULL, p);
	for (i = 0; i < n; i++)
		memcpy(p + i * (sizeof(unit) - 1), unit, sizeof(unit) - 1);
	p[len] = '\0';
	EXPECT_EQ(0, kubelet_parse(p, &l));
	EXPECT_STREQ("", l.pod_uid);
	free(p);
}

TEST_HARNESS_MAIN
