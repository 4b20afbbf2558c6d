/*-------------------------------------------------------------------------
 *
 * root_funcs.c
 *	  jsonb_typeof() and jsonb_array_length() answered from the root's
 *	  header.
 *
 * Both need only the kind of the document's root and, for an array, its
 * number of elements: the header of the root container, the first bytes
 * of a compressed or TOASTed value and the row part of a skeleton.  A raw
 * scalar (whose type jsonb_typeof() names, and of which
 * jsonb_array_length() raises its error) and plain documents go to the
 * builtin.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/root_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

#include "jsonb/jsonb_writer.h"
#include "read/datum_source.h"
#include "read/narrow.h"
#include "read/root_funcs.h"

/*
 * The root of the document: false if it is a raw scalar, which the
 * builtins handle.
 */
static bool
root_container(Datum doc, JtNode *root)
{
	JtDatumSource src;
	bool		container;

	jt_datum_source_open(&src, doc, jt_scratch());
	jt_datum_source_root(&src, root);
	container = !jt_node_is_scalar_root(root);
	jt_datum_source_close(&src);
	return container;
}

Datum
jt_jsonb_typeof(PG_FUNCTION_ARGS)
{
	JtNode		root;

	if (jt_datum_is_plain(PG_GETARG_DATUM(0)) ||
		!root_container(PG_GETARG_DATUM(0), &root))
		return jsonb_typeof(fcinfo);
	PG_RETURN_TEXT_P(cstring_to_text(jt_node_is_object(&root) ?
									 "object" : "array"));
}

Datum
jt_jsonb_array_length(PG_FUNCTION_ARGS)
{
	JtNode		root;

	if (jt_datum_is_plain(PG_GETARG_DATUM(0)) ||
		!root_container(PG_GETARG_DATUM(0), &root) ||
		!jt_node_is_array(&root))
		return jsonb_array_length(fcinfo);
	PG_RETURN_INT32((int32) jt_node_count(&root));
}

/*
 * The root object's keys with null values, or (Datum) 0 if the root is not
 * an object kept whole where it is read from.
 */
static Datum
keys_only(Datum doc)
{
	JtDatumSource src;
	JtNode		root;
	StringInfoData buf;
	JtWriter	w;
	uint32		n;

	jt_datum_source_open(&src, doc, jt_scratch());
	jt_datum_source_root(&src, &root);
	if (root.kind != JT_NODE_CONTAINER || !jt_node_is_object(&root))
	{
		jt_datum_source_close(&src);
		return (Datum) 0;
	}
	n = jt_node_count(&root);
	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	jt_writer_begin(&w, &buf, JT_CONTAINER_OBJECT | n);
	for (uint32 i = 0; i < n; i++)
	{
		uint32		len;
		const char *name = jt_datum_source_root_key(&src, &root, i, &len);

		jt_writer_entry(&w, JT_JENTRY_STRING, name, len);
	}
	for (uint32 i = 0; i < n; i++)
		jt_writer_entry(&w, JT_JENTRY_NULL, "", 0);
	jt_writer_end(&w);
	SET_VARSIZE(buf.data, buf.len);
	jt_datum_source_close(&src);
	return PointerGetDatum(buf.data);
}

/* a set returning function: the builtin reads its argument on the first call */
Datum
jt_jsonb_object_keys(PG_FUNCTION_ARGS)
{
	Datum		doc = PG_GETARG_DATUM(0);
	Datum		keys;

	if (fcinfo->flinfo->fn_extra != NULL || jt_datum_is_plain(doc) ||
		(keys = keys_only(doc)) == (Datum) 0)
		return jsonb_object_keys(fcinfo);
	return jt_call_on_narrowed(fcinfo, jsonb_object_keys, 0, keys);
}
