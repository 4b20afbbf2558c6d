/*-------------------------------------------------------------------------
 *
 * path_funcs.c
 *	  jsonb_set(), jsonb_insert(), #- and jsonb - text as SQL-callable
 *	  functions: what each changes in a stored document (patched servers
 *	  only); || and jsonb - text[] are in key_funcs.c.
 *
 * They serve in place of the builtins of the same names (overrides.c).  On
 * a value stored by the toaster whose root object is split into ranges of
 * keys, they change the part that holds the key (part_change.c); on one
 * whose root object is kept in the skeleton's tree, the tree
 * (tree_change.c).
 *
 * Why the result is the builtin's: the root's keys are sorted, and each
 * range holds the keys from its first key (kept in the skeleton's
 * directory) up to the next range's first.  jsonb_set() and #- with a
 * path whose first key falls in a range, jsonb - key, and jsonb || object
 * whose keys all fall in one range change the pairs of that range only,
 * and do to them exactly what they do within the whole object.
 * Flattening puts the pairs back together in the form jsonb always
 * writes.  An object whose keys fall in several ranges is concatenated,
 * and keys of several ranges are removed (jsonb - text[]), one range at a
 * time, each change made on the result of the one before, as
 * jsonb_set(jsonb_set(...)) is.
 *
 * Subscripting assignment (jb['a']['b'] = v) is jsonb_set_element(), which
 * differs from jsonb_set(..., true) only where a step is missing or names
 * no existing array element (it creates, pads with nulls or raises an
 * error): on a part, it is run where jsonb_set() would be, with every
 * array index into parts in range; other indexes go to the builtin.
 *
 * In a root object kept in the tree, a path of two steps or more whose
 * first key names a value kept in parts runs the builtin on the part that
 * holds its second step, as a longer path does on a split root; one whose
 * first key names a value kept in the tree (or no value) runs it on that
 * value alone, and sets the key in the tree to the result.  Through
 * objects of the tree that hold references (values the builder opened), a
 * path goes on down to a value kept in parts, and the builtin runs on the
 * part holding the step after it, wrapped under every step before.
 *
 * Anything else is left to the builtin: a root that is neither, a path
 * with NULLs, a changed part that is empty or whose first key is no
 * longer the one the directory names, jsonb_insert() of a key the tree
 * has already (the builtin's error), an array index not in its canonical
 * form.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/path_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"

#include "format/flatten.h"
#include "format/pointer.h"
#include "jsonb/jsonb_writer.h"
#include "update/part_change.h"
#include "update/path_funcs.h"
#include "update/stored_value.h"
#include "update/tree_change.h"

/* What change_path() does at the end of its path. */
typedef enum PathChange
{
	PATH_SET,					/* jsonb_set() */
	PATH_DELETE,				/* #- */
	PATH_INSERT,				/* jsonb_insert() */
	PATH_SUBSCRIPT,				/* jb[...] = value (jsonb_set_element()) */
} PathChange;

/* The value of a jsonb datum as a node: a raw scalar's element, or the root. */
static void
jsonb_value_node(Jsonb *value, JtSource *src, JtNode *node)
{
	JtNode		root;

	jt_memory_source(src, (const char *) &value->root,
					 VARSIZE(value) - VARHDRSZ, false);
	jt_nav_root(src, &root);
	if (jt_node_is_scalar_root(&root))
		jt_nav_entry(src, &root, 0, node);
	else
		*node = root;
}

/*
 * The builtin of change_path() (#- if deleting) on doc along path, with
 * the call's other arguments: jsonb_set()'s or jsonb_insert()'s value and
 * flag.
 */
static struct varlena *
builtin_on(FunctionCallInfo fcinfo, PGFunction builtin, bool deleting,
		   struct varlena *doc, Datum path)
{
	if (deleting)
		return (struct varlena *) DatumGetPointer(
												  DirectFunctionCall2(builtin, PointerGetDatum(doc), path));
	return (struct varlena *) DatumGetPointer(
											  DirectFunctionCall4(builtin, PointerGetDatum(doc), path,
																  PG_GETARG_DATUM(2), PG_GETARG_DATUM(3)));
}

/* Count the parts of a reference into *(uint32 *) arg (a JtRefVisitor). */
static void
count_ref_parts(void *arg, const JtRef *ref, List *path)
{
	*(uint32 *) arg += ref->nranges;
}

