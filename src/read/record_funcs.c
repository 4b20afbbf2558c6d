/*-------------------------------------------------------------------------
 *
 * record_funcs.c
 *	  jsonb_to_record() and jsonb_populate_record() run on the fields of
 *	  the document their record type names.
 *
 * A record is built from the document's root keys that name its columns,
 * each value converted as a whole; no other key is read.  So the builtin
 * runs on the document narrowed (narrow.c) to one chain per column: an
 * object of those keys only, with their values complete.  A key the
 * document lacks is missing from the narrowed object too, and the column
 * gets what the builtin gives it (NULL, or the base record's field).
 *
 * The column names come from the call's result type: the column list of
 * jsonb_to_record(jb) AS (a int, b text), the type of
 * jsonb_populate_record()'s first argument.  A record type known only from
 * the value (an argument of type record) and plain documents go to the
 * builtin.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/record_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "funcapi.h"
#include "utils/fmgrprotos.h"

#include "read/datum_source.h"
#include "read/narrow.h"
#include "read/record_funcs.h"

/*
 * The builtin on the document (argument doc_arg) narrowed to the keys that
 * name the columns of the call's result type.
 */
static Datum
call_narrowed(FunctionCallInfo fcinfo, PGFunction builtin, int doc_arg)
{
	Datum		doc;
	TupleDesc	tupdesc;
	JtChains	chains;
	Datum		narrowed;
	Datum		result;
	bool		missed;

	if (PG_ARGISNULL(doc_arg))
		return builtin(fcinfo);
	doc = PG_GETARG_DATUM(doc_arg);
	if (jt_datum_is_plain(doc))
		return builtin(fcinfo);
	switch (get_call_result_type(fcinfo, NULL, &tupdesc))
	{
		case TYPEFUNC_COMPOSITE:
		case TYPEFUNC_COMPOSITE_DOMAIN:
			break;
		default:
			return builtin(fcinfo);
	}

	jt_chains_init(&chains);
	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		JtPathStep	step;

		if (att->attisdropped)
			continue;
		step.key = NameStr(att->attname);
		step.keylen = strlen(step.key);
		step.index = 0;
		if (!jt_chains_begin(&chains) || !jt_chains_add(&chains, &step))
			return builtin(fcinfo);
		jt_chains_end(&chains);
	}
	if (chains.nchains == 0)
		return builtin(fcinfo);
	narrowed = jt_narrow(doc, &chains, &missed);
	if (narrowed == (Datum) 0)
		return builtin(fcinfo);
	fcinfo->args[doc_arg].value = narrowed;
	result = builtin(fcinfo);
	fcinfo->args[doc_arg].value = doc;
	return result;
}

Datum
jt_jsonb_to_record(PG_FUNCTION_ARGS)
{
	return call_narrowed(fcinfo, jsonb_to_record, 0);
}

Datum
jt_jsonb_populate_record(PG_FUNCTION_ARGS)
{
	return call_narrowed(fcinfo, jsonb_populate_record, 1);
}

Datum
jt_jsonb_populate_record_valid(PG_FUNCTION_ARGS)
{
	return call_narrowed(fcinfo, jsonb_populate_record_valid, 1);
}
