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
 * The accessors of read/ have exactly the builtins' semantics, and
 * read only the bytes they need from compressed, TOASTed and toaster-stored
 * values, so existing queries get faster without being changed.
 *
 * Two ways in are not function calls: jsonb subscripting, whose routines
 * the executor gets from a handler that is a builtin (subscripting.c), and
 * the SQL/JSON query functions (JSON_VALUE, JSON_QUERY, JSON_EXISTS,
 * JSON_TABLE), whose context item reaches us through the series' hook on
 * it.
 *
 * The overrides are registered at server start; whether they serve a call
 * is decided per call by jsonb_toaster.override_builtins, so a session can
 * turn them off (to compare, or to rule them out) and get the builtins'
 * own code.  The accessors stay callable through the extension's functions
 * and operators either way.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/overrides.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"

#include "bytea/bytea_append.h"
#include "overrides.h"
#include "read/accessors.h"
#include "read/containment.h"
#include "read/jsonpath_funcs.h"
#include "read/record_funcs.h"
#include "read/root_funcs.h"
#include "subscripting.h"
#include "support/names.h"
#include "update/key_funcs.h"
#include "update/path_funcs.h"

static bool jt_override_builtins = true;
static json_path_item_hook_type prev_json_path_item_hook = NULL;

/*
 * One wrapper per builtin: ours while the setting is on, the builtin's own
 * implementation otherwise.
 */
#define JT_OVERRIDE(builtin, ours) \
static Datum \
override_##builtin(PG_FUNCTION_ARGS) \
{ \
	return jt_override_builtins ? ours(fcinfo) : builtin(fcinfo); \
}

JT_OVERRIDE(jsonb_object_field, jt_object_field)
JT_OVERRIDE(jsonb_object_field_text, jt_object_field_text)
JT_OVERRIDE(jsonb_array_element, jt_array_element)
JT_OVERRIDE(jsonb_array_element_text, jt_array_element_text)
JT_OVERRIDE(jsonb_extract_path, jt_extract_path)
JT_OVERRIDE(jsonb_extract_path_text, jt_extract_path_text)
JT_OVERRIDE(jsonb_exists, jt_exists)
JT_OVERRIDE(jsonb_exists_any, jt_exists_any)
JT_OVERRIDE(jsonb_exists_all, jt_exists_all)
JT_OVERRIDE(jsonb_set, jt_jsonb_set)
JT_OVERRIDE(jsonb_delete_path, jt_jsonb_delete_path)
JT_OVERRIDE(jsonb_insert, jt_jsonb_insert)
JT_OVERRIDE(jsonb_delete, jt_jsonb_delete)
JT_OVERRIDE(jsonb_concat, jt_jsonb_concat)
JT_OVERRIDE(jsonb_delete_array, jt_jsonb_delete_array)
JT_OVERRIDE(jsonb_contains, jt_jsonb_contains)
JT_OVERRIDE(jsonb_contained, jt_jsonb_contained)
JT_OVERRIDE(jsonb_to_record, jt_jsonb_to_record)
JT_OVERRIDE(jsonb_populate_record, jt_jsonb_populate_record)
JT_OVERRIDE(jsonb_populate_record_valid, jt_jsonb_populate_record_valid)
JT_OVERRIDE(jsonb_typeof, jt_jsonb_typeof)
JT_OVERRIDE(jsonb_array_length, jt_jsonb_array_length)
JT_OVERRIDE(jsonb_object_keys, jt_jsonb_object_keys)
JT_OVERRIDE(jsonb_path_exists, jt_jsonb_path_exists)
JT_OVERRIDE(jsonb_path_exists_tz, jt_jsonb_path_exists_tz)
JT_OVERRIDE(jsonb_path_exists_opr, jt_jsonb_path_exists_opr)
JT_OVERRIDE(jsonb_path_match, jt_jsonb_path_match)
JT_OVERRIDE(jsonb_path_match_tz, jt_jsonb_path_match_tz)
JT_OVERRIDE(jsonb_path_match_opr, jt_jsonb_path_match_opr)
JT_OVERRIDE(jsonb_path_query, jt_jsonb_path_query)
JT_OVERRIDE(jsonb_path_query_tz, jt_jsonb_path_query_tz)
JT_OVERRIDE(jsonb_path_query_array, jt_jsonb_path_query_array)
JT_OVERRIDE(jsonb_path_query_array_tz, jt_jsonb_path_query_array_tz)
JT_OVERRIDE(jsonb_path_query_first, jt_jsonb_path_query_first)
JT_OVERRIDE(jsonb_path_query_first_tz, jt_jsonb_path_query_first_tz)
JT_OVERRIDE(byteacat, jt_bytea_cat)

/* the handler returns routines: ours are chosen as an expression is set up */
static Datum
override_jsonb_subscript_handler(PG_FUNCTION_ARGS)
{
	if (!jt_override_builtins)
		return jsonb_subscript_handler(fcinfo);
	PG_RETURN_POINTER(jt_subscript_routines());
}

