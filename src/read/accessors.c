/*-------------------------------------------------------------------------
 *
 * accessors.c
 *	  jsonb accessors that read only the part of a document they need.
 *
 * Each function here has exactly the semantics of a builtin: same result,
 * same NULLs, same handling of negative indexes, raw scalars and missing
 * keys.  A plain (uncompressed, in-memory) argument goes straight to the
 * builtin, which is as fast as it gets on bytes in memory.  A compressed or
 * TOASTed argument is read through a byte source and the lazy navigator
 * (datum_source.c, navigator.c): only the chunks and the decompressed
 * prefix holding the path followed are ever produced.
 *
 * The results are built the way the builtins build them: a scalar goes
 * through JsonbValueToJsonb(), a nested container is returned as a copy of
 * its bytes (what JsonbValueToJsonb() does with a binary value), text comes
 * from the same conversions JsonbValueAsText() uses.
 *
 * Cases that need the whole document anyway (an empty path with #>, a key
 * test on an array with ?) are handed to the builtin with the argument as
 * it came, which de-TOASTs it; there is nothing to save there.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/accessors.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "catalog/pg_type.h"
#include "common/string.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "jsonb/jsonb_writer.h"
#include "read/accessors.h"
#include "read/datum_source.h"
#include "read/skeleton_read.h"
#include "support/compat.h"

#ifdef JT_CUSTOM_TOAST
#include "format/pointer.h"
#include "toast/pointer_open.h"
#endif

PG_FUNCTION_INFO_V1(jt_object_field);
PG_FUNCTION_INFO_V1(jt_object_field_text);
PG_FUNCTION_INFO_V1(jt_array_element);
PG_FUNCTION_INFO_V1(jt_array_element_text);
PG_FUNCTION_INFO_V1(jt_extract_path);
PG_FUNCTION_INFO_V1(jt_extract_path_text);
PG_FUNCTION_INFO_V1(jt_exists);
PG_FUNCTION_INFO_V1(jt_exists_any);
PG_FUNCTION_INFO_V1(jt_exists_all);

/* The navigator restates the jsonb format; make sure it agrees. */
StaticAssertDecl(JT_JENTRY_OFFLEN_MASK == JENTRY_OFFLENMASK &&
				 JT_JENTRY_TYPE_MASK == JENTRY_TYPEMASK &&
				 JT_JENTRY_HAS_OFF == JENTRY_HAS_OFF &&
				 JT_JENTRY_STRING == JENTRY_ISSTRING &&
				 JT_JENTRY_NUMERIC == JENTRY_ISNUMERIC &&
				 JT_JENTRY_FALSE == JENTRY_ISBOOL_FALSE &&
				 JT_JENTRY_TRUE == JENTRY_ISBOOL_TRUE &&
				 JT_JENTRY_NULL == JENTRY_ISNULL &&
				 JT_JENTRY_CONTAINER == JENTRY_ISCONTAINER,
				 "JEntry layout differs from utils/jsonb.h");
StaticAssertDecl(JT_CONTAINER_COUNT_MASK == JB_CMASK &&
				 JT_CONTAINER_SCALAR == JB_FSCALAR &&
				 JT_CONTAINER_OBJECT == JB_FOBJECT &&
				 JT_CONTAINER_ARRAY == JB_FARRAY,
				 "container header layout differs from utils/jsonb.h");

/*
 * The bytes of a found scalar node as its JEntry holds them (len of them:
 * none for a boolean or a null), pointing into the source.  A numeric's
 * own varlena header is checked against the room it has, wherever it lies.
 */