/*
 * An array index as jsonb_set() and #- read it, in its canonical form
 * only (an optional minus sign, then digits without leading zeros), so
 * that what is turned down goes to the builtin for its own reading.
 */
static bool
canonical_index(text *step, int32 *index)
{
	const char *c = VARDATA_ANY(step);
	int			len = VARSIZE_ANY_EXHDR(step);
	int			i = (len > 0 && c[0] == '-') ? 1 : 0;
	int64		value = 0;

	if (len - i < 1 || len - i > 10 || (c[i] == '0' && len - i > 1))
		return false;
	for (int k = i; k < len; k++)
	{
		if (c[k] < '0' || c[k] > '9')
			return false;
		value = value * 10 + (c[k] - '0');
	}
	value = i ? -value : value;
	if (value < PG_INT32_MIN || value > PG_INT32_MAX)
		return false;
	*index = (int32) value;
	return true;
}

/*
 * The part of ref (a container kept in parts) that a path's step into it
 * names, and the step as it reads in that part alone (*local, for an
 * array): false for an index the builtin must read itself.  An index past
 * the end names the last part, past its own end, and one before the start
 * the first, before its own: the builtins append or prepend there (or
 * change nothing) as they would on the whole array.  Subscripting pads an
 * array with nulls up to an index past its end (and refuses one before its
 * start): with in_range_only, such an index is left to the builtin.
 */
static bool
part_for_step(const JtRef *ref, text *step, bool in_range_only, uint32 *r,
			  int32 *local)
{
	uint32		count = ref->header & JT_CONTAINER_COUNT_MASK;
	int32		index;
	uint32		start = 0;

	if (ref->header & JT_CONTAINER_OBJECT)
	{
		*r = jt_ref_range_for_key(ref, VARDATA_ANY(step),
								  VARSIZE_ANY_EXHDR(step));
		return true;
	}
	if (!canonical_index(step, &index))
		return false;
	if (in_range_only && (index < 0 ? -(int64) index > count :
						  (uint32) index >= count))
		return false;
	if (index < 0 && -(int64) index > count)
	{
		*r = 0;
		*local = -(int32) (ref->ranges[0].header & JT_CONTAINER_COUNT_MASK) - 1;
		return true;
	}
	if (index < 0)
		index = (int32) (count + index);
	if ((uint32) index >= count)
	{
		*r = ref->nranges - 1;
		*local = (int32) (ref->ranges[*r].header & JT_CONTAINER_COUNT_MASK);
		return true;
	}
	for (uint32 q = 0; q < ref->nranges; q++)
	{
		uint32		n = ref->ranges[q].header & JT_CONTAINER_COUNT_MASK;

		if ((uint32) index < start + n)
		{
			*r = q;
			*local = (int32) (index - start);
			return true;
		}
		start += n;
	}
	return false;
}

/*
 * Write {keys[0]: {keys[1]: ... {keys[nkeys - 1]: the value}}} into buf,
 * the value being of entry type type, len bytes at bytes.
 */
static void
write_wrapper(StringInfo buf, const Datum *keys, int nkeys, uint32 type,
			  const char *bytes, uint32 len)
{
	text	   *key = DatumGetTextPP(keys[0]);
	JtWriter	w;

	check_stack_depth();
	jt_writer_begin(&w, buf, JT_CONTAINER_OBJECT | 1);
	jt_writer_entry(&w, JT_JENTRY_STRING, VARDATA_ANY(key),
					VARSIZE_ANY_EXHDR(key));
	if (nkeys == 1)
		jt_writer_entry(&w, type, bytes, len);
	else
	{
		jt_writer_entry_begin(&w, JT_JENTRY_CONTAINER);
		write_wrapper(buf, keys + 1, nkeys - 1, type, bytes, len);
		jt_writer_entry_end(&w);
	}
	jt_writer_end(&w);
}

/*
 * The builtin of change_path() on nested one-key objects, {keys[0]:
 * {keys[1]: ... {keys[nkeys - 1]: the value of entry type type, len bytes
 * at bytes}}} (with bytes NULL, the key is missing: {keys[0]: ...
 * {keys[nkeys - 2]: {}}}, or {} for one key), along
 * path: the objects stand for the document, which the builtin then sees the
 * path in, and reports its errors on, as on the whole.  Returns how many
 * keys the innermost object of the builtin's result has, at most one, that
 * key's value being *value in *src; -1 for any other result.
 */
