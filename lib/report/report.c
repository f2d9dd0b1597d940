// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The shared part of the statistics reports (lib/report/report.h): the two-call
 * snapshot (count the slots, then read them all) and the per-slot loops.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "report/report.h"

int lbi_report_snapshot(struct lbi_report *r, lbi_report_stats_fn stats,
			void *obj, void *total, size_t size)
{
	int n = stats(obj, total, NULL, 0);

	r->slots = NULL;
	r->size = size;
	r->nr = 0;
	if (n < 0)
		return n;
	r->slots = calloc(n ? (size_t)n : 1, size);
	if (!r->slots)
		return -ENOMEM;
	n = stats(obj, total, r->slots, (unsigned int)n);
	if (n < 0) {
		free(r->slots);
		r->slots = NULL;
		return n;
	}
	r->nr = n;
	return 0;
}

static const void *slot_at(const struct lbi_report *r, int i)
{
	return (const char *)r->slots + (size_t)i * r->size;
}

void lbi_report_rows(FILE *f, const struct lbi_report *r,
		     bool (*used)(const void *slot),
		     void (*row)(FILE *f, const char *label, const void *slot))
{
	char label[16];

	for (int i = 0; i < r->nr; i++) {
		if (!used(slot_at(r, i)))
			continue;
		snprintf(label, sizeof(label), "%d", i);
		row(f, label, slot_at(r, i));
	}
}

void lbi_report_json_slots(FILE *f, const struct lbi_report *r,
			   void (*json)(FILE *f, const void *slot))
{
	fputs("\"slots\":[", f);
	for (int i = 0; i < r->nr; i++) {
		fputs(i ? "," : "", f);
		json(f, slot_at(r, i));
	}
	fputc(']', f);
}

int lbi_report_end(FILE *f, struct lbi_report *r)
{
	free(r->slots);
	r->slots = NULL;
	return ferror(f) ? -EIO : 0;
}