static const char *
scalar_bytes(JtSource *src, const JtNode *node, uint32 *len)
{
	const char *p = jt_source_read(src, node->offset, node->length);
	union
	{
		uint64		align;
		char		bytes[2 * VARHDRSZ];	/* a varattrib_4b's size */
	}			head = {0};

	switch (node->kind)
	{
		case JT_NODE_STRING:
			*len = node->length;
			break;
		case JT_NODE_NUMERIC:
			/* one load when it can be: bytes stored one by one stall a read */
			if (node->length >= VARHDRSZ)
				memcpy(head.bytes, p, VARHDRSZ);
			else
				memcpy(head.bytes, p, node->length);
			if (node->length < VARHDRSZ_SHORT ||
				VARATT_IS_EXTERNAL(head.bytes) ||
				VARATT_IS_COMPRESSED(head.bytes) ||
				(!VARATT_IS_SHORT(head.bytes) && node->length < VARHDRSZ) ||
				VARSIZE_ANY(head.bytes) > node->length)
				jt_nav_corrupt(src, "a numeric's header does not fit its JEntry");
			*len = VARSIZE_ANY(head.bytes);
			break;
		case JT_NODE_FALSE:
		case JT_NODE_TRUE:
		case JT_NODE_NULL:
			*len = 0;
			break;
		case JT_NODE_CONTAINER:
		case JT_NODE_REF:
			elog(ERROR, "container passed as a scalar");
	}
	return p;
}

/*
 * Turn a found scalar node into a JsonbValue pointing into the source (a
 * misaligned numeric into an aligned copy), checked by scalar_bytes().
 */
static void
node_to_scalar(JtSource *src, const JtNode *node, JsonbValue *v)
{
	uint32		len;
	const char *p = scalar_bytes(src, node, &len);

	switch (node->kind)
	{
		case JT_NODE_STRING:
			v->type = jbvString;
			v->val.string.val = (char *) p;
			v->val.string.len = len;
			break;
		case JT_NODE_NUMERIC:
			/* a skeleton or a short-header datum may leave it unaligned */
			if (INTALIGN((uintptr_t) p) != (uintptr_t) p)
			{
				char	   *copy = palloc(Max(node->length, VARHDRSZ));

				memcpy(copy, p, node->length);
				p = copy;
			}
			v->type = jbvNumeric;
			v->val.numeric = (Numeric) p;
			break;
		case JT_NODE_FALSE:
		case JT_NODE_TRUE:
			v->type = jbvBool;
			v->val.boolean = (node->kind == JT_NODE_TRUE);
			break;
		default:
			v->type = jbvNull;
			break;
	}
}

/*
 * The node as a jsonb datum, byte for byte what JsonbValueToJsonb() makes
 * of it: a container as it is, a scalar in a one-element array marked as a
 * raw scalar, written here directly (scalar_bytes() checks it).
 */
static Jsonb *
node_to_jsonb(JtSource *src, const JtNode *node)
{
	StringInfoData buf;
	JtWriter	w;
	Size		room;
	const char *data;
	uint32		len;

	if (node->kind == JT_NODE_CONTAINER)
	{
		Jsonb	   *out = palloc(VARHDRSZ + node->length);

		SET_VARSIZE(out, VARHDRSZ + node->length);
		memcpy(VARDATA(out), jt_source_read(src, node->offset, node->length),
			   node->length);
		return out;
	}
	data = scalar_bytes(src, node, &len);

	/* header, container header, one JEntry, padding, the value, a NUL */
	room = VARHDRSZ + 2 * sizeof(uint32) + sizeof(uint32) + len + 1;
	buf.data = palloc(room);
	buf.maxlen = room;
	buf.len = VARHDRSZ;
	buf.cursor = 0;
	jt_writer_begin(&w, &buf, JT_CONTAINER_ARRAY | JT_CONTAINER_SCALAR | 1);
	jt_writer_entry(&w, jt_node_entry_type(node), data, len);
	jt_writer_end(&w);
	SET_VARSIZE(buf.data, buf.len);
	return (Jsonb *) buf.data;
}

