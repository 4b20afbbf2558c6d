/*-------------------------------------------------------------------------
 *
 * part_change.c
 *	  jsonb_set(), jsonb_insert(), #-, - and || on a stored document, run
 *	  on the parts they change (patched servers only): the change of one
 *	  part, returned as a pointer or a document.
 *
 * "UPDATE t SET js = jsonb_set(js, '{k}', v)" on a document whose root
 * object the toaster split into ranges of keys changes one range.  The
 * builtin flattens the document, rebuilds all of it with the change, and
 * the toaster then cuts the result again, hashes every part and compares
 * each with the old value's.  Here the builtin is run on the one part whose
 * range holds the key, the document is flattened once with that part in
 * place of the stored one, and the toaster is told which part changed: it
 * stores that part alone and keeps the value ids of the others (toaster.c).
 *
 * This file holds what the changes share: the part read for a change
 * (jt_fetch_part()), a key spliced into an object (jt_splice_object()),
 * the new document's size, the patched skeleton (jt_apply_patch()) and the
 * patch kept for the toaster.  A root object kept in the skeleton's tree
 * is changed by tree_change.c; the SQL-callable functions, which
 * find what a call changes, are in path_funcs.c.
 *
 * When the new document's raw size is known without the other parts (from
 * the directory's layout bytes, format version 3; for a value written
 * before, from the two parts alone, when the change leaves the padding of
 * the values after it as it was), and the skeleton fits the row, the
 * result is a pointer like the one the toaster would store: the skeleton
 * with the changed part kept as a delta of the stored one, or carried
 * whole (a replacement record, delta.h), referring to the stored parts.
 * It can go wherever a jsonb goes, as a stored pointer can; on UPDATE of
 * the row it was made from, the toaster adopts it (jt_adopt(), through
 * the core series' adopt callback), writing the part carried whole, and
 * nothing is flattened.
 *
 * The raw size is known without the other parts for values written with
 * layout bytes; for others the document is flattened to learn it.  A
 * change the pointer cannot hold (a part that outgrew its range, a
 * skeleton too large for the row) gives an ordinary flat jsonb, as the
 * builtin's, which the toaster stores through its general path: it cuts
 * the document again and shares with the old value the parts left alone.
 * The stored parts read to flatten that document are kept by the part
 * cache, as parts of the old pointer, for that comparison.  Nothing else
 * passes from here to the toaster.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/part_change.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "format/delta.h"
#include "format/pointer.h"
#include "jsonb/jsonb_writer.h"
#include "toast/part_fetch.h"
#include "toaster/part_cache.h"
#include "toaster/patch_pointer.h"
#include "toaster/tree_outside.h"
#include "update/document_size.h"
#include "update/part_change.h"


/*
 * Read part r of a stored value, checked against its directory entry and
 * layout byte, as any read of a whole part is.  With describe (for the
 * builtins, which trust what they read, and for the layout of a value
 * without layout bytes), every entry of its root is checked against the
 * part's bounds too, and the part laid out on the way.
 * A key spliced in or out needs neither: the pairs around it are copied
 * as the flattener copies them, entry by entry against the bounds.
 */
void
jt_fetch_part(JtSkeleton *skel, const JtRef *ref, uint32 r, bool describe,
			  JtFetchedPart *old)
{
	JtSource	src;
	JtNode		root;

	old->content = jt_read_part_content(skel, &ref->ranges[r], &old->base);
	jt_part_check(&src, &ref->ranges[r], ref->layouts ? ref->layouts[r] : -1,
				  old->content, &root);
	old->count = jt_node_count(&root);
	old->described = describe;
	if (describe)
		jt_lay_out_part_root(&src, &root, &old->layout);
}

/*
 * Could a document changed by delta bytes grow past what jsonb can hold?
 * Then the builtin runs, for its own error.  Alignment padding may add up
 * to 3 bytes an entry, and each added pair 8 bytes of JEntries.
 */
bool
jt_might_overflow(struct varlena *pointer, int64 delta, uint32 count)
{
	varatt_custom header;

	VARATT_CUSTOM_GET_HEADER(header, pointer);
	return (int64) header.va_rawsize + delta + 11 * (int64) count + 64 >
		(int64) JT_JENTRY_OFFLEN_MASK;
}

/*
 * Copy count entries of a container, from entry first on.  A skeleton's
 * tree holds references, which the copier of plain containers rejects:
 * its few entries are copied one by one.
 */