static int
builtin_on_wrapped(FunctionCallInfo fcinfo, PGFunction builtin,
				   bool deleting, const Datum *keys, int nkeys, uint32 type,
				   const char *bytes, uint32 len, Datum path, JtSource *src,
				   JtNode *value)
{
	StringInfoData buf;
	Jsonb	   *changed;
	JtNode		node;

	Assert(nkeys >= 1);
	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	if (bytes != NULL)
		write_wrapper(&buf, keys, nkeys, type, bytes, len);
	else if (nkeys > 1)
	{
		uint32		empty = JT_CONTAINER_OBJECT;

		write_wrapper(&buf, keys, nkeys - 1, JT_JENTRY_CONTAINER,
					  (const char *) &empty, sizeof(empty));
	}
	else
	{
		JtWriter	w;

		jt_writer_begin(&w, &buf, JT_CONTAINER_OBJECT);
		jt_writer_end(&w);
	}
	SET_VARSIZE(buf.data, buf.len);
	changed = (Jsonb *) builtin_on(fcinfo, builtin, deleting,
								   (struct varlena *) buf.data, path);

	jt_memory_source(src, VARDATA(changed), VARSIZE(changed) - VARHDRSZ,
					 false);
	jt_nav_root(src, &node);
	for (int k = 1; k < nkeys; k++)
	{
		/* the wrappers above the innermost keep their one key */
		if (node.kind != JT_NODE_CONTAINER || !jt_node_is_object(&node) ||
			jt_node_count(&node) != 1)
			return -1;
		jt_nav_entry(src, &node, 1, &node);
	}
	if (node.kind != JT_NODE_CONTAINER || !jt_node_is_object(&node) ||
		jt_node_count(&node) > 1)
		return -1;
	if (jt_node_count(&node) == 1)
		jt_nav_entry(src, &node, 1, value);
	return (int) jt_node_count(&node);
}

/* The parts of the values before the i-th of container, a node of skel's tree. */
static uint32
parts_before_value(JtSkeleton *skel, const JtNode *container, uint32 i)
{
	uint32		first = jt_node_first_value_index(container);
	uint32		parts = 0;

	for (uint32 k = 0; k < i; k++)
	{
		JtNode		before;

		jt_nav_entry(&skel->src, container, first + k, &before);
		jt_skeleton_walk_below(skel, &before, count_ref_parts, &parts);
	}
	return parts;
}

/*
 * jsonb_set() and the like along a path through objects of the tree, its
 * first depth + 1 steps, to a value kept in parts (refnode), and on into
 * it: the builtin on the part holding step depth + 1, wrapped under the
 * steps before it (builtin_on_wrapped()), with an array index renumbered
 * for the part.  parts_before: the parts flattened before the value's.
 * NULL when the builtin should do it on the document.
 */
static struct varlena *
change_below_ref(FunctionCallInfo fcinfo, PGFunction builtin, PathChange how,
				 struct varlena *pointer, JtSkeleton *skel,
				 const JtNode *refnode, uint32 parts_before, int depth,
				 Datum *elems, int npath)
{
	bool		deleting = how == PATH_DELETE;
	text	   *step = DatumGetTextPP(elems[depth + 1]);
	JtNode		value;
	JtRef		ref;
	JtRefSite	site;
	uint32		r;
	int32		local = 0;
	JtFetchedPart old;
	Datum	   *steps;
	Datum		newpath;
	JtSource	src;
	struct varlena *newpart;

	Assert(depth + 1 < npath);
	jt_skeleton_read_ref(skel, refnode, &ref);
	if ((ref.header & JT_CONTAINER_SCALAR) || ref.layouts == NULL ||
		!part_for_step(&ref, step, how == PATH_SUBSCRIPT, &r, &local))
		return NULL;

	site.is_root = false;
	site.offset = refnode->offset;
	site.parts_before = parts_before;

	jt_fetch_part(skel, &ref, r, true, &old);
	steps = palloc(npath * sizeof(Datum));
	memcpy(steps, elems, npath * sizeof(Datum));
	if (!(ref.header & JT_CONTAINER_OBJECT))
		steps[depth + 1] = CStringGetTextDatum(psprintf("%d", local));
	newpath = PointerGetDatum(construct_array_builtin(steps, npath, TEXTOID));

	/* the changed part: the innermost wrapper's value, of the same kind */
	if (builtin_on_wrapped(fcinfo, builtin, deleting, elems, depth + 1,
						   JT_JENTRY_CONTAINER, VARDATA(old.content),
						   VARSIZE(old.content) - VARHDRSZ, newpath, &src,
						   &value) != 1 ||
		value.kind != JT_NODE_CONTAINER)
		return NULL;
	newpart = palloc(VARHDRSZ + value.length);
	SET_VARSIZE(newpart, VARHDRSZ + value.length);
	memcpy(VARDATA(newpart), jt_source_read(&src, value.offset, value.length),
		   value.length);
	return jt_apply_patch(pointer, skel, &ref, &site, r, &old, newpart, NULL);
}

