/*-------------------------------------------------------------------------
 *
 * pointer_open.c
 *	  Open a stored pointer of ours, reading its tree where it lies outside
 *	  the row (format version 7, format.h).
 *
 * Every reader of a stored pointer opens it here, so that whatever follows
 * sees a tree in memory, as in a pointer that keeps it in the row: the
 * pointer it is given back is then one with the tree in it, which the
 * update paths edit as they edit any other.  The skeleton still lists the
 * part holding the tree among the stored pointer's parts (the stored value
 * owns it), but a pointer made from it does not name it.
 *
 * The trees read in last are kept for the rest of the transaction, for the
 * other accessors of a query that open the same pointer.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toast/pointer_open.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "format/part.h"
#include "support/xact_reset.h"
#include "toast/part_fetch.h"
#include "toast/pointer_open.h"

/*
 * The trees read in last, by the stored pointer naming them: the accessors
 * of one query (jb -> 'a', jb -> 'b', ...) each open the same pointer, and
 * would each read its tree again.  A stored pointer names its tree's part
 * by value id, place, sizes and hash; kept until the transaction ends (or
 * a subtransaction aborts), as the part cache is.
 */
#define OPENED_TREES	4

typedef struct OpenedTree
{
	struct varlena *stored;		/* the pointer as stored */
	struct varlena *with_tree;	/* what jt_open_pointer() made of it */
} OpenedTree;

static MemoryContext opened_cxt = NULL;
static OpenedTree opened[OPENED_TREES];
static int	opened_next = 0;

static void
forget_opened(void)
{
	if (opened_cxt != NULL)
		MemoryContextReset(opened_cxt);
	memset(opened, 0, sizeof(opened));
	opened_next = 0;
}

/* The tree read in for attr and kept, or NULL. */
static const OpenedTree *
find_opened(const struct varlena *attr)
{
	Size		size = VARSIZE_EXTERNAL(attr);

	for (int i = 0; i < OPENED_TREES; i++)
	{
		const OpenedTree *t = &opened[i];

		if (t->stored != NULL && VARSIZE_EXTERNAL(t->stored) == size &&
			memcmp(t->stored, attr, size) == 0)
			return t;
	}
	return NULL;
}

/* A copy, in the current memory context, of a tree read in for attr. */
static struct varlena *
opened_before(const struct varlena *attr)
{
	const OpenedTree *t = find_opened(attr);
	struct varlena *copy;

	if (t == NULL)
		return NULL;
	copy = palloc(VARSIZE_EXTERNAL(t->with_tree));
	memcpy(copy, t->with_tree, VARSIZE_EXTERNAL(t->with_tree));
	return copy;
}

/* Has a tree been read in for attr, and is it kept for its next opening? */
bool
jt_pointer_opened_before(const struct varlena *attr)
{
	return find_opened(attr) != NULL;
}

/* Keep with_tree, what attr's tree read in made, for the next opening. */
static void
remember_opened(const struct varlena *attr, const struct varlena *with_tree)
{
	OpenedTree *t;
	struct varlena *stored;
	struct varlena *copy;

	if (opened_cxt == NULL)
		opened_cxt = AllocSetContextCreate(TopMemoryContext,
										   "jsonb_toaster opened trees",
										   ALLOCSET_SMALL_SIZES);
	jt_reset_at_xact_end(forget_opened);
	/* the copies first: should palloc fail, the slot is left as it was */
	stored = MemoryContextAlloc(opened_cxt, VARSIZE_EXTERNAL(attr));
	memcpy(stored, attr, VARSIZE_EXTERNAL(attr));
	copy = MemoryContextAlloc(opened_cxt, VARSIZE_EXTERNAL(with_tree));
	memcpy(copy, with_tree, VARSIZE_EXTERNAL(with_tree));
	t = &opened[opened_next];
	opened_next = (opened_next + 1) % OPENED_TREES;
	if (t->stored != NULL)
	{
		pfree(t->stored);
		pfree(t->with_tree);
	}
	t->stored = stored;
	t->with_tree = copy;
}

/*
 * Attach raw, the content of the part attr's tree entry names, to skel as
 * its tree, after checking that it is that tree: the pointer with the tree
 * in it, in the current memory context.
 */
