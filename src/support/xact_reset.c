/*-------------------------------------------------------------------------
 *
 * xact_reset.c
 *	  State kept from one call to the next until the transaction ends.
 *
 * The part cache and the last partial update keep what they learnt about
 * stored values for later calls of the same transaction.  Both forget it
 * when the transaction ends, and when a subtransaction aborts (the rows
 * it wrote may be pruned at once).  This file calls their reset functions
 * then.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/support/xact_reset.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"

#include "support/xact_reset.h"

#define MAX_RESETS	4

static JtResetFunction resets[MAX_RESETS];
static int	nresets = 0;

static void
reset_all(void)
{
	for (int i = 0; i < nresets; i++)
		resets[i] ();
}

static void
xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_PREPARE)
		reset_all();
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		reset_all();
}

/* Have reset called at the end of every transaction from now on. */
void
jt_reset_at_xact_end(JtResetFunction reset)
{
	for (int i = 0; i < nresets; i++)
		if (resets[i] == reset)
			return;
	if (nresets == 0)
	{
		RegisterXactCallback(xact_callback, NULL);
		RegisterSubXactCallback(subxact_callback, NULL);
	}
	if (nresets == MAX_RESETS)
		elog(ERROR, "too many jsonb_toaster reset functions");
	resets[nresets++] = reset;
}
