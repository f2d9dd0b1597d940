/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The server's own counters, read over a connection of their own with
 * "stats" and "stats lblock" (the LRU lock counts of patch 0001). The CPU
 * time is memcached's rusage_user + rusage_system: getrusage(RUSAGE_SELF)
 * of the server process, to the microsecond.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "lg.h"

const char *const lg_path_names[LG_PATHS] = {
	"link", "bump", "unlink", "pull_tail", "other"
};

int lg_check_host(const char *host)
{
	struct in_addr a;

	if (!host || inet_pton(AF_INET, host, &a) != 1 ||
	    (ntohl(a.s_addr) >> 24) != 127)
		return -EINVAL;
	return 0;
}

/* Read until the reply to both commands is in: two "END\r\n" lines. */
static int lg_server_talk(int fd, char *buf, size_t cap)
{
	static const char req[] = "stats\r\nstats lblock\r\n";
	size_t len = 0;
	int ends = 0;

	if (write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
		return -EIO;
	while (ends < 2) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		char *p;

		if (n <= 0)
			return n == 0 ? -ECONNRESET : -errno;
		len += (size_t)n;
		buf[len] = 0;
		/* "stats lblock" is ERROR on a server without patch 0001. */
		for (ends = 0, p = buf; (p = strstr(p, "\r\n")); p += 2) {
			char *line = p;

			while (line > buf && line[-1] != '\n')
				line--;
			if (!strncmp(line, "END\r\n", 5) ||
			    !strncmp(line, "ERROR\r\n", 7))
				ends++;
		}
		if (len + 1 >= cap)
			return -EMSGSIZE;
	}
	return 0;
}

static void lg_server_stat(struct lg_server *s, const char *name,
			   double v)
{
	unsigned int i;
	char key[64];

	if (!strcmp(name, "rusage_user"))
		s->user_s = v;
	else if (!strcmp(name, "rusage_system"))
		s->sys_s = v;
	else if (!strcmp(name, "cmd_get"))
		s->cmd_get = v;
	else if (!strcmp(name, "cmd_set"))
		s->cmd_set = v;
	else if (!strcmp(name, "get_hits"))
		s->get_hits = v;
	else if (!strcmp(name, "evictions"))
		s->evictions = v;
	else if (!strcmp(name, "delete_hits"))
		s->delete_hits = v;
	else if (!strcmp(name, "delete_misses"))
		s->delete_misses = v;
	else if (!strcmp(name, "lblock_enabled"))
		s->lblock_enabled = v != 0;
	for (i = 0; i < LG_PATHS; i++) {
		snprintf(key, sizeof(key), "lblock_%s_acquired",
			 lg_path_names[i]);
		if (!strcmp(name, key))
			s->acquired[i] = v;
		snprintf(key, sizeof(key), "lblock_%s_contended",
			 lg_path_names[i]);
		if (!strcmp(name, key))
			s->contended[i] = v;
		snprintf(key, sizeof(key), "lblock_%s_wait_ns",
			 lg_path_names[i]);
		if (!strcmp(name, key))
			s->wait_ns[i] = v;
	}
}

int lg_server_read(const char *host, unsigned int port, struct lg_server *s)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 10 };
	size_t cap = 1 << 16;
	char *buf, *line, *save = NULL;
	int fd, err;

	memset(s, 0, sizeof(*s));
	if (lg_check_host(host) < 0 || port == 0 || port > 65535)
		return -EINVAL;
	sa.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, host, &sa.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	err = lg_server_talk(fd, buf, cap);
	close(fd);
	for (line = strtok_r(buf, "\r\n", &save); !err && line;
	     line = strtok_r(NULL, "\r\n", &save)) {
		char name[64];
		double v;

		if (sscanf(line, "STAT %63s %lf", name, &v) == 2)
			lg_server_stat(s, name, v);
	}
	free(buf);
	return err;
}
