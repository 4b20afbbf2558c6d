/*-------------------------------------------------------------------------
 *
 * fuzz_navigator.c
 *	  libFuzzer target for the lazy jsonb navigator.
 *
 * The input is a key (length in the first byte) followed by a jsonb payload
 * (root container onwards), arbitrary bytes.  The navigator reads it
 * through a source that reveals the bytes a little at a time and moves its
 * buffer on every fill, as the real sources may, so that a read past the
 * end or a pointer kept across a fill is caught by AddressSanitizer.  A
 * corrupt value must be reported through corrupt(), never by a crash.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * fuzz/fuzz_navigator.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <setjmp.h>

#include "jsonb/navigator.h"

typedef struct FuzzSource
{
	JtSource	pub;
	const char *payload;
	char	   *copy;
	jmp_buf		on_corrupt;
} FuzzSource;

static void
fuzz_fill(JtSource *pub, uint32 upto)
{
	FuzzSource *src = (FuzzSource *) pub;
	uint32		avail = Min(pub->size, Max(upto, pub->avail + 7));
	char	   *moved = malloc(Max(avail, 1));

	/* a fresh buffer every time: stale pointers hit freed memory */
	memcpy(moved, src->payload, avail);
	free(src->copy);
	src->copy = moved;
	pub->data = moved;
	pub->avail = avail;
}

static void
fuzz_corrupt(JtSource *pub, const char *detail)
{
	longjmp(((FuzzSource *) pub)->on_corrupt, 1);
}

static void
check_node(JtSource *src, const JtNode *node)
{
	if ((uint64) node->offset + node->length > src->size)
		abort();
	/* touch every byte the node claims, through the source */
	if (node->length > 0)
		(void) jt_source_read(src, node->offset, node->length);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzSource	src;
	JtNode		node;
	const char *key;
	uint32		keylen;

	if (size < 1)
		return 0;
	keylen = Min((size_t) data[0] % 32, size - 1);
	key = (const char *) data + 1;
	data += 1 + keylen;
	size -= 1 + keylen;

	memset(&src, 0, sizeof(src));
	src.payload = (const char *) data;
	src.pub.size = size;
	src.pub.fill = fuzz_fill;
	src.pub.corrupt = fuzz_corrupt;

	if (setjmp(src.on_corrupt) == 0)
	{
		jt_nav_root(&src.pub, &node);
		/* follow the key, or element 0 / the last element, a few levels down */
		for (int depth = 0; depth < 6 && node.kind == JT_NODE_CONTAINER; depth++)
		{
			JtNode		next;
			bool		found;
			JtEntryIter it;
			JtNode		entry;

			/* the entries of at least keylen bytes, as the builder walks */
			jt_nav_iter_begin(&src.pub, &node, &it);
			while (jt_nav_iter_next_long(&src.pub, &it, keylen, &entry))
				check_node(&src.pub, &entry);

			if (jt_node_is_object(&node))
				found = jt_nav_object_get(&src.pub, &node, key, keylen, &next);
			else
			{
				(void) jt_nav_array_has_string(&src.pub, &node, key, keylen);
				found = jt_nav_array_get(&src.pub, &node,
										 depth % 2 ? 0 : jt_node_count(&node) - 1,
										 &next);
			}
			if (!found)
				break;
			check_node(&src.pub, &next);
			node = next;
		}
	}
	free(src.copy);
	return 0;
}
