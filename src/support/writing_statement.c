/*-------------------------------------------------------------------------
 *
 * writing_statement.c
 *	  Whether the running transaction may still write rows.
 *
 * Some work pays off only when a value read may then be stored again in
 * the same transaction: the part cache (toaster/part_cache.c) copies the
 * parts a flatten reads so that the toaster need not read them again when
 * it confirms which parts an UPDATE kept, and forgets them when the
 * transaction ends.  A SELECT run as a transaction of its own would pay for
 * copies that nothing can use.  So the question asked here is whether the
 * transaction may still write: a statement that may write is running, or
 * the transaction is a block whose later statements may (not in a
 * read-only transaction, nor in a parallel worker).
 *
 * The executor hooks count the executors running a statement other than a
 * plain SELECT (INSERT, UPDATE, DELETE, MERGE, or a SELECT with a
 * data-modifying WITH), at any nesting level: an UPDATE run by a function
 * that a SELECT calls counts.  An executor left by an error is not ended,
 * so the count can be too high until the transaction ends, which resets
 * it (as does a subtransaction's abort, after which it can be too low):
 * either way the cost is a copy made or read again, never a wrong result.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/support/writing_statement.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "executor/executor.h"

#include "support/writing_statement.h"
#include "support/xact_reset.h"

static ExecutorStart_hook_type prev_executor_start = NULL;
static ExecutorEnd_hook_type prev_executor_end = NULL;
static int	writing_executors = 0;

static bool
may_write(const QueryDesc *queryDesc)
{
	return queryDesc->operation != CMD_SELECT ||
		(queryDesc->plannedstmt && queryDesc->plannedstmt->hasModifyingCTE);
}

static void
reset_count(void)
{
	writing_executors = 0;
}

static void
writing_executor_start(QueryDesc *queryDesc, int eflags)
{
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	if (may_write(queryDesc))
		writing_executors++;
}

static void
writing_executor_end(QueryDesc *queryDesc)
{
	/* not below zero: a subtransaction's abort has reset the count */
	if (may_write(queryDesc) && writing_executors > 0)
		writing_executors--;
	if (prev_executor_end)
		prev_executor_end(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

void
jt_writing_statement_init(void)
{
	jt_reset_at_xact_end(reset_count);
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = writing_executor_start;
	prev_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = writing_executor_end;
}

bool
jt_transaction_may_still_write(void)
{
	/*
	 * A parallel worker writes nothing, though its transaction state says
	 * "block"; nor does a read-only transaction.
	 */
	if (IsParallelWorker() || XactReadOnly)
		return false;
	return writing_executors > 0 || IsTransactionBlock();
}
