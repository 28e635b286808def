/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's kselftest harness, with a longer per-test limit: under QEMU
 * TCG on a busy 2-core host a test of a few seconds can take minutes (the
 * harness's 30 s killed BPF skeleton loads there). Hangs are still caught:
 * by this limit, by the runner's per-program limit (tests/vm-tests.d/) and
 * by the guest's overall one. Include this instead of kselftest_harness.h.
 */
#ifndef TESTS_HARNESS_H
#define TESTS_HARNESS_H

#include "kselftest_harness.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#endif