/*
 * jsonb_set() and the like along a path whose first nkeys - 1 steps name
 * objects of the tree (none: the root object kept there), the next one a
 * key of the last of them: missing (value NULL), or holding value, kept in
 * the tree with no reference in it, or, when the path ends there (whole),
 * holding references or being one.  The builtin on that value alone (a
 * null in place of a whole value, which it can only replace or remove),
 * wrapped under the nkeys steps (builtin_on_wrapped()), then the key set to
 * what the builtin leaves under it, or removed, in the tree.  No part is
 * read, and every part is kept but those of a whole value replaced.  NULL
 * when the builtin should do it on the document.
 */
static struct varlena *
change_in_tree_value(FunctionCallInfo fcinfo, PGFunction builtin,
					 bool deleting, struct varlena *pointer, JtSkeleton *skel,
					 const Datum *keys, int nkeys, const JtNode *value,
					 bool whole)
{
	const char **steps = palloc(nkeys * sizeof(char *));
	uint32	   *steplens = palloc(nkeys * sizeof(uint32));
	JtTreeSteps at = {nkeys - 1, steps, steplens};
	const char *const *key;		/* the key changed: the last step */
	const uint32 *keylen;
	JtSource	src;
	JtNode		newvalue;
	const char *bytes = NULL;
	uint32		type = 0;
	uint32		len = 0;

	Assert(value != NULL || !whole);
	for (int k = 0; k < nkeys; k++)
	{
		text	   *step = DatumGetTextPP(keys[k]);

		steps[k] = VARDATA_ANY(step);
		steplens[k] = VARSIZE_ANY_EXHDR(step);
	}
	key = &steps[nkeys - 1];
	keylen = &steplens[nkeys - 1];
	if (whole)
	{
		type = JT_JENTRY_NULL;
		bytes = "";
	}
	else if (value != NULL)
	{
		type = jt_node_entry_type(value);
		len = value->length;
		bytes = jt_source_read(&skel->src, value->offset, len);
	}
	switch (builtin_on_wrapped(fcinfo, builtin, deleting, keys, nkeys, type,
							   bytes, len, PG_GETARG_DATUM(1), &src, &newvalue))
	{
		case 0:
			/* the key removed */
			if (value != NULL)
				return jt_apply_tree_patch(pointer, skel, &at, 1, key, keylen,
										   NULL, NULL, false);
			/* a missing key stays missing: the document is unchanged */
			elog(DEBUG1, "jsonb_toaster: the skeleton's tree unchanged");
			return jt_copy_of_pointer(pointer);
		case 1:
			break;
		default:
			return NULL;
	}
	if (!whole && value != NULL && jt_node_entry_type(&newvalue) == type &&
		newvalue.length == len &&
		memcmp(jt_source_read(&src, newvalue.offset, len), bytes, len) == 0)
	{
		/* nothing changed under it (a path that names nothing) */
		elog(DEBUG1, "jsonb_toaster: the skeleton's tree unchanged");
		return jt_copy_of_pointer(pointer);
	}
	return jt_apply_tree_patch(pointer, skel, &at, 1, key, keylen, &src,
							   &newvalue, true);
}

/*
 * jsonb_set() and the like along a path of two steps or more in a root
 * object kept in the tree: through objects of the tree holding references
 * (the root, values the builder opened), to a value kept in the tree with
 * no reference in it, or a missing key, or a value kept in parts, which a
 * longer path goes into (change_below_ref()).  NULL when the builtin should
 * do it on the document.
 */
