/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* cgutil internal: libpfm4's encoding, without either perf_event.h. */
#ifndef CGUTIL_PFM_H
#define CGUTIL_PFM_H

#include <stddef.h>

/*
 * Encode the event @str (@len bytes) with libpfm4 into @out, a struct
 * perf_event_attr of @out_size bytes (its size field left for the caller).
 * -ENOENT: libpfm4 does not know it; -EINVAL: it knows it, not so.
 */
int cgutil_pfm_encode(const char *str, size_t len, void *out, size_t out_size);

#endif