/* The node as text, as the ->> family returns it; NULL for a JSON null. */
static text *
node_to_text(JtSource *src, const JtNode *node)
{
	JsonbValue	v;

	if (node->kind == JT_NODE_CONTAINER)
	{
		StringInfoData buf;
		Jsonb	   *copy = node_to_jsonb(src, node);

		initStringInfo(&buf);
		(void) JsonbToCString(&buf, &copy->root, node->length);
		return cstring_to_text_with_len(buf.data, buf.len);
	}

	node_to_scalar(src, node, &v);
	switch (v.type)
	{
		case jbvNull:
			return NULL;
		case jbvBool:
			return v.val.boolean ? cstring_to_text_with_len("true", 4) :
				cstring_to_text_with_len("false", 5);
		case jbvString:
			return cstring_to_text_with_len(v.val.string.val, v.val.string.len);
		case jbvNumeric:
			return cstring_to_text(DatumGetCString(DirectFunctionCall1(numeric_out,
																	   NumericGetDatum(v.val.numeric))));
		default:
			elog(ERROR, "unexpected jsonb value type %d", (int) v.type);
	}
}

/* A jsonb datum as the ->> family returns a container: its text form. */
static text *
jsonb_datum_to_text(Datum value)
{
	Jsonb	   *jb = DatumGetJsonbP(value);
	StringInfoData buf;

	initStringInfo(&buf);
	(void) JsonbToCString(&buf, &jb->root, VARSIZE(jb));
	return cstring_to_text_with_len(buf.data, buf.len);
}

/*
 * A found node of the current source cur as jsonb or text, or *isnull when
 * not found; closes the sources (src is the argument's).
 */
static Datum
node_result(JtDatumSource *src, JtDatumSource *cur, JtNode *node, bool found,
			bool as_text, bool *isnull)
{
	Datum		result = (Datum) 0;

	if (found)
		jt_resolve_scalar(&cur, node);
	if (found && jt_node_needs_flatten(cur, node))
	{
		/*
		 * A container of a skeleton, or stored in its parts: flattened, as
		 * the builtin returns it.  A TOAST pointer to its part would differ
		 * in pg_column_size() and pg_column_compression().
		 */
		result = jt_node_flatten(cur, node);
		if (as_text)
			result = PointerGetDatum(jsonb_datum_to_text(result));
	}
	else if (found && as_text)
	{
		text	   *t = node_to_text(&cur->pub, node);

		if (t)
			result = PointerGetDatum(t);
		else
			found = false;
	}
	else if (found)
		result = PointerGetDatum(node_to_jsonb(&cur->pub, node));

	jt_datum_source_close(src);
	*isnull = !found;
	return result;
}

/* node_result() as a function's result */
static Datum
return_node(FunctionCallInfo fcinfo, JtDatumSource *src, JtDatumSource *cur,
			JtNode *node, bool found, bool as_text)
{
	return node_result(src, cur, node, found, as_text, &fcinfo->isnull);
}

#ifdef JT_CUSTOM_TOAST
/*
 * A key of a skeleton's root object whose value is a scalar in the tree:
 * the short field a filter reads on every row, answered from the pointer
 * without a byte source.  False, with nothing returned, when the root is
 * stored in parts or the value is a container or a reference: the general
 * path takes it from the start.
 */
static bool
skeleton_root_field(FunctionCallInfo fcinfo, bool as_text, Datum *result)
{
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	text	   *key;
	JtSkeleton	skel;
	JtNode		value;

	if (!VARATT_IS_EXTERNAL_CUSTOM(attr) ||
		custom_toaster_id(attr) != JSONB_TOASTER_ID)
		return false;
	jt_open_pointer(attr, &skel);
	if (skel.root.kind != JT_NODE_CONTAINER || !jt_node_is_object(&skel.root))
		return false;

	key = PG_GETARG_TEXT_PP(1);
	if (!jt_nav_object_get(&skel.src, &skel.root, VARDATA_ANY(key),
						   VARSIZE_ANY_EXHDR(key), &value))
	{
		fcinfo->isnull = true;
		*result = (Datum) 0;
		return true;
	}
	if (value.kind == JT_NODE_CONTAINER || value.kind == JT_NODE_REF)
		return false;
	if (as_text)
	{
		text	   *t = node_to_text(&skel.src, &value);

		fcinfo->isnull = (t == NULL);
		*result = PointerGetDatum(t);
	}
	else
		*result = PointerGetDatum(node_to_jsonb(&skel.src, &value));
	return true;
}
#endif

