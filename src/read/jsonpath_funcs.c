/*-------------------------------------------------------------------------
 *
 * jsonpath_funcs.c
 *	  The jsonb_path_* functions and the @? and @@ operators, run on the
 *	  part of a document their path can reach.
 *
 * Every $ of a path (the root: the start of the path, or inside a
 * filter) is followed by a chain of member accessors (.key) and constant
 * array subscripts ([3]) naming one node before anything else happens.
 * PostgreSQL's own executor evaluates the path as it is, on the document
 * narrowed to those chains (narrow.c): the nodes they reach, complete,
 * inside containers that hold only the next steps of the chains.  Every
 * item of the path after a chain sees exactly what it would see in the
 * whole document, so results, errors, lax unwrapping, strict checks,
 * variables, filters, `last` and error suppression are the builtin's own.
 * So '$.a.b ? (@ > $.c)' reads a.b and c, and '$.status == "active"' (a
 * predicate, as @@ takes) reads status.
 *
 * A key a chain misses is missing from the narrowed object too, whatever
 * else it held: the step finds nothing, or raises the same error in
 * strict mode.  An index past an array's end is past the narrowed array's
 * end too, which keeps its size in nulls.  No later item can see those
 * nulls: the only items that read an array's size (`last`, .size()) read
 * that of the array they are applied to, which is then a node reached.
 *
 * A path that is $ and a chain, nothing else, finds the node the chain
 * reaches when every step leads somewhere (one item, in lax and strict mode
 * alike, no error possible): the functions that answer whether there is an
 * item, what the first is, or what single boolean it is answer from that
 * node, without narrowing or the executor.  Otherwise the builtin decides.
 *
 * Paths that could see the difference get the whole document: a $ with no
 * chain after it (the whole document is what it reads), .keyvalue()
 * anywhere (its "id" is the position of an object in the document), and
 * item types this file does not know.  So does a plain (in-memory,
 * uncompressed) document, which has nothing to save.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/jsonpath_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/jsonpath.h"

#include "read/accessors.h"
#include "read/datum_source.h"
#include "read/jsonpath_funcs.h"
#include "read/narrow.h"

/* The chains of a path's $ items, as scan_path() finds them. */
typedef struct PathChains
{
	JtChains	chains;
	bool		whole;			/* the path needs the whole document */
} PathChains;

/* A constant subscript that is a whole number from 0 to JT_NARROW_MAX_INDEX. */
static bool
constant_index(JsonPathItem *subscript, uint32 *index)
{
	char	   *digits;
	int64		value = 0;

	if (subscript->type != jpiNumeric || jspHasNext(subscript))
		return false;
	digits = DatumGetCString(DirectFunctionCall1(numeric_out,
												 NumericGetDatum(jspGetNumeric(subscript))));
	if (*digits == '\0' || strlen(digits) > 5)
		return false;
	for (const char *c = digits; *c; c++)
	{
		if (*c < '0' || *c > '9')
			return false;
		value = value * 10 + (*c - '0');
	}
	if (value > JT_NARROW_MAX_INDEX)
		return false;
	*index = (uint32) value;
	return true;
}

/* Is item a step of a chain?  If so, it is stored in *step. */
static bool
chain_step(JsonPathItem *item, JtPathStep *step)
{
	if (item->type == jpiKey)
	{
		int32		len;

		step->key = jspGetString(item, &len);
		step->keylen = (uint32) len;
		return true;
	}
	if (item->type == jpiIndexArray && item->content.array.nelems == 1)
	{
		JsonPathItem from;
		JsonPathItem to;

		step->key = NULL;
		return !jspGetArraySubscript(item, &from, &to, 0) &&
			constant_index(&from, &step->index);
	}
	return false;
}

static void scan_path(JsonPathItem *v, PathChains *pc);

/* scan_path() on an argument of an item */
static void
scan_arg(JsonPathItem *item, int32 pos, PathChains *pc)
{
	JsonPathItem a;

	jspInitByBuffer(&a, item->base, pos);
	scan_path(&a, pc);
}