static struct varlena *
attach_checked_tree(struct varlena *attr, JtSkeleton *skel,
					const struct varlena *raw)
{
	const JtPartEntry *tree_entry = &skel->tree_entry;
	uint32		len = VARSIZE(raw) - VARHDRSZ;

	if (VARSIZE(raw) != (uint32) tree_entry->rawsize ||
		jt_part_hash(skel->version, VARDATA(raw), len) != tree_entry->hash)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("The part holding its tree (toast value %u) is not the tree its pointer names.",
						   tree_entry->valueid)));
	jt_skeleton_attach_tree(skel, VARDATA(raw), len);
	return jt_pointer_with_tree(attr, skel);
}

/*
 * Read the tree of attr, parsed into skel, in: the pointer with the tree in
 * it, in the current memory context.
 */
static struct varlena *
read_tree_in(struct varlena *attr, JtSkeleton *skel)
{
	struct varlena *raw;
	struct varlena *with_tree;

	raw = jt_read_part(&skel->tree_entry, skel->hdr.toastrelid);
	with_tree = attach_checked_tree(attr, skel, raw);
	pfree(raw);
	remember_opened(attr, with_tree);
	return with_tree;
}

/*
 * Note what opening attr, a pointer the toaster has just written whose tree
 * lies outside the row, gives: its tree is tree (hdr's size), as the part
 * holding it was written (as_stored: entries naming that part's value say
 * value id 0) or as readers see it (edits applied).  So the statement that
 * stored it, which next lists its parts to delete those of the value it
 * replaced, and the rest of the transaction, do not read the tree back.
 */
void
jt_opened_as_written(struct varlena *attr, const char *tree, bool as_stored)
{
	JtSkeleton	skel;
	char	   *copy;

	jt_parse_pointer(attr, &skel);
	Assert(skel.tree_missing && (!as_stored || !skel.hdr.tree_edited));
	copy = palloc(skel.hdr.tree_size);
	memcpy(copy, tree, skel.hdr.tree_size);
	if (as_stored)
		jt_skeleton_attach_tree(&skel, copy, skel.hdr.tree_size);
	else
	{
		skel.tree = copy;
		skel.tree_missing = false;
	}
	remember_opened(attr, jt_pointer_with_tree(attr, &skel));
	pfree(copy);
}

/*
 * Parse with_tree, what opening a pointer whose tree entry was tree_entry
 * gave, into skel, which keeps that entry: the stored pointer owns the
 * tree's part.
 */
static struct varlena *
parse_opened(struct varlena *with_tree, JtSkeleton *skel,
			 JtPartEntry tree_entry)
{
	jt_parse_pointer(with_tree, skel);
	skel->has_tree_entry = true;
	skel->tree_entry = tree_entry;
	return with_tree;
}

/*
 * Parse our pointer attr into skel, reading its tree from TOAST if it lies
 * outside the row; the pointer skel describes: attr, or a copy with the
 * tree in it, in the current memory context.
 */
struct varlena *
jt_open_pointer(struct varlena *attr, JtSkeleton *skel)
{
	JtPartEntry tree_entry;
	struct varlena *with_tree;

	jt_parse_pointer(attr, skel);
	if (!skel->tree_missing)
		return attr;

	/*
	 * Logical decoding cannot read TOAST relations: it reassembles values
	 * from the parts the decoded transaction holds (jt_open_pointer_from()).
	 */
	if (HistoricSnapshotActive())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot read a jsonb_toaster value whose tree lies outside the row during logical decoding")));

	tree_entry = skel->tree_entry;
	with_tree = opened_before(attr);
	if (with_tree == NULL)
		with_tree = read_tree_in(attr, skel);
	return parse_opened(with_tree, skel, tree_entry);
}

/*
 * jt_open_pointer(), with the tree's part given by fetcher instead of read
 * from TOAST: for logical decoding, whose fetcher cuts parts from the
 * values the decoded transaction holds, and for a DELETE, which reads the
 * tree from the chunks it deletes.
 */
struct varlena *
jt_open_pointer_from(struct varlena *attr, JtSkeleton *skel,
					 const JtPartFetcher *fetcher)
{
	JtPartEntry tree_entry;
	struct varlena *raw;
	struct varlena *with_tree;
	bool		should_free;

	jt_parse_pointer(attr, skel);
	if (!skel->tree_missing)
		return attr;
	tree_entry = skel->tree_entry;
	fetcher->fetch(fetcher->arg, 0, 1, &tree_entry, skel->hdr.toastrelid,
				   &raw, &should_free);
	with_tree = attach_checked_tree(attr, skel, raw);
	if (should_free)
		pfree(raw);
	return parse_opened(with_tree, skel, tree_entry);
}