/* jsonb -> text, jsonb ->> text */
static Datum
object_field(FunctionCallInfo fcinfo, bool as_text)
{
	text	   *key;
	JtDatumSource src;
	JtDatumSource *cur = &src;
	JtNode		root;
	JtNode		value;
	bool		found = false;

#ifdef JT_CUSTOM_TOAST
	{
		Datum		result;

		if (skeleton_root_field(fcinfo, as_text, &result))
			return result;
	}
#endif

	key = PG_GETARG_TEXT_PP(1);
	jt_datum_source_open(&src, PG_GETARG_DATUM(0), jt_scratch());
	jt_datum_source_root(&src, &root);
	if (jt_node_is_object(&root))
		found = jt_step_key(&cur, &root, VARDATA_ANY(key),
							VARSIZE_ANY_EXHDR(key), &value);
	return return_node(fcinfo, &src, cur, &value, found, as_text);
}

/*
 * An array index as the builtins treat it: negative counts from the end;
 * out of range (either way) finds nothing.
 */
static bool
resolve_index(int64 index, uint32 count, uint32 *result)
{
	if (index < 0)
		index += count;
	if (index < 0 || index >= count)
		return false;
	*result = (uint32) index;
	return true;
}

/* jsonb -> int, jsonb ->> int */
static Datum
array_element(FunctionCallInfo fcinfo, bool as_text)
{
	int32		element = PG_GETARG_INT32(1);
	JtDatumSource src;
	JtDatumSource *cur = &src;
	JtNode		root;
	JtNode		value;
	uint32		index;
	bool		found = false;

	jt_datum_source_open(&src, PG_GETARG_DATUM(0), jt_scratch());
	jt_datum_source_root(&src, &root);
	/* like the builtin, a raw scalar counts as a one-element array */
	if (jt_node_is_array(&root) &&
		resolve_index(element, jt_node_count(&root), &index))
		found = jt_step_index(&cur, &root, index, &value);
	return return_node(fcinfo, &src, cur, &value, found, as_text);
}

/*
 * doc #> path, or #>> if as_text, with the path as npath (> 0) text datums
 * none of which is NULL: jsonb_get_element()'s rules.  *isnull when
 * nothing is found.
 */
Datum
jt_get_path(Datum doc, const Datum *path, int npath, bool as_text,
			bool *isnull)
{
	JtDatumSource src;
	JtDatumSource *cur = &src;
	JtNode		node;
	bool		found = true;

	Assert(npath > 0);
	jt_datum_source_open(&src, doc, jt_scratch());
	jt_datum_source_root(&src, &node);
	for (int i = 0; i < npath && found; i++)
	{
		JtNode		next;

		if (jt_node_is_object(&node))
		{
			text	   *key = DatumGetTextPP(path[i]);

			found = jt_step_key(&cur, &node, VARDATA_ANY(key),
								VARSIZE_ANY_EXHDR(key), &next);
		}
		else if (jt_node_is_array(&node) && !jt_node_is_scalar_root(&node))
		{
			char	   *indextext = TextDatumGetCString(path[i]);
			char	   *endptr;
			int			lindex;
			uint32		index;

			errno = 0;
			lindex = strtoint(indextext, &endptr, 10);
			if (endptr == indextext || *endptr != '\0' || errno != 0 ||
				lindex == INT_MIN ||
				!resolve_index(lindex, jt_node_count(&node), &index))
				found = false;
			else
				found = jt_step_index(&cur, &node, index, &next);
		}
		else
			found = false;		/* a scalar has no fields or elements */
		if (found)
			node = next;
	}
	return node_result(&src, cur, &node, found, as_text, isnull);
}

