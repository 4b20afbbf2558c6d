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
 * The column names come from where the builtin takes the record type: for
 * jsonb_to_record(jb) AS (a int, b text), the call's column list; for
 * jsonb_populate_record(base, jb), the type of base (the type of its value
 * when base is an anonymous record, the call's column list when that is
 * NULL).  Plain documents go to the builtin.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/record_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "format/pointer.h"
#include "read/datum_source.h"
#include "read/narrow.h"
#include "read/record_funcs.h"

/*
 * The record type whose columns the builtin fills, as populate_record_worker
 * finds it: the base argument's type (argument 0) if there is one, else the
 * call's result type; NULL if it cannot be told here.
 */
static TupleDesc
record_type(FunctionCallInfo fcinfo, bool have_base)
{
	TupleDesc	tupdesc;

	if (have_base)
	{
		Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, 0);

		if (argtype == RECORDOID && !PG_ARGISNULL(0))
		{
			HeapTupleHeader rec = PG_GETARG_HEAPTUPLEHEADER(0);

			return lookup_rowtype_tupdesc_copy(HeapTupleHeaderGetTypeId(rec),
											   HeapTupleHeaderGetTypMod(rec));
		}
		if (argtype != RECORDOID)
		{
			TupleDesc	found;

			if (!OidIsValid(argtype) || !type_is_rowtype(argtype))
				return NULL;
			found = lookup_rowtype_tupdesc_domain(argtype, -1, false);
			tupdesc = CreateTupleDescCopy(found);
			ReleaseTupleDesc(found);
			return tupdesc;
		}
	}
	else if (fcinfo->resultinfo != NULL &&
			 IsA(fcinfo->resultinfo, ReturnSetInfo) &&
			 ((ReturnSetInfo *) fcinfo->resultinfo)->expectedDesc != NULL)
	{
		/*
		 * A function returning record, in FROM with its columns: what
		 * get_call_result_type() answers, without its catalog lookup on
		 * every call.
		 */
		return ((ReturnSetInfo *) fcinfo->resultinfo)->expectedDesc;
	}
	switch (get_call_result_type(fcinfo, NULL, &tupdesc))
	{
		case TYPEFUNC_COMPOSITE:
		case TYPEFUNC_COMPOSITE_DOMAIN:
			return tupdesc;
		default:
			return NULL;
	}
}

/*
 * Does the record take every key of the document's root, a skeleton's?
 * Then narrowing would fetch every part and copy them into a document as
 * large as the original: the builtin reads the original at less cost.
 */
static bool
takes_every_root_key(Datum doc, const JtChains *chains)
{
	JtDatumSource src;
	JtNode		root;
	bool		every = true;

	jt_datum_source_open(&src, doc, jt_scratch());
	jt_datum_source_root(&src, &root);
	if (root.kind != JT_NODE_CONTAINER || !jt_node_is_object(&root) ||
		jt_node_count(&root) > (uint32) chains->nchains)
		every = false;
	for (uint32 i = 0; every && i < jt_node_count(&root); i++)
	{
		uint32		len;
		const char *name = jt_datum_source_root_key(&src, &root, i, &len);
		bool		found = false;

		for (int c = 0; c < chains->nchains && !found; c++)
		{
			const JtPathStep *step = &chains->steps[chains->start[c]];

			found = step->keylen == len && memcmp(step->key, name, len) == 0;
		}
		every = found;
	}
	jt_datum_source_close(&src);
	return every;
}

/*
 * The builtin on the document (argument doc_arg) narrowed to the keys that
 * name the columns of the record it fills.
 */
static Datum
call_narrowed(FunctionCallInfo fcinfo, PGFunction builtin, int doc_arg)
{
	Datum		doc;
	TupleDesc	tupdesc;
	JtChains	chains;
	Datum		narrowed;
	bool		missed;

	if (PG_ARGISNULL(doc_arg))
		return builtin(fcinfo);
	doc = PG_GETARG_DATUM(doc_arg);
	if (jt_datum_is_plain(doc) ||
		(tupdesc = record_type(fcinfo, doc_arg == 1)) == NULL)
		return builtin(fcinfo);

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
	if (chains.nchains == 0 ||
		(chains.nchains > 1 &&
		 jt_is_pointer((struct varlena *) DatumGetPointer(doc)) &&
		 takes_every_root_key(doc, &chains)))
		return builtin(fcinfo);
	narrowed = jt_narrow(doc, &chains, &missed);
	if (narrowed == (Datum) 0)
		return builtin(fcinfo);
	return jt_call_on_narrowed(fcinfo, builtin, doc_arg, narrowed);
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
