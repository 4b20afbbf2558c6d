/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  The toaster's settings (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/settings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"
#include "utils/memutils.h"

#include "support/names.h"
#include "toaster/settings.h"

#define JT_DEFAULT_INLINE_BUDGET	2000
#define JT_DEFAULT_RANGE_SIZE		2048

int			jt_inline_budget = JT_DEFAULT_INLINE_BUDGET;
int			jt_range_size = JT_DEFAULT_RANGE_SIZE;

void
jt_toaster_settings_init(void)
{
	DefineCustomIntVariable(JSONB_TOASTER_GUC_PREFIX ".inline_budget",
							"Largest skeleton the jsonb toaster keeps in a heap row.",
							"The longest values of a document leave the row until "
							"the rest fits in this many bytes, or in the room "
							"TOAST leaves the column if that is less.",
							&jt_inline_budget, JT_DEFAULT_INLINE_BUDGET,
							0, MaxAllocSize / 2, PGC_USERSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable(JSONB_TOASTER_GUC_PREFIX ".range_size",
							"Size of the ranges wide arrays and objects are split into.",
							"A container larger than this that leaves the row is "
							"stored as several parts of about this size.",
							&jt_range_size, JT_DEFAULT_RANGE_SIZE,
							64, MaxAllocSize / 2, PGC_USERSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
}