/*
 * Follow steps from the root of doc as far as they lead: r gets the node
 * reached and the steps taken (stopping before a step of the wrong kind
 * for the node it meets).  When the next step names a key its object
 * lacks, or an index past its array's end, r->missing is set (with the
 * array's size in r->count).  The sources stay open until
 * jt_reach_result() or jt_reach_close().
 */
void
jt_reach(Datum doc, const JtPathStep *steps, int nsteps, JtReach *r)
{
	r->cur = &r->src;
	r->taken = 0;
	r->missing = false;
	r->count = 0;
	jt_datum_source_open(&r->src, doc, jt_scratch());
	jt_datum_source_root(&r->src, &r->node);
	for (int i = 0; i < nsteps; i++)
	{
		JtNode		next;

		if (steps[i].key != NULL && jt_node_is_object(&r->node))
		{
			if (!jt_step_key(&r->cur, &r->node, steps[i].key,
							 steps[i].keylen, &next))
				r->missing = true;
		}
		else if (steps[i].key == NULL && jt_node_is_array(&r->node) &&
				 !jt_node_is_scalar_root(&r->node))
		{
			r->count = jt_node_count(&r->node);
			if (steps[i].index >= r->count)
				r->missing = true;
			else if (!jt_step_index(&r->cur, &r->node, steps[i].index, &next))
				elog(ERROR, "array element %u of %u not found",
					 steps[i].index, r->count);
		}
		else
			break;
		if (r->missing)
			return;
		r->node = next;
		r->taken++;
	}
}

/* The node reached, as jsonb (not when a step missed); closes r. */
Datum
jt_reach_result(JtReach *r)
{
	bool		isnull;

	Assert(!r->missing);
	return node_result(&r->src, r->cur, &r->node, true, false, &isnull);
}

/*
 * The node reached as the JEntry type and the bytes an entry holding it
 * would have, if it is there to be copied as it is: a scalar, or a
 * container of a document in standard storage or of a part (not one of a
 * skeleton's tree, which jt_reach_result() flattens).  False otherwise.
 * r stays open: the bytes are good until it is closed.
 */
bool
jt_reach_bytes(JtReach *r, uint32 *type, const char **data, uint32 *len)
{
	JtSource   *src;

	Assert(!r->missing);
	jt_resolve_scalar(&r->cur, &r->node);
	if (jt_node_needs_flatten(r->cur, &r->node))
		return false;
	src = &r->cur->pub;
	if (r->node.kind == JT_NODE_CONTAINER)
	{
		*type = JT_JENTRY_CONTAINER;
		*len = r->node.length;
		*data = jt_source_read(src, r->node.offset, r->node.length);
		return true;
	}
	*data = scalar_bytes(src, &r->node, len);
	*type = jt_node_entry_type(&r->node);
	return true;
}

void
jt_reach_close(JtReach *r)
{
	jt_datum_source_close(&r->src);
}

/*
 * jt_reach() for callers that want the node reached as jsonb: (Datum) 0
 * when a step missed.
 */
Datum
jt_follow_steps(Datum doc, const JtPathStep *steps, int nsteps, int *taken,
				bool *missing, uint32 *count)
{
	JtReach		r;

	jt_reach(doc, steps, nsteps, &r);
	*taken = r.taken;
	*missing = r.missing;
	*count = r.count;
	if (r.missing)
	{
		jt_reach_close(&r);
		return (Datum) 0;
	}
	return jt_reach_result(&r);
}

/* jsonb #> text[], jsonb #>> text[] */
static Datum
extract_path(FunctionCallInfo fcinfo, PGFunction builtin, bool as_text)
{
	ArrayType  *path = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *elems;
	bool	   *nulls;
	int			npath;

	if (array_contains_nulls(path))
		PG_RETURN_NULL();
	deconstruct_array(path, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &npath);
	if (npath <= 0)
		return builtin(fcinfo); /* the whole document is the answer */
	return jt_get_path(PG_GETARG_DATUM(0), elems, npath, as_text,
					   &fcinfo->isnull);
}