/*
 * Find the chains that follow each $ of the path from item v on (its next
 * items and arguments), or set pc->whole.
 */
static void
scan_path(JsonPathItem *v, PathChains *pc)
{
	JsonPathItem item = *v;
	JsonPathItem next;

	check_stack_depth();
	while (!pc->whole)
	{
		switch (item.type)
		{
			case jpiRoot:
				{
					JtPathStep	step;

					if (!jt_chains_begin(&pc->chains))
					{
						pc->whole = true;
						return;
					}
					while (jspGetNext(&item, &next) &&
						   chain_step(&next, &step) &&
						   jt_chains_add(&pc->chains, &step))
						item = next;
					if (jt_chains_end(&pc->chains) == 0)
						pc->whole = true;
				}
				break;
			case jpiAnd:
			case jpiOr:
			case jpiEqual:
			case jpiNotEqual:
			case jpiLess:
			case jpiGreater:
			case jpiLessOrEqual:
			case jpiGreaterOrEqual:
			case jpiAdd:
			case jpiSub:
			case jpiMul:
			case jpiDiv:
			case jpiMod:
			case jpiStartsWith:
			case jpiDecimal:
				/* .decimal()'s precision and scale may be absent */
				if (item.content.args.left)
					scan_arg(&item, item.content.args.left, pc);
				if (item.content.args.right)
					scan_arg(&item, item.content.args.right, pc);
				break;
			case jpiNot:
			case jpiIsUnknown:
			case jpiPlus:
			case jpiMinus:
			case jpiFilter:
			case jpiExists:
			case jpiDatetime:
			case jpiTime:
			case jpiTimeTz:
			case jpiTimestamp:
			case jpiTimestampTz:
				/* the datetime methods' argument may be absent */
				if (item.content.arg)
					scan_arg(&item, item.content.arg, pc);
				break;
			case jpiLikeRegex:
				scan_arg(&item, item.content.like_regex.expr, pc);
				break;
			case jpiIndexArray:
				for (int i = 0; i < item.content.array.nelems; i++)
				{
					JsonPathItem from;
					JsonPathItem to;

					if (jspGetArraySubscript(&item, &from, &to, i))
						scan_path(&to, pc);
					scan_path(&from, pc);
				}
				break;
			case jpiNull:
			case jpiString:
			case jpiNumeric:
			case jpiBool:
			case jpiAnyArray:
			case jpiAnyKey:
			case jpiAny:
			case jpiKey:
			case jpiCurrent:
			case jpiVariable:
			case jpiLast:
			case jpiType:
			case jpiSize:
			case jpiAbs:
			case jpiFloor:
			case jpiCeiling:
			case jpiDouble:
			case jpiBigint:
			case jpiBoolean:
			case jpiDate:
			case jpiInteger:
			case jpiNumber:
			case jpiStringFunc:
				break;
			default:
				/* .keyvalue(), and any item type added later */
				pc->whole = true;
				return;
		}
		if (!jspGetNext(&item, &next))
			return;
		item = next;
	}
}

/*
 * If the path is $ and a chain of steps, nothing else, store the chain and
 * return true.
 */
static bool
pure_chain(JsonPath *jp, JtChains *chains)
{
	JsonPathItem v;
	JsonPathItem next;
	JtPathStep	step;

	jspInit(&v, jp);
	if (v.type != jpiRoot || !jt_chains_begin(chains))
		return false;
	while (jspGetNext(&v, &next))
	{
		if (!chain_step(&next, &step) || !jt_chains_add(chains, &step))
			return false;
		v = next;
	}
	jt_chains_end(chains);
	return true;
}

/* JtChainsBuilder of a jsonpath */
static bool
build_path_chains(const void *bytes, JtChains *chains)
{
	PathChains	pc;
	JsonPathItem v;
	JtChains	one;

	jt_chains_init(&pc.chains);
	pc.whole = false;
	jspInit(&v, (JsonPath *) bytes);
	scan_path(&v, &pc);
	if (pc.whole)
		return false;
	*chains = pc.chains;
	jt_chains_init(&one);
	chains->exact = pure_chain((JsonPath *) bytes, &one);
	return true;
}

