// SPDX-License-Identifier: GPL-2.0
/*
 * The listening sockets of --web.listen-address: "[HOST]:PORT", an empty
 * host for every address.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exporter.h"

int split_address(const char *address, char *host, size_t host_len, const char **port)
{
	const char *colon;
	size_t len;

	if (address[0] == '[') {
		colon = strstr(address, "]:");
		if (!colon)
			return -1;
		len = colon - address - 1;
		address++;
		*port = colon + 2;
	} else {
		colon = strrchr(address, ':');
		if (!colon || memchr(address, ':', colon - address))
			return -1;	/* an IPv6 address needs brackets */
		len = colon - address;
		*port = colon + 1;
	}
	if (len >= host_len || !**port)
		return -1;
	memcpy(host, address, len);
	host[len] = '\0';
	return 0;
}

static int bind_listener(const struct addrinfo *ai)
{
	int one = 1, zero = 0, fd;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    ai->ai_protocol);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* "[::]:port" takes IPv4 clients too */
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* the address family does not exist here: a kernel without IPv6 */
static int family_missing(int err)
{
	return err == -EAFNOSUPPORT || err == -EADDRNOTAVAIL;
}

/*
 * An empty host means every address: one IPv6 socket that takes IPv4 too,
 * or IPv4 alone on a kernel without IPv6.
 */
int listen_on(const char *address, int optional)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE },
			*res, *ai;
	char host[256];
	const char *port;
	int fd = -EADDRNOTAVAIL, err;

	if (split_address(address, host, sizeof(host), &port)) {
		fprintf(stderr, PROG ": --web.listen-address: expected [HOST]:PORT, "
			"[IPV6]:PORT or :PORT, not '%s'\n", address);
		return -1;
	}
	hints.ai_family = host[0] ? AF_UNSPEC : AF_INET6;
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (err == EAI_ADDRFAMILY || err == EAI_FAMILY || (!err && !host[0] &&
	    (fd = bind_listener(res)) == -EAFNOSUPPORT)) {
		if (!err)
			freeaddrinfo(res);
		hints.ai_family = AF_INET;
		err = getaddrinfo(NULL, port, &hints, &res);
		fd = -EADDRNOTAVAIL;
	}
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", address, gai_strerror(err));
		return -1;
	}
	for (ai = res; fd < 0 && ai; ai = ai->ai_next)
		fd = bind_listener(ai);
	freeaddrinfo(res);
	if (fd < 0 && optional && family_missing(fd))
		return -2;
	if (fd < 0) {
		fprintf(stderr, PROG ": cannot listen on %s: %s\n", address, strerror(-fd));
		return -1;
	}
	return fd;
}