/* Is key a key of the root object, or a string element of the root array? */
static bool
has_key(JtDatumSource *src, const JtNode *root, const char *key, uint32 len)
{
	JtDatumSource *cur = src;
	JtNode		value;

	if (jt_node_is_object(root))
		return jt_step_key(&cur, root, key, len, &value);
	return jt_step_has_string(src, root, key, len);
}

/* jsonb ?| text[] (any = true), jsonb ?& text[] (any = false) */
static Datum
exists_keys(FunctionCallInfo fcinfo, bool any)
{
	ArrayType  *keys = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *elems;
	bool	   *nulls;
	int			nkeys;
	JtDatumSource src;
	JtNode		root;
	bool		result = !any;

	deconstruct_array(keys, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &nkeys);
	jt_datum_source_open(&src, PG_GETARG_DATUM(0), jt_scratch());
	jt_datum_source_root(&src, &root);
	for (int i = 0; i < nkeys; i++)
	{
		if (nulls[i])
			continue;
		if (has_key(&src, &root, VARDATA_ANY(DatumGetPointer(elems[i])),
					VARSIZE_ANY_EXHDR(DatumGetPointer(elems[i]))) == any)
		{
			result = any;
			break;
		}
	}
	jt_datum_source_close(&src);
	PG_RETURN_BOOL(result);
}

Datum
jt_object_field(PG_FUNCTION_ARGS)
{
	if (jt_datum_is_plain(PG_GETARG_DATUM(0)))
		return jsonb_object_field(fcinfo);
	return object_field(fcinfo, false);
}

Datum
jt_object_field_text(PG_FUNCTION_ARGS)
{
	if (jt_datum_is_plain(PG_GETARG_DATUM(0)))
		return jsonb_object_field_text(fcinfo);
	return object_field(fcinfo, true);
}

Datum
jt_array_element(PG_FUNCTION_ARGS)
{
	if (jt_datum_is_plain(PG_GETARG_DATUM(0)))
		return jsonb_array_element(fcinfo);
	return array_element(fcinfo, false);
}

Datum
jt_array_element_text(PG_FUNCTION_ARGS)
{
	if (jt_datum_is_plain(PG_GETARG_DATUM(0)))
		return jsonb_array_element_text(fcinfo);
	return array_element(fcinfo, true);
}

Datum
jt_extract_path(PG_FUNCTION_ARGS)
{
	if (jt_datum_is_plain(PG_GETARG_DATUM(0)))
		return jsonb_extract_path(fcinfo);
	return extract_path(fcinfo, jsonb_extract_path, false);
}

Datum
jt_extract_path_text(PG_FUNCTION_ARGS)
{
	if (jt_datum_is_plain(PG_GETARG_DATUM(0)))
		return jsonb_extract_path_text(fcinfo);
	return extract_path(fcinfo, jsonb_extract_path_text, true);
}

Datum
jt_exists(PG_FUNCTION_ARGS)
{
	text	   *key = PG_GETARG_TEXT_PP(1);
	JtDatumSource src;
	JtNode		root;
	bool		result;

	if (jt_datum_is_plain(PG_GETARG_DATUM(0)))
		return jsonb_exists(fcinfo);
	jt_datum_source_open(&src, PG_GETARG_DATUM(0), jt_scratch());
	jt_datum_source_root(&src, &root);
	result = has_key(&src, &root, VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key));
	jt_datum_source_close(&src);
	PG_RETURN_BOOL(result);
}

Datum
jt_exists_any(PG_FUNCTION_ARGS)
{
	if (jt_datum_is_plain(PG_GETARG_DATUM(0)))
		return jsonb_exists_any(fcinfo);
	return exists_keys(fcinfo, true);
}

Datum
jt_exists_all(PG_FUNCTION_ARGS)
{
	if (jt_datum_is_plain(PG_GETARG_DATUM(0)))
		return jsonb_exists_all(fcinfo);
	return exists_keys(fcinfo, false);
}