static void
copy_entries(JtWriter *w, JtSource *src, const JtNode *container,
			 uint32 first, uint32 count)
{
	JtEntryIter it;
	JtNode		entry;

	if (!src->refs_allowed)
	{
		jt_copy_entries(w, src, container, first, count);
		return;
	}
	jt_nav_iter_begin(src, container, &it);
	jt_nav_iter_seek(src, &it, first);
	for (uint32 i = 0; i < count; i++)
	{
		if (!jt_nav_iter_next(src, &it, &entry))
			jt_nav_corrupt(src, "a container has fewer entries than its count");
		jt_writer_entry(w, jt_node_entry_type(&entry),
						jt_source_read(src, entry.offset, entry.length),
						entry.length);
	}
}

/*
 * An object of src with one key set to a value (a node of vsrc), added if
 * create and missing, or removed when vnode is NULL: the pairs around it
 * are copied as they are.  The object is written after four bytes left
 * for the caller (a varlena header, or a tree's root JEntry).  NULL when
 * nothing changes.  What changed goes to *splice.
 */
char *
jt_splice_object(JtSource *src, const JtNode *object, const char *key,
				 uint32 keylen, JtSource *vsrc, const JtNode *vnode,
				 bool create, uint32 *len, JtSplice *splice)
{
	JtWriter	w;
	StringInfoData buf;
	uint32		n = jt_node_count(object);
	uint32		i;
	uint32		after;
	bool		found;

	found = jt_nav_object_find(src, object, key, keylen, &i);
	if (!found && (vnode == NULL || !create))
		return NULL;
	/* the pairs after the one set, added or removed */
	after = found ? n - i - 1 : n - i;
	splice->index = i;
	splice->removed = found;
	splice->added = vnode != NULL;
	splice->keylen = keylen;
	if (vnode)
	{
		splice->value_kind = vnode->kind;
		splice->value_length = vnode->length;
	}

	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, sizeof(uint32));
	jt_writer_begin(&w, &buf, (object->header & ~JT_CONTAINER_COUNT_MASK) |
					(n - (found ? 1 : 0) + (vnode ? 1 : 0)));
	copy_entries(&w, src, object, 0, i);
	if (vnode)
		jt_writer_entry(&w, JT_JENTRY_STRING, key, keylen);
	copy_entries(&w, src, object, n - after, after);
	copy_entries(&w, src, object, n, i);
	if (vnode)
		jt_writer_entry(&w, jt_node_entry_type(vnode),
						jt_source_read(vsrc, vnode->offset, vnode->length),
						vnode->length);
	copy_entries(&w, src, object, 2 * n - after, after);
	jt_writer_end(&w);
	*len = buf.len;
	return buf.data;
}

/*
 * A part (an object) spliced as jt_splice_object() says; itself if unchanged
 * (and *splice not set).
 */
struct varlena *
jt_splice_part(struct varlena *part, const char *key, uint32 keylen,
			   JtSource *vsrc, const JtNode *vnode, bool create,
			   JtSplice *splice)
{
	JtSource	src;
	JtNode		root;
	char	   *spliced;
	uint32		len;

	jt_memory_source(&src, VARDATA(part), VARSIZE(part) - VARHDRSZ, false);
	jt_nav_root(&src, &root);
	spliced = jt_splice_object(&src, &root, key, keylen, vsrc, vnode, create,
							   &len, splice);
	if (spliced == NULL)
		return part;
	SET_VARSIZE(spliced, len);
	return (struct varlena *) spliced;
}

/* The stored value again, as a result that is the caller's to keep. */
struct varlena *
jt_copy_of_pointer(const struct varlena *pointer)
{
	struct varlena *copy = palloc(VARSIZE_EXTERNAL(pointer));

	memcpy(copy, pointer, VARSIZE_EXTERNAL(pointer));
	return copy;
}

#ifdef USE_ASSERT_CHECKING
/*
 * The size a returned pointer tells (rawsize) is the size flattening gives,
 * unless the layout bytes of parts not read lie (which reading the value
 * will report): checked in builds for testing.  patched is the pointer's
 * skeleton, newpart (part r) its changed part, if any; what names the
 * disagreement.
 */
void
jt_check_told_size(struct varlena *pointer, JtSkeleton *patched, uint32 r,
				   struct varlena *newpart, uint64 rawsize, const char *what)
{
	struct varlena *flat = jt_flatten_changed(pointer, patched, r, newpart,
											  false);

	if (VARSIZE(flat) != rawsize)
		jt_nav_corrupt(&patched->src, what);
	pfree(flat);
}
#endif

