// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_strerror(): the library's meaning of each errno value its calls
 * return, as the headers' Return: sections use them.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include <lockbatch/error.h>

static const struct {
	int err;
	const char *what;
} lbi_errors[] = {
	{ 0, "success" },
	{ EINVAL, "invalid argument: a NULL pointer, a value outside its "
		  "documented range, or an object that is not initialised" },
	{ ENOMEM, "out of memory" },
	{ EEXIST, "already there: the object is already cached in a batch "
		  "(added or freed twice), or the thread already runs" },
	{ EXDEV, "object belongs to another batch set" },
	{ ENOENT, "not there: the object was never added, or no thread runs" },
	{ EBUSY, "in use: the lock is held, a slot is busy, or the structure "
		 "still holds objects" },
	{ EDEADLK, "not allowed from a callback of the same instance "
		   "(it would wait for itself)" },
	{ ELOOP, "callbacks nested deeper than the library allows" },
	{ EAGAIN, "too many batches queued on this thread inside commit; "
		  "retry once the outer flush is done" },
	{ ENOLCK, "this thread holds too many queue locks (LB_LOCK_NEST_MAX)" },
	{ EOPNOTSUPP, "the back-end does not provide this operation "
		      "(e.g. no refcount callback)" },
	{ ERANGE, "reference count below what the caller accounted for" },
	{ EOVERFLOW, "counter at its maximum (disable nesting)" },
	{ ENOSPC, "batch is full: flush it before adding" },
	{ ENOSYS, "the kernel cannot tell the current CPU" },
	{ EIO, "writing the report failed" },
	{ EPERM, "released by a thread that does not hold the lock" },
};

const char *lb_strerror(int err)
{
	size_t i;

	if (err > 0)
		err = -err;
	for (i = 0; i < sizeof(lbi_errors) / sizeof(lbi_errors[0]); i++)
		if (-lbi_errors[i].err == err)
			return lbi_errors[i].what;
	return "not a lockbatch error";
}
