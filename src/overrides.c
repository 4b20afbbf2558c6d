/*-------------------------------------------------------------------------
 *
 * overrides.c
 *	  Put the extension's accessors in place of the builtin jsonb accessors
 *	  (patched servers only).
 *
 * The core patch series lets a library loaded through
 * shared_preload_libraries supply another implementation of a builtin
 * function: same OID, same semantics.  Every call path reaches it: the
 * executor, constant folding, views, PL/pgSQL, expression indexes, JIT.
 * The accessors of accessors.c have exactly the builtins' semantics, and
 * read only the bytes they need from compressed, TOASTed and toaster-stored
 * values, so existing queries get faster without being changed.
 *
 * jsonb_toaster.override_builtins = off (set before the server starts)
 * leaves the builtins alone; the accessors then stay callable through the
 * extension's functions and operators.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/overrides.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef JT_CUSTOM_TOAST

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"

#include "accessors.h"
#include "jsonb_toaster.h"
#include "overrides.h"

static bool jt_override_builtins = true;

static const struct
{
	Oid			builtin;
	PGFunction	replacement;
}			overrides[] =
{
	{F_JSONB_OBJECT_FIELD, jt_object_field},
	{F_JSONB_OBJECT_FIELD_TEXT, jt_object_field_text},
	{F_JSONB_ARRAY_ELEMENT, jt_array_element},
	{F_JSONB_ARRAY_ELEMENT_TEXT, jt_array_element_text},
	{F_JSONB_EXTRACT_PATH, jt_extract_path},
	{F_JSONB_EXTRACT_PATH_TEXT, jt_extract_path_text},
	{F_JSONB_EXISTS, jt_exists},
	{F_JSONB_EXISTS_ANY, jt_exists_any},
	{F_JSONB_EXISTS_ALL, jt_exists_all},
};

void
jt_overrides_init(void)
{
	/*
	 * Overrides can be registered only while shared_preload_libraries is
	 * processed, and a PGC_POSTMASTER setting defined only then.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomBoolVariable(JSONB_TOASTER_GUC_PREFIX ".override_builtins",
							 "Makes the builtin jsonb accessors read only what they need.",
							 "When on, ->, ->>, #>, #>>, ?, ?| and ?& (and their functions) "
							 "are served by jsonb_toaster's accessors, which have the same "
							 "results.  Takes effect at server start, with the library in "
							 "shared_preload_libraries.",
							 &jt_override_builtins, true, PGC_POSTMASTER, 0,
							 NULL, NULL, NULL);

	if (!jt_override_builtins)
		return;
	for (int i = 0; i < lengthof(overrides); i++)
		RegisterBuiltinFunctionOverride(overrides[i].builtin,
										overrides[i].replacement);
}

#endif							/* JT_CUSTOM_TOAST */
