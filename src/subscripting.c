/*-------------------------------------------------------------------------
 *
 * subscripting.c
 *	  jsonb subscripting (jb['a'][0], UPDATE ... SET jb['a'] = v) that reads
 *	  and changes only the parts it needs (patched servers only).
 *
 * The executor finds a type's subscripting routines by calling its handler
 * through fmgr, so overriding jsonb_subscript_handler (overrides.c) puts
 * these routines in place for every subscripted jsonb expression.  Parse
 * analysis is the builtin's own (its transform routine is reused as it is);
 * the execution steps are ours:
 *
 *	- fetch and fetch_old follow the path with jt_get_path(), the navigator
 *	  the #> accessor uses, under jsonb_get_element()'s rules;
 *	- assign goes through jt_subscript_set(), which changes the part holding
 *	  the path as jsonb_set() does, under jsonb_set_element()'s rules.
 *
 * Whether ours are used is decided when an expression is set up for
 * execution, by jsonb_toaster.override_builtins at that time.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/subscripting.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/execExpr.h"
#include "nodes/nodeFuncs.h"
#include "nodes/subscripting.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"

#include "read/accessors.h"
#include "read/datum_source.h"
#include "subscripting.h"
#include "update/path_funcs.h"

/* SubscriptingRefState.workspace of our steps */
typedef struct SubscriptWorkspace
{
	bool		expect_array;	/* the first subscript is an integer */
	Oid		   *types;			/* each subscript's type: int4 or text */
	Datum	   *path;			/* each subscript as text */
} SubscriptWorkspace;

/*
 * Subscripts as the path jsonb_get_element() and jsonb_set_element() take:
 * text, integers printed.  A NULL subscript makes a fetch NULL and an
 * assignment an error, as the builtin does.
 */
static bool
check_subscripts(ExprState *state, ExprEvalStep *op, ExprContext *econtext)
{
	SubscriptingRefState *sbsrefstate = op->d.sbsref_subscript.state;
	SubscriptWorkspace *ws = (SubscriptWorkspace *) sbsrefstate->workspace;

	if (sbsrefstate->numupper > 0 && sbsrefstate->upperprovided[0] &&
		!sbsrefstate->upperindexnull[0] && ws->types[0] == INT4OID)
		ws->expect_array = true;

	for (int i = 0; i < sbsrefstate->numupper; i++)
	{
		if (!sbsrefstate->upperprovided[i])
			continue;
		if (sbsrefstate->upperindexnull[i])
		{
			if (sbsrefstate->isassignment)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("jsonb subscript in assignment must not be null")));
			*op->resnull = true;
			return false;
		}
		if (ws->types[i] == INT4OID)
			ws->path[i] = CStringGetTextDatum(DatumGetCString(
															  DirectFunctionCall1(int4out, sbsrefstate->upperindex[i])));
		else
			ws->path[i] = sbsrefstate->upperindex[i];
	}
	return true;
}

/* The element the subscripts name in doc, as jsonb_get_element() gives it */
static Datum
get_element(Datum doc, SubscriptingRefState *sbsrefstate, bool *isnull)
{
	SubscriptWorkspace *ws = (SubscriptWorkspace *) sbsrefstate->workspace;

	if (jt_datum_is_plain(doc))
		return jsonb_get_element(DatumGetJsonbP(doc), ws->path,
								 sbsrefstate->numupper, isnull, false);
	return jt_get_path(doc, ws->path, sbsrefstate->numupper, false, isnull);
}

/* jb[...] in an expression; the document is not NULL (fetch_strict) */
static void
fetch(ExprState *state, ExprEvalStep *op, ExprContext *econtext)
{
	Assert(!*op->resnull);
	*op->resvalue = get_element(*op->resvalue, op->d.sbsref.state,
								op->resnull);
}

/*
 * The element an assignment replaces, for a nested assignment: as fetch(),
 * into prevvalue, and NULL for a NULL document.
 */
static void
fetch_old(ExprState *state, ExprEvalStep *op, ExprContext *econtext)
{
	SubscriptingRefState *sbsrefstate = op->d.sbsref.state;

	if (*op->resnull)
	{
		sbsrefstate->prevvalue = (Datum) 0;
		sbsrefstate->prevnull = true;
	}
	else
		sbsrefstate->prevvalue = get_element(*op->resvalue, sbsrefstate,
											 &sbsrefstate->prevnull);
}

/*
 * jb[...] = value.  A NULL value is JSON null; a NULL document becomes an
 * empty array if the first subscript is an integer, else an empty object.
 */
static void
assign(ExprState *state, ExprEvalStep *op, ExprContext *econtext)
{
	SubscriptingRefState *sbsrefstate = op->d.sbsref.state;
	SubscriptWorkspace *ws = (SubscriptWorkspace *) sbsrefstate->workspace;
	Datum		value;

	if (sbsrefstate->replacenull)
	{
		JsonbValue	null;

		null.type = jbvNull;
		value = JsonbPGetDatum(JsonbValueToJsonb(&null));
	}
	else
		value = sbsrefstate->replacevalue;

	if (*op->resnull)
	{
		JsonbValue	empty;

		if (ws->expect_array)
		{
			empty.type = jbvArray;
			empty.val.array.nElems = 0;
			empty.val.array.rawScalar = false;
		}
		else
		{
			empty.type = jbvObject;
			empty.val.object.nPairs = 0;
		}
		*op->resvalue = JsonbPGetDatum(JsonbValueToJsonb(&empty));
		*op->resnull = false;
	}
	*op->resvalue = jt_subscript_set(*op->resvalue, ws->path,
									 sbsrefstate->numupper, value);
}

static void
exec_setup(const SubscriptingRef *sbsref, SubscriptingRefState *sbsrefstate,
		   SubscriptExecSteps *methods)
{
	int			n = list_length(sbsref->refupperindexpr);
	SubscriptWorkspace *ws;
	char	   *p;
	ListCell   *lc;

	ws = palloc0(MAXALIGN(sizeof(SubscriptWorkspace)) +
				 n * (sizeof(Datum) + sizeof(Oid)));
	p = (char *) ws + MAXALIGN(sizeof(SubscriptWorkspace));
	ws->path = (Datum *) p;
	ws->types = (Oid *) (p + n * sizeof(Datum));
	foreach(lc, sbsref->refupperindexpr)
		ws->types[foreach_current_index(lc)] = exprType(lfirst(lc));
	sbsrefstate->workspace = ws;

	methods->sbs_check_subscripts = check_subscripts;
	methods->sbs_fetch = fetch;
	methods->sbs_assign = assign;
	methods->sbs_fetch_old = fetch_old;
}

/*
 * The routines: the builtin's, with our execution steps.  Built once per
 * backend from the builtin's, which are constant.
 */
const SubscriptRoutines *
jt_subscript_routines(void)
{
	static SubscriptRoutines routines;
	static bool built = false;

	if (!built)
	{
		LOCAL_FCINFO(fcinfo, 0);
		const SubscriptRoutines *builtin;

		InitFunctionCallInfoData(*fcinfo, NULL, 0, InvalidOid, NULL, NULL);
		builtin = (const SubscriptRoutines *)
			DatumGetPointer(jsonb_subscript_handler(fcinfo));
		routines = *builtin;
		routines.exec_setup = exec_setup;
		built = true;
	}
	return &routines;
}
