/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * memcached text-protocol responses, counted as they stream in. Only what
 * the load generator sends can come back: STORED (or an error) for a set,
 * VALUE ... END or END (or an error) for a single-key get, DELETED or
 * NOT_FOUND (or an error) for a delete. GET answers can be checked on the
 * way against the key-derived values (lg_value.c).
 */
#include <stdlib.h>
#include <string.h>

#include "lg.h"

static int lg_starts(const char *line, size_t len, const char *word)
{
	size_t n = strlen(word);

	return len >= n && memcmp(line, word, n) == 0;
}

/* Split "VALUE <key> <flags> <bytes>[ <cas>]" into its words 1-3. */
struct lg_value_line {
	const char *key, *flags;
	size_t key_len, flags_len;
	uint64_t bytes;
};

static int lg_value_words(const char *line, size_t len,
			  struct lg_value_line *v)
{
	const char *w[4];
	size_t wl[4], i = 0;
	unsigned int n = 0;

	while (n < 4) {
		while (i < len && line[i] == ' ')
			i++;
		if (i >= len)
			break;
		w[n] = line + i;
		while (i < len && line[i] != ' ')
			i++;
		wl[n] = (size_t)(line + i - w[n]);
		n++;
	}
	if (n < 4)
		return -1;
	v->key = w[1];
	v->key_len = wl[1];
	v->flags = w[2];
	v->flags_len = wl[2];
	v->bytes = 0;
	for (i = 0; i < wl[3]; i++) {
		if (w[3][i] < '0' || w[3][i] > '9')
			return -1;
		v->bytes = v->bytes * 10 + (uint64_t)(w[3][i] - '0');
	}
	return 0;
}

/* "key:<digits>" as lg_run names keys: the id, or -1. */
static int64_t lg_key_id(const char *key, size_t len)
{
	uint64_t id = 0;
	size_t i;

	if (len < 5 || len > 4 + 10 || memcmp(key, "key:", 4))
		return -1;
	for (i = 4; i < len; i++) {
		if (key[i] < '0' || key[i] > '9')
			return -1;
		id = id * 10 + (uint64_t)(key[i] - '0');
	}
	return id > UINT32_MAX ? -1 : (int64_t)id;
}

/* Count the answer in flight wrong, once, with the first reason seen. */
static void lg_wrong(struct lg_parse *p, const char *why)
{
	uint64_t i = p->done - p->want_base;

	p->vcheck = 0;
	if (p->vwrong)
		return;
	p->vwrong = 1;
	if (!p->wrong_why) {
		p->wrong_why = why;
		p->wrong_key = p->want && i < p->nwant ? p->want[i] : 0;
	}
	p->wrong++;
}

/* A VALUE line checked against the key asked for and its value. */
static void lg_check_value_line(struct lg_parse *p,
				const struct lg_value_line *v)
{
	uint64_t i = p->done - p->want_base;
	int64_t id = lg_key_id(v->key, v->key_len);
	const char *why = NULL;

	p->vcheck = 0;
	if (!p->vmin)
		return;
	if (p->seen_value)
		why = "two values for one key";
	else if (id < 0)
		why = "a key mc-loadgen never sends";
	else if (p->want && (i >= p->nwant || p->want[i] != (uint32_t)id))
		why = "not the key asked for";
	else if (v->flags_len != 1 || v->flags[0] != '0')
		why = "flags never set";
	else if (v->bytes != lg_value_len(p->vmin, p->vmax, (uint32_t)id))
		why = "a length never set for the key";
	if (why) {
		lg_wrong(p, why);
		return;
	}
	lg_value_pattern((uint32_t)id, p->vpat);
	p->vcheck = 1;
}

/* @n bytes of a value and its CRLF, from @pos in it, as they arrive. */
static void lg_check_value_bytes(struct lg_parse *p, const char *b,
				 uint64_t pos, size_t n)
{
	while (n && pos < p->vlen) {
		size_t k = LG_VALUE_PERIOD - (size_t)(pos % LG_VALUE_PERIOD);

		if (k > n)
			k = n;
		if (k > p->vlen - pos)
			k = (size_t)(p->vlen - pos);
		if (p->vcheck &&
		    memcmp(b, p->vpat + pos % LG_VALUE_PERIOD, k))
			lg_wrong(p, "bytes never set for the key");
		b += k;
		pos += k;
		n -= k;
	}
	/* The CRLF after the data: anything else and the stream is lost. */
	for (; n; b++, pos++, n--)
		if (*b != "\r\n"[pos - p->vlen])
			p->bad = 1;
}

static void lg_parse_line(struct lg_parse *p, const char *line, size_t len)
{
	if (lg_starts(line, len, "ERROR") || lg_starts(line, len, "CLIENT_ERROR") ||
	    lg_starts(line, len, "SERVER_ERROR")) {
		p->errors++;
		p->done++;
		p->seen_value = 0;
		p->vwrong = 0;
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
	if (p->kind == LG_DEL) {
		if (len == 7 && lg_starts(line, len, "DELETED"))
			p->deleted++;
		else if (len == 9 && lg_starts(line, len, "NOT_FOUND"))
			p->del_misses++;
		else {
			p->bad = 1;
			return;
		}
		p->done++;
		return;
	}
	if (lg_starts(line, len, "VALUE ")) {
		struct lg_value_line v;

		if (lg_value_words(line, len, &v) < 0) {
			p->bad = 1;
			return;
		}
		lg_check_value_line(p, &v);
		p->vlen = v.bytes;	/* checked or not: where the CRLF is */
		p->skip = v.bytes + 2;	/* the CRLF after the data */
		p->seen_value = 1;
		return;
	}
	if (len == 3 && lg_starts(line, len, "END")) {
		if (p->seen_value)
			p->hits++;
		else
			p->misses++;
		p->seen_value = 0;
		p->vwrong = 0;
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

			lg_check_value_bytes(p, buf + off, p->vlen + 2 - p->skip,
					     n);
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