/* The chains of a jsonpath, kept; NULL if it reads the whole document. */
static const JtChains *
path_chains(JsonPath *jp)
{
	return jt_kept_chains(jp, VARSIZE(jp), build_path_chains);
}

/*
 * doc narrowed to the chains of the path, or (Datum) 0 if the path needs
 * the whole document.
 */
static Datum
narrow_for_path(Datum doc, JsonPath *jp)
{
	const JtChains *chains = path_chains(jp);
	bool		missed;

	if (chains == NULL || chains->nchains == 0)
		return (Datum) 0;
	return jt_narrow(doc, chains, &missed);
}

/*
 * The chains of a JSON_TABLE whose row pattern is the chain base: each
 * chain of each path evaluated on the row item (the item it names), after
 * base.  False if some item path reads the item whole.
 */
static bool
item_path_chains(const JtChains *base, List *item_paths, JtChains *chains)
{
	ListCell   *lc;

	foreach(lc, item_paths)
	{
		JsonPath   *p = lfirst(lc);
		JtChains	pc;

		/*
		 * Not the kept chains: the steps copied point into the path, and a
		 * later path of the list could take the slot of an earlier one.
		 */
		jt_chains_init(&pc);
		if (p == NULL || !build_path_chains(p, &pc))
			return false;
		for (int c = 0; c < pc.nchains; c++)
		{
			if (!jt_chains_begin(chains))
				return false;
			for (int i = 0; i < base->length[0]; i++)
				if (!jt_chains_add(chains, &base->steps[i]))
					return false;
			for (int i = 0; i < pc.length[c]; i++)
				if (!jt_chains_add(chains, &pc.steps[pc.start[c] + i]))
					return false;
			jt_chains_end(chains);
		}
	}
	return true;
}

/*
 * item narrowed for the paths of a JSON_TABLE whose row pattern is jp, if
 * that is a chain: to what item_paths read of the node it names.  (Datum)
 * 0 if not, or if some item path reads that node whole.
 */
static Datum
narrow_for_item_paths(Datum item, JsonPath *jp, List *item_paths)
{
	JtChains	base;
	JtChains	chains;
	bool		missed;

	jt_chains_init(&base);
	jt_chains_init(&chains);
	if (!pure_chain(jp, &base) ||
		!item_path_chains(&base, item_paths, &chains) || chains.nchains == 0)
		return (Datum) 0;
	return jt_narrow(item, &chains, &missed);
}

/*
 * The context item of a SQL/JSON query function (JSON_VALUE, JSON_QUERY,
 * JSON_EXISTS, JSON_TABLE) narrowed for its path, or the item itself.
 * JSON_TABLE's row pattern comes with item_paths, the paths of its columns
 * and nested row patterns: when the row pattern is a chain (often just $),
 * the node it names is narrowed to what those paths read in turn.
 */
Datum
jt_narrow_path_item(Datum item, JsonPath *jp, List *item_paths)
{
	Datum		narrowed = (Datum) 0;

	if (jt_datum_is_plain(item))
		return item;
	if (item_paths != NIL)
		narrowed = narrow_for_item_paths(item, jp, item_paths);
	if (narrowed == (Datum) 0)
		narrowed = narrow_for_path(item, jp);
	return narrowed == (Datum) 0 ? item : narrowed;
}

/* What a function makes of the items its path finds. */
typedef enum PathAnswer
{
	ANSWER_BUILTIN,				/* only the builtin knows */
	ANSWER_EXISTS,				/* whether there is any */
	ANSWER_FIRST,				/* the first */
	ANSWER_MATCH,				/* the single one, a boolean or null */
} PathAnswer;

/*
 * The answer of a path that is $ and a chain of steps, nothing else, when
 * every step leads somewhere: then the path finds one item, the node
 * reached, in lax and strict mode alike, and no error can arise.  False
 * when a step misses or leads elsewhere (the builtin then decides what
 * the path finds, or which error it raises), when "vars" is not an object
 * (which the builtin reports), or when the match's item is not a boolean
 * or null.
 */