static struct varlena *
change_below_root_key(FunctionCallInfo fcinfo, PGFunction builtin,
					  PathChange how, struct varlena *pointer,
					  JtSkeleton *skel, Datum *elems, int npath)
{
	bool		deleting = how == PATH_DELETE;
	JtNode		container = skel->root;
	uint32		parts_before = 0;
	int			depth = 0;

	Assert(npath >= 2);
	for (;;)
	{
		text	   *key = DatumGetTextPP(elems[depth]);
		JtNode		value;
		uint32		i;

		if (!jt_nav_object_find(&skel->src, &container, VARDATA_ANY(key),
								VARSIZE_ANY_EXHDR(key), &i))
			return change_in_tree_value(fcinfo, builtin, deleting, pointer,
										skel, elems, depth + 1, NULL, false);
		jt_nav_entry(&skel->src, &container, jt_node_count(&container) + i,
					 &value);
		if (value.kind != JT_NODE_REF &&
			(value.kind != JT_NODE_CONTAINER ||
			 jt_tree_container_is_plain(skel, &value)))
			return change_in_tree_value(fcinfo, builtin, deleting, pointer,
										skel, elems, depth + 1, &value, false);
		if (depth + 1 == npath)
			return change_in_tree_value(fcinfo, builtin, deleting, pointer,
										skel, elems, depth + 1, &value, true);
		parts_before += parts_before_value(skel, &container, i);
		if (value.kind == JT_NODE_REF)
			return change_below_ref(fcinfo, builtin, how, pointer, skel,
									&value, parts_before, depth, elems,
									npath);
		if (!jt_node_is_object(&value))
			return NULL;		/* an array of the tree holding references */
		container = value;
		depth++;
	}
}

/* Is key a key of the root object kept in skel's tree? */
static bool
key_in_tree(JtSkeleton *skel, const char *key, uint32 keylen)
{
	JtNode		value;

	return jt_nav_object_get(&skel->src, &skel->root, key, keylen, &value);
}

/*
 * jsonb_set(jsonb, text[], jsonb, boolean), jsonb #- text[] and
 * jsonb_insert(jsonb, text[], jsonb, boolean), and subscript assignment:
 * the path's first key names the part of a split root, or a key of a root
 * kept in the tree, whose value is kept in parts or in the tree.
 */
static Datum
change_path(FunctionCallInfo fcinfo, PGFunction builtin, PathChange how)
{
	bool		deleting = how == PATH_DELETE;
	struct varlena *pointer = (struct varlena *) PG_GETARG_POINTER(0);
	JtSkeleton	skel;
	JtRef		ref;
	StoredShape shape;
	ArrayType  *path;
	Datum	   *elems;
	bool	   *nulls;
	int			npath;
	text	   *key;
	uint32		r;
	JtFetchedPart old;
	JtRefSite	site;
	struct varlena *result;

	shape = jt_open_stored(&pointer, &skel, &ref);
	if (shape == SHAPE_OTHER)
		return builtin(fcinfo);
	path = PG_GETARG_ARRAYTYPE_P(1);
	if (ARR_NDIM(path) > 1)
		return builtin(fcinfo); /* which reports it */
	deconstruct_array_builtin(path, TEXTOID, &elems, &nulls, &npath);
	if (npath == 0 || array_contains_nulls(path))
		return builtin(fcinfo);
	key = DatumGetTextPP(elems[0]);

	if (npath == 1 && deleting)
		result = jt_change_key(pointer, shape, &skel, &ref, VARDATA_ANY(key),
							   VARSIZE_ANY_EXHDR(key), NULL, NULL, false);
	else if (npath == 1 &&
			 (how == PATH_SET || how == PATH_SUBSCRIPT ||
			  (shape == SHAPE_TREE_ROOT &&
			   !key_in_tree(&skel, VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key)))))
	{
		/*
		 * jsonb_insert() of a key missing from a root kept in the tree adds
		 * it, as jsonb_set() would (its last argument, insert_after, means
		 * nothing to an object).  A key that is there is left to the builtin,
		 * which raises its error.
		 */
		Jsonb	   *value = PG_GETARG_JSONB_P(2);
		JtSource	vsrc;
		JtNode		vnode;

		jsonb_value_node(value, &vsrc, &vnode);
		result = jt_change_key(pointer, shape, &skel, &ref, VARDATA_ANY(key),
							   VARSIZE_ANY_EXHDR(key), &vsrc, &vnode,
							   how == PATH_INSERT || PG_GETARG_BOOL(3));
	}
	else if (shape == SHAPE_SPLIT_ROOT)
	{
		/* a longer path, or an insertion: the builtin, on the part */
		struct varlena *newpart;

		r = jt_ref_range_for_key(&ref, VARDATA_ANY(key),
								 VARSIZE_ANY_EXHDR(key));
		jt_fetch_part(&skel, &ref, r, true, &old);
		newpart = builtin_on(fcinfo, builtin, deleting, old.content,
							 PG_GETARG_DATUM(1));
		site = jt_root_site(&skel);
		result = jt_apply_patch(pointer, &skel, &ref, &site, r, &old, newpart,
								NULL);
	}
	else if (npath > 1)
		result = change_below_root_key(fcinfo, builtin, how, pointer, &skel,
									   elems, npath);
	else
		result = NULL;			/* jsonb_insert() of a key of the tree */
	if (result == NULL)
		return builtin(fcinfo);
	PG_RETURN_POINTER(result);
}

