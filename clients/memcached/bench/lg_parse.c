/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * memcached text-protocol responses, counted as they stream in. Only what
 * the load generator sends can come back: STORED (or an error) for a set,
 * VALUE ... END or END (or an error) for a single-key get.
 */
#include <stdlib.h>
#include <string.h>

#include "lg.h"

static int lg_starts(const char *line, size_t len, const char *word)
{
	size_t n = strlen(word);

	return len >= n && memcmp(line, word, n) == 0;
}

/* The byte count of "VALUE <key> <flags> <bytes>[ <cas>]": the 4th word. */
static int lg_value_bytes(const char *line, size_t len, uint64_t *bytes)
{
	unsigned int word = 0;
	size_t i = 0;

	while (i < len && word < 3) {
		while (i < len && line[i] != ' ')
			i++;
		while (i < len && line[i] == ' ')
			i++;
		word++;
	}
	if (word < 3 || i >= len || line[i] < '0' || line[i] > '9')
		return -1;
	*bytes = 0;
	while (i < len && line[i] >= '0' && line[i] <= '9')
		*bytes = *bytes * 10 + (uint64_t)(line[i++] - '0');
	return 0;
}

static void lg_parse_line(struct lg_parse *p, const char *line, size_t len)
{
	if (lg_starts(line, len, "ERROR") || lg_starts(line, len, "CLIENT_ERROR") ||
	    lg_starts(line, len, "SERVER_ERROR")) {
		p->errors++;
		p->done++;
		p->seen_value = 0;
		return;
	}
	if (p->kind == LG_SET) {
		if (len == 6 && lg_starts(line, len, "STORED")) {
			p->done++;
			return;
		}
		if (lg_starts(line, len, "NOT_STORED")) {
			p->errors++;
			p->done++;
			return;
		}
		p->bad = 1;
		return;
	}
	if (lg_starts(line, len, "VALUE ")) {
		if (lg_value_bytes(line, len, &p->skip) < 0) {
			p->bad = 1;
			return;
		}
		p->skip += 2;	/* the CRLF after the data */
		p->seen_value = 1;
		return;
	}
	if (len == 3 && lg_starts(line, len, "END")) {
		if (p->seen_value)
			p->hits++;
		else
			p->misses++;
		p->seen_value = 0;
		p->done++;
		return;
	}
	p->bad = 1;
}

size_t lg_parse_feed(struct lg_parse *p, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len && !p->bad) {
		const char *nl;

		if (p->skip) {
			size_t n = len - off < p->skip ? len - off : (size_t)p->skip;

			off += n;
			p->skip -= n;
			continue;
		}
		nl = memchr(buf + off, '\n', len - off);
		if (!nl)
			break;
		/* A line ends in CRLF; anything else is not memcached. */
		if (nl == buf + off || nl[-1] != '\r') {
			p->bad = 1;
			break;
		}
		lg_parse_line(p, buf + off, (size_t)(nl - 1 - (buf + off)));
		off = (size_t)(nl + 1 - buf);
	}
	return off;
}