static bool
answer_from_chain(FunctionCallInfo fcinfo, const JtChains *chains,
				  PathAnswer answer, Datum *result)
{
	const JtPathStep *steps = &chains->steps[chains->start[0]];
	int			length = chains->length[0];
	JtReach		r;

	if (PG_NARGS() == 4 && !JB_ROOT_IS_OBJECT(PG_GETARG_JSONB_P(2)))
		return false;
	jt_reach(PG_GETARG_DATUM(0), steps, length, &r);
	if (r.taken < length || r.missing)
	{
		jt_reach_close(&r);
		return false;
	}
	switch (answer)
	{
		case ANSWER_EXISTS:
			jt_reach_close(&r);
			*result = BoolGetDatum(true);
			return true;
		case ANSWER_FIRST:
			*result = jt_reach_result(&r);
			return true;
		case ANSWER_MATCH:
			/* a boolean or a null is never kept apart from its container */
			jt_reach_close(&r);
			if (r.node.kind == JT_NODE_TRUE || r.node.kind == JT_NODE_FALSE)
			{
				*result = BoolGetDatum(r.node.kind == JT_NODE_TRUE);
				return true;
			}
			if (r.node.kind == JT_NODE_NULL)
			{
				fcinfo->isnull = true;
				*result = (Datum) 0;
				return true;
			}
			return false;
		case ANSWER_BUILTIN:
			break;
	}
	jt_reach_close(&r);
	return false;
}

/*
 * The builtin, on the document narrowed to the path's chain, or the
 * answer read from the node a lone chain reaches.  A set returning builtin
 * reads its arguments on its first call only.
 */
static Datum
call_narrowed(FunctionCallInfo fcinfo, PGFunction builtin, bool set_returning,
			  PathAnswer answer)
{
	const JtChains *chains;
	Datum		narrowed;
	bool		missed;

	if (jt_datum_is_plain(PG_GETARG_DATUM(0)) ||
		(set_returning && fcinfo->flinfo->fn_extra != NULL))
		return builtin(fcinfo);
	chains = path_chains(PG_GETARG_JSONPATH_P(1));
	if (chains == NULL || chains->nchains == 0)
		return builtin(fcinfo);
	if (chains->exact && answer != ANSWER_BUILTIN)
	{
		Datum		result;

		if (answer_from_chain(fcinfo, chains, answer, &result))
			return result;
	}
	narrowed = jt_narrow(PG_GETARG_DATUM(0), chains, &missed);
	if (narrowed == (Datum) 0)
		return builtin(fcinfo);
	return jt_call_on_narrowed(fcinfo, builtin, 0, narrowed);
}

#define JT_PATH_FUNC(builtin, set_returning, answer) \
Datum \
jt_##builtin(PG_FUNCTION_ARGS) \
{ \
	return call_narrowed(fcinfo, builtin, set_returning, answer); \
}

JT_PATH_FUNC(jsonb_path_exists, false, ANSWER_EXISTS)
JT_PATH_FUNC(jsonb_path_exists_tz, false, ANSWER_EXISTS)
JT_PATH_FUNC(jsonb_path_exists_opr, false, ANSWER_EXISTS)
JT_PATH_FUNC(jsonb_path_match, false, ANSWER_MATCH)
JT_PATH_FUNC(jsonb_path_match_tz, false, ANSWER_MATCH)
JT_PATH_FUNC(jsonb_path_match_opr, false, ANSWER_MATCH)
JT_PATH_FUNC(jsonb_path_query, true, ANSWER_BUILTIN)
JT_PATH_FUNC(jsonb_path_query_tz, true, ANSWER_BUILTIN)
JT_PATH_FUNC(jsonb_path_query_array, false, ANSWER_BUILTIN)
JT_PATH_FUNC(jsonb_path_query_array_tz, false, ANSWER_BUILTIN)
JT_PATH_FUNC(jsonb_path_query_first, false, ANSWER_FIRST)
JT_PATH_FUNC(jsonb_path_query_first_tz, false, ANSWER_FIRST)