Datum
jt_jsonb_set(PG_FUNCTION_ARGS)
{
	return change_path(fcinfo, jsonb_set, PATH_SET);
}

Datum
jt_jsonb_delete_path(PG_FUNCTION_ARGS)
{
	return change_path(fcinfo, jsonb_delete_path, PATH_DELETE);
}

Datum
jt_jsonb_insert(PG_FUNCTION_ARGS)
{
	return change_path(fcinfo, jsonb_insert, PATH_INSERT);
}

/*
 * jsonb_set_element() with jsonb_set()'s arguments (the fourth ignored):
 * what subscripting assigns, as change_path() calls builtins.
 */
static Datum
set_element(PG_FUNCTION_ARGS)
{
	Jsonb	   *doc = PG_GETARG_JSONB_P(0);
	ArrayType  *path = PG_GETARG_ARRAYTYPE_P(1);
	Jsonb	   *value = PG_GETARG_JSONB_P(2);
	Datum	   *elems;
	bool	   *nulls;
	int			npath;
	JsonbValue	v;

	deconstruct_array_builtin(path, TEXTOID, &elems, &nulls, &npath);
	JsonbToJsonbValue(value, &v);
	return jsonb_set_element(doc, elems, npath, &v);
}

/*
 * doc[path] = value, as jsonb subscripting assigns (jsonb_set_element()):
 * the path as npath (> 0) text datums, none NULL.  A change that reads the
 * same on the part holding it (an existing key, or an array index in
 * range) is made there; anything else, on the whole document.
 */
Datum
jt_subscript_set(Datum doc, const Datum *path, int npath, Datum value)
{
	LOCAL_FCINFO(fcinfo, 4);
	Datum		result;

	Assert(npath > 0);
	InitFunctionCallInfoData(*fcinfo, NULL, 4, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = doc;
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value =
		PointerGetDatum(construct_array_builtin((Datum *) path, npath,
												TEXTOID));
	fcinfo->args[1].isnull = false;
	fcinfo->args[2].value = value;
	fcinfo->args[2].isnull = false;
	fcinfo->args[3].value = BoolGetDatum(true);
	fcinfo->args[3].isnull = false;
	result = change_path(fcinfo, set_element, PATH_SUBSCRIPT);
	Assert(!fcinfo->isnull);
	return result;
}

/* jsonb - text */
Datum
jt_jsonb_delete(PG_FUNCTION_ARGS)
{
	JtSkeleton	skel;
	JtRef		ref;
	StoredShape shape;
	text	   *key;
	struct varlena *pointer = (struct varlena *) PG_GETARG_POINTER(0);
	struct varlena *result;

	shape = jt_open_stored(&pointer, &skel, &ref);
	if (shape == SHAPE_OTHER)
		return jsonb_delete(fcinfo);
	key = PG_GETARG_TEXT_PP(1);
	result = jt_change_key(pointer, shape,
						   &skel, &ref, VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key),
						   NULL, NULL, false);
	if (result == NULL)
		return jsonb_delete(fcinfo);
	PG_RETURN_POINTER(result);
}