/*
 * The SQL/JSON query functions are evaluated by the executor, not through
 * fmgr: their context item reaches us through the core series' hook.
 */
static Datum
narrow_path_item(Datum item, JsonPath *path, List *item_paths)
{
	if (prev_json_path_item_hook)
		item = prev_json_path_item_hook(item, path, item_paths);
	if (jt_override_builtins)
		item = jt_narrow_path_item(item, path, item_paths);
	return item;
}

static const struct
{
	Oid			builtin;
	PGFunction	replacement;
}			overrides[] =
{
	{F_JSONB_OBJECT_FIELD, override_jsonb_object_field},
	{F_JSONB_OBJECT_FIELD_TEXT, override_jsonb_object_field_text},
	{F_JSONB_ARRAY_ELEMENT, override_jsonb_array_element},
	{F_JSONB_ARRAY_ELEMENT_TEXT, override_jsonb_array_element_text},
	{F_JSONB_EXTRACT_PATH, override_jsonb_extract_path},
	{F_JSONB_EXTRACT_PATH_TEXT, override_jsonb_extract_path_text},
	{F_JSONB_EXISTS, override_jsonb_exists},
	{F_JSONB_EXISTS_ANY, override_jsonb_exists_any},
	{F_JSONB_EXISTS_ALL, override_jsonb_exists_all},
	{F_JSONB_SET, override_jsonb_set},
	{F_JSONB_DELETE_PATH, override_jsonb_delete_path},
	{F_JSONB_INSERT, override_jsonb_insert},
	{F_JSONB_DELETE_JSONB_TEXT, override_jsonb_delete},
	{F_JSONB_CONCAT, override_jsonb_concat},
	{F_JSONB_DELETE_JSONB__TEXT, override_jsonb_delete_array},
	{F_JSONB_SUBSCRIPT_HANDLER, override_jsonb_subscript_handler},
	{F_JSONB_CONTAINS, override_jsonb_contains},
	{F_JSONB_CONTAINED, override_jsonb_contained},
	{F_JSONB_TO_RECORD, override_jsonb_to_record},
	{F_JSONB_TYPEOF, override_jsonb_typeof},
	{F_JSONB_ARRAY_LENGTH, override_jsonb_array_length},
	{F_JSONB_OBJECT_KEYS, override_jsonb_object_keys},
	{F_JSONB_POPULATE_RECORD, override_jsonb_populate_record},
	{F_JSONB_POPULATE_RECORD_VALID, override_jsonb_populate_record_valid},
	{F_JSONB_PATH_EXISTS, override_jsonb_path_exists},
	{F_JSONB_PATH_EXISTS_TZ, override_jsonb_path_exists_tz},
	{F_JSONB_PATH_EXISTS_OPR, override_jsonb_path_exists_opr},
	{F_JSONB_PATH_MATCH, override_jsonb_path_match},
	{F_JSONB_PATH_MATCH_TZ, override_jsonb_path_match_tz},
	{F_JSONB_PATH_MATCH_OPR, override_jsonb_path_match_opr},
	{F_JSONB_PATH_QUERY, override_jsonb_path_query},
	{F_JSONB_PATH_QUERY_TZ, override_jsonb_path_query_tz},
	{F_JSONB_PATH_QUERY_ARRAY, override_jsonb_path_query_array},
	{F_JSONB_PATH_QUERY_ARRAY_TZ, override_jsonb_path_query_array_tz},
	{F_JSONB_PATH_QUERY_FIRST, override_jsonb_path_query_first},
	{F_JSONB_PATH_QUERY_FIRST_TZ, override_jsonb_path_query_first_tz},
	{F_BYTEACAT, override_byteacat},
};

void
jt_overrides_init(void)
{
	DefineCustomBoolVariable(JSONB_TOASTER_GUC_PREFIX ".override_builtins",
							 "Serves the builtin jsonb accessors with jsonb_toaster's, which read only what they need.",
							 "When on, ->, ->>, #>, #>>, ?, ?|, ?&, @>, <@, subscripts, "
							 "the jsonb_path_* functions, @?, @@ and the SQL/JSON query "
							 "functions read only what they need of a stored document, and "
							 "jsonb_set(), jsonb_insert(), #-, jsonb - text, jsonb - text[], "
							 "|| and subscript assignment change only the parts they touch, "
							 "and bytea || on a value of the appendable bytea toaster writes "
							 "only the appended bytes; the results are the same.  Works only with the library in "
							 "shared_preload_libraries.",
							 &jt_override_builtins, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);

	prev_json_path_item_hook = json_path_item_hook;
	json_path_item_hook = narrow_path_item;

	/* overrides can be registered only while preloading */
	if (!process_shared_preload_libraries_in_progress)
		return;
	for (int i = 0; i < lengthof(overrides); i++)
		RegisterBuiltinFunctionOverride(overrides[i].builtin,
										overrides[i].replacement);
}

