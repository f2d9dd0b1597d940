/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What lb_cpubatch_report() and lb_pcp_report() share: a snapshot of the
 * totals and of every slot's counters, the table's slot rows (only slots
 * that were used) and the JSON "slots" array. Each module keeps its own
 * columns and fields.
 */
#ifndef LOCKBATCH_REPORT_H
#define LOCKBATCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * A module's stats call with its types erased: fills @total and @nr of
 * @slots (either may be NULL / 0) and returns the slot count or -errno.
 */
typedef int (*lbi_report_stats_fn)(void *obj, void *total, void *slots,
				   unsigned int nr);

/* @nr slots of @size bytes each, malloc'd by lbi_report_snapshot(). */
struct lbi_report {
	void *slots;
	size_t size;
	int nr;
};

/* Totals into @total and every slot into r->slots: 0 or -errno. */
int lbi_report_snapshot(struct lbi_report *r, lbi_report_stats_fn stats,
			void *obj, void *total, size_t size);

/* One @row per slot that @used says was used, labelled by its index. */
void lbi_report_rows(FILE *f, const struct lbi_report *r,
		     bool (*used)(const void *slot),
		     void (*row)(FILE *f, const char *label, const void *slot));

/* "slots":[...] with @json for each slot. */
void lbi_report_json_slots(FILE *f, const struct lbi_report *r,
			   void (*json)(FILE *f, const void *slot));

/* Free the snapshot; 0, or -EIO if @f has seen an error. */
int lbi_report_end(FILE *f, struct lbi_report *r);

#endif /* LOCKBATCH_REPORT_H */
