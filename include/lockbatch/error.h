/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_ERROR_H
#define LOCKBATCH_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: Return conventions
 *
 * One rule for every module. A function that can fail returns an int: a
 * negative errno value on failure, after which nothing changed unless its
 * page says otherwise (bad input is never fatal and loses nothing), and 0
 * or a positive value on success. When success has more than one outcome,
 * 0 is the plain one (the call did what it was asked and no more) and a
 * positive value says that something more happened, or counts it:
 *
 * - adds: lb_wbatch_add(), lb_cpubatch_add() and lb_lru_add() return 0
 *   when the object waits in its batch and 1 when the batch is full and
 *   must be, or was, flushed;
 * - drains return the number of objects they flushed, stats calls the
 *   number of slots, lb_refbits_test_and_clear() the bits it found set,
 *   lb_lock_is_held() 1 for held;
 * - lb_cpubatch_settle() returns an &enum lb_settle_result, all >= 0.
 *
 * Functions that cannot fail return void, a count, or a pointer; a few
 * lock calls that must not return a value report through errno (see
 * lb_lock_acquire()). Each page lists every error it returns, and
 * lb_strerror() says what a value means for this library.
 */

/**
 * lb_strerror() - What an error value means for this library.
 * @err: A value returned by a lockbatch function (negative errno), or 0.
 *
 * The generic strerror() text of an errno often says nothing here (for
 * -EXDEV it gives "Invalid cross-device link"); this gives the meaning
 * the library's calls attach to it, e.g. -EXDEV: "object belongs to
 * another batch set". A positive @err is taken as its negation.
 *
 * Context: Any thread; returns a static string, never NULL.
 * Return: The meaning, or "not a lockbatch error" for a value no
 * lockbatch function returns.
 */
const char *lb_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_ERROR_H */
