// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgutil: event strings through libpfm4 (pfm_get_os_event_encoding with
 * PFM_OS_PERF_EVENT_EXT), the field's way to name PMU events: native names
 * ("INST_RETIRED:ANY_P:u"), "perf::..." and "perf_raw::r..." encodings.
 * A file of its own: libpfm4's <perfmon/perf_event.h> defines its own
 * struct perf_event_attr, which cannot meet <linux/perf_event.h>'s.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <perfmon/pfmlib_perf_event.h>

#include "cgutil_pfm.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int initialized;

static void pfm_init(void)
{
	initialized = pfm_initialize() == PFM_SUCCESS;
}

int cgutil_pfm_encode(const char *str, size_t len, void *out, size_t out_size)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	char *name;
	int ret;

	pthread_once(&once, pfm_init);
	if (!initialized)
		return -ENOENT;
	name = strndup(str, len);
	if (!name)
		return -ENOMEM;
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	free(name);
	if (ret == PFM_ERR_NOTFOUND)
		return -ENOENT;
	if (ret != PFM_SUCCESS)
		return -EINVAL;
	/* both structs are the kernel's ABI layout; libpfm4's may be the shorter */
	memset(out, 0, out_size);
	memcpy(out, &attr, sizeof(attr) < out_size ? sizeof(attr) : out_size);
	return 0;
}