/*
 * The document made by putting newpart in place of part r (old, kept in
 * TOAST as old->base) of the stored value (a pointer parsed into skel, and
 * ref, the reference at site), or NULL when the skeleton cannot stay as
 * it is: newpart empty, or not of ref's kind, or starting with another
 * key than the one the directory names, or the document too large.  A part that did not change keeps its directory
 * entry, and the toaster will keep it; for one that did, the toaster may
 * keep base and store the change as a delta of it.  splice tells how
 * newpart was made from the old part, when jt_splice_part() made it; or NULL.
 */
struct varlena *
jt_apply_patch(struct varlena *pointer, JtSkeleton *skel, const JtRef *ref,
			   const JtRefSite *site, uint32 r, const JtFetchedPart *old,
			   struct varlena *newpart, const JtSplice *splice)
{
	struct varlena *oldpart = old->content;
	struct varlena *base = old->base;
	JtSource	src;
	JtNode		root;
	JtSkeleton	patched;
	JtPartEntry range;
	char	   *payload;
	uint32		payload_len;
	uint32		ref_offset;
	uint32		range_offset;
	uint32		count;
	uint32		carried_len;
	bool		taken;
	bool		try_pointer;
	bool		known = false;
	JtPatch		patch = {0};
	int32		rawsize;
	struct varlena *result;
	bool		whole = false;
	struct varlena *document;
	StringInfoData buf;
	JtPartEntry base_range;
	JtPartLayout new_layout;
	uint8		new_byte = 0;
	uint32		largest = 0;

	if (VARSIZE(newpart) == VARSIZE(oldpart) &&
		memcmp(newpart, oldpart, VARSIZE(oldpart)) == 0)
	{
		/* the document is the one stored: so is the result */
		elog(DEBUG1, "jsonb_toaster: part %u of %u unchanged", r + 1,
			 ref->nranges);
		return jt_copy_of_pointer(pointer);
	}

	/* the builtin's result is plain, and a container like its argument */
	jt_memory_source(&src, VARDATA(newpart), VARSIZE(newpart) - VARHDRSZ,
					 false);
	jt_nav_root(&src, &root);
	if ((root.header & JT_CONTAINER_SCALAR) ||
		jt_node_is_object(&root) != ((ref->header & JT_CONTAINER_OBJECT) != 0) ||
		jt_node_count(&root) == 0)
		return NULL;
	if (r > 0 && jt_node_is_object(&root))
	{
		JtNode		key;
		const JtPartEntry *old = &ref->ranges[r];

		jt_nav_entry(&src, &root, 0, &key);
		if (jt_key_cmp(jt_source_read(&src, key.offset, key.length), key.length,
					   ref->refdata + old->key_offset, old->key_length) != 0)
			return NULL;
	}
	count = (ref->header & JT_CONTAINER_COUNT_MASK) -
		(ref->ranges[r].header & JT_CONTAINER_COUNT_MASK) +
		jt_node_count(&root);

	/*
	 * Without layout bytes, the new part's layout, to tell the document's
	 * size from the two parts: from the splice, or a walk of it.
	 */
	new_layout.entries = NULL;
	if (ref->layouts == NULL && splice)
	{
		jt_layout_spliced(&old->layout, splice, &new_layout);
#ifdef USE_ASSERT_CHECKING
		{
			JtPartLayout walked;

			jt_lay_out_part(newpart, &walked);
			Assert(walked.count == new_layout.count &&
				   walked.key_bytes == new_layout.key_bytes &&
				   memcmp(walked.value_end, new_layout.value_end,
						  sizeof(walked.value_end)) == 0);
		}
#endif
	}
	else if (ref->layouts == NULL)
		jt_lay_out_part(newpart, &new_layout);
	if (count > JT_CONTAINER_COUNT_MASK ||
		jt_might_overflow(pointer, (int64) VARSIZE(newpart) - VARSIZE(oldpart),
						  count))
		return NULL;

