// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_strerror(): every error value a public header documents has a
 * library meaning (the list below is what the headers' Return: sections
 * name), signs do not matter, and anything else is said to be foreign.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include <lockbatch/lockbatch.h>

static const int documented[] = {
	EINVAL, ENOMEM, EEXIST, EXDEV, ENOENT, EBUSY, EDEADLK, ELOOP, EAGAIN,
	ENOLCK, EOPNOTSUPP, ERANGE, EOVERFLOW, ENOSPC, ENOSYS, EIO, EPERM,
};

Test(error, every_documented_error_has_a_meaning)
{
	const char *foreign = lb_strerror(-ENOTTY);

	cr_assert_str_eq(foreign, "not a lockbatch error");
	for (size_t i = 0; i < sizeof(documented) / sizeof(documented[0]); i++) {
		const char *s = lb_strerror(-documented[i]);

		cr_assert_not_null(s);
		cr_assert_str_neq(s, foreign, "errno %d", documented[i]);
		cr_assert_str_eq(s, lb_strerror(documented[i]), "sign of %d",
				 documented[i]);
		/* Not the C library's generic text. */
		cr_assert_str_neq(s, strerror(documented[i]));
	}
}

Test(error, exdev_speaks_of_batch_sets)
{
	cr_assert_str_eq(lb_strerror(-EXDEV), "object belongs to another batch set");
	cr_assert_str_eq(lb_strerror(0), "success");
	cr_assert_str_eq(lb_strerror(-100000), "not a lockbatch error");
}

/* Real calls: the value a bad call returns is one lb_strerror() knows. */
Test(error, values_returned_by_calls_are_known)
{
	struct lb_cpubatch_conf conf;
	struct lb_cpubatch *pc;
	const char *foreign = lb_strerror(-ENOTTY);

	memset(&conf, 0, sizeof(conf));
	cr_assert_str_neq(lb_strerror(lb_cpubatch_create(&pc, &conf)), foreign);
	cr_assert_str_neq(lb_strerror(lb_lock_init(NULL, LB_LOCK_DEFAULT, NULL)),
			  foreign);
}