	/*
	 * The stored payload, with the count and the part's entry rewritten, and
	 * the deltas of the other parts.
	 */
	base_range = jt_stored_range(skel, &ref->ranges[r]);
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, jt_pointer_payload(pointer, NULL),
						   JT_PAYLOAD_TREE_OFFSET + skel->hdr.tree_size);
	jt_delta_area_copy(skel, jt_part_id(&base_range), true, &buf);
	payload = buf.data;
	payload_len = buf.len;
	/* parts carried whole by a pointer this was made from: not kept */
	carried_len = jt_delta_carried_len(skel, jt_part_id(&base_range));
	ref_offset = JT_PAYLOAD_TREE_OFFSET + site->offset;
	jt_ref_set_count(payload + ref_offset, count);

	range_offset = (uint32) jt_entry_offset(ref_offset, r, skel->version);
	jt_entry_read(payload + range_offset, skel->version, &range);
	range.rawsize = VARSIZE(newpart);
	/* not stored yet: sized as an uncompressed value, with no value id */
	range.extinfo = VARSIZE(newpart) - VARHDRSZ;
	range.valueid = InvalidOid;
	range.offset = 0;
	range.value_size = range.extinfo;
	range.unit = 0;
	range.header = root.header;
	range.hash = jt_part_hash(skel->version, VARDATA(newpart),
							  VARSIZE(newpart) - VARHDRSZ);
	jt_entry_write(payload + range_offset, skel->version, &range);
	if (ref->layouts)
	{
		new_byte = jt_part_layout(&src, &root);
		payload[jt_layout_byte_offset(ref_offset, ref, r)] = (char) new_byte;
	}

	/*
	 * Checks the new directory as any stored one.  When the document's raw
	 * size is known without it, a pointer is returned in place of the
	 * document, for the toaster to adopt; otherwise the document is
	 * flattened, keeping the other parts read for the general path only if
	 * the toaster may turn the change down.
	 */
	/* the old pointer's tree, changed: read as of its version */
	jt_skeleton_parse(&patched, payload, payload_len, skel->version);
	for (uint32 q = 0; q < ref->nranges; q++)
		largest = Max(largest, (uint32) ref->ranges[q].rawsize);
	taken = jt_patch_may_be_taken(jt_payload_budget_bytes(payload, payload_len) -
								  JT_PAYLOAD_TREE_OFFSET - carried_len,
								  VARSIZE(newpart), largest);
	try_pointer = taken && base != NULL;
	if (try_pointer)
	{
		/* the entries walked, and the pairs the splice kept, serve the delta */
		patch.payload = payload;
		patch.payload_len = payload_len;
		patch.range_offset = range_offset;
		patch.part = newpart;
		patch.base = base;
		patch.base_range = base_range;
		patch.old_pointer = pointer;
		patch.base_entries = base == oldpart && old->described ?
			old->layout.entries : NULL;
		patch.part_entries = new_layout.entries;
		patch.carried_len = carried_len;
		patch.largest_sibling = largest;
		if (splice && base == oldpart)
		{
			patch.same_head = splice->index;
			patch.same_tail = old->count - splice->index -
				(splice->removed ? 1 : 0);
		}
		known = site->is_root ?
			jt_patched_document_size(pointer, skel, ref, r, old, &new_layout,
									 new_byte, &range, &rawsize) :
			jt_tree_document_size(&patched, &rawsize);
		if (known && (result = jt_patch_pointer(&patch, rawsize, &whole)) != NULL)
		{
#ifdef USE_ASSERT_CHECKING
			jt_check_told_size(pointer, &patched, site->parts_before + r,
							   newpart, (uint64) rawsize,
							   "the layout bytes of the parts give another size than flattening");
#endif
			elog(DEBUG1, "jsonb_toaster: changed part %u of %u, returned %s",
				 r + 1, ref->nranges, whole ? "whole" : "as a delta");
			pfree(payload);
			return result;
		}
	}

	/*
	 * The flattened document goes to the builtins, which trust what they
	 * read: a part spliced from one whose entries were not walked is walked
	 * now, each entry checked against its bounds (a pointer is checked by
	 * whoever reads it).  It goes to the toaster's general path, which shares
	 * the parts left alone with the old value; the stored parts read are kept
	 * for it (part_cache.c) when the change is too large for a pointer.
	 */
	if (!old->described)
		jt_check_part_entries(newpart);
	document = jt_flatten_changed(pointer, &patched, site->parts_before + r,
								  newpart, !taken);

	/*
	 * When the directories did not tell the document's size (values written
	 * before layout bytes), flattening did: the pointer may yet be returned.
	 */
	if (try_pointer && !known &&
		(result = jt_patch_pointer(&patch, (int32) VARSIZE(document),
								   &whole)) != NULL)
	{
		elog(DEBUG1, "jsonb_toaster: changed part %u of %u, returned %s",
			 r + 1, ref->nranges, whole ? "whole" : "as a delta");
		pfree(document);
		pfree(payload);
		return result;
	}
	elog(DEBUG1, "jsonb_toaster: changed part %u of %u, returned the document",
		 r + 1, ref->nranges);
	pfree(payload);
	return document;
}
